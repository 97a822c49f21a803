"""Bounded sample weights: ``fit(X, y, sample_weight=w)`` with ``w`` in [0, 1].

A weight scales everything its record contributes (count, target, class count, gradient,
Hessian), so a record still moves every release by at most its unweighted sensitivity.
What is checked here: the weights are validated with clear errors; a weight of 1 is the
unweighted record and a weight of 0 its removal, bit for bit; the weights steer the fit;
the guarantee and the ledger do not change; data read in blocks refuses weights; and the
estimators all take them (``has_fit_parameter``). The audits of the weighted releases are in
``test_gradient_boosting.py`` (``test_audit_initial_score_with_sample_weights`` and its
positive control), ``test_adaboost.py`` and ``test_tree_sample_weight.py`` (trees and
forests).
"""

import numpy as np
import pytest
from sklearn.utils.validation import has_fit_parameter

import dptrees
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
from dptrees.boosting._common import _FixedPoint
from dptrees.boosting._losses import BinaryLogistic, SquaredError
from dptrees.federated import (
    DPFederatedGradientBoostingClassifier,
    DPFederatedGradientBoostingRegressor,
)
from dptrees._sources import _rows
from dptrees.validation import WEIGHT_GRID, check_sample_weight

N = 3000

#: Every estimator (and leaf or split kind of the compiled tree builder), with its public
#: inputs. Those before the federated ones: a weight of 0 is the record's removal, bit for
#: bit.
WEIGHTED = [
    (DPGradientBoostingClassifier, "classification", {}),
    (DPGradientBoostingRegressor, "regression", {}),
    (DPGradientBoostingClassifier, "classification", {"split": "private"}),
    (DPExplainableBoostingClassifier, "classification", {}),
    (DPExplainableBoostingRegressor, "regression", {}),
    (DPAdaBoostClassifier, "classification", {}),
    (DPDecisionTreeClassifier, "classification", {}),
    (DPDecisionTreeClassifier, "classification", {"leaf": "label"}),
    (DPDecisionTreeRegressor, "regression", {}),
    (DPDecisionTreeRegressor, "regression", {"leaf": "median"}),
    (DPExtraTreesClassifier, "classification", {"n_estimators": 3}),
    (DPExtraTreesRegressor, "regression", {"n_estimators": 3}),
    (DPFederatedGradientBoostingClassifier, "classification", {"n_clients": N}),
    (DPFederatedGradientBoostingRegressor, "regression", {"n_clients": N}),
    (DPPartitionForestClassifier, "classification", {"n_estimators": 3}),
    (DPPartitionForestRegressor, "regression", {"n_estimators": 3}),
]
IDS = [f"{cls.__name__}{'-' + '-'.join(kw) if kw else ''}" for cls, _, kw in WEIGHTED]
REMOVAL = WEIGHTED.index(
    (DPFederatedGradientBoostingClassifier, "classification", {"n_clients": N}))


def data(task, n=N, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 4))
    if task == "classification":
        y = (X[:, 0] + 0.2 * rng.standard_normal(n) > 0.5).astype(int)
    else:
        y = X[:, 0] + 0.1 * rng.standard_normal(n)
    return X, y


def build(cls, task, extra, **params):
    public = {"classes": [0, 1]} if task == "classification" else {"y_bounds": (-1.0, 2.0)}
    return cls(bounds=(0.0, 1.0), accountant=BudgetAccountant(), random_state=0,
               **public, **extra, **params)


def outputs(est, X):
    return est.predict_proba(X) if hasattr(est, "predict_proba") else est.predict(X)


# -- validation -----------------------------------------------------------------------


def test_check_sample_weight_rounds_to_the_grid_and_copies():
    w = np.array([0.0, 0.3, 1.0, 1e-9])
    out = check_sample_weight(w, 4)
    assert out is not w and np.array_equal(w, [0.0, 0.3, 1.0, 1e-9])  # not overwritten
    assert np.array_equal(out, np.rint(w / WEIGHT_GRID) * WEIGHT_GRID)
    assert out[3] == 0.0 and out[2] == 1.0
    assert check_sample_weight(None, 4) is None
    assert np.array_equal(check_sample_weight([1, 0, True, 0.5], 4), [1, 0, 1, 0.5])


def test_check_sample_weight_accepts_a_pandas_series():
    pd = pytest.importorskip("pandas")
    assert np.array_equal(check_sample_weight(pd.Series([0.5, 1.0]), 2), [0.5, 1.0])


@pytest.mark.parametrize("weights, error, match", [
    (np.ones(5), ValueError, "sample_weight has 5 samples, but X has 4"),
    (np.ones((4, 1)), ValueError, r"1D array of shape \(n_samples,\), got an array of shape"),
    (0.5, ValueError, "got a scalar"),
    ([0.5, np.nan, 1, 1], ValueError, "contains NaN"),
    ([0.5, np.inf, 1, 1], ValueError, "infinity"),
    ([0.5, -0.1, 1, 1], ValueError, r"must be in \[0, 1\].*public upper bound"),
    ([0.5, 3.0, 1, 1], ValueError, r"must be in \[0, 1\], got values in \[0.5, 3\]"),
    (np.zeros(4), ValueError, "all zero"),
    ([1e-8] * 4, ValueError, "all zero"),
    (["a", "b", "c", "d"], TypeError, "string"),
])
def test_check_sample_weight_errors(weights, error, match):
    with pytest.raises(error, match=match):
        check_sample_weight(weights, 4)


@pytest.mark.parametrize("cls, task, extra", WEIGHTED, ids=IDS)
def test_bad_weights_are_refused_before_anything_is_spent(cls, task, extra):
    X, y = data(task, 200)
    est = build(cls, task, extra)
    with pytest.raises(ValueError, match=r"sample_weight must be in \[0, 1\]"):
        est.fit(X, y, sample_weight=np.full(200, 2.0))
    assert est.accountant.spent == (0.0, 0.0)
    assert not hasattr(est, "epsilon_spent_")


# -- what the weights mean ------------------------------------------------------------


@pytest.mark.parametrize("cls, task, extra", WEIGHTED, ids=IDS)
def test_weights_of_one_are_the_unweighted_fit(cls, task, extra):
    X, y = data(task)
    plain = build(cls, task, extra).fit(X, y)
    ones = build(cls, task, extra).fit(X, y, sample_weight=np.ones(N))
    np.testing.assert_array_equal(outputs(plain, X), outputs(ones, X))
    assert ones.epsilon_spent_ == plain.epsilon_spent_
    assert ones.delta_spent_ == plain.delta_spent_


@pytest.mark.parametrize("cls, task, extra", WEIGHTED[:REMOVAL], ids=IDS[:REMOVAL])
def test_weight_zero_is_removal(cls, task, extra):
    # Every statistic is an exact sum in which a record of weight 0 adds 0, and no noise
    # draw depends on the number of rows: the same model as without those rows (DP
    # AdaBoost's noisy weight range is over the records of positive weight). (The
    # EBM's "auto" max_active reads a noisy density of all rows, whatever they weigh, and
    # so do private bin edges, one count per row; federated sampling and partition
    # forests' parts draw per record or client: those are left out here.)
    if cls in (DPExplainableBoostingClassifier, DPExplainableBoostingRegressor):
        extra = {**extra, "max_active": 3, "bin_edges": "uniform"}
    X, y = data(task)
    kept = np.random.default_rng(1).random(N) < 0.7
    removed = build(cls, task, extra).fit(X[kept], y[kept])
    zero = build(cls, task, extra).fit(X, y, sample_weight=kept.astype(float))
    np.testing.assert_array_equal(outputs(removed, X), outputs(zero, X))


@pytest.mark.parametrize("cls, task, extra", WEIGHTED, ids=IDS)
def test_weights_steer_the_fit(cls, task, extra):
    # Two groups with opposite rules; the group is not a feature. Weighting one group
    # down to 0.02 makes the model follow the other group's rule.
    rng = np.random.default_rng(3)
    X = rng.random((2 * N, 4))
    group = np.arange(2 * N) % 2
    up = X[:, 0] > 0.5
    if task == "classification":
        y = np.where(group == 0, up, ~up).astype(int)
    else:
        y = np.where(group == 0, X[:, 0], 1.0 - X[:, 0])
    if cls in (DPFederatedGradientBoostingClassifier, DPFederatedGradientBoostingRegressor):
        extra = {**extra, "n_clients": 2 * N}
    for favoured in (0, 1):
        w = np.where(group == favoured, 1.0, 0.02)
        est = build(cls, task, extra, epsilon=5.0).fit(X, y, sample_weight=w)
        mine, other = group == favoured, group != favoured
        score = est.score
        assert score(X[mine], y[mine]) > score(X[other], y[other]) + 0.3, favoured


@pytest.mark.parametrize("cls, task, extra", WEIGHTED, ids=IDS)
def test_weights_change_no_sensitivity_and_no_budget(cls, task, extra):
    if cls in (DPExplainableBoostingClassifier, DPExplainableBoostingRegressor):
        # "auto" edges follow the weighted noisy count (here about 3,000 unweighted and
        # 1,500 weighted, either side of the rule's 2,000): the ledger may then differ
        extra = {**extra, "bin_edges": "uniform"}
    X, y = data(task)
    plain = build(cls, task, extra).fit(X, y)
    weighted = build(cls, task, extra).fit(
        X, y, sample_weight=np.random.default_rng(2).random(N))
    assert weighted.epsilon_spent_ == plain.epsilon_spent_ <= 1.0
    if cls is DPAdaBoostClassifier:
        # its sensitivities (the public weight ranges) and the split of a noisy round's
        # budget between max and min follow the released learners: the same releases,
        # sensitivities at most 1 and the same total either way
        for est in (plain, weighted):
            ledger = est.privacy_ledger_
            assert all(0 < entry["sensitivity"] <= 1 for entry in ledger)
            assert sum(e["epsilon"] * e["count"] for e in ledger) == pytest.approx(
                est.epsilon_spent_, rel=1e-9)
        assert ([(e["release"], e["mechanism"]) for e in weighted.privacy_ledger_]
                == [(e["release"], e["mechanism"]) for e in plain.privacy_ledger_])
    else:
        assert weighted.privacy_ledger_ == plain.privacy_ledger_
    assert weighted.accountant.spent == plain.accountant.spent


def test_weighted_gradient_statistics_stay_in_the_clipping_range():
    # What every sensitivity rests on: w g and w h (or w, for a constant Hessian) are
    # clipped and rounded per record, inside the unweighted ranges.
    rng = np.random.default_rng(4)
    n = 1000
    weight = check_sample_weight(rng.random(n), n)
    for loss, targets in ((BinaryLogistic(), rng.integers(0, 2, n).astype(float)),
                          (SquaredError(), rng.random(n))):
        g_scale, h_scale = 2.0**30, 2.0**32
        fixed = _FixedPoint(1.0, loss.hessian_bound, g_scale, h_scale,
                            1.0, loss.hessian_bound)
        state = loss.round_state(rng.normal(size=(n, 1)))
        stats = np.empty((2, n), dtype=np.int64)
        _rows.gradient_stats(loss, fixed, targets, state, 0, stats, weight)
        g, h = loss.gradients(targets, state, 0)
        h = np.ones(n) if h is None else h
        np.testing.assert_allclose(stats[0] / g_scale, np.clip(g, -1, 1) * weight, atol=1e-9)
        np.testing.assert_allclose(stats[1] / h_scale, h * weight, atol=1e-9)
        assert np.abs(stats[0]).max() <= g_scale
        assert 0 <= stats[1].min() and stats[1].max() <= loss.hessian_bound * h_scale
    with pytest.raises(ValueError, match="fixed-point Hessian scale"):
        _rows.gradient_stats(SquaredError(), fixed._replace(h_scale=1.0), targets, state, 0,
                             stats, weight)


# -- where weights are not taken ------------------------------------------------------


@pytest.mark.parametrize("cls", [DPGradientBoostingClassifier, DPDecisionTreeClassifier,
                                 DPExtraTreesClassifier])
@pytest.mark.parametrize("make", [
    lambda X, path: np.lib.format.open_memmap(path, mode="w+", dtype=np.float64,
                                              shape=X.shape),
    lambda X, path: dptrees.Blocks(X, block_rows=100),
], ids=["memmap", "Blocks"])
def test_data_in_blocks_refuses_weights(tmp_path, make, cls):
    X, y = data("classification", 300)
    source = make(X, str(tmp_path / "X.npy"))
    if isinstance(source, np.memmap):
        source[:] = X
    est = build(cls, "classification", {})
    with pytest.raises(ValueError, match="sample_weight is supported for data in memory"):
        est.fit(source, y, sample_weight=np.ones(300))
    assert est.accountant.spent == (0.0, 0.0)


def _all_estimators():
    names = set(dptrees.__all__) | {"DPFederatedGradientBoostingClassifier",
                                    "DPFederatedGradientBoostingRegressor"}
    found = [getattr(dptrees, n, None) or getattr(dptrees.federated, n) for n in sorted(names)]
    return [cls for cls in found if isinstance(cls, type) and hasattr(cls, "fit")]


def test_every_estimator_takes_weights():
    # The user guide's list: every estimator, the scikit-learn way (sample_weight in fit,
    # so meta-estimators pass it), and every one of them is in the property tests above.
    takes = {cls.__name__ for cls in _all_estimators()
             if has_fit_parameter(cls(), "sample_weight")}
    assert takes == {cls.__name__ for cls, _, _ in WEIGHTED}
    assert len(_all_estimators()) == 13 == len(takes)


@pytest.mark.parametrize("cls, params", [
    (DPExplainableBoostingClassifier, {"n_cycles": 2}),
    (DPGradientBoostingClassifier, {"n_estimators": 3}),
    (DPAdaBoostClassifier, {"n_estimators": 3, "schedule": "every"}),
    (DPDecisionTreeClassifier, {}),
    (DPExtraTreesClassifier, {"n_estimators": 2}),
])
def test_weighted_fits_do_not_depend_on_threads(cls, params):
    # With n_jobs=2 the rows (and their weights) are cut into blocks run on threads;
    # 100,000 rows are enough for two blocks. Exact sums: the same model.
    X, y = data("classification", 100_000)
    w = np.random.default_rng(6).random(len(y))
    one, two = (build(cls, "classification", {}, n_jobs=j, **params).fit(X, y, sample_weight=w)
                for j in (1, 2))
    np.testing.assert_array_equal(one.predict_proba(X), two.predict_proba(X))
