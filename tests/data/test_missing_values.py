"""Missing values in numeric columns: a public missing bin, routed by each split's choice.

* ``Numeric(lower, upper, missing=True)`` in ``bounds`` gives a column a missing bin (the
  last of its ``n_bins``); its present values share the others. The bins, the split
  candidates and the budget are the same whether or not the data has missing values,
  so the missing bin costs nothing and reveals nothing.
* Every estimator family learns where missing values go, and a NaN at predict time
  follows the learned route; a NaN in a column not declared as possibly missing is a
  clear error, at fit and at predict.
"""

import pickle
import warnings

import numpy as np
import pytest

from dptrees import (
    Blocks,
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
    Numeric,
)
from dptrees.data.binning import Binner
from dptrees.exceptions import PrivacyLeakWarning
from dptrees.federated import (
    DPFederatedGradientBoostingClassifier,
    DPFederatedGradientBoostingRegressor,
)
from dptrees.plot import export_text

pd = pytest.importorskip("pandas")

DOMAIN = {"x": Numeric(0.0, 10.0, missing=True), "z": (0.0, 1.0)}


def table(n=3000, seed=0, missing_rate=0.3, missing_class=1):
    """Column ``x`` missing at ``missing_rate``; the target is 1 where ``x`` is above 5,
    and ``missing_class`` where it is missing, so a model must learn where missing values
    go to fit it."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, n)
    missing = rng.random(n) < missing_rate
    y = np.where(missing, missing_class, x > 5).astype(int)
    x[missing] = np.nan
    return pd.DataFrame({"x": x, "z": rng.random(n)}), y, missing


def classifiers():
    common = dict(classes=[0, 1], random_state=0, epsilon=20.0)
    yield DPDecisionTreeClassifier(max_depth=4, **common)
    yield DPExtraTreesClassifier(n_estimators=10, max_features=2, **common)
    yield DPPartitionForestClassifier(n_estimators=3, **common)
    yield DPGradientBoostingClassifier(n_estimators=20, **common)
    yield DPAdaBoostClassifier(**common)
    yield DPExplainableBoostingClassifier(**common)
    yield DPFederatedGradientBoostingClassifier(n_estimators=20, n_clients=3000, **common)


def regressors():
    common = dict(y_bounds=(0.0, 1.0), random_state=0, epsilon=20.0)
    yield DPDecisionTreeRegressor(max_depth=4, **common)
    yield DPExtraTreesRegressor(n_estimators=10, max_features=2, **common)
    yield DPPartitionForestRegressor(n_estimators=3, **common)
    yield DPGradientBoostingRegressor(n_estimators=20, **common)
    yield DPExplainableBoostingRegressor(**common)
    yield DPFederatedGradientBoostingRegressor(n_estimators=20, n_clients=3000, **common)


ESTIMATORS = list(classifiers()) + list(regressors())
IDS = [type(e).__name__ for e in ESTIMATORS]


def fit(est, X, y):
    est.set_params(bounds=DOMAIN, accountant=BudgetAccountant(1e6, 1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        return est.fit(X, y)


def test_the_binner_keeps_the_last_bin_for_missing_values():
    binner = Binner([0.0, 0.0], [10.0, 10.0], 6, missing=[0])
    present = np.linspace(-1.0, 10.0, 221)  # the encoding clips present values to 10
    X = np.column_stack([np.r_[present, 20.0], np.r_[present, 20.0]])
    codes = binner.transform(X)
    # feature 0: present values in 5 bins of width 2, a value above the bounds (a
    # missing one, as the table encoding writes it) in bin 5; feature 1: 6 plain bins
    np.testing.assert_array_equal(codes[:-1, 0], np.clip(np.floor(present / 2), 0, 4))
    assert codes[-1, 0] == 5
    np.testing.assert_array_equal(codes[:, 1], np.clip(np.floor(X[:, 1] / (10 / 6)), 0, 5))
    edges = binner.thresholds(np.zeros(5, dtype=int), np.arange(5))
    np.testing.assert_allclose(edges, [2.0, 4.0, 6.0, 8.0, np.inf])
    # "left when x < threshold" agrees with "left when code <= bin" for present values,
    # and a NaN is never below a threshold: it goes right, as its code does
    inside = present[(present > 0) & (present < 10) & (present % 2 != 0)]
    for b, edge in enumerate(edges):
        np.testing.assert_array_equal(binner.transform(np.column_stack([inside, inside]))[:, 0]
                                      <= b, inside < edge)
        assert not np.nan < edge
    np.testing.assert_allclose(binner.thresholds(np.ones(5, dtype=int), np.arange(5)),
                               np.arange(1, 6) * 10 / 6)


def test_a_binner_saved_before_missing_bins_has_none():
    binner = Binner([0.0], [1.0], 4)
    state = dict(binner.__dict__)
    del state["missing"]
    old = object.__new__(Binner)
    old.__setstate__(state)
    np.testing.assert_array_equal(old.missing, [0])
    np.testing.assert_array_equal(old.transform(np.array([[0.9]])), [[3]])


@pytest.mark.parametrize("est", ESTIMATORS, ids=IDS)
def test_every_estimator_learns_where_missing_values_go(est):
    X, y, missing = table()
    fit(est, X, y)
    assert est.missing_columns_ == ["x"]
    assert est.privacy_report()["public_inputs"]["missing_columns"] == ["x"]
    probe, _, probe_missing = table(n=2000, seed=1)
    predicted = est.predict(probe)
    if hasattr(est, "classes_"):
        # the missing rows are class 1, the present ones below 5 class 0
        assert (predicted[probe_missing] == 1).mean() > 0.9
        low = ~probe_missing & (probe["x"] < 4).to_numpy()
        assert (predicted[low] == 0).mean() > 0.9
    else:
        low = ~probe_missing & (probe["x"] < 4).to_numpy()
        assert predicted[probe_missing].mean() > predicted[low].mean() + 0.5


@pytest.mark.parametrize("est", [DPDecisionTreeClassifier(random_state=0),
                                 DPExtraTreesClassifier(n_estimators=3, random_state=0),
                                 DPGradientBoostingClassifier(n_estimators=3, random_state=0)],
                         ids=["tree", "extra-trees", "boosting"])
def test_the_missing_bin_is_there_whatever_the_data_and_costs_nothing(est):
    with_missing, y, _ = table(seed=2)
    without, _, _ = table(seed=2, missing_rate=0.0)
    a = fit(est.set_params(classes=[0, 1]), with_missing, y)
    binner_a, ledger_a, spent_a = _binner(a), a.privacy_ledger_, a.epsilon_spent_
    b = fit(est, without, y)
    binner_b = _binner(b)
    np.testing.assert_array_equal(binner_a.missing, [1, 0])
    np.testing.assert_array_equal(binner_a.missing, binner_b.missing)
    np.testing.assert_array_equal(binner_a.lower, binner_b.lower)
    np.testing.assert_array_equal(binner_a.upper, binner_b.upper)
    assert ledger_a == b.privacy_ledger_ and spent_a == b.epsilon_spent_
    # and the same budget as the column without a missing bin
    plain = est.__class__(**{**est.get_params(), "bounds": {"x": (0.0, 10.0), "z": (0.0, 1.0)},
                             "accountant": BudgetAccountant(1e6, 1.0)}).fit(without, y)
    assert plain.privacy_ledger_ == b.privacy_ledger_
    assert plain.epsilon_spent_ == b.epsilon_spent_


def _binner(est):
    return est.binner_ if hasattr(est, "binner_") else est.estimators_[0].binner_


def test_numeric_without_missing_is_the_plain_pair():
    X, y, _ = table(missing_rate=0.0)
    a = DPDecisionTreeClassifier(bounds={"x": Numeric(0, 10), "z": (0, 1)}, classes=[0, 1],
                                 random_state=0).fit(X, y)
    b = DPDecisionTreeClassifier(bounds={"x": (0, 10), "z": (0, 1)}, classes=[0, 1],
                                 random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert a.missing_columns_ == []


def test_a_missing_value_follows_the_learned_route_at_predict_time():
    X, y, _ = table(missing_class=0)  # missing values do not go with the large ones
    est = fit(DPDecisionTreeClassifier(classes=[0, 1], epsilon=20.0, max_depth=3,
                                       random_state=0), X, y)
    text = export_text(est, feature_names=["x", "z"])
    assert "x is missing" in text and "x is present" in text
    tree = est.tree_
    split = int(np.flatnonzero(np.isinf(tree.threshold))[0])
    assert tree.bin_threshold[split] == est.n_bins - 2
    probe = pd.DataFrame({"x": [np.nan, None, 7.0, 2.0], "z": [0.5] * 4})
    probe["x"] = probe["x"].astype(float)
    np.testing.assert_array_equal(est.predict(probe), [0, 0, 1, 0])
    nullable = probe.astype({"x": "Float64"})
    nullable.loc[0, "x"] = pd.NA
    np.testing.assert_array_equal(est.predict(nullable), [0, 0, 1, 0])


def test_arrays_declare_missing_columns_by_index():
    X, y, _ = table()
    est = DPDecisionTreeClassifier(bounds={0: Numeric(0, 10, missing=True), 1: (0, 1)},
                                   classes=[0, 1], epsilon=20.0, random_state=0)
    est.fit(X.to_numpy(), y)
    assert est.missing_columns_ == [0]
    assert (est.predict(X.to_numpy()) == y).mean() > 0.9


def test_nan_in_a_column_not_declared_is_an_error():
    X, y, _ = table()
    with pytest.raises(ValueError, match=r"Numeric\(lower, upper, missing=True\)"):
        DPDecisionTreeClassifier(bounds={"x": (0, 10), "z": (0, 1)}, classes=[0, 1]).fit(X, y)
    with pytest.raises(ValueError, match="contains NaN"):
        DPDecisionTreeClassifier(bounds=[(0, 10), (0, 1)], classes=[0, 1]).fit(X.to_numpy(), y)
    est = fit(DPDecisionTreeClassifier(classes=[0, 1]), X, y)
    with pytest.raises(ValueError, match="contains NaN"):
        est.predict(X.assign(z=np.nan))
    with pytest.raises(ValueError, match="infinity"):
        est.predict(X.assign(x=np.inf))


@pytest.mark.parametrize("args, kwargs, error, match", [
    ((1, 1), {}, ValueError, "lower < upper"),
    ((2, 1), {}, ValueError, "lower < upper"),
    ((0, np.inf), {}, ValueError, "finite"),
    ((np.nan, 1), {}, ValueError, "finite"),
    (("0", 1), {}, ValueError, "finite"),
    ((0, 1), {"missing": "yes"}, TypeError, "True or False"),
    ((-1e308, 1e308), {"missing": True}, ValueError, "too wide"),
])
def test_a_numeric_domain_is_checked(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        Numeric(*args, **kwargs)


def test_unnamed_blocks_refuse_numeric_domains():
    X, y, _ = table(missing_rate=0.0)
    est = DPDecisionTreeClassifier(bounds=DOMAIN, classes=[0, 1])
    with pytest.raises(ValueError, match="need its column names"):
        est.fit(Blocks(X.to_numpy()), y)


def test_a_model_with_a_missing_bin_saves_and_loads():
    X, y, _ = table()
    est = fit(DPGradientBoostingClassifier(classes=[0, 1], n_estimators=5, random_state=0),
              X, y)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict_proba(X), est.predict_proba(X))
    skops = pytest.importorskip("skops")  # noqa: F841
    from dptrees.persistence import load, save

    path = "missing_bin_model.skops"
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        save(est, os.path.join(tmp, path))
        loaded = load(os.path.join(tmp, path))
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
    assert loaded.privacy_report() == est.privacy_report()


# -- audit: a record with a missing value, isolated by the present/missing edge ----------
#
# Two features, 16 bins: feature 0 may be missing (15 bins for present values, the 16th
# for missing ones), feature 1 is plain; 30 candidates either way. D0: 30 class-0 records
# with both features in their bin 1; D1 adds a class-1 record whose feature 0 is missing.
# Every edge of feature 0 above bin 1 (13 of its 14, the present | missing one included)
# isolates it, as the edges above an ordinary top-bin record would; the split's share of
# epsilon is 20/23 of 2. The missing bin must give that record no more influence than
# any other record has: the audit's bound stays within epsilon.


def _missing_neighbours():
    X0 = np.tile([1.5 / 15, 1.5 / 16], (30, 1))
    y0 = np.zeros(30, dtype=int)
    return (X0, y0), (np.vstack([X0, [np.nan, 1.5 / 16]]), np.append(y0, 1))



def test_audit_a_missing_value_isolated_by_its_own_edge():
    from support import root_split, run_audit

    est = DPDecisionTreeClassifier(
        epsilon=2.0, max_depth=1, n_bins=16, classes=[0,
                                                      1], min_samples_split=0, min_samples_leaf=0,
        budget_weights=(1, 20, 1), bounds={0: Numeric(0, 1, missing=True), 1: (0, 1)},
        accountant=BudgetAccountant())
    d0, d1 = _missing_neighbours()
    res = run_audit(est, d0, d1, root_split, 3_000, 12_000, fresh_streams=False)
    res.assert_within(2.0)
    assert res.epsilon_lower_bound > 0.5, res.summary()  # measured 0.86-0.99 over seeds
