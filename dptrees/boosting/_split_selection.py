"""Selected splits of boosting's random trees: the top levels chosen by the exponential
mechanism.

With ``select_depth=d`` (``"auto"``: see :mod:`dptrees.boosting._gradient`), the splits of
the top ``d`` levels of every random or guided tree are not drawn blindly: each node
chooses its (feature, bin threshold) by the exponential mechanism on the exact sums of
the current clipped gradients ``g`` of its records. The levels below are drawn as
before (uniformly, or from the split prior).

**Utility.** For the split of a node at (feature ``f``, threshold ``b``: bins ``<= b`` go
left), :func:`split_utilities` scores

    u(f, b) = |G_left(f, b)| + |G_right(f, b)|,

the absolute gradient sums of the two children: ``|G|`` of the node when the split does
not separate gradients of opposite sign, up to ``sum |g|`` when it separates them
perfectly. It is the first-order gain of the split (a Newton step's gain ``G**2 / H``
without the Hessians, whose ratio has no bounded sensitivity).

**Sensitivity** (add/remove one record): the record is in one child of every candidate,
so it moves one of the two sums by its clipped gradient, at most ``gradient_clip``
(rounded up to the fixed-point grid: ``g_sens``), and ``|.|`` is 1-Lipschitz: every
utility moves by at most ``g_sens``, in either direction (not monotonic). Sample weights
in [0, 1] scale the gradient and keep the bound.

**Mechanism and cost.** :func:`~dptrees.mechanisms.exponential_mechanism` draws candidate
``i`` with probability proportional to ``mu_i exp(epsilon u_i / (2 g_sens))``, exactly
(quantised scores, the rounding counted in the sensitivity). ``mu`` is a public base
measure: uniform, or the split prior of guided trees (post-processing of an earlier
release); :func:`base_measure_shift` folds it into the utilities as a shift that does not
depend on the records, so the sensitivity is unchanged. This is ``epsilon``-DP, and,
since every probability ratio between neighbours lies within a factor ``exp(epsilon)``
of every other (the scores all move by at most the sensitivity), ``epsilon``-bounded
range (Durfee & Rogers 2019), hence ``epsilon**2 / 8``-zCDP (Cesar & Rogers 2021).
Exactly: the sampler weighs candidate ``i`` by ``exp(epsilon' s_i / (2 D))`` with integer
scores ``s_i`` that move by at most ``D`` between neighbours and ``epsilon' <= epsilon``
(:func:`~dptrees.mechanisms.selection_constants`), so for any two candidates the log
ratios of their probabilities on the two datasets differ by at most ``epsilon' (2 D) /
(2 D)``. A Gaussian fit spends ``rho`` per level and selects with ``epsilon = sqrt(8
rho)``; a Laplace fit spends ``epsilon`` as pure DP. The nodes of one level hold disjoint
records (parallel composition): a level costs one selection, whatever its number of
nodes, and the cost does not grow with the number of candidates.

Why: the gain of a random tree sits in its first splits. One selected root per tree
puts each tree's main division where the current residuals are, which a prior made
once from the initial gradients cannot follow; it costs one histogram pass per tree.
"""

import numpy as np

__all__ = ["split_utilities", "base_measure_shift"]


def split_utilities(g_sums, g_scale):
    """``|G_left| + |G_right|`` of every (feature, bin threshold) of one node.

    Parameters
    ----------
    g_sums : ndarray of int64, shape (n_features, n_bins)
        The exact fixed-point sums of the node's clipped gradients per (feature, bin).
    g_scale : float
        The fixed-point scale of ``g``.

    Returns
    -------
    ndarray of float, shape (n_features, n_bins - 1)
        Threshold ``b`` sends bins ``<= b`` left. Every value moves by at most one
        record's clipped gradient when a record is added or removed.
    """
    left = np.cumsum(g_sums, axis=1)[:, :-1]  # exact: int64 sums of int64 values
    right = g_sums.sum(axis=1, keepdims=True) - left
    return (np.abs(left) + np.abs(right)) / g_scale


def base_measure_shift(prior, sensitivity, epsilon):
    """The utility shift ``2 sensitivity log(prior) / epsilon`` that makes the exponential
    mechanism draw ``i`` with probability proportional to ``prior_i exp(epsilon u_i / (2
    sensitivity))``. ``prior`` is public (a released split prior), so the shift is the
    same for neighbouring datasets and the sensitivity of the utilities is unchanged.
    Zero-probability candidates get ``-inf`` (never chosen; the split priors have
    none)."""
    prior = np.asarray(prior, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return (2.0 * sensitivity / epsilon) * np.log(prior)
