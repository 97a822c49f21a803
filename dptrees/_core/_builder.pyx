"""Depth-first builder of differentially private trees, without the GIL.

The Python layer (:mod:`dptrees.tree`, :mod:`dptrees.forest`) decides the budget and turns
it into exact integer noise parameters; this module does the per-row work: statistics of
each node's rows, split utilities, exact private selection, partitioning, noisy counts
and leaf values. Rows of a node are kept contiguous in one index array, reordered in place
at each split; nodes wait on an explicit stack (no recursion).

Records carry bin codes of their features and a target: for regression, a fixed-point
value ``rint(y * 2**F)`` of the target rescaled to ``[0, 1]`` and its bin code among
``n_labels`` target bins; for classification, the class index among ``n_labels`` classes.

What a node releases, and why each release is private (add/remove-one neighbours):

* its **noisy count**: the number of its rows plus exact discrete Laplace noise.
  Sensitivity 1 (one record is in one node of each depth);
* its **split** (feature, bin threshold), chosen by permute-and-flip or the exponential
  mechanism among the candidates: *all* ``n_features * (n_bins - 1)`` (feature, edge)
  pairs for the greedy splitter, or ``max_features`` pairs drawn from a separate random
  stream that reads no data, for the random (ExtraTrees) splitter. Utilities are
  monotonic (adding a record never raises any of them), with sensitivity 1 for squared
  and absolute error (targets in [0, 1]) and 2 for Gini (see the ``_utility_*`` functions);
* at a leaf, its **value**: for mean leaves the fixed-point sum of its targets centred on
  1/2 plus exact discrete Laplace noise (sensitivity ``2**F / 2``), divided by its noisy
  count; for median
  leaves a target-bin centre chosen by the exponential mechanism with the rank utility
  ``-|#below - #above|`` (sensitivity 1); for class-count leaves the per-class counts plus
  exact discrete Laplace noise (L1 sensitivity 1: a record is in one class); for label
  leaves only the majority class, chosen by permute-and-flip over the class counts
  (sensitivity 1, monotonic).

Nodes of one depth hold disjoint rows, so their releases compose in parallel; along a
record's path they compose sequentially. The caller sets the budget of each kind of
release so that the path's total is the tree's epsilon.

Statistics
----------
Per (feature, bin) cell the builder keeps ``width`` int64 statistics: ``[count, sum]`` for
squared error, ``[count, n_0, ..., n_{L-1}]`` (counts per target bin or class) for the
absolute error and Gini. The greedy splitter builds these histograms for every feature,
measuring the child with the smaller *released* noisy count (a rule on public values: the
true child sizes are private) and taking the other as parent minus it; the random
splitter accumulates left-side statistics for its few candidates only.
"""

from libc.math cimport rint, fabs, NAN
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memset, memcpy
from numpy.random cimport bitgen_t

from dptrees._core._rng cimport bitgen_of, discrete_laplace, uniform_below
from dptrees._core._mechanisms cimport permute_and_flip, exponential_mechanism

import numpy as np

cdef enum:
    CRITERION_MSE = 0
    CRITERION_MAE = 1
    CRITERION_GINI = 2
    LEAF_MEAN = 0
    LEAF_MEDIAN = 1
    LEAF_COUNTS = 2
    LEAF_LABEL = 3
    ERR_MEMORY = -1
    ERR_SCORE_RANGE = -2

_CRITERIA = {"mse": CRITERION_MSE, "mae": CRITERION_MAE, "gini": CRITERION_GINI}
_LEAVES = {"mean": LEAF_MEAN, "median": LEAF_MEDIAN, "counts": LEAF_COUNTS,
           "label": LEAF_LABEL}


cdef struct StackEntry:
    Py_ssize_t start
    Py_ssize_t end
    int32_t depth
    int32_t parent
    bint is_left
    bint has_stats
    double noisy_count


cdef struct NodeArrays:
    Py_ssize_t size
    Py_ssize_t capacity
    Py_ssize_t value_width
    int32_t* feature
    int32_t* bin_threshold
    int32_t* left
    int32_t* right
    int32_t* depth
    double* noisy_count
    double* value


cdef bint _resize(void** p, size_t nbytes) noexcept nogil:
    cdef void* q = realloc(p[0], nbytes)
    if q == NULL:
        return False
    p[0] = q
    return True


cdef int _grow(NodeArrays* a) noexcept nogil:
    cdef Py_ssize_t cap = 64 if a.capacity == 0 else 2 * a.capacity
    if not (_resize(<void**>&a.feature, cap * sizeof(int32_t))
            and _resize(<void**>&a.bin_threshold, cap * sizeof(int32_t))
            and _resize(<void**>&a.left, cap * sizeof(int32_t))
            and _resize(<void**>&a.right, cap * sizeof(int32_t))
            and _resize(<void**>&a.depth, cap * sizeof(int32_t))
            and _resize(<void**>&a.noisy_count, cap * sizeof(double))
            and _resize(<void**>&a.value, cap * a.value_width * sizeof(double))):
        return ERR_MEMORY
    a.capacity = cap
    return 0


cdef void _free_nodes(NodeArrays* a) noexcept nogil:
    free(a.feature); free(a.bin_threshold); free(a.left); free(a.right)
    free(a.depth); free(a.noisy_count); free(a.value)


cdef struct Workspace:
    int64_t* slots        # one statistics buffer per stack slot
    int64_t* current      # the popped node's statistics
    int64_t* left_stats   # random splitter: left-side statistics of each candidate
    int64_t* totals       # statistics of the node's rows (width entries)
    int64_t* labels       # label histogram of a leaf
    int64_t* scores
    double* utilities
    Py_ssize_t* work
    int32_t* cand_feature
    int32_t* cand_bin
    Py_ssize_t* scratch   # the partition's right side


cdef class TreeBuilder:
    """Builds one DP tree; see the module docstring for what it releases.

    Noise parameters are exact integers prepared by the Python layer:
    ``count_t / count_s`` is the discrete-Laplace scale of noisy counts;
    ``split_q, split_eps_num, split_den`` quantise and weight utilities
    (:func:`dptrees.mechanisms.selection_constants`); ``leaf_t / leaf_s`` is the
    discrete-Laplace scale of a leaf's fixed-point sum (mean leaves) or of each class
    count (count leaves); ``leaf_eps_num / leaf_den`` weights the median's rank scores.
    ``max_features == 0`` selects the greedy splitter over all candidates; otherwise
    ``max_features`` random candidates per node. ``max_nodes`` caps the tree's size: once
    it would be passed, nodes become leaves (a rule on released values only).
    """

    cdef int n_bins, n_labels, max_depth, criterion, leaf_kind, width, max_features
    cdef Py_ssize_t max_nodes
    cdef bint permute_flip
    cdef double min_samples_split, min_samples_leaf, fixed_scale
    cdef uint64_t count_t, count_s, leaf_t, leaf_s
    cdef double split_q
    cdef uint64_t split_eps_num, split_den, leaf_eps_num, leaf_den

    def __init__(self, *, int n_bins, int n_labels, int max_depth, str criterion, str leaf,
                 str selection, int max_features, double min_samples_split,
                 double min_samples_leaf, double fixed_scale, uint64_t count_t,
                 uint64_t count_s, double split_q, uint64_t split_eps_num, uint64_t split_den,
                 uint64_t leaf_t=1, uint64_t leaf_s=1, uint64_t leaf_eps_num=1,
                 uint64_t leaf_den=1, Py_ssize_t max_nodes=2**20):
        if not 2 <= n_bins <= 256 or not 2 <= n_labels <= 256 or not 0 <= max_depth <= 64:
            raise ValueError("n_bins and n_labels must be in [2, 256], max_depth in [0, 64]")
        if criterion not in _CRITERIA or leaf not in _LEAVES:
            raise ValueError(f"unknown criterion {criterion!r} or leaf {leaf!r}")
        if selection not in ("permute_and_flip", "exponential"):
            raise ValueError("selection must be 'permute_and_flip' or 'exponential'")
        if max_features < 0:
            raise ValueError("max_features must be >= 0")
        if max_nodes < 1:
            raise ValueError("max_nodes must be >= 1")
        self.max_nodes = max_nodes
        if min(count_t, count_s, leaf_t, leaf_s, split_eps_num, split_den, leaf_eps_num,
               leaf_den) < 1 or not split_q > 0 or not fixed_scale > 0:
            raise ValueError("noise parameters must be positive")
        self.n_bins = n_bins
        self.n_labels = n_labels
        self.max_depth = max_depth
        self.criterion = _CRITERIA[criterion]
        self.leaf_kind = _LEAVES[leaf]
        self.width = 2 if self.criterion == CRITERION_MSE else 1 + n_labels
        self.max_features = max_features
        self.permute_flip = selection == "permute_and_flip"
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.fixed_scale = fixed_scale
        self.count_t, self.count_s = count_t, count_s
        self.split_q, self.split_eps_num, self.split_den = split_q, split_eps_num, split_den
        self.leaf_t, self.leaf_s = leaf_t, leaf_s
        self.leaf_eps_num, self.leaf_den = leaf_eps_num, leaf_den

    @property
    def value_width(self):
        return self.n_labels if self.leaf_kind in (LEAF_COUNTS, LEAF_LABEL) else 1

    def build(self, generator, candidate_generator, const uint8_t[:, ::1] codes,
              const int64_t[::1] y_fixed, const uint8_t[::1] labels, codes_by_feature=None):
        """Build the tree; returns a dict of node arrays.

        ``value`` has one entry per node (regression) or ``value_width`` columns (class
        counts); it is NaN at internal nodes.

        ``generator`` draws all noise; ``candidate_generator`` draws the random splitter's
        candidates and nothing else, so those never depend on the data. ``codes``: (n, p)
        feature bin codes below ``n_bins``; ``y_fixed``: targets in ``[0, fixed_scale]``
        (ignored for classification); ``labels``: target bins or classes below ``n_labels``.
        ``codes_by_feature``: the same codes feature-major, shape (p, n) (made here if not
        given). Split tests read one feature of rows scattered across the data: in a 1-D
        column per feature those reads stay within a cache-sized array.
        """
        cdef Py_ssize_t n = codes.shape[0], p = codes.shape[1]
        cdef bitgen_t* bg = bitgen_of(generator)
        cdef bitgen_t* cand_bg = bitgen_of(candidate_generator)
        cdef NodeArrays nodes
        cdef int status
        # An empty part of a partition forest still gets a (noisy) tree: skipping it would
        # reveal that it is empty. So n == 0 is allowed.
        if p < 1:
            raise ValueError("need at least one feature")
        if y_fixed.shape[0] != n or labels.shape[0] != n:
            raise ValueError("codes, y_fixed and labels must have one entry per row")
        if p * (self.n_bins - 1) >= 2**31:
            raise ValueError("too many split candidates")
        # The loops below index statistics by these values: check them once here.
        if n and (np.asarray(codes).max() >= self.n_bins
                  or np.asarray(labels).max() >= self.n_labels):
            raise ValueError("bin codes or labels out of range")
        if n and (np.asarray(y_fixed).min() < 0 or np.asarray(y_fixed).max() > self.fixed_scale):
            raise ValueError("fixed-point targets out of range")
        if candidate_generator is generator:
            raise ValueError("candidates need their own generator, separate from the noise")
        if codes_by_feature is None:
            codes_by_feature = np.ascontiguousarray(np.asarray(codes).T)
        if np.shape(codes_by_feature) != (p, n):
            raise ValueError("codes_by_feature must be the transpose of codes")
        if n == 0:  # one spare column keeps the pointer below valid
            codes_by_feature = np.zeros((p, 1), dtype=np.uint8)
        cdef const uint8_t[:, ::1] columns = codes_by_feature
        memset(&nodes, 0, sizeof(NodeArrays))
        nodes.value_width = self.value_width
        index = np.arange(max(n, 1), dtype=np.intp)  # one spare slot keeps &idx[0] valid
        cdef Py_ssize_t[::1] idx = index
        try:
            with generator.bit_generator.lock, candidate_generator.bit_generator.lock, nogil:
                status = self._build(bg, cand_bg, codes, &columns[0, 0], columns.shape[1],
                                     y_fixed, labels, &idx[0], n, p, &nodes)
            if status == ERR_MEMORY:
                raise MemoryError("out of memory while building the tree")
            if status == ERR_SCORE_RANGE:
                raise OverflowError("split utilities out of range for exact selection")
            size = nodes.size
            value = np.asarray(<double[:size * nodes.value_width]>nodes.value).copy()
            return {
                "feature": np.asarray(<int32_t[:size]>nodes.feature).copy(),
                "bin_threshold": np.asarray(<int32_t[:size]>nodes.bin_threshold).copy(),
                "left": np.asarray(<int32_t[:size]>nodes.left).copy(),
                "right": np.asarray(<int32_t[:size]>nodes.right).copy(),
                "depth": np.asarray(<int32_t[:size]>nodes.depth).copy(),
                "noisy_count": np.asarray(<double[:size]>nodes.noisy_count).copy(),
                "value": value.reshape(size, nodes.value_width) if nodes.value_width > 1 else value,
            }
        finally:
            _free_nodes(&nodes)

    # -- the build loop ----------------------------------------------------------------

    cdef int _build(self, bitgen_t* bg, bitgen_t* cand_bg, const uint8_t[:, ::1] codes,
                    const uint8_t* columns, Py_ssize_t column_stride,
                    const int64_t[::1] y_fixed, const uint8_t[::1] labels, Py_ssize_t* idx,
                    Py_ssize_t n, Py_ssize_t p, NodeArrays* nodes) noexcept nogil:
        cdef bint greedy = self.max_features == 0
        cdef Py_ssize_t k = p if (greedy or self.max_features > p) else self.max_features
        cdef Py_ssize_t n_cand = p * (self.n_bins - 1) if greedy else k
        cdef Py_ssize_t hist = p * self.n_bins * self.width if greedy else 0
        # Depth-first: the stack holds at most one pending sibling per depth plus the node
        # being split, so positions 0 .. max_depth + 1 are all that is ever used.
        cdef Py_ssize_t n_slots = self.max_depth + 3
        cdef Py_ssize_t n_scores = n_cand if n_cand > self.n_labels else self.n_labels
        cdef Py_ssize_t n_work = n_scores if n_scores > p else p
        cdef Workspace w
        cdef StackEntry stack[67]  # max_depth <= 64: n_slots <= 67
        cdef StackEntry e
        cdef Py_ssize_t top = 0, node_id, chosen, mid, m
        cdef int32_t f, b
        cdef double left_count, right_count
        cdef bint left_needs, right_needs
        cdef int status = 0
        w.slots = <int64_t*>malloc((n_slots * hist + 1) * sizeof(int64_t))
        w.current = <int64_t*>malloc((hist + 1) * sizeof(int64_t))
        w.left_stats = <int64_t*>malloc(k * self.width * sizeof(int64_t))
        w.totals = <int64_t*>malloc(self.width * sizeof(int64_t))
        w.labels = <int64_t*>malloc(self.n_labels * sizeof(int64_t))
        w.scores = <int64_t*>malloc(n_scores * sizeof(int64_t))
        w.utilities = <double*>malloc(n_cand * sizeof(double))
        w.work = <Py_ssize_t*>malloc(n_work * sizeof(Py_ssize_t))
        w.cand_feature = <int32_t*>malloc(k * sizeof(int32_t))
        w.cand_bin = <int32_t*>malloc(k * sizeof(int32_t))
        w.scratch = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        if (w.scratch == NULL or w.slots == NULL or w.current == NULL or w.left_stats == NULL or w.totals == NULL
                or w.labels == NULL or w.scores == NULL or w.utilities == NULL
                or w.work == NULL or w.cand_feature == NULL or w.cand_bin == NULL):
            status = ERR_MEMORY
        else:
            stack[0].start = 0
            stack[0].end = n
            stack[0].depth = 0
            stack[0].parent = -1
            stack[0].is_left = False
            stack[0].noisy_count = n + discrete_laplace(bg, self.count_t, self.count_s)
            stack[0].has_stats = greedy and self._may_split(0, stack[0].noisy_count)
            if stack[0].has_stats:
                self._histograms(codes, y_fixed, labels, idx, 0, n, p, w.slots)
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
            for m in range(nodes.value_width):  # only leaves release a value
                nodes.value[node_id * nodes.value_width + m] = NAN
            if e.parent >= 0:
                if e.is_left:
                    nodes.left[e.parent] = <int32_t>node_id
                else:
                    nodes.right[e.parent] = <int32_t>node_id

            # The node cap bounds the work whatever the noise does (empty nodes may split at
            # small epsilon); it reads only released counts and the public cap, so cutting
            # growth there is post-processing.
            if self._may_split(e.depth, e.noisy_count) and nodes.size + top + 2 <= self.max_nodes:
                if greedy:
                    memcpy(w.current, w.slots + top * hist, hist * sizeof(int64_t))
                    self._greedy_utilities(w.current, p, w.utilities)
                else:
                    _draw_candidates(cand_bg, p, k, self.n_bins, w.work, w.cand_feature,
                                     w.cand_bin)
                    self._candidate_stats(columns, column_stride, y_fixed, labels, idx,
                                          e.start, e.end, k,
                                          w.cand_feature, w.cand_bin, w.totals, w.left_stats)
                    self._random_utilities(w.totals, w.left_stats, k, w.utilities)
                if _quantise(w.utilities, n_cand, self.split_q, w.scores) != 0:
                    status = ERR_SCORE_RANGE
                    break
                if self.permute_flip:
                    chosen = permute_and_flip(bg, w.scores, n_cand, self.split_eps_num,
                                              self.split_den, w.work)
                else:
                    chosen = exponential_mechanism(bg, w.scores, n_cand, self.split_eps_num,
                                                   self.split_den)
                if greedy:
                    f = <int32_t>(chosen // (self.n_bins - 1))
                    b = <int32_t>(chosen % (self.n_bins - 1))
                else:
                    f = w.cand_feature[chosen]
                    b = w.cand_bin[chosen]
                mid = _partition(columns + f * column_stride, idx, e.start, e.end, b, w.scratch)
                left_count = (mid - e.start) + discrete_laplace(bg, self.count_t, self.count_s)
                right_count = (e.end - mid) + discrete_laplace(bg, self.count_t, self.count_s)
                if left_count >= self.min_samples_leaf and right_count >= self.min_samples_leaf:
                    nodes.feature[node_id] = f
                    nodes.bin_threshold[node_id] = b
                    left_needs = greedy and self._may_split(e.depth + 1, left_count)
                    right_needs = greedy and self._may_split(e.depth + 1, right_count)
                    # Measure the child with the smaller *released* noisy count and take
                    # the other as parent minus it. The rule reads only released values
                    # (post-processing), never the private child sizes.
                    if left_needs or right_needs:
                        if left_count <= right_count:
                            self._histograms(codes, y_fixed, labels, idx, e.start, mid, p,
                                             w.slots + (top + 1) * hist)
                            if right_needs:
                                _subtract(w.current, w.slots + (top + 1) * hist, hist,
                                          w.slots + top * hist)
                        else:
                            self._histograms(codes, y_fixed, labels, idx, mid, e.end, p,
                                             w.slots + top * hist)
                            if left_needs:
                                _subtract(w.current, w.slots + top * hist, hist,
                                          w.slots + (top + 1) * hist)
                    # right first, so that the left child is built (and numbered) first
                    _set_entry(&stack[top], mid, e.end, e.depth + 1, node_id, False,
                               right_needs, right_count)
                    _set_entry(&stack[top + 1], e.start, mid, e.depth + 1, node_id, True,
                               left_needs, left_count)
                    top += 2
                    continue
            self._leaf_value(bg, y_fixed, labels, idx, e.start, e.end, e.noisy_count, w,
                             nodes.value + node_id * nodes.value_width)
        free(w.slots); free(w.current); free(w.left_stats); free(w.totals); free(w.labels)
        free(w.scores); free(w.utilities); free(w.work); free(w.cand_feature); free(w.cand_bin)
        free(w.scratch)
        return status

    cdef inline bint _may_split(self, int depth, double noisy_count) noexcept nogil:
        return depth < self.max_depth and noisy_count >= self.min_samples_split

    # -- statistics --------------------------------------------------------------------

    cdef void _histograms(self, const uint8_t[:, ::1] codes, const int64_t[::1] y_fixed,
                          const uint8_t[::1] labels, const Py_ssize_t* idx, Py_ssize_t start,
                          Py_ssize_t end, Py_ssize_t p, int64_t* out) noexcept nogil:
        """Statistics of rows ``idx[start:end]`` per (feature, bin) cell."""
        cdef Py_ssize_t i, j, row
        cdef Py_ssize_t wd = self.width, stride = self.n_bins * self.width
        cdef const uint8_t* code
        cdef int64_t yv, lab
        cdef int64_t* cell
        memset(out, 0, p * stride * sizeof(int64_t))
        # Each row's target is read once into a local: the compiler cannot prove that the
        # output does not alias the targets, and would otherwise reload it per feature.
        if self.criterion == CRITERION_MSE:
            for i in range(start, end):
                row = idx[i]
                code = &codes[row, 0]
                yv = y_fixed[row]
                for j in range(p):
                    cell = out + j * stride + code[j] * wd
                    cell[0] += 1
                    cell[1] += yv
        else:
            for i in range(start, end):
                row = idx[i]
                code = &codes[row, 0]
                lab = 1 + labels[row]
                for j in range(p):
                    cell = out + j * stride + code[j] * wd
                    cell[0] += 1
                    cell[lab] += 1

    cdef void _candidate_stats(self, const uint8_t* columns, Py_ssize_t column_stride,
                               const int64_t[::1] y_fixed,
                               const uint8_t[::1] labels, const Py_ssize_t* idx,
                               Py_ssize_t start, Py_ssize_t end, Py_ssize_t k,
                               const int32_t* cand_feature, const int32_t* cand_bin,
                               int64_t* totals, int64_t* left) noexcept nogil:
        """Statistics of all rows and of each candidate's left side.

        Branch-free: whether a row goes left is random for most candidates, so adding the
        0/1 outcome is much faster than branching on it.
        """
        cdef Py_ssize_t i, c, m, row, wd = self.width
        cdef int64_t goes_left, yv
        cdef int64_t* cell
        cdef const uint8_t* col
        memset(totals, 0, wd * sizeof(int64_t))
        memset(left, 0, k * wd * sizeof(int64_t))
        if self.criterion == CRITERION_MSE:
            for i in range(start, end):
                totals[1] += y_fixed[idx[i]]
            # one candidate (one feature column) at a time: its reads stay in one column
            for c in range(k):
                col = columns + cand_feature[c] * column_stride
                for i in range(start, end):
                    row = idx[i]
                    goes_left = col[row] <= cand_bin[c]
                    left[c * wd] += goes_left
                    left[c * wd + 1] += goes_left * y_fixed[row]
        else:
            # label counts only; each side's count is their sum, filled in afterwards
            for i in range(start, end):
                totals[1 + labels[idx[i]]] += 1
            for c in range(k):
                col = columns + cand_feature[c] * column_stride
                cell = left + c * wd + 1
                for i in range(start, end):
                    row = idx[i]
                    cell[labels[row]] += col[row] <= cand_bin[c]
            for c in range(k):
                cell = left + c * wd
                for m in range(1, wd):
                    cell[0] += cell[m]
        totals[0] = end - start

    # -- utilities (sensitivities in the docstrings) -----------------------------------

    cdef double _side_utility(self, const int64_t* s) noexcept nogil:
        """One child's share of the utility, from its statistics ``s``.

        * squared error: ``S**2 / n``, i.e. ``-SSE + sum(y**2)``. For targets in [0, 1],
          adding a record to a set of size ``n`` raises its SSE by
          ``n / (n + 1) (y - mean)**2 <= 1`` and never lowers it;
        * absolute error: ``-SAE`` with targets at their bin centres ``(k + 0.5) / L``;
          adding a record raises the SAE (minimised over the centre) by at most its
          distance to the old median, below 1, and never lowers it;
        * Gini: ``sum_c n_c**2 / n``, i.e. ``-(n Gini(n)) + n``; adding a record raises
          ``n Gini`` by ``1 - (2 n n_a + n - sum n_c**2) / (n (n + 1))``, in ``[0, 2)``.

        The record joins one side only, and the terms ``sum(y**2)`` and ``n`` are the same
        for every candidate of a node (they cancel in the selection). So every utility has
        sensitivity 1 (errors) or 2 (Gini) and is monotonic. Float rounding is below
        ``2**-19`` for nodes of under ``2**31`` rows; the caller adds it to the sensitivity.
        """
        cdef int64_t n = s[0]
        cdef int k, med = 0
        cdef int64_t acc = 0
        cdef double total = 0.0, mean_part
        if n == 0:
            return 0.0
        if self.criterion == CRITERION_MSE:
            mean_part = s[1] / self.fixed_scale
            return mean_part * mean_part / n
        if self.criterion == CRITERION_GINI:
            for k in range(self.n_labels):
                total += (<double>s[1 + k]) * s[1 + k]
            return total / n
        for k in range(self.n_labels):
            acc += s[1 + k]
            if 2 * acc >= n:
                med = k
                break
        for k in range(self.n_labels):
            total += s[1 + k] * fabs(<double>(k - med))
        return -total / self.n_labels

    cdef void _greedy_utilities(self, const int64_t* hist, Py_ssize_t p,
                                double* utilities) noexcept nogil:
        """Utility of every (feature, edge) candidate from full histograms."""
        cdef Py_ssize_t j, b, m, c = 0
        cdef Py_ssize_t wd = self.width
        cdef int64_t left[257]
        cdef int64_t right[257]
        for j in range(p):
            for m in range(wd):
                left[m] = 0
                right[m] = 0
            for b in range(self.n_bins):
                for m in range(wd):
                    right[m] += hist[(j * self.n_bins + b) * wd + m]
            for b in range(self.n_bins - 1):
                for m in range(wd):
                    left[m] += hist[(j * self.n_bins + b) * wd + m]
                    right[m] -= hist[(j * self.n_bins + b) * wd + m]
                utilities[c] = self._side_utility(left) + self._side_utility(right)
                c += 1

    cdef void _random_utilities(self, const int64_t* totals, const int64_t* left,
                                Py_ssize_t k, double* utilities) noexcept nogil:
        cdef Py_ssize_t c, m
        cdef int64_t right[257]
        for c in range(k):
            for m in range(self.width):
                right[m] = totals[m] - left[c * self.width + m]
            utilities[c] = self._side_utility(left + c * self.width) + self._side_utility(right)

    # -- leaves ------------------------------------------------------------------------

    cdef void _leaf_value(self, bitgen_t* bg, const int64_t[::1] y_fixed,
                          const uint8_t[::1] labels, const Py_ssize_t* idx, Py_ssize_t start,
                          Py_ssize_t end, double noisy_count, Workspace w,
                          double* value) noexcept nogil:
        """Write a leaf's released value(s): [0, 1] for regression, noisy counts per class."""
        cdef Py_ssize_t i, k
        cdef int64_t total = 0, below, above, half
        cdef double v
        cdef int nl = self.n_labels
        if self.leaf_kind == LEAF_MEAN:
            # Noisy sum of the targets *centred* on 1/2, over the released noisy count;
            # 1/2 is added back and the mean clipped to [0, 1]. Centred targets lie in
            # [-1/2, 1/2], so one record moves the sum by at most fixed_scale / 2: half the
            # sensitivity, half the noise of an uncentred sum.
            half = <int64_t>(self.fixed_scale / 2)
            for i in range(start, end):
                total += y_fixed[idx[i]] - half
            v = (total + discrete_laplace(bg, self.leaf_t, self.leaf_s)) / self.fixed_scale
            v = 0.5 + v / (noisy_count if noisy_count > 1.0 else 1.0)
            value[0] = 0.0 if v < 0.0 else (1.0 if v > 1.0 else v)
            return
        for k in range(nl):
            w.labels[k] = 0
        for i in range(start, end):
            w.labels[labels[idx[i]]] += 1
        if self.leaf_kind == LEAF_COUNTS:
            # One record is in one class: L1 sensitivity 1 for the whole count vector.
            for k in range(nl):
                value[k] = w.labels[k] + discrete_laplace(bg, self.leaf_t, self.leaf_s)
            return
        if self.leaf_kind == LEAF_LABEL:
            # Only the majority label, by permute-and-flip on the class counts: each count
            # has sensitivity 1 and adding a record never lowers any (monotonic).
            for k in range(nl):
                w.scores[k] = w.labels[k]
                value[k] = 0.0
            k = permute_and_flip(bg, w.scores, nl, self.leaf_eps_num, self.leaf_den, w.work)
            value[k] = 1.0
            return
        # Median: exponential mechanism over target-bin centres, rank utility
        # -|#below - #above| (sensitivity 1: one record moves one of the two counts by 1).
        total = end - start
        below = 0
        for k in range(nl):
            above = total - below - w.labels[k]
            w.scores[k] = -(below - above if below >= above else above - below)
            below += w.labels[k]
        k = exponential_mechanism(bg, w.scores, nl, self.leaf_eps_num, self.leaf_den)
        value[0] = (k + 0.5) / nl


cdef inline void _set_entry(StackEntry* s, Py_ssize_t start, Py_ssize_t end, int32_t depth,
                            Py_ssize_t parent, bint is_left, bint has_stats,
                            double noisy_count) noexcept nogil:
    s.start = start
    s.end = end
    s.depth = depth
    s.parent = <int32_t>parent
    s.is_left = is_left
    s.has_stats = has_stats
    s.noisy_count = noisy_count


cdef inline void _subtract(const int64_t* parent, const int64_t* left, Py_ssize_t n,
                           int64_t* out) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        out[i] = parent[i] - left[i]


cdef void _draw_candidates(bitgen_t* cand_bg, Py_ssize_t p, Py_ssize_t k, int n_bins,
                           Py_ssize_t* work, int32_t* feature, int32_t* bin_) noexcept nogil:
    """``k`` distinct features and one uniform bin edge each, from ``cand_bg`` alone.

    Reads no data: the draws depend only on the candidate stream, ``p``, ``k`` and
    ``n_bins`` (partial Fisher-Yates over the features).
    """
    cdef Py_ssize_t i, j, tmp
    for i in range(p):
        work[i] = i
    for i in range(k):
        j = i + <Py_ssize_t>uniform_below(cand_bg, <uint64_t>(p - i))
        tmp = work[i]
        work[i] = work[j]
        work[j] = tmp
        feature[i] = <int32_t>work[i]
        bin_[i] = <int32_t>uniform_below(cand_bg, <uint64_t>(n_bins - 1))


cdef int _quantise(const double* utilities, Py_ssize_t n, double q, int64_t* scores) noexcept nogil:
    cdef Py_ssize_t i
    cdef double units
    for i in range(n):
        units = rint(utilities[i] / q)
        if not fabs(units) < 4.0e18:
            return ERR_SCORE_RANGE
        scores[i] = <int64_t>units
    return 0


cdef Py_ssize_t _partition(const uint8_t* column, Py_ssize_t* idx, Py_ssize_t start,
                           Py_ssize_t end, int32_t b, Py_ssize_t* scratch) noexcept nogil:
    """Stable, branch-free partition of ``idx[start:end]``: rows with ``column[row] <= b``
    (the split feature's codes) first, both sides in their old order; returns the cut.
    ``scratch`` holds ``end - start``. Increasing row order keeps the reads sequential.
    """
    cdef Py_ssize_t i, row, n_left = start, n_right = 0
    cdef Py_ssize_t goes_left
    for i in range(start, end):
        row = idx[i]
        goes_left = column[row] <= b
        idx[n_left] = row  # n_left <= i: this never overwrites a row still to be read
        scratch[n_right] = row
        n_left += goes_left
        n_right += 1 - goes_left
    memcpy(idx + n_left, scratch, n_right * sizeof(Py_ssize_t))
    return n_left
