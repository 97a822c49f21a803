"""Data-independent binning: float64 features to uint8 codes over public bounds.

Bin edges are ``lower + k (upper - lower) / m`` for ``k = 1 .. m - 1``, where ``m`` is
``n_bins``, or ``n_bins - 1`` for a feature with a **missing bin**: they depend on the
public bounds, ``n_bins`` and the public list of features that may be missing, never on
the data, so they release nothing. Values are clipped to the bounds first (never
dropped). Bin ``b`` holds the values ``x`` with ``floor((x - lower) / (upper - lower) * m)
== b``. A feature with a missing bin keeps its last code, ``n_bins - 1``, for missing
values, which the caller writes as any number above ``upper`` (after clipping the
present values to the bounds: :mod:`dptrees.data.tables`): the largest code, so a split
``code <= b`` sends a missing value right unless ``b`` is the last edge.
"""

from libc.math cimport INFINITY, floor
from libc.stdint cimport INT64_MIN, int64_t, uint8_t
from libc.string cimport memcpy

import numpy as np


cdef inline int _cell(double x, double lower, double scale, int n_cells) noexcept nogil:
    """``floor((x - lower) scale)`` clipped to ``[0, n_cells - 1]``: the one rounding of a
    value to an equal-width bin or fine cell, shared by the binning, the fine histogram of
    the private edges and the printed thresholds."""
    cdef double z = (x - lower) * scale
    if not z > 0.0:  # also maps NaN to bin 0; callers reject NaN before binning
        return 0
    if z >= n_cells:
        return n_cells - 1
    return <int>floor(z)


cdef inline uint8_t _code(double x, double lower, double scale, int n_bins) noexcept nogil:
    return <uint8_t>_cell(x, lower, scale, n_bins)


def bin_features(const double[:, ::1] X, const double[::1] lower, const double[::1] upper,
                 int n_bins, const uint8_t[::1] missing, uint8_t[:, ::1] out):
    """Write the bin code of ``X[i, j]`` into ``out[i, j]`` (row-major, one row per record).

    ``missing[j]``: 1 if feature ``j`` has a missing bin (code ``n_bins - 1``, for values
    above ``upper[j]``; the others share ``n_bins - 1`` bins), else 0. The kernel of
    :func:`bin_features_tabled` with no tabled feature.
    """
    p = X.shape[1]
    bin_features_tabled(X, lower, upper, n_bins, missing, 2, np.zeros(p, dtype=np.uint8),
                        np.zeros((p, 2), dtype=np.uint8), out)


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


cdef inline int64_t _key(double x) noexcept nogil:
    """``x`` as an int64 key in the order of the doubles (-0.0 and 0.0 alike)."""
    cdef int64_t bits
    memcpy(&bits, &x, sizeof(double))
    return bits if bits >= 0 else INT64_MIN - bits


cdef inline double _double(int64_t key) noexcept nogil:
    cdef int64_t bits = key if key >= 0 else INT64_MIN - key
    cdef double x
    memcpy(&x, &bits, sizeof(double))
    return x


cdef double _first_at(double lower, double scale, double width, int k) noexcept nogil:
    """The smallest double ``x`` with ``(x - lower) * scale >= k`` (``scale`` cells per
    unit, ``width = 1 / scale`` as the caller rounds it): bisection over the doubles (as
    ordered int64 keys) between the middles of the cells ``k - 1`` and ``k``, with the
    binning's own arithmetic, so a value on the edge goes right, as ``x < edge`` says."""
    cdef double nominal = lower + k * width
    cdef int64_t left = _key(nominal - width / 2), right = _key(nominal + width / 2), middle
    while left < right - 1:  # (right - left can overflow)
        middle = left // 2 + right // 2 + (left % 2 + right % 2) // 2
        if (_double(middle) - lower) * scale >= k:
            right = middle
        else:
            left = middle
    return _double(right)


def edge_thresholds(const double[::1] lower, const double[::1] upper, int n_bins,
                    const uint8_t[::1] missing, double[:, ::1] out):
    """``out[j, b]``: the smallest double that :func:`bin_features` puts above bin ``b``
    of feature ``j`` (``b < n_bins - 1``), i.e. the edge ``lower + (b + 1) width`` as the
    binning rounds it; infinity for the edge between present and missing values.

    ``(x - lower) * scale`` is monotone in ``x``, so the edge is found by bisection over
    the doubles (as ordered int64 keys) between the middles of the two bins it divides,
    with the binning's own arithmetic: a value ``x`` on it goes right, and so does the
    printed rule ``x < edge``. Public: a function of the bounds and ``n_bins`` only.
    """
    cdef Py_ssize_t j, b, p = lower.shape[0]
    cdef int present
    cdef double scale, width, span
    if not 2 <= n_bins <= 256:
        raise ValueError("n_bins must be in [2, 256]")
    if (upper.shape[0] != p or missing.shape[0] != p or out.shape[0] != p
            or out.shape[1] != n_bins - 1):
        raise ValueError("shapes of bounds, missing and out do not agree")
    for j in range(p):
        if not upper[j] > lower[j]:
            raise ValueError("every upper bound must exceed its lower bound")
    with nogil:
        for j in range(p):
            present = n_bins - (1 if missing[j] else 0)
            span = upper[j] - lower[j]
            scale = present / span  # as bin_features computes it
            width = span / present
            for b in range(n_bins - 1):
                if b + 1 >= present:  # the edge between present and missing values
                    out[j, b] = INFINITY
                    continue
                out[j, b] = _first_at(lower[j], scale, width, b + 1)


# -- private edges on fine cells (dptrees.data.private_edges) ---------------------------


def _check_cells(const double[::1] lower, const double[::1] upper,
                 const uint8_t[::1] missing, Py_ssize_t p, int n_cells):
    if not 2 <= n_cells <= 65536:
        raise ValueError("n_cells must be in [2, 65536]")
    if upper.shape[0] != p or lower.shape[0] != p or missing.shape[0] != p:
        raise ValueError("shapes of X, bounds and missing do not agree")
    for j in range(p):
        if not upper[j] > lower[j]:
            raise ValueError("every upper bound must exceed its lower bound")
    return n_cells / (np.asarray(upper) - np.asarray(lower))


def fine_counts(const double[:, ::1] X, const double[::1] lower, const double[::1] upper,
                int n_cells, const uint8_t[::1] missing, int64_t[:, ::1] out):
    """Add to ``out[j, c]`` the number of rows of ``X`` whose feature ``j`` falls in fine
    cell ``c`` of ``n_cells`` equal-width cells of ``[lower[j], upper[j]]`` (values
    clipped to the bounds; a missing value of a feature with a missing bin, any value
    above ``upper``, is in no cell).

    Exact integer counts, so those of any split of the rows add up to those of all rows
    at once. One row adds 1 to at most one cell per feature: the sensitivity of the
    private edges (``docs/proofs/bin_edges.rst``). Nothing is released here.
    """
    cdef Py_ssize_t i, j, n = X.shape[0], p = X.shape[1]
    scales = _check_cells(lower, upper, missing, p, n_cells)
    if out.shape[0] != p or out.shape[1] != n_cells:
        raise ValueError("out must be shaped (n_features, n_cells)")
    cdef const double[::1] scale = scales
    with nogil:
        for i in range(n):
            for j in range(p):  # a missing value (above upper) is in no cell
                if not (missing[j] and X[i, j] > upper[j]):
                    out[j, _cell(X[i, j], lower[j], scale[j], n_cells)] += 1


def bin_features_tabled(const double[:, ::1] X, const double[::1] lower,
                        const double[::1] upper, int n_bins, const uint8_t[::1] missing,
                        int n_cells, const uint8_t[::1] tabled, const uint8_t[:, ::1] table,
                        uint8_t[:, ::1] out):
    """:func:`bin_features`, except that a feature ``j`` with ``tabled[j]`` takes the bin
    ``table[j, c]`` of its fine cell ``c`` (the cell :func:`fine_counts` counts it in: one
    multiply, no search); a missing value still takes code ``n_bins - 1``."""
    cdef Py_ssize_t i, j, n = X.shape[0], p = X.shape[1]
    if not 2 <= n_bins <= 256:
        raise ValueError("n_bins must be in [2, 256]")
    if (lower.shape[0] != p or upper.shape[0] != p or missing.shape[0] != p
            or out.shape[0] != n or out.shape[1] != p):
        raise ValueError("shapes of X, bounds, missing and out do not agree")
    cell_scales = _check_cells(lower, upper, missing, p, n_cells)
    if (tabled.shape[0] != p or table.shape[0] != p or table.shape[1] != n_cells):
        raise ValueError("shapes of X, tabled and table do not agree")
    if np.asarray(table).max(initial=0) >= n_bins:
        raise ValueError("a table's bin is not below n_bins")
    present = n_bins - (np.asarray(missing) != 0).astype(np.intc)
    scales = present / (np.asarray(upper) - np.asarray(lower))
    cdef const double[::1] scale = scales
    cdef const double[::1] cell_scale = cell_scales
    cdef const int[::1] n_present = present
    cdef double x
    with nogil:
        for i in range(n):
            for j in range(p):
                x = X[i, j]
                if missing[j] and x > upper[j]:
                    out[i, j] = <uint8_t>(n_bins - 1)
                elif tabled[j]:
                    out[i, j] = table[j, _cell(x, lower[j], cell_scale[j], n_cells)]
                else:
                    out[i, j] = _code(x, lower[j], scale[j], n_present[j])


def cell_thresholds(const double[::1] lower, const double[::1] upper, int n_cells,
                    const int64_t[:, ::1] boundaries, double[:, ::1] out):
    """``out[j, b]``: the smallest double that falls in fine cell ``boundaries[j, b]`` or
    above (the printed threshold ``x < t`` of an edge on a fine-cell boundary, agreeing
    with :func:`bin_features_tabled` on every value); infinity where the boundary is
    ``n_cells`` or more (no present value above: an empty bin, or the missing bin's)."""
    cdef Py_ssize_t j, b, p = lower.shape[0]
    cdef double scale, width, span
    if (upper.shape[0] != p or boundaries.shape[0] != p or out.shape[0] != p
            or out.shape[1] != boundaries.shape[1]):
        raise ValueError("shapes of bounds, boundaries and out do not agree")
    with nogil:
        for j in range(p):
            span = upper[j] - lower[j]
            scale = n_cells / span
            width = span / n_cells
            for b in range(boundaries.shape[1]):
                if boundaries[j, b] >= n_cells:
                    out[j, b] = INFINITY
                elif boundaries[j, b] <= 0:
                    out[j, b] = -INFINITY
                else:
                    out[j, b] = _first_at(lower[j], scale, width, <int>boundaries[j, b])
