"""Data frames and public bounds as users write them.

* Every estimator keeps a data frame's column names as ``feature_names_in_`` and refuses
  to predict on a frame whose columns are reordered or renamed (scikit-learn's rule and
  message); a frame predicted after an array fit (or the reverse) only warns.
* ``bounds`` accepts a pair of scalars or arrays, one ``(lower, upper)`` pair per
  feature, or a dict by column name or index; a 2 x 2 table for two features is read the
  only way that gives every feature ``lower < upper`` and refused when both ways do. The
  same model comes from every way of writing the same bounds.
"""

import warnings

import numpy as np
import pytest

from dptrees import (
    BudgetAccountant,
    DPAdaBoostClassifier,
    DPDecisionTreeClassifier,
    DPDecisionTreeRegressor,
    DPExplainableBoostingClassifier,
    DPExtraTreesClassifier,
    DPGradientBoostingClassifier,
    DPGradientBoostingRegressor,
    DPPartitionForestClassifier,
)
from dptrees.federated import DPFederatedGradientBoostingClassifier
from dptrees.data.domains import check_bounds

pd = pytest.importorskip("pandas")

COLUMNS = ["age", "hours", "score"]


def frame(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.random((n, 3)), columns=COLUMNS)
    return X, (X["age"] + X["hours"] > 1).astype(int).to_numpy()


def classifiers():
    common = dict(classes=[0, 1], random_state=0)
    yield DPDecisionTreeClassifier(**common)
    yield DPPartitionForestClassifier(n_estimators=3, **common)
    yield DPExtraTreesClassifier(n_estimators=3, **common)
    yield DPGradientBoostingClassifier(n_estimators=5, **common)
    yield DPAdaBoostClassifier(**common)
    yield DPExplainableBoostingClassifier(**common)


CLASSIFIERS = list(classifiers())
IDS = [type(e).__name__ for e in CLASSIFIERS]
BOUNDS_BY_NAME = {"score": (0.0, 1.0), "age": (0.0, 1.0), "hours": (0.0, 1.0)}


def fit(est, X, y, **fit_kw):
    est.set_params(accountant=BudgetAccountant(1e6, 1.0))
    return est.fit(X, y, **fit_kw)


@pytest.mark.parametrize("est", CLASSIFIERS, ids=IDS)
def test_frames_keep_their_column_names_and_reordered_columns_are_refused(est):
    X, y = frame()
    fit(est.set_params(bounds=BOUNDS_BY_NAME), X, y)
    assert list(est.feature_names_in_) == COLUMNS
    assert est.n_features_in_ == 3
    np.testing.assert_array_equal(est.predict(X), est.predict(X.copy()))
    with pytest.raises(ValueError, match="feature names should match"):
        est.predict(X[["hours", "age", "score"]])
    with pytest.raises(ValueError, match="feature names should match"):
        est.predict(X.rename(columns={"age": "AGE"}))
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        est.predict(X.to_numpy())


@pytest.mark.parametrize("est", CLASSIFIERS, ids=IDS)
def test_arrays_have_no_feature_names_and_refitting_on_arrays_drops_them(est):
    X, y = frame()
    fit(est.set_params(bounds=(0.0, 1.0)), X, y)
    fit(est, X.to_numpy(), y)
    assert not hasattr(est, "feature_names_in_")
    with pytest.warns(UserWarning, match="fitted without feature names"):
        est.predict(X)


@pytest.mark.parametrize("est", CLASSIFIERS + [DPFederatedGradientBoostingClassifier(
    classes=[0, 1], n_clients=400, n_estimators=3, random_state=0)],
    ids=IDS + ["DPFederatedGradientBoostingClassifier"])
def test_a_refused_refit_keeps_the_columns_of_the_fitted_model(est):
    """A refit refused (here: no budget left) leaves the fitted model as it was: its
    column names and table encoding still match its trees."""
    X, y = frame()
    fit(est.set_params(bounds={"age": (0.0, 1.0), "hours": ["a", "b"], "score": (0.0, 1.0)}),
        X.assign(hours=np.where(X["hours"] > 0.5, "a", "b")), y)
    before = est.predict_proba(X.assign(hours=np.where(X["hours"] > 0.5, "a", "b")))
    est.set_params(accountant=BudgetAccountant(1e-3, 1.0), bounds=(0.0, 1.0))
    other = X.rename(columns={"age": "a1", "hours": "a2", "score": "a3"})
    with pytest.raises(Exception, match="budget|epsilon|remain"):
        est.fit(other, y)
    assert list(est.feature_names_in_) == COLUMNS
    assert est.categories_ == {"hours": ["a", "b"]}
    np.testing.assert_array_equal(
        est.predict_proba(X.assign(hours=np.where(X["hours"] > 0.5, "a", "b"))), before)


def test_federated_boosting_keeps_the_column_names():
    X, y = frame()
    est = DPFederatedGradientBoostingClassifier(classes=[0, 1], bounds=BOUNDS_BY_NAME,
                                                n_clients=40, n_estimators=3, random_state=0)
    fit(est, X, y, clients=np.arange(400) % 40)
    assert list(est.feature_names_in_) == COLUMNS
    with pytest.raises(ValueError, match="feature names should match"):
        est.predict(X[COLUMNS[::-1]])


# -- bounds -------------------------------------------------------------------------------


@pytest.mark.parametrize("est", [DPDecisionTreeRegressor(y_bounds=(0, 2), random_state=1),
                                 DPGradientBoostingRegressor(y_bounds=(0, 2), n_estimators=5,
                                                             random_state=1)],
                         ids=["tree", "boosting"])
def test_every_layout_of_the_same_bounds_gives_the_same_model(est):
    rng = np.random.default_rng(2)
    X = pd.DataFrame(rng.random((300, 3)) * [1, 10, 100], columns=COLUMNS)
    y = X["age"] + X["hours"] / 10
    lower, upper = [0.0, 0.0, 0.0], [1.0, 10.0, 100.0]
    layouts = [
        (lower, upper),
        (np.array(lower), np.array(upper)),
        [(0, 1), (0, 10), (0, 100)],
        np.array([[0, 1], [0, 10], [0, 100]]),
        {"age": (0, 1), "hours": (0, 10), "score": (0, 100)},
        {2: (0, 100), 0: (0, 1), 1: (0, 10)},
    ]
    predictions = [fit(est.set_params(bounds=b), X, y).predict(X) for b in layouts]
    for p in predictions[1:]:
        np.testing.assert_array_equal(p, predictions[0])
    np.testing.assert_array_equal(est.bounds_[1], upper)


def test_two_features_read_the_only_way_that_gives_valid_intervals():
    # the reported bug: pairs per feature were read as (lower array, upper array)
    b = check_bounds([(0, 1), (0, 1)], None, n_features=2)
    np.testing.assert_array_equal(b.lower, [0, 0])
    np.testing.assert_array_equal(b.upper, [1, 1])
    b = check_bounds(([0, 0], [1, 9]), None, n_features=2)  # only valid as a pair
    np.testing.assert_array_equal(b.lower, [0, 0])
    np.testing.assert_array_equal(b.upper, [1, 9])
    for ambiguous in ([(0, 1), (2, 3)], ([0, 5], [1, 9])):
        with pytest.raises(ValueError, match="ambiguous for 2 features"):
            check_bounds(ambiguous, None, n_features=2)
    b = check_bounds((np.array([0, 5]), np.array([1, 9])), None, n_features=2)
    np.testing.assert_array_equal(b.upper, [1, 9])  # numpy sides: always a pair
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = DPDecisionTreeClassifier(classes=[0, 1], bounds=[(0, 1), (0, 1)],
                                       random_state=0)
        fit(est, np.random.default_rng(0).random((50, 2)), np.arange(50) % 2)
    np.testing.assert_array_equal(est.bounds_[0], [0, 0])


@pytest.mark.parametrize("bounds, match", [
    ({"age": (0, 1), "hours": (0, 1)}, r"no bounds for \['score'\]"),
    ({"age": (0, 1), "hours": (0, 1), "score": (0, 1), "extra": (0, 1)}, "unknown column"),
    ({0: (0, 1), 1: (0, 1), 3: (0, 1)}, "feature indices"),
    ({"age": (1, 0), "hours": (0, 1), "score": (0, 1)}, "lower bound exceeds upper"),
    ({"age": (0, 1, 2), "hours": (0, 1), "score": (0, 1)}, "pair"),
])
def test_bad_bound_dicts_raise_before_anything_is_spent(bounds, match):
    X, y = frame(50)
    acc = BudgetAccountant(10.0)
    est = DPDecisionTreeClassifier(classes=[0, 1], bounds=bounds, accountant=acc)
    with pytest.raises((ValueError, TypeError), match=match):
        est.fit(X, y)
    assert acc.spent == (0.0, 0.0)


def test_a_dict_by_name_needs_a_frame():
    X, y = frame(50)
    est = DPDecisionTreeClassifier(classes=[0, 1], bounds=BOUNDS_BY_NAME)
    with pytest.raises(ValueError, match="the data has no column names"):
        fit(est, X.to_numpy(), y)
