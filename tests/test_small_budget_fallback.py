"""The small-budget fallback: with too little budget every regressor predicts its noisy
mean, and multiclass boosting its noisy class frequencies (issue 36, "Never worse than
the noisy prior, for regression too").

The rule reads public inputs and released values only: :func:`dptrees.boosting._common.
falls_back` (``epsilon`` times the initial score's noisy count) and
:mod:`dptrees._tree_fallback` (``epsilon`` times a noisy record count released first).
"""

import numpy as np
import pytest

import dptrees.tree
from dptrees import (
    BudgetAccountant,
    DPDecisionTreeRegressor,
    DPExplainableBoostingClassifier,
    DPExplainableBoostingRegressor,
    DPExtraTreesRegressor,
    DPGradientBoostingClassifier,
    DPGradientBoostingRegressor,
    DPPartitionForestRegressor,
)
from dptrees._tree_fallback import (CLASSIFIER_FALLBACK_EPS_ROWS_PER_CLASS, FALLBACK_SHARE,
                                    tree_falls_back)
from dptrees.boosting._common import FALLBACK_EPS_ROWS, falls_back
from dptrees.boosting._losses import BinaryLogistic, MultinomialLogistic, SquaredError

REGRESSORS = [DPDecisionTreeRegressor, DPPartitionForestRegressor, DPExtraTreesRegressor,
              DPGradientBoostingRegressor, DPExplainableBoostingRegressor]


def toy(n, rng=0, n_classes=None):
    """Targets in [0, 1] with a strong signal in the first feature (or classes 0..k-1)."""
    rng = np.random.default_rng(rng)
    X = rng.random((n, 3))
    if n_classes is not None:
        return X, np.minimum((X[:, 0] * n_classes).astype(int), n_classes - 1)
    return X, np.clip(0.2 + 0.6 * X[:, 0] + 0.05 * rng.standard_normal(n), 0, 1)


def fit(cls, X, y, epsilon, seed=0, **kw):
    target = {"classes": np.unique(y)} if "Classifier" in cls.__name__ else \
        {"y_bounds": (0.0, 1.0)}
    return cls(epsilon=epsilon, bounds=(0.0, 1.0), accountant=BudgetAccountant(),
               random_state=seed, **target, **kw).fit(X, y)


@pytest.mark.parametrize("cls", REGRESSORS, ids=lambda c: c.__name__)
def test_tiny_budget_predicts_a_constant_near_the_mean(cls):
    # epsilon x n = 2,000 x 0.02 = 40: far below every threshold. The prediction is one
    # constant, the noisy mean; its noise (Laplace, scale about 1 / (epsilon / 2) on a
    # sum of 2,000 centred targets) is about 0.05 at most here: 0.15 is three times it.
    X, y = toy(2_000)
    est = fit(cls, X, y, 0.02)
    pred = est.predict(toy(500, rng=1)[0])
    assert np.ptp(pred) == 0.0
    assert abs(pred[0] - y.mean()) < 0.15
    assert est.epsilon_spent_ <= 0.02 * (1 + 1e-9)


@pytest.mark.parametrize("cls", REGRESSORS, ids=lambda c: c.__name__)
def test_enough_budget_still_learns(cls):
    X, y = toy(4_000)
    est = fit(cls, X, y, 4.0)
    Xt, yt = toy(1_000, rng=1)
    mae = np.mean(np.abs(est.predict(Xt) - yt))
    assert mae < 0.8 * np.mean(np.abs(yt - y.mean())), mae


@pytest.mark.parametrize("cls", [DPGradientBoostingClassifier,
                                 DPExplainableBoostingClassifier], ids=lambda c: c.__name__)
def test_multiclass_boosting_falls_back_to_the_noisy_majority(cls):
    rng = np.random.default_rng(3)
    X = rng.random((3_000, 3))
    y = rng.choice(4, size=3_000, p=[0.55, 0.15, 0.15, 0.15])  # no signal at all
    est = fit(cls, X, y, 0.02)  # epsilon x n = 60, below 4 classes x 30
    assert np.all(est.predict(X[:200]) == 0)
    proba = est.predict_proba(X[:5])
    assert np.allclose(proba, proba[0]) and abs(proba[0, 0] - 0.55) < 0.1


def test_binary_boosting_never_falls_back():
    X, y = toy(1_000, n_classes=2)
    est = fit(DPGradientBoostingClassifier, X, y, 0.05)  # epsilon x n = 50
    assert est.n_iter_ > 0 and len(est.estimators_) > 0


def test_the_boosting_rule_reads_epsilon_and_the_noisy_count_only():
    reg, multi = SquaredError(), MultinomialLogistic(3)
    assert falls_back(0.01, 29_999, reg) and not falls_back(0.01, 30_000, reg)
    per_class = 3 * CLASSIFIER_FALLBACK_EPS_ROWS_PER_CLASS
    assert falls_back(1.0, per_class - 1, multi) and not falls_back(1.0, per_class, multi)
    assert falls_back(1.0, FALLBACK_EPS_ROWS - 1, reg)
    assert not falls_back(1e-6, 1.0, BinaryLogistic())
    assert tree_falls_back(0.1, 5_999, 600) and not tree_falls_back(0.1, 6_000, 600)


def test_the_tree_rule_reads_the_released_count_not_the_data(monkeypatch):
    # The same released count gives the same structure whatever the data: a count that
    # says "few records" makes 20,000 rows at epsilon 10 fall back (one leaf)...
    X, y = toy(20_000)
    monkeypatch.setattr(dptrees.tree, "noisy_record_count", lambda *a: 10.0)
    assert fit(DPDecisionTreeRegressor, X, y, 10.0).get_n_leaves() == 1
    # ...and one that says "many" makes 300 rows at epsilon 0.05 grow a tree
    monkeypatch.setattr(dptrees.tree, "noisy_record_count", lambda *a: 1e9)
    X, y = toy(300)
    est = fit(DPDecisionTreeRegressor, X, y, 0.05, min_samples_split=0, min_samples_leaf=0)
    assert est.get_depth() > 0


def test_tree_fallback_is_recorded_in_the_ledger():
    X, y = toy(2_000)
    est = fit(DPDecisionTreeRegressor, X, y, 0.1)
    count = [e for e in est.privacy_ledger_ if "fallback" in e["release"]]
    assert len(count) == 1 and count[0]["epsilon"] == pytest.approx(FALLBACK_SHARE * 0.1)
    assert est.get_depth() == 0 and est.max_depth_ == 0
    total = sum(e["epsilon"] * e["count"] for e in est.privacy_ledger_)
    assert total == pytest.approx(0.1, rel=1e-9)


@pytest.mark.parametrize("accounting", ["rdp", "pld"])
def test_boosting_fallback_spends_the_whole_budget_on_the_mean(accounting):
    # (With noise="laplace" the initial score's count gets 1 % of a pure epsilon and is
    # too noisy at this budget for the rule to be tested deterministically.)
    X, y = toy(2_000)
    est = fit(DPGradientBoostingRegressor, X, y, 0.05, accounting=accounting)
    assert est.n_iter_ == 0 and est.estimators_ == []
    assert est.epsilon_spent_ <= 0.05 * (1 + 1e-9)
    assert est.epsilon_spent_ > 0.049  # nothing left unspent
    assert any("fallback score" in e["release"] for e in est.privacy_ledger_)


@pytest.mark.parametrize("cls", REGRESSORS + [DPGradientBoostingClassifier,
                                             DPExplainableBoostingClassifier],
                         ids=lambda c: c.__name__)
def test_fallback_after_private_edges_stays_within_the_budget(cls):
    # The edges are released before the fallback: the rest it takes must leave room for
    # them (the fallback score's Laplace release once ignored them and overspent).
    X, y = toy(2_000, n_classes=3 if "Classifier" in cls.__name__ else None)
    est = fit(cls, X, y, 0.05, bin_edges="private")
    assert any(e["release"].startswith("bin edges") for e in est.privacy_ledger_)
    assert est.epsilon_spent_ <= 0.05 * (1 + 1e-9)
    if "Boosting" in cls.__name__:
        assert est.epsilon_spent_ > 0.049  # the rest is spent, not left over


@pytest.mark.slow  # 8 s: run by .ci/run after the default suite
def test_the_fallback_mean_has_the_noise_of_its_budget():
    # Over many seeds the noisy means spread as the Laplace release of (nearly) the whole
    # budget says: centred sum (sensitivity 1/2) and count, epsilon ~ 0.92 x 0.05 in all,
    # L1 sensitivity 3/2 -> scale 3/2 / 0.046 = 33 on a sum of 1,000 records: a mean's
    # standard deviation about sqrt(2) x 33 / 1,000 = 0.046. Too little noise (a release
    # that forgot its noise) or far too much (the Gaussian of the same budget, 3-4 times
    # larger here) fails.
    X, y = toy(1_000)
    means = [float(fit(DPGradientBoostingRegressor, X, y, 0.05, seed=s).init_score_[0])
             for s in range(200)]
    assert 0.025 < np.std(means) < 0.07, np.std(means)
    assert abs(np.mean(means) - y.mean()) < 0.02


def test_the_fallback_count_has_the_laplace_noise_of_its_share():
    """The rule's count (trees and forests, regression and multiclass): the record count
    plus Laplace noise of ``FALLBACK_SHARE * epsilon`` (sensitivity 1, a record's weight
    is at most 1; exact discrete Laplace on a fine power-of-two grid,
    :func:`dptrees.mechanisms.laplace_mechanism`), checked by a chi-square test of its
    binned draws against Laplace of scale ``1 / (FALLBACK_SHARE * epsilon)``."""
    from types import SimpleNamespace

    from scipy import stats

    from dptrees._tree_fallback import noisy_record_count
    from dptrees.privacy.release_plan import ReleasePlan

    epsilon, n, draws = 1.0, 500, 6_000
    data = SimpleNamespace(source=SimpleNamespace(record_count=lambda: float(n)))
    rng = np.random.default_rng(0)
    noise = np.array([noisy_record_count(ReleasePlan("laplace", epsilon, 0.0), data,
                                         epsilon, rng) for _ in range(draws)]) - n

    def p_value(sample, eps):
        edges = np.array([-np.inf, -60, -30, -15, -5, 0, 5, 15, 30, 60, np.inf])
        expected = np.diff(stats.laplace.cdf(edges, scale=1 / eps)) * len(sample)
        observed = np.histogram(sample, bins=edges)[0]
        return stats.chisquare(observed, expected).pvalue

    assert p_value(noise, FALLBACK_SHARE * epsilon) > 1e-3
    # control: the same draws against noise a fifth smaller (a share 1.25 times as
    # large) are rejected, so the test can tell a wrong scale
    assert p_value(noise, 1.25 * FALLBACK_SHARE * epsilon) < 1e-6
