"""Tests of DPAdaBoostClassifier, its noise schedules and its weighted DP weak learner.

* Schedules: exact forms of "every" / "swing", the improved random response's
  properties (never two noisy rounds in a row, no more noisy rounds than "swing" and
  "every"), the random response's Binomial count.
* Estimator: beats the majority class (binary and multiclass), reproducible with a seed,
  scikit-learn conventions (clone, get_params), bad input raises and spends nothing,
  PrivacyLeakWarning for missing public inputs, budget recorded and never exceeded.
* Privacy AUDITS (``dptrees.audit``) on neighbouring datasets that differ by one record,
  each within its claimed epsilon: (a) the noisy max/min weight release, (b) one weak
  learner (split choice + leaf totals), (c) the whole fit at ``n_estimators=2``.
  POSITIVE CONTROLS (an uncapped weight, an understated learner sensitivity) run the same
  code with a broken assumption and MUST be flagged.
"""

import contextlib

import numpy as np
import pytest
from sklearn.base import clone

import support
from dptrees import BudgetAccountant
from dptrees.data.binning import Binner
from dptrees.boosting import DPAdaBoostClassifier
from dptrees.boosting import _adaboost as ada
from dptrees.boosting._schedules import (
    draw_schedule,
    every_schedule,
    improve_schedule,
    improved_schedule,
    random_schedule,
    swing_schedule,
)
from dptrees._sources import ArraySource
from dptrees.data.prepare import prepare
from dptrees.privacy.release_plan import ReleasePlan
from dptrees.boosting._weak_learners import WeightedRows, WeightedTree, fit_weighted_tree
from dptrees._tree_structure import Tree
from dptrees.exceptions import BudgetExceededError, PrivacyLeakWarning


# ======================================================================================
# Schedules


def test_every_and_swing_schedules():
    assert every_schedule(5).tolist() == [False, True, True, True, True]
    assert swing_schedule(6).tolist() == [False, True, False, True, False, True]
    assert every_schedule(1).tolist() == [False] and swing_schedule(0).size == 0


def test_improve_schedule_keeps_first_of_each_run():
    draws = [0, 1, 1, 0, 1, 1, 1, 0, 0, 1, 1]
    assert improve_schedule(draws).astype(int).tolist() == [0, 1, 0, 0, 1, 0, 0, 0, 0, 1, 0]


@pytest.mark.parametrize("m", [1, 2, 3, 10, 31, 100])
def test_improved_schedule_properties(m):
    for seed in range(200):
        s = improved_schedule(m, seed)
        coins = random_schedule(m, seed)
        assert not s[0] and not coins[0]  # round 1 is never noisy
        assert not np.any(s[1:] & s[:-1])  # never two noisy rounds in a row
        assert np.all(s <= coins)  # only resets noise, never adds it
        assert s.sum() <= swing_schedule(m).sum() <= every_schedule(m).sum()
        # one noisy round per run of coins
        runs = np.count_nonzero(coins & ~np.concatenate([[False], coins[:-1]]))
        assert s.sum() == runs


def test_random_schedule_count_is_binomial():
    m, reps = 41, 2000
    counts = np.array([random_schedule(m, seed).sum() for seed in range(reps)])
    n = m - 1
    assert abs(counts.mean() - n / 2) < 5 * np.sqrt(n / 4 / reps)
    assert 0.8 * n / 4 < counts.var() < 1.2 * n / 4
    assert counts.min() >= 0 and counts.max() <= n


def test_draw_schedule_rejects_unknown_name():
    with pytest.raises(ValueError, match="schedule"):
        draw_schedule("sometimes", 5, 0)


# ======================================================================================
# Estimator

CLASSES = [0, 1]


def additive_data(n=3000, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3))
    if n_classes == 2:
        y = (X[:, 0] + X[:, 1] > 1.0).astype(int)
    else:
        y = np.digitize(X[:, 0], np.linspace(0, 1, n_classes + 1)[1:-1])
    return X, y


def make(**kw):
    params = dict(n_estimators=10, epsilon=2.0, bounds=support.BOUNDS, classes=CLASSES,
                  accountant=BudgetAccountant(), random_state=0, max_weight=100.0)
    params.update(kw)
    return DPAdaBoostClassifier(**params)


@pytest.mark.parametrize("schedule", ["every", "swing", "random", "improved"])
def test_binary_beats_majority(schedule):
    X, y = additive_data()
    Xt, yt = additive_data(seed=1)
    est = make(schedule=schedule).fit(X, y)
    majority = max(np.mean(yt), 1 - np.mean(yt))
    assert est.score(Xt, yt) > majority + 0.15
    proba = est.predict_proba(Xt)
    assert proba.shape == (len(yt), 2) and np.allclose(proba.sum(axis=1), 1)
    np.testing.assert_array_equal(est.classes_[proba.argmax(axis=1)], est.predict(Xt))
    assert est.decision_function(Xt).shape == (len(yt),)
    staged = list(est.staged_predict(Xt))
    assert len(staged) == est.n_estimators_ == 10
    np.testing.assert_array_equal(staged[-1], est.predict(Xt))


def test_multiclass_beats_majority():
    X, y = additive_data(n_classes=3)
    Xt, yt = additive_data(seed=1, n_classes=3)
    est = make(classes=[0, 1, 2], n_estimators=15, epsilon=3.0).fit(X, y)
    assert est.score(Xt, yt) > 0.6  # majority ~ 0.34
    assert est.decision_function(Xt).shape == (len(yt), 3)
    assert np.allclose(est.predict_proba(Xt).sum(axis=1), 1)


def test_string_labels_and_deeper_learners():
    X, y = additive_data(n=1500)
    labels = np.array(["no", "yes"])[y]
    est = make(classes=["no", "yes"], max_depth=2).fit(X, labels)
    assert set(est.predict(X)) <= {"no", "yes"}
    assert est.learners_[0].node_count == 7 and est.learners_[0].max_depth == 2
    assert isinstance(est.learners_[0], Tree) and np.isfinite(est.learners_[0].threshold[:3]).all()


def test_reproducible_with_int_seed():
    X, y = additive_data(n=1000)
    a, b, c = (make(random_state=s, schedule="random").fit(X, y) for s in (3, 3, 4))
    np.testing.assert_array_equal(a.estimator_weights_, b.estimator_weights_)
    np.testing.assert_array_equal(a.noisy_rounds_, b.noisy_rounds_)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    assert not np.array_equal(a.estimator_weights_, c.estimator_weights_)


def test_clone_and_get_params():
    est = make(schedule="swing", max_weight=7.0)
    params = est.get_params()
    assert params["schedule"] == "swing" and params["max_weight"] == 7.0
    twin = clone(est)
    assert twin.get_params()["schedule"] == "swing"
    assert twin.get_params()["accountant"] is est.accountant  # accountants are not copied
    est.set_params(n_estimators=3)
    assert est.n_estimators == 3


def test_weights_stay_in_public_bounds_and_ledger_adds_up():
    X, y = additive_data(n=1000)
    acc = BudgetAccountant()
    est = make(max_weight=20.0, accountant=acc, schedule="every").fit(X, y)
    lower, upper = est.weight_bounds_.T
    assert np.all(1.0 / 20.0 - 1e-12 <= lower) and np.all(lower <= upper) and np.all(upper <= 1.0)
    assert est.weight_bounds_[0].tolist() == [1.0, 1.0]
    noisy = est.noisy_rounds_
    assert np.all(np.isnan(est.weight_ranges_[~noisy]))
    assert not np.isnan(est.weight_ranges_[noisy]).any()
    total = sum(e["epsilon"] * e["count"] for e in est.privacy_ledger_)
    assert total <= est.epsilon_spent_ and total == pytest.approx(2.0, rel=1e-9)
    assert acc.spent == (2.0, 0.0) and len(acc) == 1
    assert est.n_noisy_rounds_ == 9 and est.noisy_count_ is not None
    labels = [e["release"] for e in est.privacy_ledger_]
    assert "round 2: noisy max weight" in labels and "round 1: leaf totals" in labels


def test_no_noisy_round_gives_everything_to_learners():
    X, y = additive_data(n=500)
    est = make(n_estimators=1).fit(X, y)
    assert est.n_noisy_rounds_ == 0 and est.noisy_count_ is None
    assert est.budget_["count"] == 0 and est.budget_["weights"] == 0
    assert est.budget_["learners"] == pytest.approx(2.0)


def test_budget_never_exceeded():
    X, y = additive_data(n=500)
    acc = BudgetAccountant(epsilon=0.5)
    with pytest.raises(BudgetExceededError):
        make(epsilon=1.0, accountant=acc).fit(X, y)
    assert acc.spent == (0.0, 0.0)
    acc = BudgetAccountant(epsilon=1.5)
    make(epsilon=1.0, accountant=acc).fit(X, y)
    with pytest.raises(BudgetExceededError):
        make(epsilon=1.0, accountant=acc).fit(X, y)
    assert acc.spent[0] == pytest.approx(1.0)


X_OK, Y_OK = additive_data(n=50)


@pytest.mark.parametrize(
    "params, X, y, error, match",
    [
        ({}, np.where(np.eye(50, 3) == 1, np.nan, X_OK), Y_OK, ValueError, "NaN"),
        ({}, np.where(np.eye(50, 3) == 1, np.inf, X_OK), Y_OK, ValueError, "infinity"),
        ({}, X_OK[:, 0], Y_OK, ValueError, "2D"),
        ({}, X_OK, Y_OK[:-1], ValueError, "inconsistent"),
        ({}, np.empty((0, 3)), np.empty(0), ValueError, "0 sample"),
        ({}, X_OK, Y_OK + 5, ValueError, "not in classes"),
        ({"classes": [1]}, X_OK, np.ones(50, int), ValueError, "at least two"),
        ({"epsilon": 0.0}, X_OK, Y_OK, ValueError, "epsilon"),
        ({"epsilon": -1.0}, X_OK, Y_OK, ValueError, "epsilon"),
        ({"schedule": "swinging"}, X_OK, Y_OK, ValueError, "schedule"),
        ({"n_estimators": 0}, X_OK, Y_OK, ValueError, "n_estimators"),
        ({"max_depth": 0}, X_OK, Y_OK, ValueError, "max_depth"),
        ({"max_weight": 0.5}, X_OK, Y_OK, ValueError, "max_weight"),
        ({"max_weight": np.nan}, X_OK, Y_OK, ValueError, "max_weight"),
        ({"weight_budget_fraction": 1.0}, X_OK, Y_OK, ValueError, "weight_budget_fraction"),
        ({"weight_budget_fraction": 0.0}, X_OK, Y_OK, ValueError, "weight_budget_fraction"),
        ({"learning_rate": 0.0}, X_OK, Y_OK, ValueError, "learning_rate"),
        ({"n_bins": 1}, X_OK, Y_OK, ValueError, "n_bins"),
        ({"bounds": (0.0, [1.0, 1.0])}, X_OK, Y_OK, ValueError, "bounds"),
        ({"epsilon": 1e-12, "n_estimators": 1000}, X_OK, Y_OK, ValueError, "too small"),
        ({"accountant": "acc"}, X_OK, Y_OK, TypeError, "accountant"),
        ({"epsilon": "1"}, X_OK, Y_OK, TypeError, "epsilon"),
    ],
)
def test_bad_input_raises_and_spends_nothing(params, X, y, error, match):
    acc = BudgetAccountant()
    params = {"accountant": acc, **params}
    with pytest.raises(error, match=match):
        make(**params).fit(X, y)
    assert acc.spent == (0.0, 0.0)


def test_predict_checks_features():
    est = make(n_estimators=2).fit(X_OK, Y_OK)
    with pytest.raises(ValueError, match="expecting 3 features"):
        est.predict(X_OK[:, :2])
    with pytest.raises(ValueError, match="NaN"):
        est.predict(np.full((2, 3), np.nan))


def test_privacy_leak_warnings_are_recorded():
    with pytest.warns(PrivacyLeakWarning, match="bounds"):
        est = make(bounds=None, n_estimators=2).fit(X_OK, Y_OK)
    assert len(est.privacy_leaks_) == 1 and "bounds" in est.privacy_leaks_[0]
    with pytest.warns(PrivacyLeakWarning) as record:
        est = make(bounds=None, classes=None, n_estimators=2).fit(X_OK, Y_OK)
    assert len(record) == 2 and len(est.privacy_leaks_) == 2
    assert make(n_estimators=2).fit(X_OK, Y_OK).privacy_leaks_ == []


# ======================================================================================
# Privacy audits


def _audit(sampler0, sampler1, n_cal, n_test):
    return support.audit_samplers(sampler0, sampler1, n_cal, n_test)


# (a) the noisy max/min weight release. Weights in the public range [1, 3]; D1 adds a
# record of weight 3 to three records of weight 1, so the max moves by the whole
# sensitivity 3 - 1. Statistic: the raw noisy max (the guard is post-processing).

WR = dict(lower=1.0, upper=3.0, epsilon_max=2 / 3, epsilon_min=1 / 3, mean_reference=2.0)


def weight_range_sampler(weights):
    weights = np.asarray(weights, dtype=float)

    def sampler(n, rng):
        extremes = (weights.max(), weights.min())
        return np.array([ada.noisy_weight_range(extremes, random_state=rng, **WR).raw_max
                         for _ in range(n)])

    return sampler


def test_audit_noisy_weight_range(record_audit):
    res = _audit(weight_range_sampler([1, 1, 1]), weight_range_sampler([1, 1, 1, 3]),
                 2_000, 8_000)
    record_audit(res, 1.0).assert_within(1.0)


def test_control_uncapped_weight_is_flagged(record_audit):
    # without the cap the added record weighs 9: the max moves 4x the sensitivity
    res = _audit(weight_range_sampler([1, 1, 1]), weight_range_sampler([1, 1, 1, 9]),
                 2_000, 8_000)
    record_audit(res, 1.0)  # true epsilon of the max: 4 * 2/3
    assert res.epsilon_lower_bound > 1.0, res.summary()


# (b) one weak learner (a stump). Two binary features (n_bins=2 over [0, 1]), weights in
# [0, 2]. On D0 both candidate splits are perfect (utility 0); the added record (weight 2)
# leaves the split on x0 perfect and costs the split on x1 its whole weight, so the
# utilities move apart by the full sensitivity; under the x1 split it lands in leaf 1,
# class 0, which moves by 2 as well. Statistic: 1000 * chosen feature + noisy total of
# (leaf 1, class 0). Claimed: split 0.5 + leaves 0.5.

STUMP_X0 = np.array([[0.25, 0.25], [0.75, 0.75]])
STUMP_Y0 = np.array([0, 1])
STUMP_X1 = np.vstack([STUMP_X0, [0.25, 0.75]])
STUMP_Y1 = np.append(STUMP_Y0, 0)
BINNER = Binner(np.zeros(2), np.ones(2), 2)


def stump_sampler(X, y, weight_bound, weight=2.0):
    source = ArraySource(X, y)
    source.encode_classes([0, 1])
    source.bin(BINNER)
    rows = WeightedRows(source, n_classes=2, n_bins=2, initial_weight=weight)

    def sampler(n, rng):
        out = np.empty(n)
        for i in range(n):
            tree = fit_weighted_tree(rows, max_depth=1,
                                     weight_bound=weight_bound, epsilon_split=0.5,
                                     epsilon_leaf=0.5, random_state=rng)
            out[i] = 1000 * tree.feature[0] + tree.noisy_totals[1, 0]
        return out

    return sampler


def test_audit_weak_learner(record_audit):
    res = _audit(stump_sampler(STUMP_X0, STUMP_Y0, 2.0), stump_sampler(STUMP_X1, STUMP_Y1, 2.0),
                 2_000, 8_000)
    record_audit(res, 1.0).assert_within(1.0)


def test_control_understated_learner_sensitivity_is_flagged(record_audit):
    # weights up to 2, but the learner is told 0.25: true epsilon 8 x 1.0
    res = _audit(stump_sampler(STUMP_X0, STUMP_Y0, 0.25), stump_sampler(STUMP_X1, STUMP_Y1, 0.25),
                 1_000, 4_000)
    record_audit(res, 1.0)
    assert res.epsilon_lower_bound > 1.0, res.summary()


# (c) the whole fit at n_estimators=2, schedule "every" (round 2 releases the noisy
# max/min), through the same code as ``fit`` after validation and accounting. The
# statistic reads the first learner (the stump data of (b), weights 1): the claim checked
# is the whole fit's epsilon, 4 (the first learner gets 1.76 of it).


def fit_sampler(X, y, sample_weight=None, **kw):
    est = DPAdaBoostClassifier(n_estimators=2, epsilon=4.0, schedule="every", bounds=(0.0, 1.0),
                               classes=[0, 1], n_bins=2, max_weight=4.0, **kw)
    params = est._check_params()
    # the rows stay open while the sampler lives (it keeps the stack), as during a fit
    rows_open = contextlib.ExitStack()
    data = rows_open.enter_context(
        prepare(est, X, y, sample_weight, task="classification", max_classes=256))

    def sampler(n, rng):
        out = np.empty(n)
        for i in range(n):
            noisy, budgets, boost_rng = est._draw_plan(params, rng)
            state = ada._boost(data, params, noisy, budgets, boost_rng,
                               ReleasePlan("laplace", params.epsilon, 0.0))
            first = state["learners"][0]
            out[i] = 1000 * first.feature[0] + first.noisy_totals[1, 0]
        return out

    sampler.rows_open = rows_open
    return sampler


def test_audit_harness_releases_what_fit_releases():
    rng = np.random.default_rng(5)
    sampler = fit_sampler(STUMP_X1, STUMP_Y1)
    est = DPAdaBoostClassifier(n_estimators=2, epsilon=4.0, schedule="every", bounds=(0.0, 1.0),
                               classes=[0, 1], n_bins=2, max_weight=4.0,
                               accountant=BudgetAccountant(), random_state=np.random.default_rng(5))
    est.fit(STUMP_X1, STUMP_Y1)
    first = est.learners_[0]
    assert sampler(1, rng)[0] == 1000 * first.feature[0] + first.noisy_totals[1, 0]
    # the rest of the fit is released through the same code path
    assert est.n_noisy_rounds_ == 1 and not np.isnan(est.weight_ranges_[1]).any()


@pytest.mark.slow  # 11 s: run by .ci/run after the default suite
def test_audit_whole_fit(record_audit):
    res = _audit(fit_sampler(STUMP_X0, STUMP_Y0), fit_sampler(STUMP_X1, STUMP_Y1), 1_000, 4_000)
    record_audit(res, 4.0).assert_within(4.0)


# (d) the whole fit with sample weights: the added record weighs 1 among records of 0.5,
# so it counts twice as much as the others and exactly as much as the sensitivities allow.


@pytest.mark.slow  # 8-11 s: run by .ci/run after the default suite
def test_audit_whole_fit_with_sample_weights(record_audit):
    res = _audit(fit_sampler(STUMP_X0, STUMP_Y0, sample_weight=[0.5, 0.5]),
                 fit_sampler(STUMP_X1, STUMP_Y1, sample_weight=[0.5, 0.5, 1.0]), 1_000, 4_000)
    record_audit(res, 4.0).assert_within(4.0)


@pytest.mark.slow  # 8-11 s: run by .ci/run after the default suite
def test_control_unbounded_sample_weight_is_flagged(record_audit, monkeypatch):
    # with the [0, 1] check removed, a record of weight 8 moves the first learner's leaf
    # totals and split utilities 8 times as far as the learner's sensitivity says
    from dptrees._sources import _array

    monkeypatch.setattr(_array, "check_sample_weight",
                        lambda w, n: None if w is None else np.asarray(w, dtype=float))
    res = _audit(fit_sampler(STUMP_X0, STUMP_Y0, sample_weight=[0.5, 0.5]),
                 fit_sampler(STUMP_X1, STUMP_Y1, sample_weight=[0.5, 0.5, 8.0]), 1_000, 4_000)
    record_audit(res, 4.0)
    assert res.epsilon_lower_bound > 4.0, res.summary()


# scikit-learn < 1.6 only: its check_classifiers_classes also wants every class among the
# predictions on the training set (1.6 dropped that assertion).
SK_EXPECTED_FAILURES = support.sample_weight_expected_failures()
if support.SKLEARN_VERSION < (1, 6):
    SK_EXPECTED_FAILURES["check_classifiers_classes"] = (
        "BY DESIGN (DP), scikit-learn < 1.6: the check wants every class among the "
        "predictions on its 20-row (2 classes) and 30-row (3 classes) training sets; "
        "epsilon=100 over 10 noisy rounds on 10 records per class predicts one class of "
        "two (all of them at epsilon=1e4).")


@pytest.mark.filterwarnings("ignore::dptrees.exceptions.PrivacyLeakWarning")
@support.parametrize_with_checks(
    [DPAdaBoostClassifier(n_estimators=10, epsilon=100.0, accountant=BudgetAccountant(),
                          random_state=0)],
    lambda estimator: SK_EXPECTED_FAILURES)
def test_sklearn_compatible(estimator, check):
    # scikit-learn's checks feed arbitrary data and labels, so bounds and classes are read
    # from the data (the PrivacyLeakWarning is filtered, as in tests/test_sklearn_checks.py).
    check(estimator)


# ======================================================================================
# Small budgets: the prior vote and the noise-shrunk learner weights (post-processing)


def _imbalanced(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 5))
    y = (X[:, 0] + 0.5 * rng.standard_normal(n) > 1.2).astype(int)  # about 1 in 5 positive
    return X, y


def test_tiny_budget_falls_back_to_the_noisy_majority():
    # 20,000 rows at epsilon 0.05: with the defaults (2 learners, the prior vote) the
    # model keeps at least the majority class; the paper's plain vote over 10 learners,
    # whose later learners (decayed weights) are mostly noise, does not
    X, y = _imbalanced(20_000)
    majority = max(np.mean(y), 1 - np.mean(y))
    for seed in range(3):
        default = make(epsilon=0.05, random_state=seed, n_estimators="auto").fit(X, y)
        assert np.mean(default.predict(X) == y) >= majority - 0.005
    # the paper's plain vote follows its noisy learners below the majority class
    plain = [np.mean(make(epsilon=0.05, random_state=s, prior_vote=False,
                          n_estimators=10).fit(X, y).predict(X) == y) for s in range(3)]
    assert min(plain) < majority - 0.05


def test_prior_vote_is_the_first_learners_noisy_class_counts():
    X, y = _imbalanced(1000)
    model = make(epsilon=1.0, random_state=0).fit(X, y)
    label, alpha = model._prior()
    counts = model.learners_[0].noisy_totals.sum(axis=0)
    assert label == int(np.argmax(counts))
    assert alpha == pytest.approx(ada._alpha(1 - counts.max() / counts.sum(), 2, 1.0))
    # with every learner silenced, the model predicts the prior's class everywhere
    model.estimator_weights_ = np.zeros_like(model.estimator_weights_)
    assert np.all(model.predict(X) == model.classes_[label])
    model.prior_vote = False  # the plain vote: the learners, with equal weights
    assert model._prior() is None
    assert model.decision_function(X).std() > 0


def test_error_margin_only_lowers_alpha():
    X, y = _imbalanced(2000)
    for eps in (0.1, 2.0):
        plain = make(epsilon=eps, random_state=1, schedule="every").fit(X, y)
        margin = make(epsilon=eps, random_state=1, schedule="every", n_estimators=1,
                      error_margin=3.0).fit(X, y)
        # the first learner sees the same data and noise either way
        assert margin.estimator_weights_[0] <= plain.estimator_weights_[0]
        assert margin.estimator_errors_[0] >= plain.estimator_errors_[0]
    # with a generous budget the margin is negligible, with a tiny one it silences
    big = make(epsilon=50.0, random_state=1, n_estimators=3, error_margin=3.0).fit(X, y)
    tiny = make(epsilon=0.01, random_state=1, n_estimators=3, error_margin=3.0).fit(X, y)
    plain_big = make(epsilon=50.0, random_state=1, n_estimators=3).fit(X, y)
    assert big.estimator_weights_[0] > 0.9 * plain_big.estimator_weights_[0]
    assert np.all(tiny.estimator_weights_ == 0)


def test_error_margin_zero_is_the_papers_alpha():
    X, y = _imbalanced(1000)
    model = make(epsilon=1.0, random_state=2).fit(X, y)
    assert model.error_margin == 0.0
    unshrunk = np.array([ada._alpha(e, 2, 1.0) for e in model.estimator_errors_])
    assert np.allclose(model.estimator_weights_, unshrunk)


@pytest.mark.parametrize("params, error", [
    (dict(prior_vote="yes"), TypeError),
    (dict(prior_vote=1), TypeError),
    (dict(error_margin=-1.0), ValueError),
    (dict(error_margin=float("nan")), ValueError),
    (dict(error_margin="3"), TypeError),
])
def test_small_budget_parameters_are_checked(params, error):
    X, y = _imbalanced(200)
    acc = BudgetAccountant()
    with pytest.raises(error):
        make(accountant=acc, **params).fit(X, y)
    assert acc.spent == (0.0, 0.0)


@pytest.mark.parametrize("epsilon, expected", [(0.01, 1), (0.03, 2), (0.1, 2), (0.26, 5), (0.5, 10),
                                               (1.0, 20), (2.5, 50), (10.0, 50)])
def test_auto_n_estimators_reads_epsilon_only(epsilon, expected):
    X, y = _imbalanced(300)
    model = make(n_estimators="auto", epsilon=epsilon).fit(X, y)
    assert model.n_estimators_ == expected == ada.auto_n_estimators(epsilon)
    assert DPAdaBoostClassifier().n_estimators == "auto"


def test_n_estimators_rejects_other_strings():
    X, y = _imbalanced(200)
    with pytest.raises((TypeError, ValueError), match="n_estimators"):
        make(n_estimators="many").fit(X, y)


def test_unsure_leaves_fall_back_to_the_prior_label():
    totals = np.array([[100.0, 90.0], [10.0, 200.0], [50.0, 20.0], [5.0, 7.0]])
    tree = WeightedTree(np.array([0, 0, 0]), np.array([1, 1, 1]), totals)
    assert tree.leaf_label.tolist() == [0, 1, 0, 1]
    before = tree.weighted_error()
    tree.fall_back_to(0, margin=20.0)  # leaves 0 and 3 are within the margin
    assert tree.leaf_label.tolist() == [0, 1, 0, 0]
    error, correct, wrong = tree.weighted_error()
    assert correct == 100 + 200 + 50 + 5 and wrong == 90 + 10 + 20 + 7
    assert error > before[0]  # the error is that of the labels actually predicted
    tree.fall_back_to(1, margin=0.0)  # nothing is unsure at margin 0
    assert tree.leaf_label.tolist() == [0, 1, 0, 0]


def test_fit_relabels_unsure_leaves_only_with_the_prior_vote():
    X, y = _imbalanced(3000)
    for prior_vote in (True, False):
        model = make(epsilon=0.05, random_state=0, n_estimators=4,
                     prior_vote=prior_vote).fit(X, y)
        argmax = [np.argmax(t.noisy_totals, axis=1) for t in model.learners_]
        same = all(np.array_equal(t.leaf_label, a) for t, a in zip(model.learners_, argmax))
        assert same != prior_vote  # at eps 0.05 some leaf is unsure and relabelled
