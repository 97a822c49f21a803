"""Feature importances from released values only (post-processing: no privacy cost).

A tree's importance is scikit-learn's mean decrease in impurity computed from what the
fit released instead of from the training data: for every split node, with ``w_L, w_R``
the released weights of its two subtrees and ``mu_L, mu_R`` their weighted mean released
leaf values,

    gain = w_L w_R / (w_L + w_R) * ||mu_L - mu_R||^2,

which is exactly the decrease in squared error (regression) or in Gini impurity
(class-probability leaves) a split of those weights and means makes. A leaf's weight is
its released noisy count (floored at 0) where the tree released one, else 1 (boosted
trees release no counts: every leaf then weighs the same). Gains are summed by split
feature over the trees of an ensemble and normalised to sum to 1 (all zeros for trees
without a split). They describe the released model, noise included, never the data.
"""

import numpy as np

__all__ = ["additive_importances", "ensemble_importances", "normalised", "tree_gains"]


def _leaf_weights_and_means(tree):
    """Released weight and value vector of every node (only leaves' are used)."""
    if hasattr(tree, "leaf_weights_and_means"):
        return tree.leaf_weights_and_means()
    count = tree.noisy_count
    weight = np.where(np.isfinite(count), np.maximum(count, 0.0), 1.0)
    value = tree.value.reshape(tree.node_count, -1)
    return weight, value


def tree_gains(tree, n_features):
    """Summed split gains of one tree by feature (see the module docstring)."""
    weight, mean = _leaf_weights_and_means(tree)
    weight = weight.astype(np.float64).copy()
    total = mean * weight[:, None]  # weighted sums of the released leaf values
    gains = np.zeros(n_features)
    internal = tree.left >= 0
    # subtrees bottom-up, one depth at a time: a node's sums are its children's
    for d in range(int(tree.depth.max()), -1, -1):
        nodes = np.flatnonzero(internal & (tree.depth == d))
        if nodes.size == 0:
            continue
        left, right = tree.left[nodes], tree.right[nodes]
        w_l, w_r = weight[left], weight[right]
        weight[nodes] = w_l + w_r
        total[nodes] = total[left] + total[right]
        with np.errstate(invalid="ignore", divide="ignore"):
            gap = total[left] / w_l[:, None] - total[right] / w_r[:, None]
            gain = w_l * w_r / (w_l + w_r) * np.square(gap).sum(axis=1)
        gain = np.where((w_l > 0) & (w_r > 0), gain, 0.0)
        np.add.at(gains, tree.feature[nodes], gain)
    return gains


def normalised(gains):
    """``gains`` scaled to sum to 1 (zeros stay zeros)."""
    gains = np.asarray(gains, dtype=np.float64)
    total = gains.sum()
    return gains / total if total > 0 else np.zeros_like(gains)


def ensemble_importances(trees, n_features, weights=None):
    """Normalised gains of ``trees`` (each scaled by its ``weights`` entry if given)."""
    weights = np.ones(len(trees)) if weights is None else np.asarray(weights, dtype=float)
    gains = np.zeros(n_features)
    for tree, w in zip(trees, weights):
        gains += w * tree_gains(tree, n_features)
    return normalised(gains)


def additive_importances(term_scores):
    """Importances of an additive model from its released per-bin scores
    ``term_scores`` (n_outputs, n_features, n_bins): each feature's mean absolute
    deviation of its scores over its bins (equal-width bins of the public domain, every
    bin weighing the same), summed over outputs, normalised."""
    scores = np.asarray(term_scores, dtype=np.float64)
    spread = np.abs(scores - scores.mean(axis=2, keepdims=True)).mean(axis=2)
    return normalised(spread.sum(axis=0))
