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
            n_features = self.lower.shape[0]
            table = self._edges(np.repeat(np.arange(n_features), self.n_bins - 1),
                                np.tile(np.arange(self.n_bins - 1), n_features))
            self._threshold_table = table.reshape(n_features, self.n_bins - 1)
        return self._threshold_table[feature, bin_threshold]

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_threshold_table", None)
        return state

    def _edges(self, feature, bin_threshold):
        """The thresholds of :meth:`thresholds`, computed."""
        above = bin_threshold.astype(np.int64) + 1  # the first bin on the right
        has_missing = self.missing[feature] != 0
        present = self.n_bins - has_missing.astype(np.intc)
        lower = self.lower[feature]
        span = self.upper[feature] - lower
        scale = present / span  # as _core._binning.bin_features computes it
        width = span / present
        nominal = lower + above * width
        # (x - lower) * scale is monotone in x: bisect, over the doubles between the
        # middles of the two bins (one on each side), for the first one binned right.
        left, right = _ordered(nominal - width / 2), _ordered(nominal + width / 2)
        while np.any(right - left > 1):
            middle = left // 2 + right // 2 + (left % 2 + right % 2) // 2  # no overflow
            goes_right = (_from_ordered(middle) - lower) * scale >= above
            right = np.where(goes_right, middle, right)
            left = np.where(goes_right, left, middle)
        edge = _from_ordered(right).reshape(np.shape(nominal))
        return np.where(has_missing & (above == self.n_bins - 1), np.inf, edge)


def _ordered(x):
    """Doubles as int64 keys in the same order (-0.0 and 0.0 alike), to bisect over."""
    bits = np.ascontiguousarray(x, dtype=np.float64).view(np.int64)
    return np.where(bits >= 0, bits, np.iinfo(np.int64).min - bits)


def _from_ordered(key):
    """The doubles of :func:`_ordered` keys."""
    bits = np.where(key >= 0, key, np.iinfo(np.int64).min - key)
    return np.ascontiguousarray(bits, dtype=np.int64).view(np.float64)


def missing_features(bounds):
    """The features with a missing bin declared in ``bounds`` (the table encoding's
    :class:`dptrees.data.tables.TableBounds`; none for any other bounds)."""
    return getattr(bounds, "missing", ())
