"""Builder of differentially private trees, without the GIL: depth first from rows in
memory, or level by level from statistics summed elsewhere -- the same tree.

The Python layer (:mod:`dptrees.tree`, :mod:`dptrees.forest`) decides the budget and turns
it into exact integer noise parameters; this module does the per-row work: statistics of
each node's rows, split utilities, exact private selection, partitioning, noisy counts
and leaf values. Rows of a node are kept contiguous in one index array, reordered in place
at each split.

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
one of them, so the privacy analysis below does not depend on which stream it is.

What a node releases, and why each release is private (add/remove-one neighbours):

* its **noisy count**: the number of its rows plus exact discrete Laplace noise.
  Sensitivity 1 (one record is in one node of each depth);
* its **split** (feature, bin threshold), chosen by permute-and-flip or the exponential
  mechanism among the candidates: *all* ``n_features * (n_bins - 1)`` (feature, edge)
  pairs for the greedy splitter, or ``max_features`` features with ``n_thresholds``
  distinct edges each, drawn from a separate random stream that reads no data, for the
  random (ExtraTrees) splitter. The selection's sensitivity does not depend on the
  number of candidates. Utilities are
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
whole number of records ``round(U / 2**s)`` (:meth:`TreeBuilder._records`): adding a
record raises ``U`` by ``u <= 2**s``, so the rounded value by 0 or 1. Noisy counts, class
counts, label and median scores therefore keep sensitivity 1 and their monotonicity, and
their noise is unchanged; the split utilities are computed from the units scaled back
by ``2**-s`` (``_side_utility``: sensitivities for weighted records). A weight of 0 is
the record's removal, and weights of one give the unweighted tree bit for bit (every
scaling is by a power of two).

Statistics
----------
Per (feature, bin) cell the builder keeps ``width`` int64 statistics: ``[count, sum]`` for
squared error, ``[count, n_0, ..., n_{L-1}]`` (counts per target bin or class) for the
absolute error and Gini. The greedy splitter builds these histograms for every feature,
measuring the child with the smaller *released* noisy count (a rule on public values: the
true child sizes are private) and taking the other as parent minus it; the random
splitter accumulates left-side statistics for its few candidates only.

Threads
-------
With ``n_threads > 1`` (OpenMP; serial where the build has none), a node of at least
``THREAD_MIN_ROWS`` rows splits its histograms by feature, or its candidates' left sums by
candidate, across threads. Every cell is still one thread's exact integer sum over the
node's rows in their order, so the tree is the same bit for bit; the noise is drawn by
the one thread that walks the tree.
"""

from libc.math cimport rint, fabs, NAN
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memset, memcpy
from cython.parallel cimport prange
from numpy.random cimport bitgen_t

from dptrees._core._cells cimport add_row
from dptrees._core._rng cimport bitgen_of, discrete_laplace, uniform_below
from dptrees._core._mechanisms cimport permute_and_flip, exponential_mechanism
from dptrees._core._partition cimport stable_partition

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


cdef enum:
    MAX_LEVELS = 65  # max_depth <= 64
    THREAD_MIN_ROWS = 1024  # a smaller node's statistics are not worth waking threads for


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


cdef int32_t _new_node(NodeArrays* a, int32_t depth, double noisy_count, int32_t parent,
                       bint is_left) noexcept nogil:
    """Append a node (a leaf until split); returns its id, or ERR_MEMORY."""
    cdef Py_ssize_t node = a.size, m
    if a.size == a.capacity and _grow(a) != 0:
        return ERR_MEMORY
    a.size += 1
    a.depth[node] = depth
    a.noisy_count[node] = noisy_count
    a.left[node] = -1
    a.right[node] = -1
    a.feature[node] = -1
    a.bin_threshold[node] = -1
    for m in range(a.value_width):  # only leaves release a value
        a.value[node * a.value_width + m] = NAN
    if parent >= 0:
        if is_left:
            a.left[parent] = <int32_t>node
        else:
            a.right[parent] = <int32_t>node
    return <int32_t>node


cdef void _free_nodes(NodeArrays* a) noexcept nogil:
    free(a.feature); free(a.bin_threshold); free(a.left); free(a.right)
    free(a.depth); free(a.noisy_count); free(a.value)


cdef dict _node_dict(NodeArrays* a):
    """Copies of the node arrays."""
    size = a.size
    value = np.asarray(<double[:size * a.value_width]>a.value).copy()
    return {
        "feature": np.asarray(<int32_t[:size]>a.feature).copy(),
        "bin_threshold": np.asarray(<int32_t[:size]>a.bin_threshold).copy(),
        "left": np.asarray(<int32_t[:size]>a.left).copy(),
        "right": np.asarray(<int32_t[:size]>a.right).copy(),
        "depth": np.asarray(<int32_t[:size]>a.depth).copy(),
        "noisy_count": np.asarray(<double[:size]>a.noisy_count).copy(),
        "value": value.reshape(size, a.value_width) if a.value_width > 1 else value,
    }


def renumber_depth_first(dict nodes):
    """New node arrays numbered depth first (a node, its left subtree, then its right:
    scikit-learn's order) from arrays numbered in any order where node 0 is the root.

    ``nodes``: ``feature, bin_threshold, left, right, depth`` (int32), ``noisy_count``
    (float64), ``value`` (float64, one row per node); children ids -1 at leaves. Returns
    new arrays; ``value`` is 1-D if it has one column.
    """
    cdef const int32_t[::1] old_left = np.ascontiguousarray(nodes["left"], dtype=np.int32)
    cdef const int32_t[::1] old_right = np.ascontiguousarray(nodes["right"], dtype=np.int32)
    cdef Py_ssize_t size = old_left.shape[0], top = 0, counter = 0, v, u
    old_value = np.ascontiguousarray(nodes["value"], dtype=np.float64).reshape(size, -1)
    new_id = np.full(size, -1, dtype=np.intp)
    stack_arr = np.empty(size + 1, dtype=np.intp)
    cdef Py_ssize_t[::1] new_view = new_id
    cdef Py_ssize_t[::1] stack = stack_arr
    if size:
        stack[0] = 0
        top = 1
    while top > 0:
        top -= 1
        v = stack[top]
        if not 0 <= v < size or new_view[v] != -1 or counter == size:
            raise ValueError("the node arrays are not a tree rooted at node 0")
        new_view[v] = counter
        counter += 1
        if old_left[v] != -1:
            stack[top] = old_right[v]
            stack[top + 1] = old_left[v]
            top += 2
    if counter != size:
        raise ValueError("the node arrays are not a tree rooted at node 0")
    order = np.empty(size, dtype=np.intp)
    order[new_id] = np.arange(size)
    out = {name: np.ascontiguousarray(np.asarray(nodes[name])[order])
           for name in ("feature", "bin_threshold", "depth", "noisy_count")}
    for name in ("left", "right"):
        old = np.asarray(nodes[name])[order]
        out[name] = np.where(old == -1, -1, new_id[np.maximum(old, 0)]).astype(np.int32)
    value = old_value[order]
    out["value"] = value if value.shape[1] > 1 else value[:, 0].copy()
    return out


cdef struct Workspace:
    int64_t* current      # the node's histograms (its slot is overwritten by its children's)
    int64_t* left_stats   # random splitter: left-side statistics of each candidate
    int64_t* totals       # statistics of the node's rows (width entries)
    int64_t* scores
    double* utilities
    Py_ssize_t* work
    int32_t* cand_feature
    int32_t* cand_bin
    Py_ssize_t* scratch   # the partition's right side


cdef struct Decision:
    int32_t feature       # -1: the node stays a leaf
    int32_t bin_threshold
    int64_t n_left        # exact rows of each side
    int64_t n_right
    double left_count     # their released noisy counts
    double right_count


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

    cdef readonly int width, max_depth
    cdef int n_bins, n_labels, criterion, leaf_kind, max_features, n_thresholds
    cdef Py_ssize_t max_nodes
    cdef bint permute_flip
    cdef double min_samples_split, min_samples_leaf, fixed_scale
    cdef int shift            # statistics count records in units of 2**-shift (weights)
    cdef int64_t half_unit    # 2**shift / 2: rounds units to records
    cdef int64_t centre_units  # fixed_scale / 2 per record unit (mean leaves)
    cdef double inv_unit      # 2**-shift
    cdef uint64_t count_t, count_s, leaf_t, leaf_s
    cdef double split_q
    cdef uint64_t split_eps_num, split_den, leaf_eps_num, leaf_den

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
        self.shift = weight_shift
        self.half_unit = (<int64_t>1 << weight_shift) >> 1
        self.inv_unit = 1.0 / (<int64_t>1 << weight_shift)
        # a mean leaf centres its sum on fixed_scale / 2 per record: with weights, an
        # exact integer per unit of weight
        if weight_shift and leaf == "mean" and (
                fixed_scale / 2 != rint(fixed_scale / 2)
                or (<int64_t>(fixed_scale / 2)) % (<int64_t>1 << weight_shift) != 0):
            raise ValueError("weighted mean leaves need fixed_scale / 2 a multiple of "
                             "2**weight_shift")
        self.centre_units = (<int64_t>(fixed_scale / 2)) >> weight_shift
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
        self.n_thresholds = min(n_thresholds, n_bins - 1)
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
            return p * (self.n_bins - 1)
        return self._features_drawn(p) * self.n_thresholds

    def _check_n_features(self, Py_ssize_t p):
        if p < 1:
            raise ValueError("need at least one feature")
        if p * (self.n_bins - 1) >= 2**31:
            raise ValueError("too many split candidates")

    cdef int _workspace(self, Workspace* w, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
        cdef Py_ssize_t k = self._features_drawn(p)
        cdef Py_ssize_t n_cand = self._n_candidates(p)
        cdef Py_ssize_t n_scores = n_cand if n_cand > self.n_labels else self.n_labels
        cdef Py_ssize_t n_work = n_scores if n_scores > p else p
        w.current = <int64_t*>malloc((p * self.n_bins * self.width + 1) * sizeof(int64_t))
        w.left_stats = <int64_t*>malloc(n_cand * self.width * sizeof(int64_t))
        w.totals = <int64_t*>malloc(self.width * sizeof(int64_t))
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

    # -- what a level decides, from statistics alone -----------------------------------

    cdef inline int64_t _records(self, int64_t units) noexcept nogil:
        """``units`` of weight (``>= 0``) rounded to whole records: adding a record of
        weight at most 1 raises this by 0 or 1 (see "Sample weights"); the identity
        without weights."""
        return (units + self.half_unit) >> self.shift

    cdef inline bint _may_split(self, int depth, double noisy_count) noexcept nogil:
        return depth < self.max_depth and noisy_count >= self.min_samples_split

    cdef int _split(self, bitgen_t* bg, const int64_t* hist, Py_ssize_t p, Py_ssize_t k,
                    Workspace* w, Decision* d) noexcept nogil:
        """Choose a splittable node's split and release its children's noisy counts.

        Reads ``hist`` (the node's per-feature histograms, greedy splitter) or
        ``w.left_stats`` for the candidates ``w.cand_feature / w.cand_bin`` (random
        splitter), and ``w.totals``. ``d.feature`` stays -1 if a child's noisy count is
        below ``min_samples_leaf`` (the split is undone; the caller makes a leaf).
        """
        cdef bint greedy = self.max_features == 0
        cdef Py_ssize_t n_cand = self._n_candidates(p)
        cdef Py_ssize_t chosen, bin_
        cdef int32_t f, b
        if greedy:
            self._greedy_utilities(hist, p, w.utilities)
        else:
            self._random_utilities(w.totals, w.left_stats, n_cand, w.utilities)
        if _quantise(w.utilities, n_cand, self.split_q, w.scores) != 0:
            return ERR_SCORE_RANGE
        if self.permute_flip:
            chosen = permute_and_flip(bg, w.scores, n_cand, self.split_eps_num,
                                      self.split_den, w.work)
        else:
            chosen = exponential_mechanism(bg, w.scores, n_cand, self.split_eps_num,
                                           self.split_den)
        if greedy:
            f = <int32_t>(chosen // (self.n_bins - 1))
            b = <int32_t>(chosen % (self.n_bins - 1))
            d.n_left = 0
            for bin_ in range(b + 1):
                d.n_left += hist[(f * self.n_bins + bin_) * self.width]
        else:
            f = w.cand_feature[chosen]
            b = w.cand_bin[chosen]
            d.n_left = w.left_stats[chosen * self.width]
        d.n_right = w.totals[0] - d.n_left
        d.left_count = self._records(d.n_left) + discrete_laplace(bg, self.count_t,
                                                                  self.count_s)
        d.right_count = self._records(d.n_right) + discrete_laplace(bg, self.count_t,
                                                                    self.count_s)
        d.feature = -1
        d.bin_threshold = -1
        if d.left_count >= self.min_samples_leaf and d.right_count >= self.min_samples_leaf:
            d.feature = f
            d.bin_threshold = b
        return 0

    cdef void _hist_totals(self, const int64_t* hist, int64_t* totals) noexcept nogil:
        """A node's totals: its first feature's histogram summed over the bins."""
        cdef Py_ssize_t b, m
        for m in range(self.width):
            totals[m] = 0
        for b in range(self.n_bins):
            for m in range(self.width):
                totals[m] += hist[b * self.width + m]

    cdef void _hist_left(self, const int64_t* hist, const int32_t* feature,
                         const int32_t* bin_, Py_ssize_t k, int64_t* left) noexcept nogil:
        """Left-side statistics of candidates ``(feature[c], bin_[c])`` from histograms."""
        cdef Py_ssize_t c, b, m
        cdef const int64_t* cell
        for c in range(k):
            for m in range(self.width):
                left[c * self.width + m] = 0
            for b in range(bin_[c] + 1):
                cell = hist + (feature[c] * self.n_bins + b) * self.width
                for m in range(self.width):
                    left[c * self.width + m] += cell[m]

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
        # An empty part of a partition forest still gets a (noisy) tree: skipping it would
        # reveal that it is empty. So n == 0 is allowed.
        self._check_n_features(p)
        if n_threads < 1:
            raise ValueError("n_threads must be >= 1")
        if y_fixed.shape[0] != n or labels.shape[0] != n:
            raise ValueError("codes, y_fixed and labels must have one entry per row")
        # The loops below index statistics by these values: check them once here.
        if n and (np.asarray(codes).max() >= self.n_bins
                  or np.asarray(labels).max() >= self.n_labels):
            raise ValueError("bin codes or labels out of range")
        if n and (np.asarray(y_fixed).min() < 0 or np.asarray(y_fixed).max() > self.fixed_scale):
            raise ValueError("fixed-point targets out of range")
        cdef const int64_t[::1] w_view
        cdef const int64_t* wt = NULL
        cdef int64_t root_units = n
        if (weights is None) != (self.shift == 0):
            raise ValueError("weights are required if and only if weight_shift > 0")
        if weights is not None:
            units = np.ascontiguousarray(weights, dtype=np.int64)
            if units.shape != (n,):
                raise ValueError("weights must have one entry per row")
            if n and (units.min() < 0 or units.max() > (1 << self.shift)):
                raise ValueError(f"weights out of range [0, 2**{self.shift}]")
            # a row's target counts with its weight, rounded down: at most the
            # unweighted target, so every sensitivity holds (module docstring)
            y_fixed = (np.asarray(y_fixed) * units) >> self.shift
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
        memset(&nodes, 0, sizeof(NodeArrays))
        nodes.value_width = self.value_width
        index = np.arange(max(n, 1), dtype=np.intp)  # one spare slot keeps &idx[0] valid
        cdef Py_ssize_t[::1] idx = index
        try:
            with nogil:
                status = self._build(bgs, cand_bgs, codes, &columns[0, 0], columns.shape[1],
                                     y_fixed, labels, wt, root_units, &idx[0], n, p, &nodes,
                                     n_threads)
            _raise_status(status)
            return _node_dict(&nodes)
        finally:
            _free_nodes(&nodes)

    cdef int _build(self, bitgen_t** bgs, bitgen_t** cand_bgs, const uint8_t[:, ::1] codes,
                    const uint8_t* columns, Py_ssize_t column_stride,
                    const int64_t[::1] y_fixed, const uint8_t[::1] labels, const int64_t* wt,
                    int64_t root_units, Py_ssize_t* idx, Py_ssize_t n, Py_ssize_t p,
                    NodeArrays* nodes, int n_threads) noexcept nogil:
        """Depth first: a node's subtree is built while its rows and histograms are in
        cache. Nodes of one depth are still met left to right, each drawing from its
        depth's stream: the draws of a level-by-level build."""
        cdef bint greedy = self.max_features == 0
        cdef Py_ssize_t k = self._features_drawn(p)
        cdef Py_ssize_t hist = p * self.n_bins * self.width
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
            stack[0].noisy_count = (self._records(root_units)
                                    + discrete_laplace(bgs[0], self.count_t, self.count_s))
            stack[0].has_stats = greedy and self._may_split(0, stack[0].noisy_count)
            if stack[0].has_stats:
                self._histograms(codes, y_fixed, labels, wt, idx, 0, n, p, slots, n_threads)
            top = 1
        while status == 0 and top > 0:
            top -= 1
            e = stack[top]
            node_id = _new_node(nodes, e.depth, e.noisy_count, e.parent, e.is_left)
            if node_id < 0:
                status = ERR_MEMORY
                break
            if not (self._may_split(e.depth, e.noisy_count)
                    and attempts[e.depth] < self._max_level_attempts()):
                self._row_totals(y_fixed, labels, wt, idx, e.start, e.end, w.totals)
                self._leaf_value(bgs[e.depth], w.totals, e.noisy_count, &w,
                                 nodes.value + node_id * nodes.value_width)
                continue
            attempts[e.depth] += 1
            h = NULL
            if greedy:
                # the children's histograms will overwrite this slot and the next
                memcpy(w.current, slots + top * hist, hist * sizeof(int64_t))
                h = w.current
                self._hist_totals(h, w.totals)
            else:
                _draw_candidates(cand_bgs[e.depth], p, k, self.n_thresholds, self.n_bins,
                                 w.work, w.cand_feature, w.cand_bin)
                self._candidate_stats(columns, column_stride, y_fixed, labels, wt, idx,
                                      e.start, e.end, k, w.cand_feature, w.cand_bin,
                                      w.totals, w.left_stats, w.current, n_threads)
            status = self._split(bgs[e.depth], h, p, k, &w, &d)
            if status != 0:
                break
            if d.feature < 0:
                self._leaf_value(bgs[e.depth], w.totals, e.noisy_count, &w,
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
                    self._histograms(codes, y_fixed, labels, wt, idx, e.start, mid, p,
                                     slots + (top + 1) * hist, n_threads)
                    if right_needs:
                        _subtract(h, slots + (top + 1) * hist, hist, slots + top * hist)
                else:
                    self._histograms(codes, y_fixed, labels, wt, idx, mid, e.end, p,
                                     slots + top * hist, n_threads)
                    if left_needs:
                        _subtract(h, slots + top * hist, hist, slots + (top + 1) * hist)
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
            out = self._records(n_rows) + discrete_laplace(bg, self.count_t, self.count_s)
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
        if self.max_features == 0:
            raise ValueError("the greedy splitter has no random candidates")
        self._check_n_features(p)
        k = self._features_drawn(p)
        feature = np.zeros((n_nodes, k * self.n_thresholds), dtype=np.int32)
        bin_ = np.zeros((n_nodes, k * self.n_thresholds), dtype=np.int32)
        work = np.zeros(p, dtype=np.intp)
        cdef int32_t[:, ::1] f_view = feature
        cdef int32_t[:, ::1] b_view = bin_
        cdef Py_ssize_t[::1] work_view = work
        with candidate_generator.bit_generator.lock:
            for i in range(n_nodes):
                _draw_candidates(cand_bg, p, k, self.n_thresholds, self.n_bins,
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
        cdef Workspace w
        cdef Decision d
        cdef int status = 0
        cdef int vw = self.value_width
        splittable = self.plan_level(depth, noisy_count)
        cdef const uint8_t[::1] split_view = splittable.view(np.uint8)
        self._check_n_features(p)
        k = self._n_candidates(p)  # the random splitter's candidates per node
        if totals.shape[0] != n or totals.shape[1] != self.width:
            raise ValueError(f"totals must have shape ({n}, {self.width})")
        if (hist.shape[0] != int(splittable.sum()) or hist.shape[2] != self.n_bins
                or hist.shape[3] != self.width):
            raise ValueError(f"hist must have shape ({int(splittable.sum())}, p, "
                             f"{self.n_bins}, {self.width}): one per splittable node")
        cdef const int32_t[:, ::1] cf
        cdef const int32_t[:, ::1] cb
        if self.max_features != 0:
            cf = np.ascontiguousarray(cand_feature, dtype=np.int32)
            cb = np.ascontiguousarray(cand_bin, dtype=np.int32)
            if cf.shape[0] != hist.shape[0] or cf.shape[1] != k or cb.shape[0] != cf.shape[0] \
                    or cb.shape[1] != k:
                raise ValueError(f"candidates must have shape ({hist.shape[0]}, {k})")
            if hist.shape[0] and (np.asarray(cf).min() < 0 or np.asarray(cf).max() >= p
                                  or np.asarray(cb).min() < 0
                                  or np.asarray(cb).max() >= self.n_bins - 1):
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
                        for m in range(self.width):
                            w.totals[m] = totals[i, m]
                        self._leaf_value(bg, w.totals, noisy_count[i], &w, &v_out[i, 0])
                        continue
                    self._hist_totals(&hist[j, 0, 0, 0], w.totals)
                    if self.max_features != 0:
                        memcpy(w.cand_feature, &cf[j, 0], k * sizeof(int32_t))
                        memcpy(w.cand_bin, &cb[j, 0], k * sizeof(int32_t))
                        self._hist_left(&hist[j, 0, 0, 0], w.cand_feature, w.cand_bin, k,
                                        w.left_stats)
                    status = self._split(bg, &hist[j, 0, 0, 0], p, self._features_drawn(p),
                                         &w, &d)
                    j += 1
                    if status != 0:
                        break
                    if d.feature < 0:
                        self._leaf_value(bg, w.totals, noisy_count[i], &w, &v_out[i, 0])
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

    # -- statistics --------------------------------------------------------------------

    cdef void _histograms(self, const uint8_t[:, ::1] codes, const int64_t[::1] y_fixed,
                          const uint8_t[::1] labels, const int64_t* wt, const Py_ssize_t* idx,
                          Py_ssize_t start, Py_ssize_t end, Py_ssize_t p, int64_t* out,
                          int n_threads) noexcept nogil:
        """Statistics of rows ``idx[start:end]`` per (feature, bin) cell; a large node's
        features are shared among ``n_threads`` threads."""
        cdef Py_ssize_t t, per
        memset(out, 0, p * self.n_bins * self.width * sizeof(int64_t))
        if end <= start:
            return
        cdef const uint8_t* base = &codes[0, 0]  # rows exist: the pointer is valid
        if n_threads < 2 or end - start < THREAD_MIN_ROWS:
            self._feature_histograms(base, p, y_fixed, labels, wt, idx, start, end, 0, p, out)
            return
        per = (p + n_threads - 1) // n_threads
        for t in prange(n_threads, num_threads=n_threads, schedule="static"):
            self._feature_histograms(base, p, y_fixed, labels, wt, idx, start, end,
                                     min(t * per, p), min((t + 1) * per, p), out)

    cdef void _feature_histograms(self, const uint8_t* codes, Py_ssize_t row_stride,
                                  const int64_t[::1] y_fixed, const uint8_t[::1] labels,
                                  const int64_t* wt, const Py_ssize_t* idx, Py_ssize_t start,
                                  Py_ssize_t end, Py_ssize_t f_start, Py_ssize_t f_stop,
                                  int64_t* out) noexcept nogil:
        """Add the statistics of rows ``idx[start:end]`` to the cells of features
        ``f_start .. f_stop - 1`` of ``out``; a row counts ``wt[row]`` units (1 if
        ``wt`` is NULL). Row ``r``'s codes start at ``codes + r * row_stride``: the
        row-major codes (``row_stride = p``), or one feature's column (``row_stride = 1``,
        features ``0 .. 1``)."""
        cdef Py_ssize_t i, row
        cdef Py_ssize_t wd = self.width, stride = self.n_bins * self.width
        cdef int64_t one = 1
        # build() checked the codes below n_bins: last_bin 255 compiles the clamp away.
        # The unweighted loops keep the constant count 1 (it folds into the kernel).
        if self.criterion == CRITERION_MSE and wt == NULL:  # [count, sum]
            for i in range(start, end):
                row = idx[i]
                add_row(out, stride, wd, codes + row * row_stride, f_start, f_stop, 255,
                        1, 1, &y_fixed[row])
        elif self.criterion == CRITERION_MSE:  # [weight, weighted sum]
            for i in range(start, end):
                row = idx[i]
                add_row(out, stride, wd, codes + row * row_stride, f_start, f_stop, 255,
                        wt[row], 1, &y_fixed[row])
        elif wt == NULL:  # [count, n_0 .. n_{L-1}]
            for i in range(start, end):
                row = idx[i]
                add_row(out, stride, wd, codes + row * row_stride, f_start, f_stop, 255,
                        1, 1 + labels[row], &one)
        else:  # [weight, weight of label 0 .. L-1]
            for i in range(start, end):
                row = idx[i]
                add_row(out, stride, wd, codes + row * row_stride, f_start, f_stop, 255,
                        wt[row], 1 + labels[row], &wt[row])

    cdef void _candidate_stats(self, const uint8_t* columns, Py_ssize_t column_stride,
                               const int64_t[::1] y_fixed,
                               const uint8_t[::1] labels, const int64_t* wt,
                               const Py_ssize_t* idx,
                               Py_ssize_t start, Py_ssize_t end, Py_ssize_t k,
                               const int32_t* cand_feature, const int32_t* cand_bin,
                               int64_t* totals, int64_t* left, int64_t* hist,
                               int n_threads) noexcept nogil:
        """Statistics of all rows and of each candidate's left side: the
        ``n_thresholds`` candidates of each of the ``k`` drawn features (``hist``: room for
        ``k`` features' histograms). A large node's features are shared among
        ``n_threads`` threads."""
        cdef Py_ssize_t i, wd = self.width, nt = self.n_thresholds
        cdef Py_ssize_t hist_size = self.n_bins * self.width
        self._row_totals(y_fixed, labels, wt, idx, start, end, totals)
        memset(left, 0, k * nt * wd * sizeof(int64_t))
        if n_threads < 2 or end - start < THREAD_MIN_ROWS:
            for i in range(k):
                self._feature_candidates(columns + cand_feature[i * nt] * column_stride,
                                         cand_bin + i * nt, y_fixed, labels, wt, idx, start,
                                         end, left + i * nt * wd, hist + i * hist_size)
            return
        for i in prange(k, num_threads=n_threads, schedule="static"):
            self._feature_candidates(columns + cand_feature[i * nt] * column_stride,
                                     cand_bin + i * nt, y_fixed, labels, wt, idx, start, end,
                                     left + i * nt * wd, hist + i * hist_size)

    cdef void _feature_candidates(self, const uint8_t* col, const int32_t* edges,
                                  const int64_t[::1] y_fixed, const uint8_t[::1] labels,
                                  const int64_t* wt, const Py_ssize_t* idx, Py_ssize_t start,
                                  Py_ssize_t end, int64_t* left, int64_t* hist) noexcept nogil:
        """Left-side statistics (``left``: zeroed) of one drawn feature's
        ``n_thresholds`` candidate ``edges``, from its column ``col``. One edge: one
        branch-free pass (:meth:`_candidate_left`). More: one pass that fills the
        feature's histogram (``hist``, ``n_bins * width`` entries), made cumulative, read
        at each edge -- a pass per edge would read the rows ``n_thresholds`` times. The
        same exact integers either way."""
        cdef Py_ssize_t t, b, m, i, row, wd = self.width
        if self.n_thresholds == 1:
            self._candidate_left(col, edges[0], y_fixed, labels, wt, idx, start, end, left)
            return
        memset(hist, 0, self.n_bins * wd * sizeof(int64_t))
        if self.criterion == CRITERION_MSE:
            self._feature_histograms(col, 1, y_fixed, labels, wt, idx, start, end, 0, 1, hist)
        else:
            # label counts only, one addition a row (as in _candidate_left); a bin's
            # count is their sum
            if wt == NULL:
                for i in range(start, end):
                    row = idx[i]
                    hist[col[row] * wd + 1 + labels[row]] += 1
            else:
                for i in range(start, end):
                    row = idx[i]
                    hist[col[row] * wd + 1 + labels[row]] += wt[row]
            for b in range(self.n_bins):
                for m in range(1, wd):
                    hist[b * wd] += hist[b * wd + m]
        for b in range(1, self.n_bins):  # cumulative: bin b holds the sums up to edge b
            for m in range(wd):
                hist[b * wd + m] += hist[(b - 1) * wd + m]
        for t in range(self.n_thresholds):
            for m in range(wd):
                left[t * wd + m] = hist[edges[t] * wd + m]

    cdef void _candidate_left(self, const uint8_t* col, int32_t bin_threshold,
                              const int64_t[::1] y_fixed, const uint8_t[::1] labels,
                              const int64_t* wt, const Py_ssize_t* idx, Py_ssize_t start,
                              Py_ssize_t end, int64_t* left) noexcept nogil:
        """Statistics of the rows ``idx[start:end]`` whose code in the column ``col`` is
        at most ``bin_threshold`` (``left``: zeroed, ``width`` entries).

        Branch-free: whether a row goes left is random for most candidates, so adding the
        0/1 outcome is much faster than branching on it. One candidate at a time: its
        reads stay in one column.
        """
        cdef Py_ssize_t i, m, row
        cdef int64_t goes_left, n_left = 0, sum_left = 0
        if self.criterion == CRITERION_MSE and wt == NULL:
            for i in range(start, end):
                row = idx[i]
                goes_left = col[row] <= bin_threshold
                n_left += goes_left
                sum_left += goes_left * y_fixed[row]
        elif self.criterion == CRITERION_MSE:
            for i in range(start, end):
                row = idx[i]
                goes_left = col[row] <= bin_threshold
                n_left += goes_left * wt[row]
                sum_left += goes_left * y_fixed[row]
        if self.criterion == CRITERION_MSE:
            left[0] = n_left
            left[1] = sum_left
            return
        # label counts (weights) only; the side's count is their sum
        if wt == NULL:
            for i in range(start, end):
                row = idx[i]
                left[1 + labels[row]] += col[row] <= bin_threshold
        else:
            for i in range(start, end):
                row = idx[i]
                left[1 + labels[row]] += (col[row] <= bin_threshold) * wt[row]
        for m in range(1, self.width):
            left[0] += left[m]

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
        sensitivity 1 (errors) or 2 (Gini) and is monotonic.

        With weights (counts in units, scaled back by ``inv_unit``; "Sample weights" in
        the module docstring) the same holds for a record of weight ``c`` in [0, 1]:
        weighted SSE rises by ``c n / (n + c) (y - mean)**2 <= c``; weighted SAE by at most
        ``c`` times the record's distance to the old weighted median; and ``n Gini`` is
        concave and homogeneous of degree 1 in the class weights, so adding ``c`` to one
        class raises it by at least 0 (superadditivity) and at most ``c`` times its
        partial derivative ``2 (1 - n_a / n) - Gini <= 2``. Scaling by a power of two is
        exact, so weights of one give the unweighted utilities bit for bit.

        Float rounding is below ``2**-19`` for nodes of under ``2**31`` rows; the caller
        adds it to the sensitivity.
        """
        cdef int64_t n = s[0]
        cdef int k, med = 0
        cdef int64_t acc = 0
        cdef double total = 0.0, mean_part
        if n == 0:
            return 0.0
        if self.criterion == CRITERION_MSE:
            mean_part = s[1] / self.fixed_scale
            return mean_part * mean_part / (n * self.inv_unit)
        if self.criterion == CRITERION_GINI:
            for k in range(self.n_labels):
                total += (<double>s[1 + k]) * s[1 + k]
            return total / n * self.inv_unit
        for k in range(self.n_labels):
            acc += s[1 + k]
            if 2 * acc >= n:
                med = k
                break
        for k in range(self.n_labels):
            total += s[1 + k] * fabs(<double>(k - med))
        return -total / self.n_labels * self.inv_unit

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

    cdef void _row_totals(self, const int64_t[::1] y_fixed, const uint8_t[::1] labels,
                          const int64_t* wt, const Py_ssize_t* idx, Py_ssize_t start,
                          Py_ssize_t end, int64_t* totals) noexcept nogil:
        """Totals of rows ``idx[start:end]``: ``[count, sum]`` or ``[count, n_0, ...]``
        (counts in units of weight if ``wt`` is not NULL)."""
        cdef Py_ssize_t i, m
        for m in range(self.width):
            totals[m] = 0
        if self.criterion == CRITERION_MSE:
            for i in range(start, end):
                totals[1] += y_fixed[idx[i]]
        else:
            for i in range(start, end):
                totals[1 + labels[idx[i]]] += 1 if wt == NULL else wt[idx[i]]
        if wt == NULL:
            totals[0] = end - start
        elif self.criterion == CRITERION_MSE:
            for i in range(start, end):
                totals[0] += wt[idx[i]]
        else:
            for m in range(1, self.width):
                totals[0] += totals[m]

    # -- leaves ------------------------------------------------------------------------

    cdef void _leaf_value(self, bitgen_t* bg, const int64_t* totals, double noisy_count,
                          Workspace* w, double* value) noexcept nogil:
        """Write a leaf's released value(s) from its totals: [0, 1] for regression, noisy
        counts per class."""
        cdef Py_ssize_t k
        cdef int64_t total, below, above
        cdef double v
        cdef int nl = self.n_labels
        if self.leaf_kind == LEAF_MEAN:
            # Noisy sum of the targets *centred* on 1/2, over the released noisy count;
            # 1/2 is added back and the mean clipped to [0, 1]. Centred targets lie in
            # [-1/2, 1/2], so one record moves the sum by at most fixed_scale / 2: half the
            # sensitivity, half the noise of an uncentred sum. (Weighted: fixed_scale / 2
            # per record is centre_units per unit of weight, and a record's weighted
            # target lies in [0, its weight x fixed_scale].)
            total = totals[1] - totals[0] * self.centre_units
            v = (total + discrete_laplace(bg, self.leaf_t, self.leaf_s)) / self.fixed_scale
            v = 0.5 + v / (noisy_count if noisy_count > 1.0 else 1.0)
            value[0] = 0.0 if v < 0.0 else (1.0 if v > 1.0 else v)
            return
        if self.leaf_kind == LEAF_COUNTS:
            # One record is in one class: L1 sensitivity 1 for the whole count vector
            # (weighted: one class's rounded weight moves by 0 or 1).
            for k in range(nl):
                value[k] = self._records(totals[1 + k]) + discrete_laplace(
                    bg, self.leaf_t, self.leaf_s)
            return
        if self.leaf_kind == LEAF_LABEL:
            # Only the majority label, by permute-and-flip on the class counts: each count
            # has sensitivity 1 and adding a record never lowers any (monotonic).
            for k in range(nl):
                w.scores[k] = self._records(totals[1 + k])
                value[k] = 0.0
            k = permute_and_flip(bg, w.scores, nl, self.leaf_eps_num, self.leaf_den, w.work)
            value[k] = 1.0
            return
        # Median: exponential mechanism over target-bin centres, rank utility
        # -|#below - #above| (sensitivity 1: one record moves one of the two counts by 1;
        # weighted, by at most one record's units, so the rounded gap by 0 or 1).
        total = totals[0]
        below = 0
        for k in range(nl):
            above = total - below - totals[1 + k]
            w.scores[k] = -self._records(below - above if below >= above else above - below)
            below += totals[1 + k]
        k = exponential_mechanism(bg, w.scores, nl, self.leaf_eps_num, self.leaf_den)
        value[0] = (k + 0.5) / nl


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


cdef inline void _subtract(const int64_t* parent, const int64_t* left, Py_ssize_t n,
                           int64_t* out) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        out[i] = parent[i] - left[i]


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


cdef int _quantise(const double* utilities, Py_ssize_t n, double q, int64_t* scores) noexcept nogil:
    cdef Py_ssize_t i
    cdef double units
    for i in range(n):
        units = rint(utilities[i] / q)
        if not fabs(units) < 4.0e18:
            return ERR_SCORE_RANGE
        scores[i] = <int64_t>units
    return 0
