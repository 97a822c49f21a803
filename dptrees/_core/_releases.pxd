# What a tree node releases from its exact statistics: its split and its children's noisy
# counts, or its leaf value (see _releases.pyx for the sensitivity of each). Used by the
# DP tree builder (_builder.pyx); every function runs without the GIL.

from libc.stdint cimport int32_t, int64_t, uint64_t
from numpy.random cimport bitgen_t

from dptrees._core._stats cimport Layout


cdef enum:
    LEAF_MEAN = 0
    LEAF_MEDIAN = 1
    LEAF_COUNTS = 2
    LEAF_LABEL = 3
    ERR_SCORE_RANGE = -2  # a status: utilities too large for exact selection


cdef struct Noise:
    # exact integer noise parameters, prepared by the Python layer (see TreeBuilder)
    uint64_t count_t          # noisy counts: discrete Laplace of scale count_t / count_s
    uint64_t count_s
    double split_q            # utilities are quantised to multiples of split_q ...
    uint64_t split_eps_num    # ... and weighted by split_eps_num / split_den
    uint64_t split_den
    bint permute_flip         # permute-and-flip, else the exponential mechanism
    double min_samples_leaf   # a split whose child's noisy count is below is undone
    int leaf_kind
    uint64_t leaf_t           # mean and count leaves: discrete Laplace leaf_t / leaf_s
    uint64_t leaf_s
    uint64_t leaf_eps_num     # median and label leaves: weight leaf_eps_num / leaf_den
    uint64_t leaf_den
    int shift                 # statistics count records in units of 2**-shift (weights)
    int64_t half_unit         # 2**shift / 2: rounds units to records
    int64_t centre_units      # fixed_scale / 2 per record unit (mean leaves)


cdef struct Workspace:
    # one node's buffers, allocated by the builder for the largest node it meets
    int64_t* current      # the node's histograms (its slot is overwritten by its
                          # children's)
    int64_t* left_stats   # random splitter: left-side statistics of each candidate
    int64_t* totals       # statistics of the node's rows (width entries)
    int64_t* scores       # max(candidates, n_labels) entries
    double* utilities     # one per candidate
    Py_ssize_t* work      # max(candidates, n_labels, p) entries
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


cdef inline int64_t records(const Noise* z, int64_t units) noexcept nogil:
    """``units`` of weight (``>= 0``) rounded to whole records: adding a record of
    weight at most 1 raises this by 0 or 1 (see "Sample weights" in _builder.pyx); the
    identity without weights."""
    return (units + z.half_unit) >> z.shift


cdef int64_t noisy_records(bitgen_t* bg, const Noise* z, int64_t units) noexcept nogil
cdef int choose_split(bitgen_t* bg, const Layout* L, const Noise* z, bint greedy,
                      const int64_t* hist, Py_ssize_t p, Py_ssize_t n_cand, Workspace* w,
                      Decision* d) noexcept nogil
cdef void leaf_value(bitgen_t* bg, const Layout* L, const Noise* z, const int64_t* totals,
                     double noisy_count, int64_t* scores, Py_ssize_t* work,
                     double* value) noexcept nogil
