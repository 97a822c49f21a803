"""``feature_importances_`` from released values only (``dptrees._importances``).

* The split gain formula is scikit-learn's mean decrease in impurity: with (almost) no
  noise, a DP tree's importances equal the impurity decreases of its own splits computed
  from the exact training statistics.
* Every estimator has them: non-negative, summing to 1, and the one informative feature
  on top; they read nothing but the fitted model (post-processing).
"""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from dptrees import (
    BudgetAccountant,
    DPAdaBoostClassifier,
    DPDecisionTreeClassifier,
    DPDecisionTreeRegressor,
    DPExplainableBoostingClassifier,
    DPExplainableBoostingRegressor,
    DPExtraTreesClassifier,
    DPExtraTreesRegressor,
    DPGradientBoostingClassifier,
    DPGradientBoostingRegressor,
    DPPartitionForestClassifier,
    DPPartitionForestRegressor,
)
from dptrees._importances import tree_gains
from dptrees._tree_structure import Tree
from dptrees.federated import (
    DPFederatedGradientBoostingClassifier,
    DPFederatedGradientBoostingRegressor,
)


def data(n=4000, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, p))
    y = np.where(X[:, 0] > 0.5, 1.0, 0.0) + 0.3 * (X[:, 1] > 0.5)
    return X, y


def _fit(est, X, y):
    return est.set_params(accountant=BudgetAccountant(1e9, 1.0)).fit(X, y)


def test_one_split_gain_is_the_impurity_decrease():
    # root splits feature 1; leaves: 30 records of mean 2, 10 records of mean 6
    tree = Tree(feature=[1, -1, -1], bin_threshold=[3, -1, -1], threshold=[0.5, np.nan, np.nan],
                left=[1, -1, -1], right=[2, -1, -1], depth=[0, 1, 1],
                value=[np.nan, 2.0, 6.0], noisy_count=[40.0, 30.0, 10.0])
    np.testing.assert_allclose(tree_gains(tree, 3), [0, 30 * 10 / 40 * 16, 0])
    # without released counts every leaf weighs 1; a negative noisy count weighs 0
    unweighted = Tree(**{**vars(tree), "noisy_count": [np.nan] * 3})
    np.testing.assert_allclose(tree_gains(unweighted, 3), [0, 0.5 * 16, 0])
    emptied = Tree(**{**vars(tree), "noisy_count": [40.0, -3.0, 10.0]})
    np.testing.assert_allclose(tree_gains(emptied, 3), 0)


def _exact_impurity_decrease(tree, codes, y, n_features):
    """scikit-learn's MDI on the tree's own structure, from the exact training data."""
    targets = y.reshape(len(y), -1)
    gains = np.zeros(n_features)

    def impurity_sum(rows):
        return ((targets[rows] - targets[rows].mean(axis=0)) ** 2).sum() if rows.size else 0.0

    def walk(node, rows):
        if tree.left[node] < 0:
            return
        f, b = tree.feature[node], tree.bin_threshold[node]
        go_left = codes[rows, f] <= b
        left, right = rows[go_left], rows[~go_left]
        gains[f] += impurity_sum(rows) - impurity_sum(left) - impurity_sum(right)
        walk(tree.left[node], left)
        walk(tree.right[node], right)

    walk(0, np.arange(len(y)))
    return gains / gains.sum()


@pytest.mark.parametrize("kind", ["regression", "classification"])
def test_without_noise_they_are_the_mean_decrease_in_impurity(kind):
    X, y = data()
    if kind == "regression":
        est = DPDecisionTreeRegressor(epsilon=1e7, max_depth=3, bounds=(0, 1), y_bounds=(0, 1.3),
                                      n_target_bins=2, random_state=0)
        target = y
    else:
        est = DPDecisionTreeClassifier(epsilon=1e7, max_depth=3, bounds=(0, 1),
                                       classes=[0, 1], random_state=0)
        target = (y > 0.5).astype(int)
    _fit(est, X, target)
    codes = est.binner_.transform(X)
    if kind == "classification":  # Gini: the squared error of the one-hot labels
        target = np.eye(2)[target]
    expected = _exact_impurity_decrease(est.tree_, codes, target, X.shape[1])
    np.testing.assert_allclose(est.feature_importances_, expected, rtol=1e-3, atol=1e-4)


def estimators():
    reg = dict(bounds=(0, 1), y_bounds=(0, 1.3), random_state=0)
    clf = dict(bounds=(0, 1), classes=[0, 1], random_state=0)
    yield DPDecisionTreeRegressor(epsilon=10, **reg), "r"
    yield DPDecisionTreeClassifier(epsilon=10, **clf), "c"
    yield DPPartitionForestRegressor(n_estimators=3, epsilon=10, **reg), "r"
    yield DPPartitionForestClassifier(n_estimators=3, epsilon=10, **clf), "c"
    yield DPExtraTreesRegressor(n_estimators=10, epsilon=10, **reg), "r"
    yield DPExtraTreesClassifier(n_estimators=10, epsilon=10, **clf), "c"
    yield DPGradientBoostingRegressor(epsilon=10, **reg), "r"
    yield DPGradientBoostingClassifier(epsilon=10, **clf), "c"
    yield DPExplainableBoostingRegressor(epsilon=10, **reg), "r"
    yield DPExplainableBoostingClassifier(epsilon=10, **clf), "c"
    yield DPAdaBoostClassifier(epsilon=10, **clf), "c"
    yield DPFederatedGradientBoostingRegressor(epsilon=10, n_clients=4000, n_estimators=20,
                                               sampling_probability=1.0, **reg), "r"
    yield DPFederatedGradientBoostingClassifier(epsilon=10, n_clients=4000, n_estimators=20,
                                                sampling_probability=1.0, **clf), "c"


ESTIMATORS = list(estimators())


@pytest.mark.parametrize("est, kind", ESTIMATORS, ids=[type(e).__name__ for e, _ in ESTIMATORS])
def test_every_estimator_ranks_the_informative_feature_first(est, kind):
    X, y = data()
    with pytest.raises(NotFittedError):
        est.feature_importances_
    _fit(est, X, y if kind == "r" else (y > 0.5).astype(int))
    importances = est.feature_importances_
    assert importances.shape == (X.shape[1],)
    assert (importances >= 0).all()
    assert importances.sum() == pytest.approx(1.0)
    assert np.argmax(importances) == 0
    # post-processing: the same fitted model gives the same importances, no data needed
    np.testing.assert_array_equal(est.feature_importances_, importances)


def test_a_tree_without_splits_has_zero_importances():
    X, y = data(n=50)
    est = _fit(DPDecisionTreeRegressor(epsilon=1.0, max_depth=0, bounds=(0, 1),
                                       y_bounds=(0, 1.3), random_state=0), X, y)
    np.testing.assert_array_equal(est.feature_importances_, np.zeros(4))
