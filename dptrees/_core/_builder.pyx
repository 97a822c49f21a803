"""Builder of differentially private trees, without the GIL: depth first from rows in
memory, or level by level from statistics summed elsewhere -- the same tree.

The Python layer (:mod:`dptrees.tree`, :mod:`dptrees.forest`) decides the budget and turns
it into exact integer noise parameters; this module walks the tree and does the per-row
work through the modules beside it: statistics of each node's rows and split utilities
(:mod:`dptrees._core._stats`), exact private selection, noisy counts and leaf values
(:mod:`dptrees._core._releases`), partitioning (``_partition.pxd``) and the node arrays
(:mod:`dptrees._core._nodes`). Rows of a node are kept contiguous in one index array,
reordered in place at each split.

Noise comes from **one stream per depth** (:meth:`TreeBuilder.level_streams`): a node of
depth ``d`` draws its split choice, its children's noisy counts or its leaf value from
stream ``d`` (and its random candidates from candidate stream ``d``), using its exact
integer statistics alone -- its per-bin histograms (or its candidates' left sides) and its
totals. Nodes of one depth are met left to right by a depth-first build as by a
level-by-level one, so both make the same draws from the same integers.
:meth:`TreeBuilder.build` builds depth first from rows in memory (a node's subtree while
its rows and histograms are in cache); :meth:`TreeBuilder.decide_level` decides a whole
level from statistics the caller summed elsewhere -- blocks of a memmap, Dask partitions
(:mod:`dptrees._tree_growth`) -- and gives the same tree bit for bit. The streams are
independent generators (``Generator.spawn``); every release still draws fresh noise from
one of them, so the privacy analysis does not depend on which stream it is.

What a node releases -- its noisy count, its split (or, at a leaf, its value) -- and why
each release is private (add/remove-one neighbours) is stated in
:mod:`dptrees._core._releases`, next to the code that draws it; the sensitivity of the
split utilities in ``_stats.side_utility``. Nodes of one depth hold disjoint rows, so
their releases compose in parallel; along a record's path they compose sequentially. The
caller sets the budget of each kind of release so that the path's total is the tree's
epsilon.

A tree has at most ``max_nodes`` nodes: at each depth, only the first
``(max_nodes - 1) // (2 max_depth)`` nodes (left to right) that may split try to
(:meth:`TreeBuilder.plan_level`). The rule reads released counts and public values only.

Sample weights
--------------
A builder made with ``weight_shift = s > 0`` takes each row's weight ``c`` in [0, 1] as an
integer number of units ``u = c 2**s`` (:meth:`TreeBuilder.build`'s ``weights``). Every
count statistic is then a sum of units, and a row's regression target counts as
``floor(u y / 2**s)``, in ``[0, c y]``: a record of weight ``c`` is a record of weight
``c`` and target at most ``y``, so it moves every statistic by at most what an
unweighted record moves it by. What is released from a sum of units ``U`` is always the
whole number of records ``round(U / 2**s)`` (``records`` in ``_releases.pxd``): adding a
record raises ``U`` by ``u <= 2**s``, so the rounded value by 0 or 1. Noisy counts, class
counts, label and median scores therefore keep sensitivity 1 and their monotonicity, and
their noise is unchanged; the split utilities are computed from the units scaled back
by ``2**-s`` (``_stats.side_utility``: sensitivities for weighted records). A weight of 0
is the record's removal, and weights of one give the unweighted tree bit for bit (every
scaling is by a power of two).

Statistics and threads
----------------------
What each (feature, bin) cell holds, which child's histograms are measured and which
subtracted, and how ``n_threads`` share a large node's statistics without changing a
bit of the tree: :mod:`dptrees._core._stats`.
"""

from libc.math cimport rint
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memset, memcpy
from numpy.random cimport bitgen_t

from dptrees._core._rng cimport bitgen_of, uniform_below
from dptrees._core._partition cimport stable_partition
from dptrees._core._nodes cimport NodeArrays, ERR_MEMORY, new_node, free_nodes, node_dict
from dptrees._core._stats cimport (
    Layout, CRITERION_MSE, CRITERION_MAE, CRITERION_GINI, histograms, candidate_stats,
    row_totals, hist_totals, hist_left, subtract)
from dptrees._core._releases cimport (
    Noise, Workspace, Decision, LEAF_MEAN, LEAF_MEDIAN, LEAF_COUNTS, LEAF_LABEL,
    ERR_SCORE_RANGE, noisy_records, choose_split, leaf_value)

import numpy as np

# renumber_depth_first is part of this module's Python interface (dptrees._tree_growth)
from dptrees._core._nodes import renumber_depth_first

_CRITERIA = {"mse": CRITERION_MSE, "mae": CRITERION_MAE, "gini": CRITERION_GINI}
_LEAVES = {"mean": LEAF_MEAN, "median": LEAF_MEDIAN, "counts": LEAF_COUNTS,
           "label": LEAF_LABEL}


cdef enum:
    MAX_LEVELS = 65  # max_depth <= 64


cdef struct StackEntry:
    Py_ssize_t start
    Py_ssize_t end
    int32_t depth
    int32_t parent
    bint is_left
    bint has_stats
    double noisy_count


cdef void _free_workspace(Workspace* w) noexcept nogil:
    free(w.current); free(w.left_stats); free(w.totals); free(w.scores)
    free(w.utilities); free(w.work); free(w.cand_feature); free(w.cand_bin); free(w.scratch)


cdef class TreeBuilder:
    """Builds one DP tree; see the module docstring for what it releases.

    Noise parameters are exact integers prepared by the Python layer:
    ``count_t / count_s`` is the discrete-Laplace scale of noisy counts;
    ``split_q, split_eps_num, split_den`` quantise and weight utilities
    (:func:`dptrees.mechanisms.selection_constants`); ``leaf_t / leaf_s`` is the
    discrete-Laplace scale of a leaf's fixed-point sum (mean leaves) or of each class
    count (count leaves); ``leaf_eps_num / leaf_den`` weights the median's rank scores.
    ``max_features == 0`` selects the greedy splitter over all candidates; otherwise
    ``max_features`` random features per node, with ``n_thresholds`` distinct random
    edges each (at most ``n_bins - 1``). ``max_nodes`` caps the tree's size
    (:meth:`plan_level`).
    """

    cdef readonly int max_depth
    cdef int max_features
    cdef Py_ssize_t max_nodes
    cdef double min_samples_split
    cdef Layout layout  # the statistics and their utilities (_stats.pxd)
    cdef Noise noise    # the releases' noise parameters (_releases.pxd)

    def __init__(self, *, int n_bins, int n_labels, int max_depth, str criterion, str leaf,
                 str selection, int max_features, double min_samples_split,
                 double min_samples_leaf, double fixed_scale, uint64_t count_t,
                 uint64_t count_s, double split_q, uint64_t split_eps_num, uint64_t split_den,
                 uint64_t leaf_t=1, uint64_t leaf_s=1, uint64_t leaf_eps_num=1,
                 uint64_t leaf_den=1, Py_ssize_t max_nodes=2**20, int n_thresholds=1,
                 int weight_shift=0):
        if not 2 <= n_bins <= 256 or not 2 <= n_labels <= 256 or not 0 <= max_depth <= 64:
            raise ValueError("n_bins and n_labels must be in [2, 256], max_depth in [0, 64]")
        if criterion not in _CRITERIA or leaf not in _LEAVES:
            raise ValueError(f"unknown criterion {criterion!r} or leaf {leaf!r}")
        if selection not in ("permute_and_flip", "exponential"):
            raise ValueError("selection must be 'permute_and_flip' or 'exponential'")
        if max_features < 0:
            raise ValueError("max_features must be >= 0")
        if n_thresholds < 1:
            raise ValueError("n_thresholds must be >= 1")
        if max_nodes < 1 or max_nodes >= 2**31:
            raise ValueError("max_nodes must be in [1, 2**31)")
        self.max_nodes = max_nodes
        if not 0 <= weight_shift <= 30:
            raise ValueError("weight_shift must be in [0, 30]")
        self.noise.shift = weight_shift
        self.noise.half_unit = (<int64_t>1 << weight_shift) >> 1
        self.layout.inv_unit = 1.0 / (<int64_t>1 << weight_shift)
        # a mean leaf centres its sum on fixed_scale / 2 per record: with weights, an
        # exact integer per unit of weight
        if weight_shift and leaf == "mean" and (
                fixed_scale / 2 != rint(fixed_scale / 2)
                or (<int64_t>(fixed_scale / 2)) % (<int64_t>1 << weight_shift) != 0):
            raise ValueError("weighted mean leaves need fixed_scale / 2 a multiple of "
                             "2**weight_shift")
        self.noise.centre_units = (<int64_t>(fixed_scale / 2)) >> weight_shift
        if min(count_t, count_s, leaf_t, leaf_s, split_eps_num, split_den, leaf_eps_num,
               leaf_den) < 1 or not split_q > 0 or not fixed_scale > 0:
            raise ValueError("noise parameters must be positive")
        self.layout.n_bins = n_bins
        self.layout.n_labels = n_labels
        self.max_depth = max_depth
        self.layout.criterion = _CRITERIA[criterion]
        self.noise.leaf_kind = _LEAVES[leaf]
        self.layout.width = 2 if self.layout.criterion == CRITERION_MSE else 1 + n_labels
        self.max_features = max_features
        self.layout.n_thresholds = min(n_thresholds, n_bins - 1)
        self.noise.permute_flip = selection == "permute_and_flip"
        self.min_samples_split = min_samples_split
        self.noise.min_samples_leaf = min_samples_leaf
        self.layout.fixed_scale = fixed_scale
        self.noise.count_t, self.noise.count_s = count_t, count_s
        self.noise.split_q = split_q
        self.noise.split_eps_num, self.noise.split_den = split_eps_num, split_den
        self.noise.leaf_t, self.noise.leaf_s = leaf_t, leaf_s
        self.noise.leaf_eps_num, self.noise.leaf_den = leaf_eps_num, leaf_den

    @property
    def width(self):
        """int64 statistics per (feature, bin) cell (see :mod:`dptrees._core._stats`)."""
        return self.layout.width

    @property
    def value_width(self):
        return (self.layout.n_labels if self.noise.leaf_kind in (LEAF_COUNTS, LEAF_LABEL)
                else 1)

    @property
    def greedy(self):
        return self.max_features == 0

    cdef inline Py_ssize_t _features_drawn(self, Py_ssize_t p) noexcept nogil:
        """Features per node: all ``p`` (greedy) or ``max_features`` of them (random)."""
        return p if (self.max_features == 0 or self.max_features > p) else self.max_features

    cdef inline Py_ssize_t _n_candidates(self, Py_ssize_t p) noexcept nogil:
        """Candidate splits per node: every (feature, edge) pair (greedy), or
        ``n_thresholds`` random edges per drawn feature (random)."""
        if self.max_features == 0:
            return p * (self.layout.n_bins - 1)
        return self._features_drawn(p) * self.layout.n_thresholds

    def _check_n_features(self, Py_ssize_t p):
        if p < 1:
            raise ValueError("need at least one feature")
        if p * (self.layout.n_bins - 1) >= 2**31:
            raise ValueError("too many split candidates")

    cdef int _workspace(self, Workspace* w, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
        cdef Py_ssize_t n_cand = self._n_candidates(p)
        cdef Py_ssize_t n_labels = self.layout.n_labels, width = self.layout.width
        cdef Py_ssize_t n_scores = n_cand if n_cand > n_labels else n_labels
        cdef Py_ssize_t n_work = n_scores if n_scores > p else p
        w.current = <int64_t*>malloc((p * self.layout.n_bins * width + 1) * sizeof(int64_t))
        w.left_stats = <int64_t*>malloc(n_cand * width * sizeof(int64_t))
        w.totals = <int64_t*>malloc(width * sizeof(int64_t))
        w.scores = <int64_t*>malloc(n_scores * sizeof(int64_t))
        w.utilities = <double*>malloc(n_cand * sizeof(double))
        w.work = <Py_ssize_t*>malloc(n_work * sizeof(Py_ssize_t))
        w.cand_feature = <int32_t*>malloc(n_cand * sizeof(int32_t))
        w.cand_bin = <int32_t*>malloc(n_cand * sizeof(int32_t))
        w.scratch = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        if (w.current == NULL or w.left_stats == NULL or w.totals == NULL
                or w.scores == NULL or w.utilities == NULL or w.work == NULL
                or w.cand_feature == NULL or w.cand_bin == NULL or w.scratch == NULL):
            return ERR_MEMORY
        return 0

    cdef inline bint _may_split(self, int depth, double noisy_count) noexcept nogil:
        return depth < self.max_depth and noisy_count >= self.min_samples_split

    cdef inline void _leaf(self, bitgen_t* bg, Workspace* w, double noisy_count,
                           double* value) noexcept nogil:
        """Release a leaf's value from its totals ``w.totals`` (_releases.leaf_value)."""
        leaf_value(bg, &self.layout, &self.noise, w.totals, noisy_count, w.scores, w.work,
                   value)

    # -- building from rows in memory --------------------------------------------------

    def level_streams(self, generator):
        """One independent generator per depth ``0 .. max_depth``, spawned from
        ``generator``: every draw for the nodes of depth ``d`` (their split choices, their
        children's noisy counts, their leaf values; or their random candidates) comes
        from stream ``d``, in left-to-right order whatever order the nodes are built in."""
        return generator.spawn(self.max_depth + 1)

    def build(self, generator, candidate_generator, const uint8_t[:, ::1] codes,
              const int64_t[::1] y_fixed, const uint8_t[::1] labels, codes_by_feature=None,
              int n_threads=1, weights=None):
        """Build the tree from rows in memory; returns a dict of node arrays, numbered
        depth first.

        ``value`` has one entry per node (regression) or ``value_width`` columns (class
        counts); it is NaN at internal nodes.

        ``generator`` draws all noise; ``candidate_generator`` draws the random splitter's
        candidates and nothing else, so those never depend on the data (each through
        :meth:`level_streams`). ``codes``: (n, p) feature bin codes below ``n_bins``;
        ``y_fixed``: targets in ``[0, fixed_scale]`` (ignored for classification);
        ``labels``: target bins or classes below ``n_labels``. ``codes_by_feature``: the
        same codes feature-major, shape (p, n) (made here if not given). Split tests read
        one feature of rows scattered across the data: in a 1-D column per feature those
        reads stay within a cache-sized array. ``n_threads``: threads for the statistics
        of large nodes (the same tree for any number). ``weights``: each row's weight in
        units of ``2**-weight_shift``, int64 in ``[0, 2**weight_shift]``; required if and
        only if the builder was made with ``weight_shift > 0`` (see "Sample weights" in
        the module docstring). Its regression targets are scaled by the weights here.
        """
        cdef Py_ssize_t n = codes.shape[0], p = codes.shape[1], d
        cdef bitgen_t* bgs[MAX_LEVELS]
        cdef bitgen_t* cand_bgs[MAX_LEVELS]
        cdef NodeArrays nodes
        cdef int status
        cdef int shift = self.noise.shift
        # An empty part of a partition forest still gets a (noisy) tree: skipping it would
        # reveal that it is empty. So n == 0 is allowed.
        self._check_n_features(p)
        if n_threads < 1:
            raise ValueError("n_threads must be >= 1")
        if y_fixed.shape[0] != n or labels.shape[0] != n:
            raise ValueError("codes, y_fixed and labels must have one entry per row")
        # The loops below index statistics by these values: check them once here.
        if n and (np.asarray(codes).max() >= self.layout.n_bins
                  or np.asarray(labels).max() >= self.layout.n_labels):
            raise ValueError("bin codes or labels out of range")
        if n and (np.asarray(y_fixed).min() < 0
                  or np.asarray(y_fixed).max() > self.layout.fixed_scale):
            raise ValueError("fixed-point targets out of range")
        cdef const int64_t[::1] w_view
        cdef const int64_t* wt = NULL
        cdef int64_t root_units = n
        if (weights is None) != (shift == 0):
            raise ValueError("weights are required if and only if weight_shift > 0")
        if weights is not None:
            units = np.ascontiguousarray(weights, dtype=np.int64)
            if units.shape != (n,):
                raise ValueError("weights must have one entry per row")
            if n and (units.min() < 0 or units.max() > (1 << shift)):
                raise ValueError(f"weights out of range [0, 2**{shift}]")
            # a row's target counts with its weight, rounded down: at most the
            # unweighted target, so every sensitivity holds (module docstring)
            y_fixed = (np.asarray(y_fixed) * units) >> shift
            root_units = int(units.sum())
            if n == 0:
                units = np.zeros(1, dtype=np.int64)  # keeps &w_view[0] valid
            w_view = units
            wt = &w_view[0]
        if candidate_generator is generator:
            raise ValueError("candidates need their own generator, separate from the noise")
        noise = self.level_streams(generator)  # fresh generators: no one else draws from them
        # (the greedy splitter draws no candidates: its candidate streams are never made)
        candidates = None if self.max_features == 0 else self.level_streams(candidate_generator)
        for d in range(self.max_depth + 1):
            bgs[d] = bitgen_of(noise[d])
            cand_bgs[d] = NULL if candidates is None else bitgen_of(candidates[d])
        if codes_by_feature is None:
            codes_by_feature = np.ascontiguousarray(np.asarray(codes).T)
        if np.shape(codes_by_feature) != (p, n):
            raise ValueError("codes_by_feature must be the transpose of codes")
        if n == 0:  # one spare column keeps the pointer below valid
            codes_by_feature = np.zeros((p, 1), dtype=np.uint8)
        cdef const uint8_t[:, ::1] columns = codes_by_feature
        # Row pointers (the loops index them by row: checked above). Without rows no
        # loop reads them, and none is taken from an empty array.
        cdef const uint8_t* row_codes = NULL
        cdef const int64_t* y_ptr = NULL
        cdef const uint8_t* label_ptr = NULL
        if n:
            row_codes = &codes[0, 0]
            y_ptr = &y_fixed[0]
            label_ptr = &labels[0]
        memset(&nodes, 0, sizeof(NodeArrays))
        nodes.value_width = self.value_width
        index = np.arange(max(n, 1), dtype=np.intp)  # one spare slot keeps &idx[0] valid
        cdef Py_ssize_t[::1] idx = index
        try:
            with nogil:
                status = self._build(bgs, cand_bgs, row_codes, &columns[0, 0],
                                     columns.shape[1], y_ptr, label_ptr, wt, root_units,
                                     &idx[0], n, p, &nodes, n_threads)
            _raise_status(status)
            return node_dict(&nodes)
        finally:
            free_nodes(&nodes)

    cdef int _build(self, bitgen_t** bgs, bitgen_t** cand_bgs, const uint8_t* codes,
                    const uint8_t* columns, Py_ssize_t column_stride,
                    const int64_t* y_fixed, const uint8_t* labels, const int64_t* wt,
                    int64_t root_units, Py_ssize_t* idx, Py_ssize_t n, Py_ssize_t p,
                    NodeArrays* nodes, int n_threads) noexcept nogil:
        """Depth first: a node's subtree is built while its rows and histograms are in
        cache. Nodes of one depth are still met left to right, each drawing from its
        depth's stream: the draws of a level-by-level build. ``codes``: the rows' codes,
        row-major (n, p); ``columns``: feature-major, ``column_stride`` codes a feature."""
        cdef const Layout* L = &self.layout
        cdef bint greedy = self.max_features == 0
        cdef Py_ssize_t k = self._features_drawn(p)
        cdef Py_ssize_t n_cand = self._n_candidates(p)
        cdef Py_ssize_t hist = p * L.n_bins * L.width
        # The stack holds at most one pending sibling per depth plus the node being
        # split, so positions 0 .. max_depth + 1 are all that is ever used.
        cdef Py_ssize_t n_slots = self.max_depth + 3
        cdef Workspace w
        cdef Decision d
        cdef StackEntry stack[MAX_LEVELS + 2]
        cdef Py_ssize_t attempts[MAX_LEVELS]  # split attempts so far at each depth
        cdef StackEntry e
        cdef int64_t* slots = NULL  # one statistics buffer per stack position
        cdef const int64_t* h
        cdef Py_ssize_t top = 0, mid
        cdef int32_t node_id
        cdef bint left_needs, right_needs
        cdef int status = 0
        memset(&w, 0, sizeof(Workspace))
        memset(attempts, 0, sizeof(attempts))
        status = self._workspace(&w, n, p)
        slots = <int64_t*>malloc((n_slots * hist + 1) * sizeof(int64_t))
        if slots == NULL:
            status = ERR_MEMORY
        if status == 0:
            stack[0].start = 0
            stack[0].end = n
            stack[0].depth = 0
            stack[0].parent = -1
            stack[0].is_left = False
            stack[0].noisy_count = noisy_records(bgs[0], &self.noise, root_units)
            stack[0].has_stats = greedy and self._may_split(0, stack[0].noisy_count)
            if stack[0].has_stats:
                histograms(L, codes, y_fixed, labels, wt, idx, 0, n, p, slots, n_threads)
            top = 1
        while status == 0 and top > 0:
            top -= 1
            e = stack[top]
            node_id = new_node(nodes, e.depth, e.noisy_count, e.parent, e.is_left)
            if node_id < 0:
                status = ERR_MEMORY
                break
            if not (self._may_split(e.depth, e.noisy_count)
                    and attempts[e.depth] < self._max_level_attempts()):
                row_totals(L, y_fixed, labels, wt, idx, e.start, e.end, w.totals)
                self._leaf(bgs[e.depth], &w, e.noisy_count,
                           nodes.value + node_id * nodes.value_width)
                continue
            attempts[e.depth] += 1
            h = NULL
            if greedy:
                # the children's histograms will overwrite this slot and the next
                memcpy(w.current, slots + top * hist, hist * sizeof(int64_t))
                h = w.current
                hist_totals(L, h, w.totals)
            else:
                _draw_candidates(cand_bgs[e.depth], p, k, L.n_thresholds, L.n_bins,
                                 w.work, w.cand_feature, w.cand_bin)
                candidate_stats(L, columns, column_stride, y_fixed, labels, wt, idx,
                                e.start, e.end, k, w.cand_feature, w.cand_bin,
                                w.totals, w.left_stats, w.current, n_threads)
            status = choose_split(bgs[e.depth], L, &self.noise, greedy, h, p, n_cand, &w,
                                  &d)
            if status != 0:
                break
            if d.feature < 0:
                self._leaf(bgs[e.depth], &w, e.noisy_count,
                           nodes.value + node_id * nodes.value_width)
                continue
            mid = stable_partition(columns + d.feature * column_stride, idx, e.start, e.end,
                                   d.bin_threshold, w.scratch)
            nodes.feature[node_id] = d.feature
            nodes.bin_threshold[node_id] = d.bin_threshold
            left_needs = greedy and self._may_split(e.depth + 1, d.left_count)
            right_needs = greedy and self._may_split(e.depth + 1, d.right_count)
            # Measure the child with the smaller *released* noisy count and take the
            # other as parent minus it. The rule reads only released values
            # (post-processing), never the private child sizes.
            if left_needs or right_needs:
                if d.left_count <= d.right_count:
                    histograms(L, codes, y_fixed, labels, wt, idx, e.start, mid, p,
                               slots + (top + 1) * hist, n_threads)
                    if right_needs:
                        subtract(h, slots + (top + 1) * hist, hist, slots + top * hist)
                else:
                    histograms(L, codes, y_fixed, labels, wt, idx, mid, e.end, p,
                               slots + top * hist, n_threads)
                    if left_needs:
                        subtract(h, slots + top * hist, hist, slots + (top + 1) * hist)
            # right first, so that the left child is built (and numbered) first
            _set_entry(&stack[top], mid, e.end, e.depth + 1, node_id, False, right_needs,
                       d.right_count)
            _set_entry(&stack[top + 1], e.start, mid, e.depth + 1, node_id, True, left_needs,
                       d.left_count)
            top += 2
        free(slots)
        _free_workspace(&w)
        return status

    cdef inline Py_ssize_t _max_level_attempts(self) noexcept nogil:
        """Split attempts allowed per depth, so that a tree has at most ``max_nodes``
        nodes: ``1 + 2 * max_depth * attempts <= max_nodes``."""
        cdef Py_ssize_t depths = self.max_depth if self.max_depth > 0 else 1
        cdef Py_ssize_t a = (self.max_nodes - 1) // (2 * depths)
        return a if a > 0 else 0

    # -- building from statistics summed elsewhere -------------------------------------

    def noisy_root_count(self, generator, int64_t n_rows):
        """The root's released count: ``n_rows`` plus discrete Laplace noise (the first
        draw of a build, from the depth-0 stream)."""
        cdef bitgen_t* bg = bitgen_of(generator)
        cdef double out
        with generator.bit_generator.lock:
            out = noisy_records(bg, &self.noise, n_rows)
        return out

    def plan_level(self, int depth, const double[::1] noisy_count):
        """Which nodes of a level (released counts ``noisy_count``, left to right) try
        to split: those that may (depth, ``min_samples_split``) while they are among the
        first ``(max_nodes - 1) // (2 max_depth)`` of their depth to."""
        cdef Py_ssize_t i, n = noisy_count.shape[0], attempts = 0
        out = np.zeros(n, dtype=bool)
        for i in range(n):
            if self._may_split(depth, noisy_count[i]) and attempts < self._max_level_attempts():
                out[i] = True
                attempts += 1
        return out

    def draw_candidates(self, candidate_generator, Py_ssize_t n_nodes, Py_ssize_t p):
        """The random splitter's candidates of ``n_nodes`` splittable nodes, in order:
        ``(feature, bin_threshold)``, int32 arrays of shape (n_nodes, k * n_thresholds).
        The same draws an in-memory build makes."""
        cdef Py_ssize_t k, i
        cdef bitgen_t* cand_bg = bitgen_of(candidate_generator)
        cdef Py_ssize_t nt = self.layout.n_thresholds
        if self.max_features == 0:
            raise ValueError("the greedy splitter has no random candidates")
        self._check_n_features(p)
        k = self._features_drawn(p)
        feature = np.zeros((n_nodes, k * nt), dtype=np.int32)
        bin_ = np.zeros((n_nodes, k * nt), dtype=np.int32)
        work = np.zeros(p, dtype=np.intp)
        cdef int32_t[:, ::1] f_view = feature
        cdef int32_t[:, ::1] b_view = bin_
        cdef Py_ssize_t[::1] work_view = work
        with candidate_generator.bit_generator.lock:
            for i in range(n_nodes):
                _draw_candidates(cand_bg, p, k, nt, self.layout.n_bins,
                                 &work_view[0], &f_view[i, 0], &b_view[i, 0])
        return feature, bin_

    def decide_level(self, generator, int depth, const double[::1] noisy_count,
                     const int64_t[:, ::1] totals,
                     const int64_t[:, :, :, ::1] hist, cand_feature=None, cand_bin=None):
        """Decide the nodes of one level, in order, from their exact statistics.

        ``generator``: the level's stream (:meth:`level_streams`); ``noisy_count``: the
        level's released counts, left to right; ``totals`` (n, width): every node's
        totals (used for the nodes that do not split); ``hist`` (n_splittable, p, n_bins,
        width): the histograms of the nodes :meth:`plan_level` marks, in order;
        ``cand_feature / cand_bin``: their candidates (:meth:`draw_candidates`, random
        splitter). Draws exactly the noise
        :meth:`build` draws for the level. Returns ``(feature, bin_threshold,
        left_count, right_count, value)``: feature -1 and a released ``value`` for a
        leaf, NaN values and the children's noisy counts for a split.
        """
        cdef Py_ssize_t n = noisy_count.shape[0], p = hist.shape[1], i, j = 0, m, k
        cdef bitgen_t* bg = bitgen_of(generator)
        cdef const Layout* L = &self.layout
        cdef bint greedy = self.max_features == 0
        cdef Workspace w
        cdef Decision d
        cdef int status = 0
        cdef int vw = self.value_width
        cdef int width = L.width
        splittable = self.plan_level(depth, noisy_count)
        cdef const uint8_t[::1] split_view = splittable.view(np.uint8)
        self._check_n_features(p)
        k = self._n_candidates(p)  # the random splitter's candidates per node
        if totals.shape[0] != n or totals.shape[1] != width:
            raise ValueError(f"totals must have shape ({n}, {width})")
        if (hist.shape[0] != int(splittable.sum()) or hist.shape[2] != L.n_bins
                or hist.shape[3] != width):
            raise ValueError(f"hist must have shape ({int(splittable.sum())}, p, "
                             f"{L.n_bins}, {width}): one per splittable node")
        cdef const int32_t[:, ::1] cf
        cdef const int32_t[:, ::1] cb
        if not greedy:
            cf = np.ascontiguousarray(cand_feature, dtype=np.int32)
            cb = np.ascontiguousarray(cand_bin, dtype=np.int32)
            if cf.shape[0] != hist.shape[0] or cf.shape[1] != k or cb.shape[0] != cf.shape[0] \
                    or cb.shape[1] != k:
                raise ValueError(f"candidates must have shape ({hist.shape[0]}, {k})")
            if hist.shape[0] and (np.asarray(cf).min() < 0 or np.asarray(cf).max() >= p
                                  or np.asarray(cb).min() < 0
                                  or np.asarray(cb).max() >= L.n_bins - 1):
                raise ValueError("candidates out of range")
        feature = np.full(n, -1, dtype=np.int32)
        bin_threshold = np.full(n, -1, dtype=np.int32)
        left_count = np.full(n, np.nan)
        right_count = np.full(n, np.nan)
        value = np.full((n, vw), np.nan)
        cdef int32_t[::1] f_out = feature
        cdef int32_t[::1] b_out = bin_threshold
        cdef double[::1] lc_out = left_count
        cdef double[::1] rc_out = right_count
        cdef double[:, ::1] v_out = value
        memset(&w, 0, sizeof(Workspace))
        try:
            with generator.bit_generator.lock, nogil:
                status = self._workspace(&w, 0, p)
                for i in range(n):
                    if status != 0:
                        break
                    if not split_view[i]:
                        for m in range(width):
                            w.totals[m] = totals[i, m]
                        self._leaf(bg, &w, noisy_count[i], &v_out[i, 0])
                        continue
                    hist_totals(L, &hist[j, 0, 0, 0], w.totals)
                    if not greedy:
                        memcpy(w.cand_feature, &cf[j, 0], k * sizeof(int32_t))
                        memcpy(w.cand_bin, &cb[j, 0], k * sizeof(int32_t))
                        hist_left(L, &hist[j, 0, 0, 0], w.cand_feature, w.cand_bin, k,
                                  w.left_stats)
                    status = choose_split(bg, L, &self.noise, greedy, &hist[j, 0, 0, 0], p,
                                          k, &w, &d)
                    j += 1
                    if status != 0:
                        break
                    if d.feature < 0:
                        self._leaf(bg, &w, noisy_count[i], &v_out[i, 0])
                        continue
                    f_out[i] = d.feature
                    b_out[i] = d.bin_threshold
                    lc_out[i] = d.left_count
                    rc_out[i] = d.right_count
            _raise_status(status)
        finally:
            _free_workspace(&w)
        return feature, bin_threshold, left_count, right_count, (
            value if vw > 1 else value[:, 0].copy())


cdef _raise_status(int status):
    if status == ERR_MEMORY:
        raise MemoryError("out of memory while building the tree")
    if status == ERR_SCORE_RANGE:
        raise OverflowError("split utilities out of range for exact selection")


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


cdef void _draw_candidates(bitgen_t* cand_bg, Py_ssize_t p, Py_ssize_t k,
                           Py_ssize_t n_thresholds, int n_bins, Py_ssize_t* work,
                           int32_t* feature, int32_t* bin_) noexcept nogil:
    """``k`` distinct features and ``n_thresholds`` distinct uniform bin edges each
    (``n_thresholds <= n_bins - 1``), from ``cand_bg`` alone: candidate
    ``i * n_thresholds + t`` is the ``t``-th edge of the ``i``-th feature.

    Reads no data: the draws depend only on the candidate stream, ``p``, ``k``,
    ``n_thresholds`` and ``n_bins`` (partial Fisher-Yates over the features, and over the
    edges of each; with one edge per feature, one uniform draw of it).
    """
    cdef Py_ssize_t i, j, t, c, tmp
    cdef Py_ssize_t edges[256]
    for i in range(p):
        work[i] = i
    for i in range(k):
        j = i + <Py_ssize_t>uniform_below(cand_bg, <uint64_t>(p - i))
        tmp = work[i]
        work[i] = work[j]
        work[j] = tmp
        for t in range(n_bins - 1):
            edges[t] = t
        for t in range(n_thresholds):
            j = t + <Py_ssize_t>uniform_below(cand_bg, <uint64_t>(n_bins - 1 - t))
            tmp = edges[t]
            edges[t] = edges[j]
            edges[j] = tmp
            c = i * n_thresholds + t
            feature[c] = <int32_t>work[i]
            bin_[c] = <int32_t>edges[t]

