"""Tests of ``dptrees.forest``: ``assign_partitions`` and :class:`DPPartitionForestRegressor`.

What is checked
---------------
* ``assign_partitions``: one independent uniform draw per record, so adding a record at
  the end leaves every other record's part unchanged (the parallel-composition argument),
  parts in range and about equal.
* The forest: each record trains exactly one tree (the trees' root counts add up to n),
  one spend of ``epsilon``, predictions are the average of the trees, results do not
  depend on ``n_jobs``, it learns a step function, public-input warnings, parameter
  errors (nothing spent), scikit-learn conventions (clone, pickle).
* A black-box privacy AUDIT of the released forest on neighbouring datasets, and a
  POSITIVE CONTROL (every tree trained on all the data, i.e. no partitioning) that must
  be flagged.

Audit harness
-------------
``DPPartitionForestRegressor.fit`` costs ~1.5 ms (validation, accounting, a thread pool),
too slow for ~10^4 releases. ``forest_replay`` replays what ``fit`` does --
``assign_partitions``, ``rng.spawn``, one compiled-builder run per part -- on data
prepared once; ``test_forest_replay_is_fit`` checks it gives the identical trees as
``fit`` for the same seed. The audit sampler draws every tree's noise from one stream
instead of spawned ones (same distribution: independent noise per tree, a uniform part
per record), which saves the cost of spawning.
"""

import functools
import pickle
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from dptrees import (
    BudgetAccountant,
    BudgetExceededError,
    DPDecisionTreeRegressor,
    DPPartitionForestRegressor,
    PrivacyLeakWarning,
)
from dptrees._tree_structure import Tree
from dptrees.forest import assign_partitions
from dptrees._tree_data import TreeData
from dptrees.tree import split_tree_budget

import support
from support import BOUNDS, assert_same_trees, audit_samplers, step_data


def make(n_estimators=5, epsilon=1.0, **params):
    params.setdefault("bounds", BOUNDS)
    params.setdefault("y_bounds", BOUNDS)
    params.setdefault("accountant", BudgetAccountant())
    return DPPartitionForestRegressor(n_estimators=n_estimators, epsilon=epsilon, **params)


# targets inside y_bounds = [0, 1]: 0.5 sin(6 x0) + 0.5 x1 + N(0, 0.1^2), clipped
random_data = functools.partial(support.random_data, weight=0.5, clip=(0, 1))


# ======================================================================================
# assign_partitions
# ======================================================================================


@pytest.mark.parametrize("n_parts", [1, 2, 3, 7, 1000, 2**40])
def test_adding_a_record_at_the_end_keeps_every_other_assignment(n_parts):
    for n in (1, 2, 5, 31, 1000):
        base = assign_partitions(n, n_parts, np.random.default_rng(123))
        for extra in (1, 2, 17):
            longer = assign_partitions(n + extra, n_parts, np.random.default_rng(123))
            assert longer.shape == (n + extra,)
            np.testing.assert_array_equal(longer[:n], base)


@pytest.mark.parametrize("n_parts", [1, 3, 25, 1000])
def test_parts_are_in_range_integers(n_parts):
    parts = assign_partitions(10_000, n_parts, np.random.default_rng(0))
    assert parts.shape == (10_000,) and np.issubdtype(parts.dtype, np.integer)
    assert parts.min() >= 0 and parts.max() < n_parts
    if n_parts <= 25:
        assert set(np.unique(parts).tolist()) == set(range(n_parts))


def test_parts_are_about_equal_and_independent():
    k, n = 6, 60_000
    parts = assign_partitions(n, k, np.random.default_rng(1))
    counts = np.bincount(parts, minlength=k)
    # binomial(n, 1/k): sd ~91; allow 5 sd
    assert np.all(np.abs(counts - n / k) < 5 * np.sqrt(n * (1 / k) * (1 - 1 / k)))
    assert stats.chisquare(counts).pvalue > 1e-4
    # consecutive records: the joint distribution of (part_i, part_i+1) is uniform
    pairs = np.bincount(parts[:-1] * k + parts[1:], minlength=k * k)
    assert stats.chisquare(pairs).pvalue > 1e-4
    # and the assignment does not depend on anything but the stream: same seed, same parts
    np.testing.assert_array_equal(parts, assign_partitions(n, k, np.random.default_rng(1)))
    assert not np.array_equal(parts, assign_partitions(n, k, np.random.default_rng(2)))


# ======================================================================================
# The forest
# ======================================================================================


def forest_replay(est, data, spawn=True):
    """``rng -> list of node arrays``: ``DPPartitionForestRegressor.fit`` after validation."""
    budget = est._tree_budget(est._check_params())
    builder = est._builder(budget, data)
    k, n = est.n_estimators, data.codes.shape[0]

    def trees(rng):
        parts = assign_partitions(n, k, rng)
        streams = rng.spawn(k) if spawn else [rng] * k
        out = []
        for j in range(k):
            part = data.subset(np.flatnonzero(parts == j))
            out.append(builder.build(*streams[j].spawn(2), part.codes, part.y_fixed, part.labels))
        return out

    return trees


@pytest.mark.usefixtures("no_tree_fallback")
def test_forest_replay_is_fit():
    X, y = random_data(n=200)
    for leaf in ("mean", "median"):
        est = make(4, 3.0, max_depth=3, n_bins=8, leaf=leaf, min_samples_split=5,
                   min_samples_leaf=2, random_state=5).fit(X, y)
        nodes = forest_replay(est, support.tree_data(est, X, y))(np.random.default_rng(5))
        assert len(nodes) == len(est.estimators_) == 4
        for tree, node in zip(est.estimators_, nodes):
            for key in ("feature", "bin_threshold", "left", "right", "depth", "noisy_count"):
                np.testing.assert_array_equal(node[key], getattr(tree, key))
            leaves = tree.left == -1
            np.testing.assert_allclose(node["value"][leaves], tree.value[leaves], atol=1e-15)


@pytest.mark.usefixtures("no_tree_fallback")
def test_every_record_trains_exactly_one_tree():
    # with a large epsilon the root noisy counts are the part sizes (+-few): they add to n
    X, y = random_data(n=3_000)
    est = make(6, 600.0, max_depth=1, random_state=0).fit(X, y)
    roots = np.array([tree.noisy_count[0] for tree in est.estimators_])
    assert abs(roots.sum() - 3_000) <= 6
    assert np.all(np.abs(roots - 500) < 5 * np.sqrt(3_000 / 6))
    # the very same partition as assign_partitions draws from the fit's stream
    parts = assign_partitions(3_000, 6, np.random.default_rng(0))
    np.testing.assert_allclose(roots, np.bincount(parts, minlength=6), atol=1)


@pytest.mark.usefixtures("no_tree_fallback")
@pytest.mark.parametrize("n_estimators", [1, 3, 8])
def test_fit_spends_epsilon_once_and_records_the_trees(n_estimators):
    X, y = random_data(n=400)
    acc = BudgetAccountant()
    est = make(n_estimators, 1.5, max_depth=3, accountant=acc, random_state=0).fit(X, y)
    assert acc.spent == (1.5, 0.0)
    assert [(r.label, r.epsilon) for r in acc.ledger] == [("DPPartitionForestRegressor", 1.5)]
    assert est.epsilon_spent_ == 1.5
    assert est.budget_ == split_tree_budget(1.5, 3)  # each tree gets the full epsilon
    assert len(est.estimators_) == n_estimators
    assert all(isinstance(t, Tree) for t in est.estimators_)
    assert est.get_depth() == max(t.max_depth for t in est.estimators_) <= 3
    assert est.get_n_leaves() == sum(t.n_leaves for t in est.estimators_)
    assert est.n_features_in_ == 3 and est.privacy_leaks_ == []
    est.predict(X)
    est.apply(X)
    assert len(acc) == 1  # predictions are post-processing


@pytest.mark.usefixtures("no_tree_fallback")
def test_predictions_are_the_average_of_the_trees():
    X, y = random_data(n=600)
    est = make(7, 2.0, max_depth=3, y_bounds=(0, 1), random_state=3).fit(X, y)
    X_test = np.random.default_rng(1).random((300, 3))
    codes = est.binner_.transform(X_test)
    per_tree = np.array([tree.predict(codes) for tree in est.estimators_])
    np.testing.assert_allclose(est.predict(X_test), per_tree.mean(axis=0), rtol=1e-12)
    leaves = est.apply(X_test)
    assert leaves.shape == (300, 7)
    from_leaves = np.mean([t.value[leaves[:, j]] for j, t in enumerate(est.estimators_)], axis=0)
    np.testing.assert_allclose(est.predict(X_test), from_leaves, rtol=1e-12)
    assert np.all((est.predict(X_test) >= 0) & (est.predict(X_test) <= 1))
    # the trees differ (own parts, own noise): the average is not just one of them
    assert not np.allclose(per_tree[0], per_tree[1])


@pytest.mark.parametrize("leaf", ["mean", "median"])
def test_learns_step_function_with_large_epsilon(leaf):
    X, y = step_data()
    est = make(5, 50.0, max_depth=2, leaf=leaf, random_state=0).fit(X, y)
    for tree in est.estimators_:
        assert tree.feature[0] == 0 and abs(tree.threshold[0] - 0.5) <= 1 / 40 + 1e-12
    X_test, y_test = step_data(n=5_000, seed=1)
    away = np.abs(X_test[:, 0] - 0.5) > 1 / 40
    assert np.mean(np.abs(est.predict(X_test)[away] - y_test[away])) < 0.03
    assert est.score(X_test, y_test) > 0.85


@pytest.mark.parametrize("leaf", ["mean", "median"])
def test_results_do_not_depend_on_n_jobs(leaf):
    X, y = random_data(n=2_000)
    fits = [make(6, 2.0, max_depth=4, leaf=leaf, n_jobs=n_jobs, random_state=11).fit(X, y)
            for n_jobs in (None, 1, 2, -1, -2, 64)]
    for other in fits[1:]:
        np.testing.assert_array_equal(other.predict(X), fits[0].predict(X))
        assert_same_trees(other.estimators_, fits[0].estimators_)


def test_seeds_reproduce_and_differ():
    X, y = random_data(n=500)
    a = make(4, 2.0, random_state=1).fit(X, y).predict(X)
    b = make(4, 2.0, random_state=1).fit(X, y).predict(X)
    c = make(4, 2.0, random_state=2).fit(X, y).predict(X)
    d = make(4, 2.0, random_state=None).fit(X, y).predict(X)
    e = make(4, 2.0, random_state=None).fit(X, y).predict(X)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c) and not np.array_equal(d, e)


@pytest.mark.usefixtures("no_tree_fallback")
def test_more_parts_than_records_gives_empty_parts_and_valid_trees():
    X, y = random_data(n=5)
    est = make(20, 1.0, random_state=0).fit(X, y)
    assert len(est.estimators_) == 20
    pred = est.predict(np.random.default_rng(0).random((50, 3)))
    assert np.all(np.isfinite(pred)) and np.all((pred >= 0) & (pred <= 1))
    for tree in est.estimators_:
        leaves = tree.left == -1
        assert np.all((tree.value[leaves] >= 0) & (tree.value[leaves] <= 1))


def test_privacy_leak_warning_and_none_when_public_inputs_given():
    X, y = random_data(n=200)
    with pytest.warns(PrivacyLeakWarning):
        est = make(3, 1.0, bounds=None, random_state=0).fit(X, y)
    assert [leak.split(":")[0] for leak in est.privacy_leaks_] == ["bounds"]
    with pytest.warns(PrivacyLeakWarning):
        est = make(3, 1.0, bounds=None, y_bounds=None, random_state=0).fit(X, y)
    assert [leak.split(":")[0] for leak in est.privacy_leaks_] == ["bounds", "y_bounds"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = make(3, 1.0, random_state=0, n_jobs=2).fit(X, y)
        est.predict(X)
    assert est.privacy_leaks_ == []


def test_exhausted_accountant_refuses_and_keeps_the_previous_fit():
    X, y = random_data(n=200)
    acc = BudgetAccountant(epsilon=1.0)
    est = make(3, 1.0, accountant=acc, random_state=0).fit(X, y)
    trees = est.estimators_
    with pytest.raises(BudgetExceededError):
        est.fit(X, y)
    assert est.estimators_ is trees
    fresh = make(3, 0.5, accountant=acc, random_state=0)
    with pytest.raises(BudgetExceededError):
        fresh.fit(X, y)
    assert not hasattr(fresh, "estimators_")
    with pytest.raises(NotFittedError):
        fresh.predict(X)
    assert acc.spent == (1.0, 0.0) and len(acc) == 1


BAD_PARAMS = [
    ({"n_estimators": 0}, ValueError, "n_estimators"),
    ({"n_estimators": -3}, ValueError, "n_estimators"),
    ({"n_estimators": 2.5}, TypeError, "n_estimators"),
    ({"n_estimators": True}, TypeError, "n_estimators"),
    ({"n_estimators": None}, TypeError, "n_estimators"),
    ({"n_estimators": "4"}, TypeError, "n_estimators"),
    ({"n_jobs": 0}, ValueError, "n_jobs"),
    ({"n_jobs": 1.5}, TypeError, "n_jobs"),
    ({"n_jobs": -2.0}, TypeError, "n_jobs"),
    ({"epsilon": 0.0}, ValueError, "epsilon"),
    ({"max_depth": -1}, ValueError, "max_depth"),
    ({"leaf": "mode"}, ValueError, "leaf"),
    ({"n_bins": 300}, ValueError, "n_bins"),
    ({"accountant": object()}, TypeError, "accountant"),
]


@pytest.mark.parametrize("params,error,match", BAD_PARAMS,
                         ids=[f"{k}={v!r}" if type(v) is not object else f"{k}=object"
                              for (k, v), in (p.items() for p, _, _ in BAD_PARAMS)])
def test_bad_parameters_raise_and_spend_nothing(params, error, match):
    X, y = random_data(n=50)
    acc = BudgetAccountant()
    kwargs = {"n_estimators": 3, "epsilon": 1.0, "accountant": acc, "random_state": 0, **params}
    est = make(**kwargs)
    with pytest.raises(error, match=match):
        est.fit(X, y)
    assert len(acc) == 0 and not hasattr(est, "estimators_")


def test_bad_data_raises_and_spends_nothing():
    X, y = random_data(n=50)
    acc = BudgetAccountant()
    X_nan = X.copy()
    X_nan[1, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        make(3, accountant=acc).fit(X_nan, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        make(3, accountant=acc).fit(X, y[:-1])
    with pytest.raises(ValueError, match="2D array"):
        make(3, accountant=acc).fit(X[:, 0], y)
    assert len(acc) == 0


def test_predict_errors():
    X, y = random_data(n=100)
    est = make(3, 1.0, random_state=0)
    for method in (est.predict, est.apply):
        with pytest.raises(NotFittedError):
            method(X)
    for method in (est.get_depth, est.get_n_leaves):
        with pytest.raises(NotFittedError):
            method()
    est.fit(X, y)
    with pytest.raises(ValueError, match="X has 2 features, but DPPartitionForestRegressor"):
        est.predict(X[:, :2])


def test_params_clone_and_pickle():
    acc = BudgetAccountant()
    est = make(4, 2.0, max_depth=3, n_jobs=2, accountant=acc, random_state=7)
    params = est.get_params()
    assert params["n_estimators"] == 4 and params["n_jobs"] == 2 and params["epsilon"] == 2.0
    assert set(DPDecisionTreeRegressor().get_params()) | {"n_estimators", "n_jobs",
                                                          "verbose"} == set(params)
    with pytest.raises(ValueError, match="bogus"):
        est.set_params(bogus=1)
    with pytest.raises(TypeError):
        DPPartitionForestRegressor(n_estimators=3, epsilon=1.0, bogus=1)
    X, y = random_data(n=400)
    est.fit(X, y)
    twin = clone(est)
    assert not hasattr(twin, "estimators_") and twin.get_params()["n_estimators"] == 4
    assert twin.accountant is acc
    np.testing.assert_array_equal(twin.fit(X, y).predict(X), est.predict(X))
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    np.testing.assert_array_equal(again.apply(X), est.apply(X))
    assert_same_trees(again.estimators_, est.estimators_)


@pytest.mark.parametrize("n_jobs", [True, "2"])
def test_n_jobs_type_errors_name_the_parameter(n_jobs):
    X, y = random_data(n=50)
    with pytest.raises(TypeError, match="n_jobs"):
        make(3, n_jobs=n_jobs, random_state=0).fit(X, y)


# ======================================================================================
# Privacy audit
# ======================================================================================
#
# Trees of depth 0 (a noisy count and a noisy mean each), 3 parts, epsilon 2 (1 for the
# count, 1 for the leaf). D0: 30 records with y = 0; D1 adds one with y = 1. The record
# lands in one part and moves that tree's count by 1 and its noisy sum by 1. The part
# sizes are random but add up to n, so the statistic is the sum over the trees of
# (noisy count + noisy sum): D1 shifts it by 2, against the noise of 3 trees.

FOREST_D0 = (np.full((30, 1), 0.5), np.zeros(30))
FOREST_D1 = (np.vstack([FOREST_D0[0], [[1.0]]]), np.append(FOREST_D0[1], 1.0))


def counts_plus_sums(trees):
    total = 0.0
    for nodes in trees:
        count, value = nodes["noisy_count"][0], nodes["value"][0]
        total += count + value * max(count, 1.0)  # value = clip(noisy sum / count, 0, 1)
    return total


def forest_sampler(est, X, y, summarise):
    trees = forest_replay(est, support.tree_data(est, X, y), spawn=False)

    def sampler(n, rng):
        return np.array([summarise(trees(rng)) for _ in range(n)])

    return sampler


def run_forest_audit(est, n_calibration, n_test, seed=0):
    return audit_samplers(
        forest_sampler(est, *FOREST_D0, counts_plus_sums),
        forest_sampler(est, *FOREST_D1, counts_plus_sums),
        n_calibration, n_test, seed)


def audited_forest():
    return make(3, 2.0, max_depth=0, n_bins=4)


def test_audit_forest(record_audit):
    res = run_forest_audit(audited_forest(), 2_000, 6_000)
    record_audit(res, 2.0).assert_within(2.0)
    assert res.epsilon_lower_bound > 0.5  # measured 0.80: not a vacuous audit


@pytest.mark.slow  # 8-11 s: run by .ci/run after the default suite
def test_control_forest_without_partitioning_is_flagged(record_audit, monkeypatch):
    # the classic bug: every tree is grown on all the data, each with the full epsilon
    monkeypatch.setattr(TreeData, "subset", lambda self, rows: self)
    res = run_forest_audit(audited_forest(), 1_000, 6_000)
    record_audit(res, 2.0)  # each record now moves 3 counts and 3 sums
    assert res.epsilon_lower_bound > 2.0, res.summary()  # measured 2.55 (2.47-2.66 over seeds)
