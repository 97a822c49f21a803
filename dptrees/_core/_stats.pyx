"""Exact statistics of a tree node's rows, and the split utilities computed from them,
without the GIL: the kernel of the DP tree builder (:mod:`dptrees._core._builder`).

Nothing here draws noise or releases anything. :mod:`dptrees._core._releases` turns
these integers into the node's private releases; the sensitivity of each utility is
stated with its code (:func:`side_utility`).

Statistics
----------
Per (feature, bin) cell the builder keeps ``width`` int64 statistics: ``[count, sum]`` for
squared error, ``[count, n_0, ..., n_{L-1}]`` (counts per target bin or class) for the
absolute error and Gini. The greedy splitter builds these histograms for every feature
(:func:`histograms`), measuring the child with the smaller *released* noisy count (a
rule on public values: the true child sizes are private) and taking the other as parent
minus it (``subtract`` in ``_stats.pxd``); the random splitter accumulates left-side
statistics for its few candidates only (:func:`candidate_stats`).

With sample weights a row counts ``wt[row]`` units of ``2**-shift`` records (NULL: one
unit each) and its regression target is already scaled by its weight (see "Sample
weights" in :mod:`dptrees._core._builder`): every count statistic is a sum of units.

Threads
-------
With ``n_threads > 1`` (OpenMP; serial where the build has none), a node of at least
``THREAD_MIN_ROWS`` rows splits its histograms by feature, or its candidates' left sums by
candidate, across threads. Every cell is still one thread's exact integer sum over the
node's rows in their order, so the tree is the same bit for bit; the noise is drawn by
the one thread that walks the tree.

Pointers
--------
``codes`` is row-major (n, p), ``columns`` feature-major with ``column_stride`` codes a
feature; ``y_fixed``, ``labels`` and ``wt`` have one entry per row and ``idx`` holds row
ids. The caller checks every code below ``n_bins``, every label below ``n_labels`` and
every ``idx`` entry below n, and sizes each output as documented: the loops index by
these values without bounds checks.
"""

from libc.math cimport fabs
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.string cimport memset
from cython.parallel cimport prange

from dptrees._core._cells cimport add_row


# -- statistics ----------------------------------------------------------------------

cdef void histograms(const Layout* L, const uint8_t* codes, const int64_t* y_fixed,
                     const uint8_t* labels, const int64_t* wt, const Py_ssize_t* idx,
                     Py_ssize_t start, Py_ssize_t end, Py_ssize_t p, int64_t* out,
                     int n_threads) noexcept nogil:
    """Statistics of rows ``idx[start:end]`` per (feature, bin) cell (``out``: ``p *
    n_bins * width`` entries); a large node's features are shared among ``n_threads``
    threads. ``codes`` (row-major) is read only if there are rows."""
    cdef Py_ssize_t t, per
    memset(out, 0, p * L.n_bins * L.width * sizeof(int64_t))
    if end <= start:
        return
    if n_threads < 2 or end - start < THREAD_MIN_ROWS:
        _feature_histograms(L, codes, p, y_fixed, labels, wt, idx, start, end, 0, p, out)
        return
    per = (p + n_threads - 1) // n_threads
    for t in prange(n_threads, num_threads=n_threads, schedule="static"):
        _feature_histograms(L, codes, p, y_fixed, labels, wt, idx, start, end,
                            min(t * per, p), min((t + 1) * per, p), out)


cdef void _feature_histograms(const Layout* L, const uint8_t* codes, Py_ssize_t row_stride,
                              const int64_t* y_fixed, const uint8_t* labels,
                              const int64_t* wt, const Py_ssize_t* idx, Py_ssize_t start,
                              Py_ssize_t end, Py_ssize_t f_start, Py_ssize_t f_stop,
                              int64_t* out) noexcept nogil:
    """Add the statistics of rows ``idx[start:end]`` to the cells of features
    ``f_start .. f_stop - 1`` of ``out``; a row counts ``wt[row]`` units (1 if
    ``wt`` is NULL). Row ``r``'s codes start at ``codes + r * row_stride``: the
    row-major codes (``row_stride = p``), or one feature's column (``row_stride = 1``,
    features ``0 .. 1``)."""
    cdef Py_ssize_t i, row
    cdef Py_ssize_t wd = L.width, stride = L.n_bins * L.width
    cdef int64_t one = 1
    # The caller checked the codes below n_bins: last_bin 255 compiles the clamp away.
    # The unweighted loops keep the constant count 1 (it folds into the kernel).
    if L.criterion == CRITERION_MSE and wt == NULL:  # [count, sum]
        for i in range(start, end):
            row = idx[i]
            add_row(out, stride, wd, codes + row * row_stride, f_start, f_stop, 255,
                    1, 1, y_fixed + row)
    elif L.criterion == CRITERION_MSE:  # [weight, weighted sum]
        for i in range(start, end):
            row = idx[i]
            add_row(out, stride, wd, codes + row * row_stride, f_start, f_stop, 255,
                    wt[row], 1, y_fixed + row)
    elif wt == NULL:  # [count, n_0 .. n_{L-1}]
        for i in range(start, end):
            row = idx[i]
            add_row(out, stride, wd, codes + row * row_stride, f_start, f_stop, 255,
                    1, 1 + labels[row], &one)
    else:  # [weight, weight of label 0 .. L-1]
        for i in range(start, end):
            row = idx[i]
            add_row(out, stride, wd, codes + row * row_stride, f_start, f_stop, 255,
                    wt[row], 1 + labels[row], wt + row)


cdef void candidate_stats(const Layout* L, const uint8_t* columns, Py_ssize_t column_stride,
                          const int64_t* y_fixed, const uint8_t* labels, const int64_t* wt,
                          const Py_ssize_t* idx, Py_ssize_t start, Py_ssize_t end,
                          Py_ssize_t k, const int32_t* cand_feature,
                          const int32_t* cand_bin, int64_t* totals, int64_t* left,
                          int64_t* hist, int n_threads) noexcept nogil:
    """Statistics of all rows (``totals``) and of each candidate's left side (``left``:
    ``k * n_thresholds * width`` entries): the ``n_thresholds`` candidates of each of
    the ``k`` drawn features (``hist``: room for ``k`` features' histograms). A large
    node's features are shared among ``n_threads`` threads."""
    cdef Py_ssize_t i, wd = L.width, nt = L.n_thresholds
    cdef Py_ssize_t hist_size = L.n_bins * L.width
    row_totals(L, y_fixed, labels, wt, idx, start, end, totals)
    memset(left, 0, k * nt * wd * sizeof(int64_t))
    if n_threads < 2 or end - start < THREAD_MIN_ROWS:
        for i in range(k):
            _feature_candidates(L, columns + cand_feature[i * nt] * column_stride,
                                cand_bin + i * nt, y_fixed, labels, wt, idx, start,
                                end, left + i * nt * wd, hist + i * hist_size)
        return
    for i in prange(k, num_threads=n_threads, schedule="static"):
        _feature_candidates(L, columns + cand_feature[i * nt] * column_stride,
                            cand_bin + i * nt, y_fixed, labels, wt, idx, start, end,
                            left + i * nt * wd, hist + i * hist_size)


cdef void _feature_candidates(const Layout* L, const uint8_t* col, const int32_t* edges,
                              const int64_t* y_fixed, const uint8_t* labels,
                              const int64_t* wt, const Py_ssize_t* idx, Py_ssize_t start,
                              Py_ssize_t end, int64_t* left, int64_t* hist) noexcept nogil:
    """Left-side statistics (``left``: zeroed) of one drawn feature's
    ``n_thresholds`` candidate ``edges``, from its column ``col``. One edge: one
    branch-free pass (:func:`_candidate_left`). More: one pass that fills the
    feature's histogram (``hist``, ``n_bins * width`` entries), made cumulative, read
    at each edge -- a pass per edge would read the rows ``n_thresholds`` times. The
    same exact integers either way."""
    cdef Py_ssize_t t, b, m, i, row, wd = L.width
    if L.n_thresholds == 1:
        _candidate_left(L, col, edges[0], y_fixed, labels, wt, idx, start, end, left)
        return
    memset(hist, 0, L.n_bins * wd * sizeof(int64_t))
    if L.criterion == CRITERION_MSE:
        _feature_histograms(L, col, 1, y_fixed, labels, wt, idx, start, end, 0, 1, hist)
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
        for b in range(L.n_bins):
            for m in range(1, wd):
                hist[b * wd] += hist[b * wd + m]
    for b in range(1, L.n_bins):  # cumulative: bin b holds the sums up to edge b
        for m in range(wd):
            hist[b * wd + m] += hist[(b - 1) * wd + m]
    for t in range(L.n_thresholds):
        for m in range(wd):
            left[t * wd + m] = hist[edges[t] * wd + m]


cdef void _candidate_left(const Layout* L, const uint8_t* col, int32_t bin_threshold,
                          const int64_t* y_fixed, const uint8_t* labels,
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
    if L.criterion == CRITERION_MSE and wt == NULL:
        for i in range(start, end):
            row = idx[i]
            goes_left = col[row] <= bin_threshold
            n_left += goes_left
            sum_left += goes_left * y_fixed[row]
    elif L.criterion == CRITERION_MSE:
        for i in range(start, end):
            row = idx[i]
            goes_left = col[row] <= bin_threshold
            n_left += goes_left * wt[row]
            sum_left += goes_left * y_fixed[row]
    if L.criterion == CRITERION_MSE:
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
    for m in range(1, L.width):
        left[0] += left[m]


cdef void row_totals(const Layout* L, const int64_t* y_fixed, const uint8_t* labels,
                     const int64_t* wt, const Py_ssize_t* idx, Py_ssize_t start,
                     Py_ssize_t end, int64_t* totals) noexcept nogil:
    """Totals of rows ``idx[start:end]``: ``[count, sum]`` or ``[count, n_0, ...]``
    (counts in units of weight if ``wt`` is not NULL)."""
    cdef Py_ssize_t i, m
    for m in range(L.width):
        totals[m] = 0
    if L.criterion == CRITERION_MSE:
        for i in range(start, end):
            totals[1] += y_fixed[idx[i]]
    else:
        for i in range(start, end):
            totals[1 + labels[idx[i]]] += 1 if wt == NULL else wt[idx[i]]
    if wt == NULL:
        totals[0] = end - start
    elif L.criterion == CRITERION_MSE:
        for i in range(start, end):
            totals[0] += wt[idx[i]]
    else:
        for m in range(1, L.width):
            totals[0] += totals[m]


cdef void hist_totals(const Layout* L, const int64_t* hist, int64_t* totals) noexcept nogil:
    """A node's totals: its first feature's histogram summed over the bins."""
    cdef Py_ssize_t b, m
    for m in range(L.width):
        totals[m] = 0
    for b in range(L.n_bins):
        for m in range(L.width):
            totals[m] += hist[b * L.width + m]


cdef void hist_left(const Layout* L, const int64_t* hist, const int32_t* feature,
                    const int32_t* bin_, Py_ssize_t k, int64_t* left) noexcept nogil:
    """Left-side statistics of candidates ``(feature[c], bin_[c])`` from histograms."""
    cdef Py_ssize_t c, b, m
    cdef const int64_t* cell
    for c in range(k):
        for m in range(L.width):
            left[c * L.width + m] = 0
        for b in range(bin_[c] + 1):
            cell = hist + (feature[c] * L.n_bins + b) * L.width
            for m in range(L.width):
                left[c * L.width + m] += cell[m]


# -- utilities (sensitivities in side_utility's docstring) ----------------------------

cdef double side_utility(const Layout* L, const int64_t* s) noexcept nogil:
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
    :mod:`dptrees._core._builder`) the same holds for a record of weight ``c`` in [0, 1]:
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
    if L.criterion == CRITERION_MSE:
        mean_part = s[1] / L.fixed_scale
        return mean_part * mean_part / (n * L.inv_unit)
    if L.criterion == CRITERION_GINI:
        for k in range(L.n_labels):
            total += (<double>s[1 + k]) * s[1 + k]
        return total / n * L.inv_unit
    for k in range(L.n_labels):
        acc += s[1 + k]
        if 2 * acc >= n:
            med = k
            break
    for k in range(L.n_labels):
        total += s[1 + k] * fabs(<double>(k - med))
    return -total / L.n_labels * L.inv_unit


cdef void greedy_utilities(const Layout* L, const int64_t* hist, Py_ssize_t p,
                           double* utilities) noexcept nogil:
    """Utility of every (feature, edge) candidate from full histograms (``utilities``:
    ``p * (n_bins - 1)`` entries, feature-major)."""
    cdef Py_ssize_t j, b, m, c = 0
    cdef Py_ssize_t wd = L.width
    cdef int64_t left[257]
    cdef int64_t right[257]
    for j in range(p):
        for m in range(wd):
            left[m] = 0
            right[m] = 0
        for b in range(L.n_bins):
            for m in range(wd):
                right[m] += hist[(j * L.n_bins + b) * wd + m]
        for b in range(L.n_bins - 1):
            for m in range(wd):
                left[m] += hist[(j * L.n_bins + b) * wd + m]
                right[m] -= hist[(j * L.n_bins + b) * wd + m]
            utilities[c] = side_utility(L, left) + side_utility(L, right)
            c += 1


cdef void random_utilities(const Layout* L, const int64_t* totals, const int64_t* left,
                           Py_ssize_t k, double* utilities) noexcept nogil:
    """Utility of each of ``k`` candidates from its left side and the node's totals."""
    cdef Py_ssize_t c, m
    cdef int64_t right[257]
    for c in range(k):
        for m in range(L.width):
            right[m] = totals[m] - left[c * L.width + m]
        utilities[c] = side_utility(L, left + c * L.width) + side_utility(L, right)
