# Exact statistics of a tree node's rows and the split utilities computed from them,
# shared by the DP tree builder (_builder.pyx) and its private releases (_releases.pyx).
# Every function here runs without the GIL; see _stats.pyx for the layout and the
# sensitivity of each utility.

from libc.stdint cimport int32_t, int64_t, uint8_t


cdef enum:
    CRITERION_MSE = 0
    CRITERION_MAE = 1
    CRITERION_GINI = 2
    THREAD_MIN_ROWS = 1024  # a smaller node's statistics are not worth waking threads for


cdef struct Layout:
    # what one (feature, bin) cell holds, and how utilities read it (fixed per builder)
    int n_bins
    int n_labels
    int width             # int64 statistics per cell: 2 (MSE) or 1 + n_labels
    int criterion
    int n_thresholds      # random splitter: candidate edges per drawn feature
    double fixed_scale    # 2**F: regression targets are fixed-point in [0, fixed_scale]
    double inv_unit       # 2**-shift: one unit of weight, in records


cdef void histograms(const Layout* L, const uint8_t* codes, const int64_t* y_fixed,
                     const uint8_t* labels, const int64_t* wt, const Py_ssize_t* idx,
                     Py_ssize_t start, Py_ssize_t end, Py_ssize_t p, int64_t* out,
                     int n_threads) noexcept nogil
cdef void candidate_stats(const Layout* L, const uint8_t* columns, Py_ssize_t column_stride,
                          const int64_t* y_fixed, const uint8_t* labels, const int64_t* wt,
                          const Py_ssize_t* idx, Py_ssize_t start, Py_ssize_t end,
                          Py_ssize_t k, const int32_t* cand_feature,
                          const int32_t* cand_bin, int64_t* totals, int64_t* left,
                          int64_t* hist, int n_threads) noexcept nogil
cdef void row_totals(const Layout* L, const int64_t* y_fixed, const uint8_t* labels,
                     const int64_t* wt, const Py_ssize_t* idx, Py_ssize_t start,
                     Py_ssize_t end, int64_t* totals) noexcept nogil
cdef void hist_totals(const Layout* L, const int64_t* hist, int64_t* totals) noexcept nogil
cdef void hist_left(const Layout* L, const int64_t* hist, const int32_t* feature,
                    const int32_t* bin_, Py_ssize_t k, int64_t* left) noexcept nogil

cdef void greedy_utilities(const Layout* L, const int64_t* hist, Py_ssize_t p,
                           double* utilities) noexcept nogil
cdef void random_utilities(const Layout* L, const int64_t* totals, const int64_t* left,
                           Py_ssize_t k, double* utilities) noexcept nogil


cdef inline void subtract(const int64_t* parent, const int64_t* left, Py_ssize_t n,
                          int64_t* out) noexcept nogil:
    """``out = parent - left`` over ``n`` entries: a sibling's histograms from its
    parent's and the measured child's (exact integers, so the same as measuring it)."""
    cdef Py_ssize_t i
    for i in range(n):
        out[i] = parent[i] - left[i]
