"""One grower for the complete trees grown level by level from released statistics.

Gradient boosting's trees (:mod:`dptrees.boosting._gradient`), AdaBoost's weak learners
(:mod:`dptrees.boosting._weak_learners`) and the trees of federated rounds
(:mod:`dptrees.federated._boosting`) are complete trees of a public depth, numbered as a
heap (:mod:`dptrees._sources._heap`). :func:`grow` fills their ``feature`` and
``bin_threshold`` arrays level by level: a level's splits are chosen by that level's
*split policy*, then its rows are told that the level is split. The policies:

* :class:`RandomSplits` -- splits drawn before the tree from a generator that sees no
  data, uniformly or from the split prior of guided trees; they read no rows (random and
  guided trees, federated rounds);
* :class:`SelectedSplits` -- each node's split chosen by a DP selection (the exponential
  mechanism, permute-and-flip) over utilities of its exact histogram (boosting's
  selected levels, AdaBoost's weak learners);
* :class:`PrivateHistogramSplits` -- the split of best Newton gain on released noisy
  histograms, a node's sibling taken as its parent's minus it (boosting's private
  levels).

The leaves are released by the caller (Newton values from noisy sums, noisy class
totals, a federated aggregate). The compiled greedy builder of the DP decision trees
(:mod:`dptrees._core._builder`, driven level by level from out-of-core rows by
:func:`dptrees._tree_growth.grow_from_statistics`) is the other grower.

Privacy: nothing here reads a row or draws noise. The releases and selections are the
callables each estimator passes to its policies, stated with their sensitivities in the
estimator's module (:mod:`dptrees.boosting._gradient`,
:mod:`dptrees.boosting._weak_learners`); what the policies do with their outputs is
post-processing, and which child of a node is measured at a private level follows
released values only.
"""

import numpy as np

from dptrees._sources._heap import SiblingHistograms, level_nodes
from dptrees.boosting._trees import draw_random_structure

__all__ = ["PrivateHistogramSplits", "RandomSplits", "SelectedSplits", "grow"]


def grow(feature, bin_threshold, policies, rows=None):
    """Choose the splits of a complete tree, level by level, in place.

    Parameters
    ----------
    feature, bin_threshold : int32 heap arrays of the tree (-1 where not split yet,
        :func:`~dptrees._sources._heap.empty_tree`); ``rows`` may hold them.
    policies : sequence of split policies
        One per level, top first (``len(policies)`` is the depth): each has
        ``choose(rows, level, nodes) -> (features, bin_thresholds)`` for ``nodes``, the
        heap ids of the level.
    rows : object or None
        The rows the statistics come from: ``histograms(level, nodes)`` (exact sums of
        those nodes of ``level``) for the policies that read them, and ``split(level)``,
        called once the nodes of ``level`` have their splits. None for policies that read
        no rows.

    Returns
    -------
    feature, bin_threshold
    """
    for level, policy in enumerate(policies):
        nodes = level_nodes(level)
        chosen = slice(nodes.start, nodes.stop)
        feature[chosen], bin_threshold[chosen] = policy.choose(rows, level, nodes)
        if rows is not None:
            rows.split(level)
    return feature, bin_threshold


class RandomSplits:
    """Splits drawn once for the whole tree from ``rng`` alone: uniform over (feature,
    bin threshold), or from ``prior``, a split prior computed from released values
    (:func:`~dptrees.boosting._trees.draw_random_structure`). No rows, no budget."""

    def __init__(self, rng, n_features, n_bins, depth, prior=None):
        self.feature, self.bin_threshold = draw_random_structure(rng, n_features, n_bins,
                                                                 depth, prior)

    def choose(self, rows, level, nodes):
        chosen = slice(nodes.start, nodes.stop)
        return self.feature[chosen], self.bin_threshold[chosen]


class SelectedSplits:
    """Each node's split chosen by a DP selection over the utilities of its exact
    histogram (a level's nodes hold disjoint records: parallel composition).

    ``utilities(hist)``: from the level's exact ``(n_nodes, n_features, n_bins, ...)``
    histograms, every node's utilities of its ``(feature, bin threshold)`` candidates,
    ``(n_nodes, n_features, n_bins - 1)``. ``select(i, utilities)``: the flat index of the
    candidate selected for the level's ``i``-th node (the mechanism, its sensitivity and
    budget: the caller's).
    """

    def __init__(self, utilities, select, n_bins):
        self.utilities, self.select, self.n_bins = utilities, select, n_bins

    def choose(self, rows, level, nodes):
        utilities = self.utilities(rows.histograms(level, list(nodes)))
        index = np.array([self.select(i, u) for i, u in enumerate(utilities)], np.intp)
        return np.divmod(index, self.n_bins - 1)


class PrivateHistogramSplits:
    """The split of best Newton gain on each node's released noisy ``(n_features,
    n_bins, 2)`` histogram of ``(G, H)``, for the levels of one tree.

    ``release(exact)``: the noisy histograms of a level's measured nodes from their exact
    ones (one release per level: the measured nodes hold disjoint records). Below the
    root, of each node's two children the one with the smaller noisy Hessian mass of the
    node's chosen split is measured; the other is the node's minus it
    (:class:`~dptrees._sources._heap.SiblingHistograms`, post-processing).
    """

    def __init__(self, release, reg_lambda):
        self.release, self.reg_lambda = release, reg_lambda
        self.noisy = SiblingHistograms()
        self.measured_child = {}  # node -> the child whose histogram is released

    def choose(self, rows, level, nodes):
        measured = self.noisy.to_measure(nodes, self.measured_child.__getitem__)
        released = self.release(rows.histograms(level, measured))
        features, bins = [], []
        for node, hist in zip(nodes, self.noisy.complete(nodes, measured, released)):
            f, b, mass_left, mass_right = self._best_split(hist)
            features.append(f)
            bins.append(b)
            # the child with the smaller noisy Hessian mass is measured at the next level
            self.measured_child[node] = (2 * node + 1 if mass_left <= mass_right
                                         else 2 * node + 2)
        return features, bins

    def _best_split(self, hist):
        """``(feature, bin threshold, left Hessian mass, right Hessian mass)`` of the best
        Newton gain on a noisy histogram."""
        cum = np.cumsum(hist, axis=1)
        total = cum[:, -1:, :]
        left, right = cum[:, :-1, :], total - cum[:, :-1, :]
        lam = self.reg_lambda
        gain = (left[..., 0] ** 2 / (np.maximum(left[..., 1], 0) + lam)
                + right[..., 0] ** 2 / (np.maximum(right[..., 1], 0) + lam))
        f, b = np.unravel_index(int(np.argmax(gain)), gain.shape)
        return int(f), int(b), float(left[f, b, 1]), float(right[f, b, 1])
