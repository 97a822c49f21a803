"""What a node of a DP tree releases, drawn without the GIL from its exact integer
statistics (:mod:`dptrees._core._stats`) and one noise stream (the builder passes its
depth's: :mod:`dptrees._core._builder`).

What a node releases, and why each release is private (add/remove-one neighbours):

* its **noisy count**: the number of its rows plus exact discrete Laplace noise.
  Sensitivity 1 (one record is in one node of each depth) (:func:`noisy_records`);
* its **split** (feature, bin threshold), chosen by permute-and-flip or the exponential
  mechanism among the candidates: *all* ``n_features * (n_bins - 1)`` (feature, edge)
  pairs for the greedy splitter, or ``max_features`` features with ``n_thresholds``
  distinct edges each, drawn from a separate random stream that reads no data, for the
  random (ExtraTrees) splitter. The selection's sensitivity does not depend on the
  number of candidates. Utilities are
  monotonic (adding a record never raises any of them), with sensitivity 1 for squared
  and absolute error (targets in [0, 1]) and 2 for Gini (see ``_stats.side_utility``)
  (:func:`choose_split`);
* at a leaf, its **value**: for mean leaves the fixed-point sum of its targets centred on
  1/2 plus exact discrete Laplace noise (sensitivity ``2**F / 2``), divided by its noisy
  count; for median
  leaves a target-bin centre chosen by the exponential mechanism with the rank utility
  ``-|#below - #above|`` (sensitivity 1); for class-count leaves the per-class counts plus
  exact discrete Laplace noise (L1 sensitivity 1: a record is in one class); for label
  leaves only the majority class, chosen by permute-and-flip over the class counts
  (sensitivity 1, monotonic) (:func:`leaf_value`).

With sample weights every count is a sum of units of weight, released as the whole
number of records ``records(z, units)`` (``_releases.pxd``): the sensitivities above
hold as stated ("Sample weights" in :mod:`dptrees._core._builder`).
"""

from libc.math cimport rint, fabs
from libc.stdint cimport int32_t, int64_t
from numpy.random cimport bitgen_t

from dptrees._core._rng cimport discrete_laplace
from dptrees._core._mechanisms cimport permute_and_flip, exponential_mechanism
from dptrees._core._stats cimport Layout, greedy_utilities, random_utilities


cdef int64_t noisy_records(bitgen_t* bg, const Noise* z, int64_t units) noexcept nogil:
    """A released count: the records of ``units`` plus discrete Laplace noise of scale
    ``count_t / count_s`` (sensitivity 1: one record is in one node of each depth)."""
    return records(z, units) + discrete_laplace(bg, z.count_t, z.count_s)


cdef int choose_split(bitgen_t* bg, const Layout* L, const Noise* z, bint greedy,
                      const int64_t* hist, Py_ssize_t p, Py_ssize_t n_cand, Workspace* w,
                      Decision* d) noexcept nogil:
    """Choose a splittable node's split and release its children's noisy counts.

    Reads ``hist`` (the node's per-feature histograms, greedy splitter) or
    ``w.left_stats`` for the ``n_cand`` candidates ``w.cand_feature / w.cand_bin``
    (random splitter), and ``w.totals``. ``d.feature`` stays -1 if a child's noisy count
    is below ``min_samples_leaf`` (the split is undone; the caller makes a leaf).
    Returns 0, or ERR_SCORE_RANGE.
    """
    cdef Py_ssize_t chosen, bin_
    cdef int32_t f, b
    if greedy:
        greedy_utilities(L, hist, p, w.utilities)
    else:
        random_utilities(L, w.totals, w.left_stats, n_cand, w.utilities)
    if _quantise(w.utilities, n_cand, z.split_q, w.scores) != 0:
        return ERR_SCORE_RANGE
    if z.permute_flip:
        chosen = permute_and_flip(bg, w.scores, n_cand, z.split_eps_num, z.split_den,
                                  w.work)
    else:
        chosen = exponential_mechanism(bg, w.scores, n_cand, z.split_eps_num, z.split_den)
    if greedy:
        f = <int32_t>(chosen // (L.n_bins - 1))
        b = <int32_t>(chosen % (L.n_bins - 1))
        d.n_left = 0
        for bin_ in range(b + 1):
            d.n_left += hist[(f * L.n_bins + bin_) * L.width]
    else:
        f = w.cand_feature[chosen]
        b = w.cand_bin[chosen]
        d.n_left = w.left_stats[chosen * L.width]
    d.n_right = w.totals[0] - d.n_left
    d.left_count = noisy_records(bg, z, d.n_left)
    d.right_count = noisy_records(bg, z, d.n_right)
    d.feature = -1
    d.bin_threshold = -1
    if d.left_count >= z.min_samples_leaf and d.right_count >= z.min_samples_leaf:
        d.feature = f
        d.bin_threshold = b
    return 0


cdef int _quantise(const double* utilities, Py_ssize_t n, double q,
                   int64_t* scores) noexcept nogil:
    """The utilities as integer scores ``rint(utility / q)``; ERR_SCORE_RANGE if one is
    too large for the exact mechanisms' int64 scores."""
    cdef Py_ssize_t i
    cdef double units
    for i in range(n):
        units = rint(utilities[i] / q)
        if not fabs(units) < 4.0e18:
            return ERR_SCORE_RANGE
        scores[i] = <int64_t>units
    return 0


cdef void leaf_value(bitgen_t* bg, const Layout* L, const Noise* z, const int64_t* totals,
                     double noisy_count, int64_t* scores, Py_ssize_t* work,
                     double* value) noexcept nogil:
    """Write a leaf's released value(s) from its totals: [0, 1] for regression, noisy
    counts per class (``value``: ``n_labels`` entries for count and label leaves, else
    one). ``scores`` and ``work``: ``n_labels`` entries of scratch."""
    cdef Py_ssize_t k
    cdef int64_t total, below, above
    cdef double v
    cdef int nl = L.n_labels
    if z.leaf_kind == LEAF_MEAN:
        # Noisy sum of the targets *centred* on 1/2, over the released noisy count;
        # 1/2 is added back and the mean clipped to [0, 1]. Centred targets lie in
        # [-1/2, 1/2], so one record moves the sum by at most fixed_scale / 2: half the
        # sensitivity, half the noise of an uncentred sum. (Weighted: fixed_scale / 2
        # per record is centre_units per unit of weight, and a record's weighted
        # target lies in [0, its weight x fixed_scale].)
        total = totals[1] - totals[0] * z.centre_units
        v = (total + discrete_laplace(bg, z.leaf_t, z.leaf_s)) / L.fixed_scale
        v = 0.5 + v / (noisy_count if noisy_count > 1.0 else 1.0)
        value[0] = 0.0 if v < 0.0 else (1.0 if v > 1.0 else v)
        return
    if z.leaf_kind == LEAF_COUNTS:
        # One record is in one class: L1 sensitivity 1 for the whole count vector
        # (weighted: one class's rounded weight moves by 0 or 1).
        for k in range(nl):
            value[k] = records(z, totals[1 + k]) + discrete_laplace(bg, z.leaf_t, z.leaf_s)
        return
    if z.leaf_kind == LEAF_LABEL:
        # Only the majority label, by permute-and-flip on the class counts: each count
        # has sensitivity 1 and adding a record never lowers any (monotonic).
        for k in range(nl):
            scores[k] = records(z, totals[1 + k])
            value[k] = 0.0
        k = permute_and_flip(bg, scores, nl, z.leaf_eps_num, z.leaf_den, work)
        value[k] = 1.0
        return
    # Median: exponential mechanism over target-bin centres, rank utility
    # -|#below - #above| (sensitivity 1: one record moves one of the two counts by 1;
    # weighted, by at most one record's units, so the rounded gap by 0 or 1).
    total = totals[0]
    below = 0
    for k in range(nl):
        above = total - below - totals[1 + k]
        scores[k] = -records(z, below - above if below >= above else above - below)
        below += totals[1 + k]
    k = exponential_mechanism(bg, scores, nl, z.leaf_eps_num, z.leaf_den)
    value[0] = (k + 0.5) / nl
