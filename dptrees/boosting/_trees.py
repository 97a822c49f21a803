"""Full binary trees of boosted ensembles: random structures, node arrays, prediction.

Shared by the centralised (:mod:`dptrees.boosting._gradient`) and the federated
(:mod:`dptrees.federated._boosting`) gradient-boosting estimators. A tree of depth ``d``
is complete: internal nodes ``0 .. 2**d - 2`` in heap order (children of ``i`` are
``2i + 1`` and ``2i + 2``), then ``2**d`` leaves. Nothing here reads private data: the
structures come from a generator that sees no data, the leaf values are already released.
"""

from collections.abc import Iterator

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils.validation import check_is_fitted

from dptrees._core import _histogram
from dptrees._importances import ensemble_importances
from dptrees._sources._heap import empty_tree
from dptrees._sources._rows import start_scores
from dptrees._prediction import MostProbableClassMixin
from dptrees._tree_structure import Tree
from dptrees.validation import check_features

__all__ = ["draw_random_structure", "full_tree", "heap_children"]


def draw_random_structure(rng, n_features, n_bins, depth, prior=None):
    """A random (feature, bin threshold) for every internal node, in heap order: uniform,
    or drawn from ``prior``, an ``(n_features, n_bins - 1)`` array of probabilities.

    Drawn from ``rng`` alone (and a ``prior`` computed from released values only: see
    :mod:`dptrees.boosting._split_prior`), so the structure reads no data beyond what
    was released and costs no budget.

    Returns
    -------
    feature, bin_threshold : int32 arrays of length ``2**(depth + 1) - 1`` (-1 at leaves)
    """
    n_internal = 2**depth - 1
    feature, bin_threshold = empty_tree(depth)
    if prior is None:
        feature[:n_internal] = rng.integers(n_features, size=n_internal)
        bin_threshold[:n_internal] = rng.integers(n_bins - 1, size=n_internal)
    else:
        cells = rng.choice(prior.size, size=n_internal, p=prior.ravel())
        feature[:n_internal], bin_threshold[:n_internal] = np.divmod(cells, n_bins - 1)
    return feature, bin_threshold


def heap_children(depth):
    """``left``, ``right`` child arrays of the complete tree of depth ``depth``."""
    n_internal = 2**depth - 1
    n_nodes = 2 * n_internal + 1
    left = np.full(n_nodes, -1, dtype=np.int32)
    right = np.full(n_nodes, -1, dtype=np.int32)
    internal = np.arange(n_internal)
    left[internal], right[internal] = 2 * internal + 1, 2 * internal + 2
    return left, right


def full_tree(binner, feature, bin_threshold, leaf_values):
    """The :class:`~dptrees._tree_structure.Tree` of a complete tree with these leaves."""
    leaf_values = np.asarray(leaf_values, dtype=np.float64)
    n_internal = leaf_values.shape[0] - 1
    depth = int(np.log2(leaf_values.shape[0]))
    left, right = heap_children(depth)
    n_nodes = left.shape[0]
    value = np.zeros(n_nodes)
    value[n_internal:] = leaf_values
    internal = np.arange(n_internal)
    threshold = np.full(n_nodes, np.nan)
    threshold[internal] = binner.thresholds(feature[internal], bin_threshold[internal])
    return Tree(feature=feature, bin_threshold=bin_threshold, threshold=threshold,
                left=left, right=right,
                depth=np.floor(np.log2(np.arange(n_nodes) + 1)).astype(np.int32),
                value=value, noisy_count=np.full(n_nodes, np.nan))


class BoostedTreesMixin:
    """Raw scores of a fitted ensemble: ``init_score_ + _step * sum of tree values``.

    Reads ``estimators_`` (per round, one tree per output), ``init_score_``, ``_step``
    (the shrinkage of every tree), ``binner_`` and ``n_features_in_``.
    """

    def _initial_scores(self, X):
        """``(codes, scores)``: X's bin codes, and the initial scores with one contiguous
        row per output (the core adds each tree's values to a row in place)."""
        check_is_fitted(self, "estimators_")
        X = check_features(X, n_features=self.n_features_in_, estimator=self)
        codes = self.binner_.transform(X)
        scores = start_scores(codes, self.init_score_)
        return codes, scores

    def _add_rounds(self, codes, scores):
        """Add the rounds' trees to ``scores`` in place, yielding after every round."""
        for round_trees in self.estimators_:
            for k, tree in enumerate(round_trees):
                _histogram.add_leaf_values(codes, tree.feature, tree.bin_threshold,
                                           tree.left, tree.right, tree.value, self._step,
                                           scores[k])
            yield

    @property
    def feature_importances_(self):
        """Importances from the released leaf values of every round's trees
        (post-processing; see :mod:`dptrees._importances`): no counts are released, so
        every leaf weighs the same."""
        check_is_fitted(self, "estimators_")
        trees = [tree for round_trees in self.estimators_ for tree in round_trees]
        return ensemble_importances(trees, self.n_features_in_)

    def _staged_raw(self, X):
        """Raw scores, shape (n_samples, n_outputs), after each round (one array, updated
        in place)."""
        codes, scores = self._initial_scores(X)
        for _ in self._add_rounds(codes, scores):
            yield scores.T

    def _raw(self, X):
        codes, scores = self._initial_scores(X)
        for _ in self._add_rounds(codes, scores):
            pass
        return np.ascontiguousarray(scores.T)


class BoostedRegressorMixin(BoostedTreesMixin):
    """Predictions of a squared-error ensemble on targets rescaled by ``y_bounds_``."""

    def _to_target(self, raw):
        lower, upper = self.y_bounds_
        return lower + np.clip(raw[:, 0], 0.0, 1.0) * (upper - lower)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predicted targets (inside ``y_bounds``)."""
        return self._to_target(self._raw(X))

    def staged_predict(self, X: ArrayLike) -> Iterator[np.ndarray]:
        """Predictions after each round, for learning curves."""
        for raw in self._staged_raw(X):
            yield self._to_target(raw)


class BoostedClassifierMixin(MostProbableClassMixin, BoostedTreesMixin):
    """Predictions of a log-loss ensemble; ``_loss`` maps raw scores to probabilities."""

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """Raw scores: log-odds (binary, shape (n,)) or per-class scores (n, n_classes)."""
        raw = self._raw(X)
        return raw[:, 0] if raw.shape[1] == 1 else raw

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Class probabilities, shape (n_samples, n_classes)."""
        raw = self._raw(X)
        return self._loss.proba(raw)

    def staged_predict_proba(self, X: ArrayLike) -> Iterator[np.ndarray]:
        """Class probabilities after each round, for learning curves."""
        for raw in self._staged_raw(X):
            yield self._loss.proba(raw)

    def staged_predict(self, X: ArrayLike) -> Iterator[np.ndarray]:
        """Predicted classes after each round."""
        for proba in self.staged_predict_proba(X):
            yield self.classes_[np.argmax(proba, axis=1)]
