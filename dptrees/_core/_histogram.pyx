"""Gradient statistics for boosting: int64 fixed-point histograms, partitions and sums.

Per-record statistics (clipped gradient and Hessian, already rounded to int64 fixed
point by :mod:`dptrees._core._fixedpoint`) are held stat-major, ``stats[k, i]``. Sums of
integers are exact and independent of the order of the terms, so adding or removing one
record moves every sum below by exactly that record's integers (Casacuberta et al., CCS
2022): the sensitivities stated by the callers hold bit for bit.

Rows of a node are a contiguous slice of one index array; :func:`partition` splits a
slice in place (stable), so a tree is grown without copying the data. Every function
checks the indices it is given before it reads, so no input can make it read or write
out of bounds.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc

from dptrees._core._cells cimport add_row
from dptrees._core._partition cimport stable_partition
from dptrees._core._routing cimport leaf_of
from dptrees._core._tree import check_routing, check_tree

import numpy as np

ctypedef Py_ssize_t intp


cdef int _check_rows(const intp[::1] rows, intp n_records) noexcept nogil:
    """1 if every index of ``rows`` is in ``[0, n_records)``."""
    cdef intp i, r
    for i in range(rows.shape[0]):
        r = rows[i]
        if r < 0 or r >= n_records:
            return 0
    return 1


cdef _check_disjoint(stats, out):
    """Raise if ``out`` may overlap ``stats``: :func:`add_row` reads the statistics
    through a ``restrict`` pointer, a promise that the cells it writes are elsewhere."""
    if np.may_share_memory(np.asarray(stats), np.asarray(out)):
        raise ValueError("out must not share memory with stats")


cdef inline void _add_row_stats(int64_t* hist, intp feature_stride, intp width,
                                const uint8_t* codes, intp f_start, intp f_stop,
                                intp last_bin, const int64_t* stats, intp stat_stride,
                                intp n_stats) noexcept nogil:
    """:func:`add_row` for ``n_stats`` explicit statistics ``stats[k * stat_stride]``,
    two at a time (cells ``k, k + 1`` from ``hist + k``)."""
    cdef intp k
    cdef int64_t zero = 0
    if n_stats == 2 and width == 2:  # boosting's (g, h): a constant cell width
        add_row(hist, feature_stride, 2, codes, f_start, f_stop, last_bin,
                stats[0], 1, &stats[stat_stride])
        return
    for k in range(0, n_stats - 1, 2):
        add_row(hist + k, feature_stride, width, codes, f_start, f_stop, last_bin,
                stats[k * stat_stride], 1, &stats[(k + 1) * stat_stride])
    if n_stats % 2:
        add_row(hist + n_stats - 1, feature_stride, width, codes, f_start, f_stop, last_bin,
                stats[(n_stats - 1) * stat_stride], 0, &zero)


def node_histogram(const uint8_t[:, ::1] codes, const intp[::1] rows,
                   const int64_t[:, ::1] stats, int64_t[:, :, ::1] out,
                   intp feature_start=0, intp feature_stop=-1):
    """Add the statistics of ``rows`` to ``out[f, bin, k]`` for features in a range.

    Parameters
    ----------
    codes : uint8 array of shape (n_records, n_features)
        Bin codes, row-major (one row's codes are read together, as by the tree builder).
    rows : intp array
        Records of the node.
    stats : int64 array of shape (n_stats, n_records)
    out : int64 array of shape (n_features, n_bins, n_stats)
        Accumulated into (zero it first). Codes at or above ``n_bins`` count in the last
        bin, so a code can never index outside ``out``.
    feature_start, feature_stop : int
        The features to fill (``-1``: up to the last), so that threads can share a node.
    """
    cdef intp n_records = codes.shape[0], n_features = codes.shape[1]
    cdef intp n_stats = stats.shape[0], n_rows = rows.shape[0], n_bins = out.shape[1]
    cdef intp i, r
    if feature_stop < 0:
        feature_stop = n_features
    if not (0 <= feature_start <= feature_stop <= n_features):
        raise ValueError("feature range out of bounds")
    if out.shape[0] != n_features or out.shape[2] != n_stats or n_bins < 1:
        raise ValueError("out must have shape (n_features, n_bins >= 1, n_stats)")
    if stats.shape[1] != n_records:
        raise ValueError("stats must have one column per record")
    _check_disjoint(stats, out)
    if n_rows == 0 or feature_start == feature_stop or n_stats == 0:
        return
    with nogil:
        if not _check_rows(rows, n_records):
            with gil:
                raise IndexError("row index out of range")
        for i in range(n_rows):
            r = rows[i]
            _add_row_stats(&out[0, 0, 0], n_bins * n_stats, n_stats, &codes[r, 0],
                           feature_start, feature_stop, n_bins - 1, &stats[0, r],
                           n_records, n_stats)


def partition(const uint8_t[:, ::1] codes_by_feature, intp[::1] rows, intp feature,
              int bin_threshold):
    """Stable in-place partition of ``rows``: codes ``<= bin_threshold`` first.

    Returns the number of rows sent left.
    """
    cdef intp n_records = codes_by_feature.shape[1], n_rows = rows.shape[0]
    cdef intp n_left = 0
    cdef intp *right
    if not 0 <= feature < codes_by_feature.shape[0]:
        raise ValueError("feature out of range")
    if n_rows == 0:
        return 0
    with nogil:
        if not _check_rows(rows, n_records):
            with gil:
                raise IndexError("row index out of range")
        right = <intp *> malloc(n_rows * sizeof(intp))
        if right == NULL:
            with gil:
                raise MemoryError()
        n_left = stable_partition(&codes_by_feature[feature, 0], &rows[0], 0, n_rows,
                                  bin_threshold, right)
        free(right)
    return n_left


cdef _check_starts(const intp[::1] starts, intp n_segments, intp n_rows):
    """Raise unless ``starts`` delimits ``n_segments`` segments covering ``n_rows`` rows."""
    cdef intp j
    if starts.shape[0] != n_segments + 1:
        raise ValueError("starts must have one entry more than there are segments")
    if n_segments and (starts[0] != 0 or starts[n_segments] != n_rows):
        raise ValueError("starts must run from 0 to len(rows)")
    for j in range(n_segments):
        if starts[j + 1] < starts[j]:
            raise ValueError("starts must be non-decreasing")


def segment_sums(const intp[::1] rows, const int64_t[:, ::1] stats,
                 const intp[::1] starts, int64_t[:, ::1] out):
    """``out[j, k] = sum of stats[k, rows[starts[j]:starts[j+1]]]`` (exact int64).

    ``starts`` has one entry more than ``out`` has rows, non-decreasing from 0 to
    ``len(rows)``.
    """
    cdef intp n_segments = out.shape[0], n_stats = stats.shape[0]
    cdef intp n_records = stats.shape[1], j, i, k, r
    if out.shape[1] != n_stats:
        raise ValueError("out must have n_stats columns")
    _check_starts(starts, n_segments, rows.shape[0])
    with nogil:
        if not _check_rows(rows, n_records):
            with gil:
                raise IndexError("row index out of range")
        for j in range(n_segments):  # one sweep of the segment's rows for every stat
            for k in range(n_stats):
                out[j, k] = 0
            for i in range(starts[j], starts[j + 1]):
                r = rows[i]
                for k in range(n_stats):
                    out[j, k] += stats[k, r]


def add_leaf_values(const uint8_t[:, ::1] codes, const int32_t[::1] feature,
                    const int32_t[::1] bin_threshold, const int32_t[::1] left,
                    const int32_t[::1] right, const double[::1] value, double scale,
                    double[::1] raw):
    """``raw[i] += scale * value[leaf(i)]`` for one tree, routing rows by their codes.

    The tree arrays are those of :class:`dptrees._tree_structure.Tree`; the structure is
    validated first, so corrupt arrays cannot make the loop index out of bounds.
    """
    cdef intp i
    if value.shape[0] != feature.shape[0]:
        raise ValueError("inconsistent tree arrays")
    check_routing(codes, raw.shape[0], "raw", feature, bin_threshold, left, right)
    with nogil:
        for i in range(codes.shape[0]):
            raw[i] += scale * value[leaf_of(&codes[i, 0], &feature[0], &bin_threshold[0],
                                            &left[0], &right[0])]


def add_segment_values(const intp[::1] rows, const intp[::1] starts, const double[::1] value,
                       double scale, double[::1] out):
    """``out[rows[i]] += scale * value[j]`` for the rows of segment ``j``.

    ``starts`` (``len(value) + 1`` entries) delimits the segments of ``rows``, as in
    :func:`segment_sums`: the leaves of a tree just grown.
    """
    cdef intp n_segments = value.shape[0], j, i
    cdef double v
    _check_starts(starts, n_segments, rows.shape[0])
    with nogil:
        if not _check_rows(rows, out.shape[0]):
            with gil:
                raise IndexError("row index out of range")
        for j in range(n_segments):
            v = scale * value[j]
            for i in range(starts[j], starts[j + 1]):
                out[rows[i]] += v


cdef _check_routing(const uint8_t[:, ::1] codes, const int64_t[:, ::1] stats,
                    const int32_t[::1] feature, const int32_t[::1] bin_threshold,
                    const int32_t[::1] left, const int32_t[::1] right,
                    const intp[::1] slot_of_node, intp n_slots):
    """Raise unless routing ``codes`` through the tree and indexing slots stays in bounds."""
    cdef intp i
    if stats.shape[1] != codes.shape[0]:
        raise ValueError("stats must have one column per row of codes")
    if slot_of_node.shape[0] != feature.shape[0]:
        raise ValueError("slot_of_node must have one entry per node")
    check_tree(feature, bin_threshold, left, right, codes.shape[1])
    for i in range(slot_of_node.shape[0]):
        if not -1 <= slot_of_node[i] < n_slots:
            raise ValueError("slot_of_node entries must be -1 or index a slot of out")


def routed_histogram(const uint8_t[:, ::1] codes, const int64_t[:, ::1] stats,
                     const int32_t[::1] feature, const int32_t[::1] bin_threshold,
                     const int32_t[::1] left, const int32_t[::1] right,
                     const intp[::1] slot_of_node, int64_t[:, :, :, ::1] out,
                     const uint8_t[::1] labels=None):
    """Add each row's statistics to ``out[slot, f, bin, k]`` of the node it reaches.

    ``out`` covers the first ``out.shape[1]`` features (all of them for split histograms;
    one for a node's sums, which are any feature's histogram summed over its bins). Rows
    of a block (row-major ``codes``, stat-major ``stats[k, i]``) are routed through
    a partially grown tree (nodes not yet split have ``left == -1``); a row that reaches
    node ``v`` with ``slot_of_node[v] >= 0`` adds its statistics to every feature's bin
    of that slot, others are skipped. With ``labels`` (class indices or target bins), the
    cell also counts the row's label: ``out[..., n_stats + labels[i]] += stats[0, i]``
    (the row's weight, 1 or 0), so label histograms cost one addition per row and
    feature, not one per label. The result is an exact integer sum, so blocks can
    be processed in any order, by any thread or process, and added up: the same
    histogram as the node's rows taken at once (:func:`node_histogram`). Codes at or
    above ``n_bins`` count in the last bin.
    """
    cdef intp n = codes.shape[0], p = out.shape[1], n_stats = stats.shape[0]
    cdef intp n_bins = out.shape[2], width = out.shape[3], i, s
    cdef intp feature_stride = n_bins * width
    cdef bint has_labels = labels is not None
    cdef int64_t *hist
    cdef int64_t zero = 0
    cdef const uint8_t *row
    if not 1 <= p <= codes.shape[1] or n_bins < 1 or n_stats < 1 or not (
            width > n_stats if has_labels else width == n_stats):
        raise ValueError("out must have shape (n_slots, 1 .. n_features, n_bins >= 1, "
                         "n_stats [+ n_labels])")
    if has_labels:
        if labels.shape[0] != n:
            raise ValueError("labels must have one entry per row of codes")
        if n and np.asarray(labels).max() >= width - n_stats:
            raise ValueError("labels out of range for out's last axis")
    _check_routing(codes, stats, feature, bin_threshold, left, right, slot_of_node,
                   out.shape[0])
    _check_disjoint(stats, out)
    if n == 0:
        return
    with nogil:
        for i in range(n):
            row = &codes[i, 0]
            s = slot_of_node[leaf_of(row, &feature[0], &bin_threshold[0], &left[0], &right[0])]
            if s < 0:
                continue
            hist = &out[s, 0, 0, 0]
            if has_labels:  # the row's weight to cell[0] and to its label's count
                if n_stats == 1:
                    add_row(hist, feature_stride, width, row, 0, p, n_bins - 1,
                            stats[0, i], 1 + labels[i], &stats[0, i])
                    continue
                add_row(hist + n_stats + labels[i], feature_stride, width, row, 0, p,
                        n_bins - 1, stats[0, i], 0, &zero)
            _add_row_stats(hist, feature_stride, width, row, 0, p, n_bins - 1,
                           &stats[0, i], n, n_stats)
