"""Binning over public bounds: equal-width bins (the paper's ``N_range`` thresholds), or
private edges on fine cells (:mod:`dptrees.data.private_edges`) and privately ordered
categories (:mod:`dptrees.data.category_order`) through a lookup table."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from dptrees._core import _binning

__all__ = ["FINE_CELLS", "Binner", "categorical_features", "column_bins", "missing_features"]

#: Fine cells per feature of a lookup table: the resolution of the private edges (a power
#: of two), and the cells a privately ordered categorical column's codes fall in.
FINE_CELLS = 1024

# Below this many rows binning is not worth a thread.
_THREAD_MIN_ROWS = 50_000


class Binner:
    """Maps features to uint8 bin codes over ``n_bins`` equal-width bins of public bounds.

    The edges depend only on the public ``lower``, ``upper`` and ``n_bins``, so binning
    releases nothing about the data; values outside the bounds fall into the end bins
    (clipping). Split candidates are the ``n_bins - 1`` interior edges of each feature.

    A feature listed in ``missing`` keeps its last bin, ``n_bins - 1``, for missing values
    (written as any number above its upper bound, see :mod:`dptrees.data.tables`), and its
    present values share the other ``n_bins - 1`` bins; its last split candidate
    separates missing from present values. Which features have a missing bin is public
    (declared in ``bounds``), never read from the data.

    Parameters
    ----------
    lower, upper : ndarray of shape (n_features,)
        Public bounds, ``upper > lower``.
    n_bins : int
        In [2, 256].
    missing : iterable of int, default=()
        The features with a missing bin.
    cells : (n_cells, tabled, boundaries) or None, default=None
        Released private edges (:mod:`dptrees.data.private_edges`): the features with
        ``tabled[j]`` cut ``[lower, upper]`` into ``n_cells`` equal-width fine cells and
        bin ``b`` ends at fine-cell boundary ``boundaries[j, b]`` (``n_cells``: an
        empty bin, or the missing bin's edge). A value's fine cell is computed as the
        private histogram computed it (one multiply) and mapped through a lookup table
        of ``n_cells`` codes: no search. Post-processing of a DP release, so public.
    positions : dict or None, default=None
        Privately ordered categorical columns (:mod:`dptrees.data.category_order`):
        ``{feature: position}``, where code ``k`` of the column (its ``k``-th public
        category, the missing one last) takes the bin that the equal-width binning
        gives the value ``position[k]``. The codes are binned through a lookup table of
        :data:`FINE_CELLS` cells, one code per cell; a tree's split of such a column is
        a set of categories, never a threshold (:meth:`thresholds` gives NaN).
        Post-processing of a DP release, so public.
    """

    def __init__(self, lower, upper, n_bins, missing=(), cells=None, positions=None):
        self.lower = np.ascontiguousarray(lower, dtype=np.float64)
        self.upper = np.ascontiguousarray(upper, dtype=np.float64)
        self.n_bins = int(n_bins)
        self.missing = np.zeros(self.lower.shape[0], dtype=np.uint8)
        self.missing[list(missing)] = 1
        self.n_cells = self.tabled = self.boundaries = self.table = None
        if cells is not None:
            n_cells, tabled, boundaries = cells
            self.n_cells = int(n_cells)
            self.tabled = np.ascontiguousarray(tabled, dtype=np.uint8)
            self.boundaries = np.ascontiguousarray(boundaries, dtype=np.int64)
            # table[j, c]: the bin of fine cell c, the number of boundaries at or below it
            cell = np.arange(self.n_cells)
            self.table = np.ascontiguousarray(
                (self.boundaries[:, :, None] <= cell).sum(axis=1), dtype=np.uint8)
        self.positions = None
        if positions:
            self._order_categories(positions)

    def _order_categories(self, positions):
        """Table the codes of every column of ``positions`` (see the class docstring)."""
        p = self.lower.shape[0]
        if self.table is None:
            self.n_cells = FINE_CELLS
            self.tabled = np.zeros(p, dtype=np.uint8)
            self.boundaries = np.full((p, self.n_bins - 1), FINE_CELLS, dtype=np.int64)
            self.table = np.zeros((p, FINE_CELLS), dtype=np.uint8)
        self.positions = {int(j): np.asarray(pos, dtype=np.intp)
                          for j, pos in sorted(positions.items())}
        equal_width = Binner(self.lower, self.upper, self.n_bins)
        for j, position in self.positions.items():
            if sorted(position.tolist()) != list(range(position.size)) or \
                    2 * position.size > self.n_cells:
                raise ValueError(f"positions of feature {j} must order at most "
                                 f"{self.n_cells // 2} codes, got {position.size}")
            # each fine cell holds at most one code (cells are narrower than half a
            # code): the code nearest the cell's centre, clipped to the column's codes
            width = (self.upper[j] - self.lower[j]) / self.n_cells
            centre = self.lower[j] + (np.arange(self.n_cells) + 0.5) * width
            code = np.clip(np.rint(centre), 0, position.size - 1).astype(np.intp)
            self.table[j] = column_bins(equal_width, j, position[code])
            self.tabled[j] = 1
            codes = np.arange(position.size, dtype=np.float64)  # the table agrees with them
            if not np.array_equal(column_bins(self, j, codes),
                                  column_bins(equal_width, j, position)):
                raise RuntimeError(f"the lookup table of feature {j} does not bin its "
                                   "codes by their positions")

    def __setstate__(self, state):
        # models saved before missing bins (or private edges) existed have none
        self.__dict__.update(state)
        if "missing" not in state:
            self.missing = np.zeros(self.lower.shape[0], dtype=np.uint8)
        for name in ("n_cells", "tabled", "boundaries", "table", "positions"):
            self.__dict__.setdefault(name, None)

    def _bin(self, X, codes):
        if self.table is None:
            _binning.bin_features(X, self.lower, self.upper, self.n_bins, self.missing, codes)
        else:
            _binning.bin_features_tabled(X, self.lower, self.upper, self.n_bins,
                                         self.missing, self.n_cells, self.tabled,
                                         self.table, codes)

    def transform(self, X, n_threads=1):
        """Bin codes of ``X`` (C-contiguous float64, validated by the caller), shape (n, p),
        ``n_threads`` blocks of rows at a time (the kernel releases the GIL)."""
        codes = np.empty(X.shape, dtype=np.uint8)
        if n_threads <= 1 or X.shape[0] < _THREAD_MIN_ROWS:
            self._bin(X, codes)
            return codes
        cuts = np.linspace(0, X.shape[0], n_threads + 1).astype(np.intp)

        def run(a, b):
            self._bin(X[a:b], codes[a:b])

        with ThreadPoolExecutor(n_threads) as pool:
            list(pool.map(run, cuts[:-1], cuts[1:]))
        return codes

    def thresholds(self, feature, bin_threshold):
        """Split values: ``bin_threshold`` b of ``feature`` sends ``x < t`` left, where
        ``t`` is the edge ``lower + (b + 1) width`` as the binning rounds it: the smallest
        double that :meth:`transform` puts above bin ``b``, so that the printed rule and
        the binning agree on every value, those on an edge too. Infinity for the edge
        between present and missing values (NaN is never below a threshold: a missing
        value goes right). Public: a function of the bounds and ``n_bins`` only.
        With private edges, a tabled feature's ``t`` is the smallest double in the fine
        cell that starts bin ``b + 1``, infinity after its last present bin. A privately
        ordered categorical column has no threshold: NaN (its split is a set of
        categories, :mod:`dptrees._feature_bins`)."""
        table = self.__dict__.get("_threshold_table")
        if table is None:  # computed once per binner, not saved with it
            table = np.empty((self.lower.shape[0], self.n_bins - 1))
            _binning.edge_thresholds(self.lower, self.upper, self.n_bins, self.missing,
                                     table)
            if self.table is not None:
                tabled = np.flatnonzero(self.tabled)
                cut = np.empty((tabled.size, self.n_bins - 1))
                _binning.cell_thresholds(self.lower[tabled], self.upper[tabled],
                                         self.n_cells, self.boundaries[tabled], cut)
                table[tabled] = cut
            for j in self.positions or ():
                table[j] = np.nan
            self._threshold_table = table
        return table[feature, bin_threshold]

    def edges(self, feature):
        """The ``n_present + 1`` edges of ``feature``'s present bins in feature units, from
        ``lower`` to ``upper`` (bin ``b`` is ``[edges[b], edges[b + 1])``; an empty bin
        of private edges is ``[upper, upper)``). Public."""
        j = int(feature)
        lower, upper = float(self.lower[j]), float(self.upper[j])
        n_present = self.n_bins - int(self.missing[j])
        if self.table is None or not self.tabled[j]:
            edges = lower + np.arange(n_present + 1) * (upper - lower) / n_present
        else:
            inner = self.boundaries[j, :n_present - 1].astype(np.float64)
            edges = np.concatenate([[lower], lower + inner * (upper - lower) / self.n_cells,
                                    [upper]])
        edges[-1] = upper
        return np.minimum(edges, upper)

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_threshold_table", None)
        return state


def column_bins(binner, j, values):
    """``binner``'s bins of ``values`` in column ``j`` (the other columns at their lower
    bounds): the binning ``predict`` does, of public values only."""
    probe = np.repeat(binner.lower[None, :], len(values), axis=0)
    probe[:, j] = values
    return binner.transform(np.ascontiguousarray(probe))[:, j]


def missing_features(bounds):
    """The features with a missing bin declared in ``bounds`` (the table encoding's
    :class:`dptrees.data.tables.TableBounds`; none for any other bounds)."""
    return getattr(bounds, "missing", ())


def categorical_features(bounds):
    """The categorical columns of ``bounds`` (the table encoding's; none for any other
    bounds): they keep equal-width bins of their codes, never private edges."""
    return getattr(bounds, "categorical", ())
