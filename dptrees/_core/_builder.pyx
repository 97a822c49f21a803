"""Depth-first builder of differentially private regression trees, without the GIL.

The Python layer (:mod:`dptrees.tree`) decides the budget and turns it into exact integer
noise parameters; this module does the per-row work: histograms of each node's rows,
split utilities for every candidate, exact private selection, partitioning, noisy
counts and leaf values. Rows of a node are kept contiguous in one index array,
reordered in place at each split; nodes wait on an explicit stack (no recursion).

What a node releases, and why each release is private (add/remove-one neighbours,
target rescaled by the caller to ``[0, 1]`` and held in fixed point as
``rint(y * 2**F)``):

* its **noisy count**: the number of its rows plus exact discrete Laplace noise.
  Sensitivity 1 (one record is in one node of each depth);
* its **split** (feature, bin threshold), chosen by permute-and-flip or the exponential
  mechanism over all ``n_features * (n_bins - 1)`` candidates (none excluded, whatever the
  data). Utilities (see ``_mse_utilities`` and ``_mae_utilities``) have sensitivity 1
  and are monotonic: adding a record never raises any of them;
* at a leaf, its **value**: for mean leaves the fixed-point sum of its targets plus exact
  discrete Laplace noise (sensitivity ``2**F``), divided by its noisy count; for median
  leaves a bin centre of the target chosen by the exponential mechanism with the rank
  utility ``-|#below - #above|`` (sensitivity 1).

Nodes of one depth hold disjoint rows, so their releases compose in parallel; along a
record's path they compose sequentially. The caller sets the budget of each kind of
release so that the path's total is the tree's epsilon.
"""

from libc.math cimport rint, fabs
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memset
from numpy.random cimport bitgen_t

from dptrees._core._rng cimport bitgen_of, discrete_laplace
from dptrees._core._mechanisms cimport permute_and_flip, exponential_mechanism

import numpy as np

cdef enum:
    CRITERION_MSE = 0
    CRITERION_MAE = 1
    LEAF_MEAN = 0
    LEAF_MEDIAN = 1
    ERR_MEMORY = -1
    ERR_SCORE_RANGE = -2


cdef struct StackEntry:
    Py_ssize_t start
    Py_ssize_t end
    int32_t depth
    int32_t parent
    bint is_left
    double noisy_count


cdef struct NodeArrays:
    Py_ssize_t size
    Py_ssize_t capacity
    int32_t* feature
    int32_t* bin_threshold
    int32_t* left
    int32_t* right
    int32_t* depth
    double* value
    double* noisy_count


cdef int _grow(NodeArrays* a) noexcept nogil:
    cdef Py_ssize_t cap = 64 if a.capacity == 0 else 2 * a.capacity
    cdef void* p
    p = realloc(a.feature, cap * sizeof(int32_t))
    if p == NULL: return ERR_MEMORY
    a.feature = <int32_t*>p
    p = realloc(a.bin_threshold, cap * sizeof(int32_t))
    if p == NULL: return ERR_MEMORY
    a.bin_threshold = <int32_t*>p
    p = realloc(a.left, cap * sizeof(int32_t))
    if p == NULL: return ERR_MEMORY
    a.left = <int32_t*>p
    p = realloc(a.right, cap * sizeof(int32_t))
    if p == NULL: return ERR_MEMORY
    a.right = <int32_t*>p
    p = realloc(a.depth, cap * sizeof(int32_t))
    if p == NULL: return ERR_MEMORY
    a.depth = <int32_t*>p
    p = realloc(a.value, cap * sizeof(double))
    if p == NULL: return ERR_MEMORY
    a.value = <double*>p
    p = realloc(a.noisy_count, cap * sizeof(double))
    if p == NULL: return ERR_MEMORY
    a.noisy_count = <double*>p
    a.capacity = cap
    return 0


cdef void _free_nodes(NodeArrays* a) noexcept nogil:
    free(a.feature); free(a.bin_threshold); free(a.left); free(a.right)
    free(a.depth); free(a.value); free(a.noisy_count)


cdef class RegressionTreeBuilder:
    """Builds one DP regression tree; see the module docstring for what it releases.

    All noise parameters are exact integers prepared by :mod:`dptrees.tree`:
    ``count_t / count_s`` is the discrete-Laplace scale of noisy counts;
    ``split_q, split_eps_num, split_den`` quantise and weight split utilities
    (:func:`dptrees.mechanisms.selection_constants`); ``leaf_t / leaf_s`` is the
    discrete-Laplace scale of a leaf's fixed-point sum (mean leaves);
    ``leaf_eps_num, leaf_den`` weight the median's rank scores (median leaves).
    """

    cdef int n_bins, n_y_bins, max_depth, criterion, leaf_kind
    cdef bint permute_flip
    cdef double min_samples_split, min_samples_leaf, fixed_scale
    cdef uint64_t count_t, count_s, leaf_t, leaf_s
    cdef double split_q
    cdef uint64_t split_eps_num, split_den, leaf_eps_num, leaf_den

    def __init__(self, *, int n_bins, int n_y_bins, int max_depth, str criterion, str leaf,
                 str selection, double min_samples_split, double min_samples_leaf,
                 double fixed_scale, uint64_t count_t, uint64_t count_s, double split_q,
                 uint64_t split_eps_num, uint64_t split_den, uint64_t leaf_t=1,
                 uint64_t leaf_s=1, uint64_t leaf_eps_num=1, uint64_t leaf_den=1):
        if not 2 <= n_bins <= 256 or not 2 <= n_y_bins <= 256 or max_depth < 0:
            raise ValueError("n_bins and n_y_bins must be in [2, 256], max_depth >= 0")
        if criterion not in ("mse", "mae") or leaf not in ("mean", "median"):
            raise ValueError("criterion must be 'mse' or 'mae', leaf 'mean' or 'median'")
        if selection not in ("permute_and_flip", "exponential"):
            raise ValueError("selection must be 'permute_and_flip' or 'exponential'")
        if min(count_t, count_s, leaf_t, leaf_s, split_eps_num, split_den, leaf_eps_num,
               leaf_den) < 1 or not split_q > 0:
            raise ValueError("noise parameters must be positive")
        self.n_bins = n_bins
        self.n_y_bins = n_y_bins
        self.max_depth = max_depth
        self.criterion = CRITERION_MSE if criterion == "mse" else CRITERION_MAE
        self.leaf_kind = LEAF_MEAN if leaf == "mean" else LEAF_MEDIAN
        self.permute_flip = selection == "permute_and_flip"
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.fixed_scale = fixed_scale
        self.count_t, self.count_s = count_t, count_s
        self.split_q, self.split_eps_num, self.split_den = split_q, split_eps_num, split_den
        self.leaf_t, self.leaf_s = leaf_t, leaf_s
        self.leaf_eps_num, self.leaf_den = leaf_eps_num, leaf_den

    def build(self, generator, const uint8_t[:, ::1] codes, const int64_t[::1] y_fixed,
              const uint8_t[::1] y_codes):
        """Build the tree; returns a dict of node arrays.

        ``codes``: (n, p) feature bin codes, each below ``n_bins``; ``y_fixed``: targets in
        ``[0, 1]`` as ``rint(y * fixed_scale)``; ``y_codes``: target bin codes, each below
        ``n_y_bins``.
        """
        cdef Py_ssize_t n = codes.shape[0], p = codes.shape[1], i
        cdef bitgen_t* bg = bitgen_of(generator)
        cdef NodeArrays nodes
        cdef int status
        if y_fixed.shape[0] != n or y_codes.shape[0] != n:
            raise ValueError("codes, y_fixed and y_codes must have one entry per row")
        if p < 1 or p * (self.n_bins - 1) >= 2**31:
            raise ValueError("need at least one feature and fewer than 2**31 candidates")
        # The loops below index histograms by these values: check them once here.
        if n and (np.asarray(codes).max() >= self.n_bins or np.asarray(y_codes).max() >= self.n_y_bins):
            raise ValueError("bin codes out of range")
        if n and (np.asarray(y_fixed).min() < 0 or np.asarray(y_fixed).max() > self.fixed_scale):
            raise ValueError("fixed-point targets out of range")
        memset(&nodes, 0, sizeof(NodeArrays))
        index = np.arange(n, dtype=np.intp)
        cdef Py_ssize_t[::1] idx = index
        try:
            with generator.bit_generator.lock, nogil:
                status = self._build(bg, codes, y_fixed, y_codes, &idx[0] if n else NULL, n, p,
                                     &nodes)
            if status == ERR_MEMORY:
                raise MemoryError("out of memory while building the tree")
            if status == ERR_SCORE_RANGE:
                raise OverflowError("split utilities out of range for exact selection")
            size = nodes.size
            return {
                "feature": np.asarray(<int32_t[:size]>nodes.feature).copy(),
                "bin_threshold": np.asarray(<int32_t[:size]>nodes.bin_threshold).copy(),
                "left": np.asarray(<int32_t[:size]>nodes.left).copy(),
                "right": np.asarray(<int32_t[:size]>nodes.right).copy(),
                "depth": np.asarray(<int32_t[:size]>nodes.depth).copy(),
                "value": np.asarray(<double[:size]>nodes.value).copy(),
                "noisy_count": np.asarray(<double[:size]>nodes.noisy_count).copy(),
            }
        finally:
            _free_nodes(&nodes)

    cdef int _build(self, bitgen_t* bg, const uint8_t[:, ::1] codes,
                    const int64_t[::1] y_fixed, const uint8_t[::1] y_codes,
                    Py_ssize_t* idx, Py_ssize_t n, Py_ssize_t p, NodeArrays* nodes) noexcept nogil:
        cdef Py_ssize_t n_cand = p * (self.n_bins - 1)
        cdef Py_ssize_t hist_size = p * self.n_bins
        # ycounts doubles as the median leaf's target histogram, scores as its rank scores
        cdef Py_ssize_t yhist_size = (hist_size * self.n_y_bins if self.criterion == CRITERION_MAE
                                      else self.n_y_bins)
        cdef Py_ssize_t n_scores = n_cand if n_cand > self.n_y_bins else self.n_y_bins
        cdef int64_t* counts = <int64_t*>malloc(hist_size * sizeof(int64_t))
        cdef int64_t* sums = <int64_t*>malloc(hist_size * sizeof(int64_t))
        cdef int64_t* ycounts = <int64_t*>malloc(yhist_size * sizeof(int64_t))
        cdef int64_t* scores = <int64_t*>malloc(n_scores * sizeof(int64_t))
        cdef double* utilities = <double*>malloc(n_cand * sizeof(double))
        cdef Py_ssize_t* work = <Py_ssize_t*>malloc(n_cand * sizeof(Py_ssize_t))
        cdef StackEntry* stack = <StackEntry*>malloc((self.max_depth + 2) * 2 * sizeof(StackEntry))
        cdef Py_ssize_t top = 0, node_id, chosen, mid
        cdef StackEntry e
        cdef int32_t f, b
        cdef double left_count, right_count
        cdef int status = 0
        if (counts == NULL or sums == NULL or ycounts == NULL or scores == NULL
                or utilities == NULL or work == NULL or stack == NULL):
            status = ERR_MEMORY
        else:
            stack[0].start = 0
            stack[0].end = n
            stack[0].depth = 0
            stack[0].parent = -1
            stack[0].is_left = False
            stack[0].noisy_count = n + discrete_laplace(bg, self.count_t, self.count_s)
            top = 1
        while status == 0 and top > 0:
            top -= 1
            e = stack[top]
            if nodes.size == nodes.capacity and _grow(nodes) != 0:
                status = ERR_MEMORY
                break
            node_id = nodes.size
            nodes.size += 1
            nodes.depth[node_id] = e.depth
            nodes.noisy_count[node_id] = e.noisy_count
            nodes.left[node_id] = -1
            nodes.right[node_id] = -1
            nodes.feature[node_id] = -1
            nodes.bin_threshold[node_id] = -1
            if e.parent >= 0:
                if e.is_left:
                    nodes.left[e.parent] = <int32_t>node_id
                else:
                    nodes.right[e.parent] = <int32_t>node_id

            if e.depth < self.max_depth and e.noisy_count >= self.min_samples_split:
                self._histograms(codes, y_fixed, y_codes, idx, e.start, e.end, p,
                                 counts, sums, ycounts)
                if self.criterion == CRITERION_MSE:
                    self._mse_utilities(counts, sums, p, utilities)
                else:
                    self._mae_utilities(counts, ycounts, p, utilities)
                if self._quantise(utilities, n_cand, scores) != 0:
                    status = ERR_SCORE_RANGE
                    break
                if self.permute_flip:
                    chosen = permute_and_flip(bg, scores, n_cand, self.split_eps_num,
                                              self.split_den, work)
                else:
                    chosen = exponential_mechanism(bg, scores, n_cand, self.split_eps_num,
                                                   self.split_den)
                f = <int32_t>(chosen // (self.n_bins - 1))
                b = <int32_t>(chosen % (self.n_bins - 1))
                mid = _partition(codes, idx, e.start, e.end, f, b)
                left_count = (mid - e.start) + discrete_laplace(bg, self.count_t, self.count_s)
                right_count = (e.end - mid) + discrete_laplace(bg, self.count_t, self.count_s)
                if left_count >= self.min_samples_leaf and right_count >= self.min_samples_leaf:
                    nodes.feature[node_id] = f
                    nodes.bin_threshold[node_id] = b
                    # right first, so that the left child is built (and numbered) first
                    stack[top].start = mid
                    stack[top].end = e.end
                    stack[top].depth = e.depth + 1
                    stack[top].parent = <int32_t>node_id
                    stack[top].is_left = False
                    stack[top].noisy_count = right_count
                    stack[top + 1].start = e.start
                    stack[top + 1].end = mid
                    stack[top + 1].depth = e.depth + 1
                    stack[top + 1].parent = <int32_t>node_id
                    stack[top + 1].is_left = True
                    stack[top + 1].noisy_count = left_count
                    top += 2
                    continue
            nodes.value[node_id] = self._leaf_value(bg, y_fixed, y_codes, idx, e.start, e.end,
                                                    e.noisy_count, ycounts, scores, work)
        free(counts); free(sums); free(ycounts); free(scores); free(utilities); free(work)
        free(stack)
        return status

    cdef void _histograms(self, const uint8_t[:, ::1] codes, const int64_t[::1] y_fixed,
                          const uint8_t[::1] y_codes, const Py_ssize_t* idx, Py_ssize_t start,
                          Py_ssize_t end, Py_ssize_t p, int64_t* counts, int64_t* sums,
                          int64_t* ycounts) noexcept nogil:
        """Per (feature, bin): row count and fixed-point target sum (and, for MAE, target-bin counts)."""
        cdef Py_ssize_t i, j, row, cell
        cdef int64_t yv
        cdef int ny = self.n_y_bins
        memset(counts, 0, p * self.n_bins * sizeof(int64_t))
        memset(sums, 0, p * self.n_bins * sizeof(int64_t))
        if self.criterion == CRITERION_MAE:
            memset(ycounts, 0, p * self.n_bins * ny * sizeof(int64_t))
        for i in range(start, end):
            row = idx[i]
            yv = y_fixed[row]
            for j in range(p):
                cell = j * self.n_bins + codes[row, j]
                counts[cell] += 1
                sums[cell] += yv
                if self.criterion == CRITERION_MAE:
                    ycounts[cell * ny + y_codes[row]] += 1

    cdef void _mse_utilities(self, const int64_t* counts, const int64_t* sums, Py_ssize_t p,
                             double* utilities) noexcept nogil:
        """``u = S_L**2 / n_L + S_R**2 / n_R`` for every (feature, threshold) candidate.

        This is minus the split's sum of squared errors, ``-(SSE_L + SSE_R)``, plus the
        node's ``sum(y**2)``, which is the same for every candidate and so does not change
        the selection. Sensitivity: for targets in [0, 1], adding a record to a set of
        size ``n`` raises its SSE by ``n / (n + 1) (y - mean)**2 <= 1``, and the record
        joins one side only; so each ``-(SSE_L + SSE_R)`` drops by at most 1 and never
        rises (monotonic). Float rounding of these sums is below ``2**-19`` for nodes of
        under ``2**31`` rows; the caller adds it to the sensitivity.
        """
        cdef Py_ssize_t j, b, c = 0
        cdef int64_t n_total, s_total, n_left, s_left
        cdef double sl, sr, u
        for j in range(p):
            n_total = 0
            s_total = 0
            for b in range(self.n_bins):
                n_total += counts[j * self.n_bins + b]
                s_total += sums[j * self.n_bins + b]
            n_left = 0
            s_left = 0
            for b in range(self.n_bins - 1):
                n_left += counts[j * self.n_bins + b]
                s_left += sums[j * self.n_bins + b]
                sl = s_left / self.fixed_scale
                sr = (s_total - s_left) / self.fixed_scale
                u = 0.0
                if n_left > 0:
                    u += sl * sl / n_left
                if n_total - n_left > 0:
                    u += sr * sr / (n_total - n_left)
                utilities[c] = u
                c += 1

    cdef double _sae(self, const int64_t* hist, int64_t total) noexcept nogil:
        """Sum of absolute deviations from the median of targets binned at ``(k + 0.5) / n_y_bins``."""
        cdef int k, med = 0
        cdef int64_t acc = 0
        cdef double s = 0.0
        if total == 0:
            return 0.0
        for k in range(self.n_y_bins):
            acc += hist[k]
            if 2 * acc >= total:
                med = k
                break
        for k in range(self.n_y_bins):
            s += hist[k] * fabs(<double>(k - med))
        return s / self.n_y_bins

    cdef void _mae_utilities(self, const int64_t* counts, const int64_t* ycounts, Py_ssize_t p,
                             double* utilities) noexcept nogil:
        """``u = -(SAE_L + SAE_R)`` for every candidate, targets taken at their bin centres.

        Sensitivity: with values in [0, 1], adding a record raises a set's SAE (minimised
        over the centre) by at most the record's distance to the old median, below 1, and
        never lowers it; the record joins one side. So sensitivity 1, monotonic.
        """
        cdef Py_ssize_t j, b, k, c = 0
        cdef int ny = self.n_y_bins
        cdef int64_t left[256]
        cdef int64_t right[256]
        cdef int64_t n_left, n_total
        for j in range(p):
            for k in range(ny):
                left[k] = 0
                right[k] = 0
            n_total = 0
            for b in range(self.n_bins):
                n_total += counts[j * self.n_bins + b]
                for k in range(ny):
                    right[k] += ycounts[(j * self.n_bins + b) * ny + k]
            n_left = 0
            for b in range(self.n_bins - 1):
                n_left += counts[j * self.n_bins + b]
                for k in range(ny):
                    left[k] += ycounts[(j * self.n_bins + b) * ny + k]
                    right[k] -= ycounts[(j * self.n_bins + b) * ny + k]
                utilities[c] = -(self._sae(left, n_left) + self._sae(right, n_total - n_left))
                c += 1

    cdef int _quantise(self, const double* utilities, Py_ssize_t n, int64_t* scores) noexcept nogil:
        cdef Py_ssize_t i
        cdef double units
        for i in range(n):
            units = rint(utilities[i] / self.split_q)
            if not fabs(units) < 4.0e18:
                return ERR_SCORE_RANGE
            scores[i] = <int64_t>units
        return 0

    cdef double _leaf_value(self, bitgen_t* bg, const int64_t[::1] y_fixed,
                            const uint8_t[::1] y_codes, const Py_ssize_t* idx, Py_ssize_t start,
                            Py_ssize_t end, double noisy_count, int64_t* ybuf, int64_t* scores,
                            Py_ssize_t* work) noexcept nogil:
        """A leaf's released value in [0, 1] (target units rescaled by the caller)."""
        cdef Py_ssize_t i, k
        cdef int64_t total = 0, below, above
        cdef double value
        cdef int ny = self.n_y_bins
        if self.leaf_kind == LEAF_MEAN:
            # Noisy fixed-point sum over the noisy count (both released); clipped to [0, 1].
            for i in range(start, end):
                total += y_fixed[idx[i]]
            value = (total + discrete_laplace(bg, self.leaf_t, self.leaf_s)) / self.fixed_scale
            value /= noisy_count if noisy_count > 1.0 else 1.0
            return 0.0 if value < 0.0 else (1.0 if value > 1.0 else value)
        # Median: exponential mechanism over target-bin centres with rank utility
        # -|#below - #above| (sensitivity 1: one record moves one of the two counts by 1).
        for k in range(ny):
            ybuf[k] = 0
        for i in range(start, end):
            ybuf[y_codes[idx[i]]] += 1
            total += 1
        below = 0
        for k in range(ny):
            above = total - below - ybuf[k]
            scores[k] = -(below - above if below >= above else above - below)
            below += ybuf[k]
        k = exponential_mechanism(bg, scores, ny, self.leaf_eps_num, self.leaf_den)
        return (k + 0.5) / ny


cdef Py_ssize_t _partition(const uint8_t[:, ::1] codes, Py_ssize_t* idx, Py_ssize_t start,
                           Py_ssize_t end, int32_t f, int32_t b) noexcept nogil:
    """Reorder ``idx[start:end]`` so rows with ``codes[row, f] <= b`` come first; return the cut."""
    cdef Py_ssize_t lo = start, hi = end - 1, tmp
    while lo <= hi:
        if codes[idx[lo], f] <= b:
            lo += 1
        else:
            tmp = idx[lo]
            idx[lo] = idx[hi]
            idx[hi] = tmp
            hi -= 1
    return lo
