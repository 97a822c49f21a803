"""The federated estimators' default noise: the least that lets every round run.

``noise_multiplier="auto"`` chooses ``z`` from public inputs only (epsilon, delta, the
sampling probability, ``n_estimators`` and the accounting) by
:func:`~dptrees.federated._protocol.noise_multiplier_for`: the initial-score round and
all ``n_estimators`` tree rounds fit the budget, and ``z / 1.01`` would not. So a fit
with defaults runs every round at any epsilon the accountant can certify, instead of
refusing small epsilons or stopping early.
"""

import warnings

import numpy as np
import pytest

from dptrees import BudgetAccountant
from dptrees.exceptions import EarlyStopWarning
from dptrees.federated import (
    DPFederatedGradientBoostingClassifier,
    DPFederatedGradientBoostingRegressor,
)
from dptrees.federated._protocol import _delta_after_rounds, noise_multiplier_for


@pytest.mark.parametrize("epsilon, q, rounds", [(0.05, 0.1, 101), (1.0, 0.1, 101),
                                                (1.0, 1.0, 11), (8.0, 0.05, 31)])
def test_the_noise_is_the_least_that_fits_the_rounds(epsilon, q, rounds):
    z = noise_multiplier_for(epsilon, 1e-6, q, rounds)
    assert _delta_after_rounds("rdp", epsilon, q, z, rounds) <= 1e-6
    if z > 0.3:
        assert _delta_after_rounds("rdp", epsilon, q, z / 1.01, rounds) > 1e-6


@pytest.mark.slow  # 6 s: run by .ci/run after the default suite
def test_less_budget_or_more_rounds_need_more_noise():
    zs = [noise_multiplier_for(eps, 1e-6, 0.1, 51) for eps in (0.1, 0.5, 1.0, 4.0)]
    assert zs == sorted(zs, reverse=True)
    assert noise_multiplier_for(1.0, 1e-6, 0.1, 201) > noise_multiplier_for(1.0, 1e-6, 0.1, 51)


def test_budgets_no_noise_can_certify_are_refused_with_a_way_out():
    with pytest.raises(ValueError, match="accounting='pld'"):
        noise_multiplier_for(0.01, 1e-6, 0.1, 101)


def data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3))
    return X, (X[:, 0] > 0.5).astype(int)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 10.0])
def test_defaults_run_every_round_within_the_budget(epsilon):
    X, y = data()
    est = DPFederatedGradientBoostingClassifier(
        n_estimators=20, epsilon=epsilon, bounds=(0, 1), classes=[0, 1], n_clients=len(y),
        accountant=BudgetAccountant(1e6, 1.0), random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EarlyStopWarning)
        est.fit(X, y)
    assert est.n_iter_ == 20
    assert est.noise_multiplier_ == noise_multiplier_for(epsilon, 1e-6, 0.1, 21)
    assert est.delta_spent_ <= 1e-6
    assert est.epsilon_spent_ == epsilon


def test_a_given_noise_multiplier_is_kept_and_may_stop_early():
    X, y = data()
    est = DPFederatedGradientBoostingRegressor(
        n_estimators=50, epsilon=0.5, noise_multiplier=4.0, bounds=(0, 1), y_bounds=(0, 1),
        n_clients=len(y), accountant=BudgetAccountant(1e6, 1.0), random_state=0)
    with pytest.warns(EarlyStopWarning, match="noise_multiplier=4"):
        est.fit(X, y.astype(float))
    assert est.noise_multiplier_ == 4.0 and est.n_iter_ < 50


@pytest.mark.parametrize("value", ["automatic", 0, -1.0, np.inf])
def test_a_bad_noise_multiplier_is_a_clear_error(value):
    X, y = data()
    est = DPFederatedGradientBoostingClassifier(noise_multiplier=value, bounds=(0, 1),
                                                classes=[0, 1], n_clients=len(y))
    with pytest.raises(ValueError, match="noise_multiplier"):
        est.fit(X, y)


def test_auto_accounting_is_renyi_where_it_certifies_the_rounds():
    X, y = data()
    est = DPFederatedGradientBoostingClassifier(
        n_estimators=5, epsilon=1.0, bounds=(0, 1), classes=[0, 1], n_clients=len(y),
        accountant=BudgetAccountant(1e6, 1.0), random_state=0).fit(X, y)
    assert est.accounting_ == "rdp" and est.rdp_accountant_ is not None


def test_auto_accounting_falls_back_to_the_pld_at_very_small_epsilon():
    # Renyi DP at integer orders certifies no round at eps 0.01, delta 1e-6: the privacy
    # loss distribution does, and the defaults then run every round within the budget.
    X, y = data()
    est = DPFederatedGradientBoostingClassifier(
        epsilon=0.01, bounds=(0, 1), classes=[0, 1], n_clients=len(y),
        accountant=BudgetAccountant(1e6, 1.0), random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EarlyStopWarning)
        est.fit(X, y)
    assert est.accounting_ == "pld" and est.n_iter_ == est.n_estimators == 100
    assert est.noise_multiplier_ == noise_multiplier_for(0.01, 1e-6, 0.1, 101,
                                                         accounting="pld")
    assert est.delta_spent_ <= 1e-6
    # asked for explicitly, Renyi DP refuses with a way out
    with pytest.raises(ValueError, match="accounting='pld'"):
        est.set_params(accounting="rdp").fit(X, y)
