"""Data-independent binning: float64 features to uint8 codes over public bounds.

Bin edges are ``lower + k (upper - lower) / n_bins`` for ``k = 1 .. n_bins - 1``: they
depend on the public bounds and ``n_bins`` only, never on the data, so they release
nothing. Values are clipped to the bounds first (never dropped). Bin ``b`` holds the
values ``x`` with ``floor((x - lower) / (upper - lower) * n_bins) == b``.
"""

from libc.math cimport floor
from libc.stdint cimport uint8_t

import numpy as np


cdef inline uint8_t _code(double x, double lower, double scale, int n_bins) noexcept nogil:
    cdef double z = (x - lower) * scale
    if not z > 0.0:  # also maps NaN to bin 0; callers reject NaN before binning
        return 0
    if z >= n_bins:
        return <uint8_t>(n_bins - 1)
    return <uint8_t>floor(z)


def bin_features(const double[:, ::1] X, const double[::1] lower, const double[::1] upper,
                 int n_bins, uint8_t[:, ::1] out):
    """Write the bin code of ``X[i, j]`` into ``out[i, j]`` (row-major, one row per record)."""
    cdef Py_ssize_t i, j, n = X.shape[0], p = X.shape[1]
    if not 2 <= n_bins <= 256:
        raise ValueError("n_bins must be in [2, 256]")
    if lower.shape[0] != p or upper.shape[0] != p or out.shape[0] != n or out.shape[1] != p:
        raise ValueError("shapes of X, bounds and out do not agree")
    for j in range(p):
        if not upper[j] > lower[j]:
            raise ValueError("every upper bound must exceed its lower bound")
    scales = np.asarray(upper) - np.asarray(lower)
    scales = n_bins / scales
    cdef const double[::1] scale = scales
    with nogil:
        for i in range(n):
            for j in range(p):
                out[i, j] = _code(X[i, j], lower[j], scale[j], n_bins)


def bin_values(const double[::1] x, double lower, double upper, int n_bins, uint8_t[::1] out):
    """Bin codes of a 1-D array over ``[lower, upper]``."""
    cdef Py_ssize_t i
    cdef double scale
    if not 2 <= n_bins <= 256:
        raise ValueError("n_bins must be in [2, 256]")
    if not upper > lower or out.shape[0] != x.shape[0]:
        raise ValueError("need upper > lower and out shaped like x")
    scale = n_bins / (upper - lower)
    with nogil:
        for i in range(x.shape[0]):
            out[i] = _code(x[i], lower, scale, n_bins)
