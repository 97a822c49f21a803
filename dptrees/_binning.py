"""Equal-width binning over public bounds (the paper's ``N_range`` thresholds)."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from dptrees._core import _binning

__all__ = ["Binner"]

# Below this many rows binning is not worth a thread.
_THREAD_MIN_ROWS = 50_000


class Binner:
    """Maps features to uint8 bin codes over ``n_bins`` equal-width bins of public bounds.

    The edges depend only on the public ``lower``, ``upper`` and ``n_bins``, so binning
    releases nothing about the data; values outside the bounds fall into the end bins
    (clipping). Split candidates are the ``n_bins - 1`` interior edges of each feature.

    Parameters
    ----------
    lower, upper : ndarray of shape (n_features,)
        Public bounds, ``upper > lower``.
    n_bins : int
        In [2, 256].
    """

    def __init__(self, lower, upper, n_bins):
        self.lower = np.ascontiguousarray(lower, dtype=np.float64)
        self.upper = np.ascontiguousarray(upper, dtype=np.float64)
        self.n_bins = int(n_bins)

    def transform(self, X, n_threads=1):
        """Bin codes of ``X`` (C-contiguous float64, validated by the caller), shape (n, p),
        ``n_threads`` blocks of rows at a time (the kernel releases the GIL)."""
        codes = np.empty(X.shape, dtype=np.uint8)
        if n_threads <= 1 or X.shape[0] < _THREAD_MIN_ROWS:
            _binning.bin_features(X, self.lower, self.upper, self.n_bins, codes)
            return codes
        cuts = np.linspace(0, X.shape[0], n_threads + 1).astype(np.intp)

        def run(a, b):
            _binning.bin_features(X[a:b], self.lower, self.upper, self.n_bins, codes[a:b])

        with ThreadPoolExecutor(n_threads) as pool:
            list(pool.map(run, cuts[:-1], cuts[1:]))
        return codes

    def thresholds(self, feature, bin_threshold):
        """Split values: ``bin_threshold`` b of ``feature`` sends ``x < edge_{b+1}`` left."""
        width = (self.upper[feature] - self.lower[feature]) / self.n_bins
        return self.lower[feature] + (bin_threshold + 1) * width
