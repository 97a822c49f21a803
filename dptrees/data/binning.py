"""Equal-width binning over public bounds (the paper's ``N_range`` thresholds)."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from dptrees._core import _binning

__all__ = ["Binner", "missing_features"]

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
    """

    def __init__(self, lower, upper, n_bins, missing=()):
        self.lower = np.ascontiguousarray(lower, dtype=np.float64)
        self.upper = np.ascontiguousarray(upper, dtype=np.float64)
        self.n_bins = int(n_bins)
        self.missing = np.zeros(self.lower.shape[0], dtype=np.uint8)
        self.missing[list(missing)] = 1

    def __setstate__(self, state):
        # models saved before missing bins existed have none
        self.__dict__.update(state)
        if "missing" not in state:
            self.missing = np.zeros(self.lower.shape[0], dtype=np.uint8)

    def transform(self, X, n_threads=1):
        """Bin codes of ``X`` (C-contiguous float64, validated by the caller), shape (n, p),
        ``n_threads`` blocks of rows at a time (the kernel releases the GIL)."""
        codes = np.empty(X.shape, dtype=np.uint8)
        if n_threads <= 1 or X.shape[0] < _THREAD_MIN_ROWS:
            _binning.bin_features(X, self.lower, self.upper, self.n_bins, self.missing, codes)
            return codes
        cuts = np.linspace(0, X.shape[0], n_threads + 1).astype(np.intp)

        def run(a, b):
            _binning.bin_features(X[a:b], self.lower, self.upper, self.n_bins, self.missing,
                                  codes[a:b])

        with ThreadPoolExecutor(n_threads) as pool:
            list(pool.map(run, cuts[:-1], cuts[1:]))
        return codes

    def thresholds(self, feature, bin_threshold):
        """Split values: ``bin_threshold`` b of ``feature`` sends ``x < t`` left, where
        ``t`` is the edge ``lower + (b + 1) width`` as the binning rounds it: the smallest
        double that :meth:`transform` puts above bin ``b``, so that the printed rule and
        the binning agree on every value, those on an edge too. Infinity for the edge
        between present and missing values (NaN is never below a threshold: a missing
        value goes right). Public: a function of the bounds and ``n_bins`` only."""
        table = self.__dict__.get("_threshold_table")
        if table is None:  # computed once per binner, not saved with it
            table = np.empty((self.lower.shape[0], self.n_bins - 1))
            _binning.edge_thresholds(self.lower, self.upper, self.n_bins, self.missing,
                                     table)
            self._threshold_table = table
        return table[feature, bin_threshold]

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_threshold_table", None)
        return state


def missing_features(bounds):
    """The features with a missing bin declared in ``bounds`` (the table encoding's
    :class:`dptrees.data.tables.TableBounds`; none for any other bounds)."""
    return getattr(bounds, "missing", ())
