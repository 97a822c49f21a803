"""Weighted differentially private decision trees: the weak learners of DP AdaBoost.

:func:`fit_weighted_tree` grows a complete tree of depth ``max_depth`` level by level on
binned features (public equal-width bins, :class:`dptrees._binning.Binner`) and *weighted*
records. Every record ``i`` has a weight ``w_i`` in ``[0, weight_bound]``, where
``weight_bound`` is a **public** number, and -- the caller's obligation -- adding or
removing a record never changes the weight of any other record (in DP AdaBoost the weights
are per-record functions of the record and of released values only). Under that
assumption, for add/remove-one neighbours:

* **Split choice** (one per node, permute-and-flip). Utility of candidate (feature,
  threshold) = minus the weighted misclassification error of the majority labelling of
  the two children, ``-(E_left + E_right)`` with ``E = sum_c T_c - max_c T_c`` over the
  child's weighted class totals ``T``. Adding a record of weight ``w <= W`` and class ``c``
  sends it to exactly one child and raises that child's ``T_c`` by ``w``: the child's sum
  rises by ``w`` and its max by something in ``[0, w]``, so its ``E`` rises by something
  in ``[0, w]``; the other child is unchanged. So every utility moves by at most ``W``
  (sensitivity ``W``) and all move in the same direction (down when adding, up when
  removing): monotonic, which permute-and-flip uses to drop its factor 2.
* **Leaves**: the weighted class totals of every leaf, with Laplace noise (exact
  :func:`dptrees.mechanisms.laplace_mechanism`). The record's weight goes to one
  (leaf, class) cell: L1 sensitivity ``W`` for the whole array of leaves. Leaf labels
  (argmax) and the weighted training error used for the AdaBoost coefficient are
  post-processing of the noisy totals.
* **Composition**: nodes of one level hold disjoint records (parallel composition), so a
  record pays one split choice per level plus one leaf release: the tree is
  ``max_depth * epsilon_split + epsilon_leaf``-DP.

No branch depends on private data: every node of every level is split (empty nodes
choose uniformly among equal utilities), so the tree's shape is public.

Exact arithmetic: weights are held on the grid ``2**-20`` (:data:`WEIGHT_GRID`; the
estimator rounds them there), so every weighted sum below is an integer multiple of the
grid below ``2**53`` grid units and float64 adds it exactly. Utilities are therefore
exact and the sensitivity needs no floating-point margin.
"""

import math

import numpy as np

from dptrees.mechanisms import laplace_mechanism, permute_and_flip

__all__ = ["WEIGHT_GRID", "WeightedTree", "fit_weighted_tree", "learner_budget"]

#: Weights are multiples of this (see the module docstring).
WEIGHT_GRID = 2.0**-20
#: Largest total weight for which float64 sums of grid multiples stay exact.
MAX_TOTAL_WEIGHT = 2.0**53 * WEIGHT_GRID


def learner_budget(epsilon, max_depth, split_weight=1.0, leaf_weight=1.0):
    """Per-release budgets of one weak learner of total ``epsilon``.

    A record meets ``max_depth`` split choices (one per level) and one leaf release;
    with relative weights ``split_weight`` and ``leaf_weight`` the unit is
    ``epsilon / (max_depth * split_weight + leaf_weight)``. (``dptrees.tree.split_tree_budget``
    also budgets noisy node counts, which this learner does not release.)

    Returns
    -------
    dict with keys ``"split"`` (per level) and ``"leaf"``
    """
    unit = epsilon / (max_depth * split_weight + leaf_weight)
    return {"split": unit * split_weight, "leaf": unit * leaf_weight}


class WeightedTree:
    """A complete binary tree of depth ``max_depth`` over bin codes (heap layout).

    Internal node ``j`` (``0 <= j < 2**max_depth - 1``) sends a record with
    ``code[feature[j]] <= bin_threshold[j]`` to ``2 j + 1`` and others to ``2 j + 2``;
    leaf ``l`` is node ``2**max_depth - 1 + l``.

    Attributes
    ----------
    feature, bin_threshold : ndarray of int64, shape (2**max_depth - 1,)
    noisy_totals : ndarray of float64, shape (2**max_depth, n_classes)
        The released noisy weighted class totals of the leaves.
    leaf_label : ndarray of int64, shape (2**max_depth,)
        ``argmax`` of the noisy totals (post-processing).
    """

    def __init__(self, feature, bin_threshold, noisy_totals):
        self.feature = np.asarray(feature, dtype=np.int64)
        self.bin_threshold = np.asarray(bin_threshold, dtype=np.int64)
        self.noisy_totals = np.asarray(noisy_totals, dtype=np.float64)
        self.leaf_label = np.argmax(self.noisy_totals, axis=1).astype(np.int64)

    @property
    def max_depth(self):
        return int(round(math.log2(self.noisy_totals.shape[0])))

    def apply(self, codes):
        """Leaf index of every row of ``codes`` (uint8, shape (n, n_features))."""
        node = np.zeros(codes.shape[0], dtype=np.int64)
        rows = np.arange(codes.shape[0])
        for _ in range(self.max_depth):
            go_right = codes[rows, self.feature[node]] > self.bin_threshold[node]
            node = 2 * node + 1 + go_right
        return node - (2**self.max_depth - 1)

    def fall_back_to(self, label, margin):
        """Leaves whose two largest noisy totals differ by less than ``margin`` (a
        public multiple of the noise) predict ``label`` instead (post-processing)."""
        top2 = np.sort(self.noisy_totals, axis=1)[:, -2:]
        unsure = top2[:, 1] - top2[:, 0] < margin
        self.leaf_label = np.where(unsure, int(label), self.leaf_label).astype(np.int64)

    def predict(self, codes):
        """Class index predicted for every row of ``codes``."""
        return self.leaf_label[self.apply(codes)]

    def weighted_error(self):
        """Weighted training error estimated from the noisy totals (post-processing).

        Negative noisy totals count as 0; returns ``(error, correct_total, error_total)``
        with ``error = error_total / (correct_total + error_total)``, NaN if the clipped
        totals sum to 0.
        """
        totals = np.maximum(self.noisy_totals, 0.0)
        correct = float(totals[np.arange(totals.shape[0]), self.leaf_label].sum())
        wrong = float(totals.sum() - correct)
        total = correct + wrong
        return (wrong / total if total > 0 else float("nan")), correct, wrong


def _best_split_utilities(hist):
    """Utilities ``-(E_left + E_right)`` of every (node, feature, threshold).

    ``hist`` has shape (n_nodes, n_features, n_bins, n_classes); threshold ``t`` sends
    bins ``<= t`` left, ``t = 0 .. n_bins - 2``. Exact on grid weights.
    """
    left = np.cumsum(hist, axis=2)[:, :, :-1, :]
    total = hist.sum(axis=2, keepdims=True)
    right = total - left
    err_left = left.sum(axis=3) - left.max(axis=3)
    err_right = right.sum(axis=3) - right.max(axis=3)
    return -(err_left + err_right)


def fit_weighted_tree(codes, labels, weights, *, n_classes, n_bins, max_depth, weight_bound,
                      epsilon_split, epsilon_leaf, random_state):
    """Grow one DP weak learner; ``max_depth * epsilon_split + epsilon_leaf``-DP.

    Parameters
    ----------
    codes : ndarray of uint8, shape (n, n_features)
        Bin codes over public bounds.
    labels : ndarray of int, shape (n,)
        Class indices in ``[0, n_classes)``.
    weights : ndarray of float64, shape (n,)
        Record weights, multiples of :data:`WEIGHT_GRID` in ``[0, weight_bound]``; one
        record's weight must not depend on the other records (see the module docstring).
    n_classes, n_bins, max_depth : int
        Public.
    weight_bound : float
        Public bound ``W`` on one record's weight: the sensitivity of every split utility
        and the L1 sensitivity of the leaf totals.
    epsilon_split : float
        Budget of one split choice (each level; nodes of a level are disjoint).
    epsilon_leaf : float
        Budget of the leaf release.
    random_state : numpy Generator

    Returns
    -------
    WeightedTree
    """
    n, n_features = codes.shape
    n_internal = 2**max_depth - 1
    feature = np.zeros(n_internal, dtype=np.int64)
    bin_threshold = np.zeros(n_internal, dtype=np.int64)
    node = np.zeros(n, dtype=np.int64)  # index of the record's node within its level
    rows = np.arange(n)
    class_offset = labels.astype(np.int64)
    feature_offset = np.arange(n_features, dtype=np.int64) * n_bins
    cell_weights = np.repeat(weights, n_features)
    for level in range(max_depth):
        n_nodes = 2**level
        # flat index of (node, feature, bin, class) for every (record, feature) pair
        flat = ((node[:, None] * (n_features * n_bins) + feature_offset[None, :] + codes)
                * n_classes + class_offset[:, None])
        hist = np.bincount(flat.ravel(), weights=cell_weights,
                           minlength=n_nodes * n_features * n_bins * n_classes)
        hist = hist.reshape(n_nodes, n_features, n_bins, n_classes)
        utilities = _best_split_utilities(hist).reshape(n_nodes, -1)
        first = n_nodes - 1  # heap index of the level's first node
        for j in range(n_nodes):  # disjoint nodes: parallel composition
            choice = permute_and_flip(utilities[j], sensitivity=weight_bound,
                                      epsilon=epsilon_split, monotonic=True,
                                      random_state=random_state)
            feature[first + j], bin_threshold[first + j] = divmod(int(choice), n_bins - 1)
        heap = first + node
        go_right = codes[rows, feature[heap]] > bin_threshold[heap]
        node = 2 * node + go_right
    totals = np.bincount(node * n_classes + class_offset, weights=weights,
                         minlength=(2**max_depth) * n_classes).reshape(2**max_depth, n_classes)
    noisy = laplace_mechanism(totals, sensitivity=weight_bound, epsilon=epsilon_leaf,
                              random_state=random_state)
    return WeightedTree(feature, bin_threshold, noisy)
