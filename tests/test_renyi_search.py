"""Tests of the Renyi-DP search (``DPRandomSearch`` with ``delta > 0``, Papernot & Steinke).

Privacy tests: the selection bound (``test_best_of_bound_is_theorem_2``, an independent
evaluation of the theorem's formula against the accountant), the per-trial budget
(``test_trial_rho_spends_the_whole_budget``, ``test_trials_are_rho_zcdp``), the number
of trials (``test_number_of_trials_is_logarithmic``, with a power check), the refusals of
trials that are not zCDP, and the audits of the whole search
(``test_audit_renyi_search_within_claim``, ``test_audit_flags_unnoised_renyi_argmax``).
"""

import functools
import math

import numpy as np
import pytest
from scipy import stats
from sklearn.base import BaseEstimator, ClassifierMixin

from dptrees import BudgetAccountant, DPDecisionTreeClassifier
from dptrees.accounting import RDPAccountant, best_of_zcdp_budget, zcdp_budget
from dptrees.audit import audit_pair
from dptrees.boosting import (
    DPExplainableBoostingClassifier,
    DPGradientBoostingClassifier,
    DPGradientBoostingRegressor,
)
from dptrees.model_selection import (
    DPRandomSearch,
    _logarithmic_gamma,
    _logarithmic_trials,
    trial_rho,
)
from support import ALPHA

DELTA = 1e-6


_zcdp_budget = functools.lru_cache(zcdp_budget)  # the audits fit thousands of searches


class _ZCDPConstantClassifier(ClassifierMixin, BaseEstimator):
    """Predicts the constant ``c``; its fit reads nothing but claims the ``rho``-zCDP of
    ``(epsilon, delta)`` (a loose but valid statement), like a Gaussian dptrees fit."""

    def __init__(self, c=0, epsilon=1.0, delta=1e-6, accountant=None, random_state=None,
                 overspend=1.0):
        self.c = c
        self.epsilon = epsilon
        self.delta = delta
        self.accountant = accountant
        self.random_state = random_state
        self.overspend = overspend

    def fit(self, X, y):
        rho = _zcdp_budget(self.epsilon, self.delta) * self.overspend
        self.rdp_accountant_ = RDPAccountant().compose_zcdp(rho)
        self.epsilon_spent_ = self.epsilon
        self.delta_spent_ = self.delta
        if self.accountant is not None:
            self.accountant.spend(self.epsilon, self.delta)
        self.classes_ = np.array([0, 1])
        return self

    def predict(self, X):
        return np.full(len(X), self.c)


def _data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3))
    y = (X[:, 0] + 0.2 * rng.random(n) > 0.6).astype(int)
    return X, y


def _gb(**kw):
    return DPGradientBoostingClassifier(n_estimators=10, bounds=(np.zeros(3), np.ones(3)),
                                        classes=[0, 1], **kw)


# -- the bound -------------------------------------------------------------------------

def _theorem_2(rho, mean, orders):
    """Papernot & Steinke 2022, theorem 2, shape 0 (logarithmic), for rho-zCDP runs,
    written out here independently of dp-accounting: eps'(a) = rho a + log(mean) / (a - 1)
    + min_b [(1 - 1/b) rho b + log(1/gamma) / b], then monotone in a."""
    gamma = _logarithmic_gamma(mean)
    c = min((1 - 1 / b) * rho * b + math.log(1 / gamma) / b for b in orders)
    raw = [rho * a + math.log(mean) / (a - 1) + c for a in orders]
    return np.array([min(raw[j] for j in range(len(orders)) if orders[j] >= a)
                     for a in orders])


@pytest.mark.parametrize("rho, mean", [(1e-4, 10), (0.01, 5), (0.3, 30)])
def test_best_of_bound_is_theorem_2(rho, mean):
    acc = RDPAccountant()
    got = acc.compose_best_of_zcdp(rho, mean).rdp
    expected = _theorem_2(rho, mean, acc.orders.tolist())
    # dp-accounting rounds gamma down (a larger cost) by at most 1e-9 relative.
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert np.all(got >= expected - 1e-12)


def test_the_budget_search_leaves_the_rdp_cache_to_training():
    from dptrees.privacy.rdp_curves import _event_rdp

    before = _event_rdp.cache_info().currsize
    best_of_zcdp_budget(0.7, DELTA, 7)
    assert _event_rdp.cache_info().currsize == before


def test_one_run_costs_about_one_fit():
    # mean 1: one run; its cost is that of the run, up to the smallest order's slack.
    rho1 = best_of_zcdp_budget(1.0, DELTA, 1)
    assert rho1 <= zcdp_budget(1.0, DELTA) <= rho1 * 1.01


@pytest.mark.parametrize("epsilon", [0.05, 1.0, 8.0])
def test_trial_rho_spends_the_whole_budget(epsilon):
    rhos = [trial_rho(epsilon, DELTA, mean) for mean in (1, 3, 10, 30)]
    assert all(a > b for a, b in zip(rhos, rhos[1:]))  # more trials, less each
    for mean, rho in zip((1, 3, 10, 30), rhos):
        spent = RDPAccountant().compose_best_of_zcdp(rho, mean).get_epsilon(DELTA)
        assert epsilon * (1 - 1e-3) <= spent <= epsilon


# -- the number of trials --------------------------------------------------------------

def _logarithmic_pvalue(counts, gamma):
    ks = np.arange(1, 8)
    pmf = (1 - gamma) ** ks / (ks * math.log(1 / gamma))
    observed = [np.sum(counts == k) for k in ks] + [np.sum(counts > ks[-1])]
    expected = np.append(pmf, 1 - pmf.sum()) * len(counts)
    return stats.chisquare(observed, expected).pvalue


def test_number_of_trials_is_logarithmic():
    mean = 10
    gamma = _logarithmic_gamma(mean)
    assert (1 / gamma - 1) / math.log(1 / gamma) == pytest.approx(mean, rel=1e-12)
    rng = np.random.default_rng(0)
    counts = np.array([_logarithmic_trials(gamma, rng) for _ in range(20_000)])
    assert _logarithmic_pvalue(counts, gamma) > ALPHA
    # Power: geometric counts of the same mean are refuted.
    geometric = rng.geometric(1 / mean, 20_000)
    assert _logarithmic_pvalue(geometric, gamma) < ALPHA
    assert _logarithmic_trials(_logarithmic_gamma(1), rng) == 1


def test_search_runs_the_drawn_number_of_trials():
    X, y = _data(200)
    gamma = _logarithmic_gamma(4)
    for seed in range(5):
        search = DPRandomSearch(_ZCDPConstantClassifier(), {"c": [0, 1]}, epsilon=1.0,
                                delta=DELTA, mean_trials=4, random_state=seed,
                                accountant=BudgetAccountant()).fit(X, y)
        stop_rng = np.random.default_rng(seed).spawn(5)[2]
        assert search._n_trials == _logarithmic_trials(gamma, stop_rng)


# -- what a search spends and what its trials may spend -------------------------------

def test_trials_are_rho_zcdp_and_the_search_spends_once():
    X, y = _data()
    acc = BudgetAccountant(epsilon=2.0, delta=1e-5)
    search = DPRandomSearch(_gb(), {"learning_rate": [0.1, 0.3], "max_depth": [2, 3]},
                            epsilon=1.0, delta=DELTA, mean_trials=3, accountant=acc,
                            random_state=0).fit(X, y)
    assert acc.spent == (1.0, DELTA)
    assert (search.epsilon_spent_, search.delta_spent_) == (1.0, DELTA)
    assert search.trial_rho_ == trial_rho(1.0, DELTA, 3)
    model = search.best_estimator_
    curve = model.rdp_accountant_.rdp
    assert np.all(curve <= search.trial_rho_ * model.rdp_accountant_.orders)
    assert model.epsilon_spent_ <= search.trial_epsilon_
    assert model.delta == DELTA and search.score(X, y) > 0.7
    # The Gaussian trials: far more budget each than a pure search's epsilon / 3.
    assert search.trial_epsilon_ > 0.5


def test_renyi_search_of_the_explainable_boosting_machine():
    X, y = _data()
    search = DPRandomSearch(
        DPExplainableBoostingClassifier(bounds=(np.zeros(3), np.ones(3)), classes=[0, 1]),
        {"learning_rate": [0.3, 1.0]}, epsilon=1.0, delta=DELTA, random_state=1,
        accountant=BudgetAccountant()).fit(X, y)
    assert search.score(X, y) > 0.7


def test_renyi_search_with_mae_and_weights():
    rng = np.random.default_rng(2)
    X = rng.random((1500, 3))
    y = X[:, 0] + 0.1 * rng.random(1500)
    w = np.round(rng.random(1500) * 64) / 64
    est = DPGradientBoostingRegressor(n_estimators=10, bounds=(np.zeros(3), np.ones(3)),
                                      y_bounds=(0, 1.1))
    search = DPRandomSearch(est, {"learning_rate": [0.1, 0.5]}, epsilon=2.0, delta=DELTA,
                            scoring="neg_mean_absolute_error", error_bound=1.1,
                            random_state=0, accountant=BudgetAccountant())
    search.fit(X, y, sample_weight=w)
    assert search.best_score_ < 0 and search.score(X, y) > 0.3


@pytest.mark.parametrize("estimator, params, match", [
    (_gb(noise="laplace"), {"learning_rate": [0.3]}, "no Renyi accountant"),
    (_gb(accounting="pld"), {"learning_rate": [0.3]}, "no Renyi accountant"),
    pytest.param(_gb(subsample=0.5), {"learning_rate": [0.3]}, "not .*-zCDP",
                 marks=pytest.mark.slow),  # 7 s (the subsampled Renyi curves)
    (_ZCDPConstantClassifier(overspend=1.01), {"c": [0]}, "not .*-zCDP"),
])
def test_trials_that_are_not_zcdp_are_refused(estimator, params, match):
    X, y = _data(500)
    with pytest.raises(ValueError, match=match):
        DPRandomSearch(estimator, params, epsilon=1.0, delta=DELTA,
                       accountant=BudgetAccountant(), random_state=0).fit(X, y)


def test_estimators_without_delta_and_searched_delta_are_refused_before_spending():
    X, y = _data(300)
    acc = BudgetAccountant()
    tree = DPDecisionTreeClassifier(bounds=(np.zeros(3), np.ones(3)), classes=[0, 1])
    with pytest.raises(ValueError, match="has no delta parameter"):
        DPRandomSearch(tree, {"max_depth": [2]}, epsilon=1.0, delta=DELTA,
                       accountant=acc).fit(X, y)
    with pytest.raises(ValueError, match="set by the search"):
        DPRandomSearch(_gb(), {"delta": [1e-5]}, epsilon=1.0, delta=DELTA,
                       accountant=acc).fit(X, y)
    assert acc.spent == (0.0, 0.0)


# -- audits ------------------------------------------------------------------------------

# The neighbours of test_model_selection's audits: D1 adds a validation record of label 1,
# which only the candidate c = 1 predicts correctly.
_X0, _Y0 = np.zeros((3, 1)), np.array([2, 2, 2])
_X1, _Y1 = np.zeros((4, 1)), np.array([2, 2, 2, 1])
_CLAIM = 0.3
_AUDIT = dict(n_calibration=1_000, n_test=4_000, batch=False, alpha=ALPHA, delta=DELTA)


class _UnNoisedRenyiSearch(DPRandomSearch):
    """Broken: releases the argmax of the exact validation scores."""

    def _noisy_score(self, model, X_val, y_val, w_val, budget, bound, rng):
        return float(np.count_nonzero(model.predict(X_val) == y_val))


def _sampler(cls, X, y):
    def sample(rng):
        search = cls(_ZCDPConstantClassifier(), {"c": [0, 1]}, epsilon=_CLAIM, delta=DELTA,
                     mean_trials=10, validation_fraction=0.95,
                     accountant=BudgetAccountant(), random_state=rng).fit(X, y)
        return search.best_params_["c"]
    return sample


def _audit(cls, seed):
    return audit_pair(_sampler(cls, _X0, _Y0), _sampler(cls, _X1, _Y1),
                      random_state=seed, **_AUDIT)


@pytest.mark.slow
def test_audit_renyi_search_within_claim():
    res = _audit(DPRandomSearch, seed=0)
    print(res.summary())
    res.assert_within(_CLAIM)


@pytest.mark.slow
def test_audit_flags_unnoised_renyi_argmax():
    res = _audit(_UnNoisedRenyiSearch, seed=1)
    print(res.summary())
    assert not res.check(_CLAIM), res.summary()
