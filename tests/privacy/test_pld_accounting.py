"""The privacy-loss-distribution accounting option (``dptrees.accounting.PLDAccountant``).

* The coupling lemma of ``dptrees.privacy.pld``, checked numerically where its slack
  is visible (small sigma, small tau): the discrete Gaussian's pmf and that of the
  rounded continuous Gaussian ``M~`` agree pointwise within ``e^(+-eta)``.
* The PLD figures are dp-accounting's for the continuous Gaussian of multiplier
  ``z * PLD_NOISE_FACTOR``, tighter than the Renyi figures of the same releases.
* The federated protocol and gradient boosting use it as an option and stay within
  their budgets.
"""

import math

import dp_accounting
import numpy as np
import pytest

from dptrees import BudgetAccountant, DPGradientBoostingRegressor
from dptrees.privacy.pld import PLD_MIN_SIGMA, PLD_NOISE_FACTOR
from dptrees.accounting import PLDAccountant, RDPAccountant
from dptrees.privacy.release_plan import ReleasePlan
from dptrees.federated import INTEGER_ORDERS, DPAggregator, FixedClip


def _phi(x, s):
    return np.exp(-x**2 / (2 * s**2)) / (math.sqrt(2 * math.pi) * s)


@pytest.mark.parametrize("sigma, tau", [(2.5, 0.8), (4.0, 0.9), (3.0, 1.2)])
def test_coupling_lemma_pointwise_ratio(sigma, tau):
    """P[M~ = m] / P[DG = m] lies in [1 / (1 + 2 rho), (1 + 2 rho) / (1 - 2 rho)]."""
    rho = sum(math.exp(-2 * math.pi**2 * tau**2 * k**2) for k in range(1, 6))
    sigma_c = math.sqrt(sigma**2 - tau**2)
    u = np.linspace(-12 * sigma, 12 * sigma, 120_001)
    du = u[1] - u[0]
    theta = sum(_phi(j - u, tau) for j in range(-int(13 * sigma) - 5, int(13 * sigma) + 6))
    ms = np.arange(-int(9 * sigma), int(9 * sigma) + 1)
    coupled = np.array([np.sum(_phi(u, sigma_c) * _phi(m - u, tau) / theta) * du for m in ms])
    k = np.arange(-int(40 * sigma), int(40 * sigma) + 1)
    dg = np.exp(-ms**2 / (2 * sigma**2)) / np.sum(np.exp(-k**2 / (2 * sigma**2)))
    ratio = coupled / dg
    assert np.all(ratio >= 1 / (1 + 2 * rho) - 1e-9)
    assert np.all(ratio <= (1 + 2 * rho) / (1 - 2 * rho) + 1e-9)
    assert abs(np.sum(coupled) - 1) < 1e-6  # the kernel is a partition of unity
    assert np.max(np.abs(ratio - 1)) > 0 or rho < 1e-12  # the check is not vacuous


def test_pld_is_dp_accountings_continuous_gaussian_and_tighter_than_rdp():
    q, z, rounds = 0.1, 1.5, 389
    ours = PLDAccountant().compose_subsampled_discrete_gaussian(q, z, count=rounds)
    ref = dp_accounting.pld.PLDAccountant(
        dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=1e-4)
    ref.compose(dp_accounting.PoissonSampledDpEvent(
        q, dp_accounting.GaussianDpEvent(z * PLD_NOISE_FACTOR)), rounds)
    assert ours.get_epsilon(1e-5) == pytest.approx(ref.get_epsilon(1e-5), rel=1e-9)
    assert ours.get_epsilon(1e-5) >= ref.get_epsilon(1e-5)  # the slack is added, never taken
    rdp = RDPAccountant(INTEGER_ORDERS).compose_subsampled_discrete_gaussian(q, z, count=rounds)
    assert ours.get_epsilon(1e-5) < 0.9 * rdp.get_epsilon(1e-5)
    assert ours.steps == rounds


def test_full_data_gaussians_compose_into_one():
    split = PLDAccountant().compose_discrete_gaussian(2.0, count=4)
    one = PLDAccountant().compose_discrete_gaussian(1.0)  # 4 / 2**2 = 1 / 1**2
    assert split.get_epsilon(1e-6) == pytest.approx(one.get_epsilon(1e-6), rel=1e-9)
    assert split.get_delta(split.get_epsilon(1e-6)) <= 1e-6 * (1 + 1e-6)


def test_look_ahead_and_bad_input():
    acc = PLDAccountant().compose_subsampled_discrete_gaussian(0.2, 2.0, count=10)
    after = acc.delta_after(3.0, noise_multiplier=2.0, sampling_probability=0.2, count=5)
    assert after == pytest.approx(PLDAccountant().compose_subsampled_discrete_gaussian(
        0.2, 2.0, count=15).get_delta(3.0))
    assert acc.steps == 10 and acc.get_delta(3.0) < after
    assert acc.would_exceed(3.0, after * 0.99, noise_multiplier=2.0,
                            sampling_probability=0.2, count=5)
    assert PLDAccountant().get_epsilon(1e-6) == 0.0
    for bad in [dict(sampling_probability=1.5, noise_multiplier=1.0),
                dict(sampling_probability=0.5, noise_multiplier=0.0)]:
        with pytest.raises(ValueError):
            PLDAccountant().compose_subsampled_discrete_gaussian(**bad)


def test_federated_protocol_with_pld_runs_more_rounds_within_the_bound():
    kwargs = dict(accountant=BudgetAccountant(), random_state=0)
    rdp = DPAggregator(10, 0.5, 2.0, FixedClip(1.0), 3.0, 1e-5, **kwargs)
    agg = DPAggregator(10, 0.5, 2.0, FixedClip(1.0), 3.0, 1e-5, accounting="pld", **kwargs)
    assert agg.rounds_allowed() > rdp.rounds_allowed() > 0
    n = 0
    while agg.can_run_round():
        agg.aggregate([], 2)
        n += 1
    assert n == agg.rounds_allowed()
    assert agg.spent()[1] <= 1e-5 and agg.history_delta() is None
    with pytest.raises(ValueError, match="accounting"):
        DPAggregator(10, 0.5, 2.0, FixedClip(1.0), 3.0, 1e-5, accounting="moments")


def test_gradient_boosting_with_pld_gets_more_budget_and_stays_within_it():
    for eps in (0.1, 1.0):
        assert (ReleasePlan("gaussian", eps, 1e-6, "pld").total
                > 1.1 * ReleasePlan("gaussian", eps, 1e-6, "rdp").total)
    rng = np.random.default_rng(0)
    X = rng.random((3000, 3))
    y = X[:, 0] + 0.1 * rng.random(3000)
    est = DPGradientBoostingRegressor(n_estimators=20, epsilon=1.0, accounting="pld",
                                      bounds=(0, 1), y_bounds=(0, 1.1),
                                      accountant=BudgetAccountant(), random_state=0).fit(X, y)
    assert 0.99 < est.epsilon_spent_ <= 1.0 and est.rdp_accountant_ is None
    assert est.pld_accountant_.steps == est.n_releases_
    with pytest.raises(ValueError, match="accounting"):
        DPGradientBoostingRegressor(accounting="moments", bounds=(0, 1),
                                    y_bounds=(0, 1)).fit(X, y)


def test_the_coupling_needs_enough_noise_on_the_grid():
    """Budgets too large for the PLD accounting are refused before anything is spent."""
    assert 90 < PLD_MIN_SIGMA < 91
    rng = np.random.default_rng(0)
    X, y = rng.random((500, 2)), rng.random(500)
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match="accounting='rdp'"):
        DPGradientBoostingRegressor(n_estimators=1, epsilon=100.0, accounting="pld",
                                    bounds=(0, 1), y_bounds=(0, 1), accountant=acc).fit(X, y)
    assert acc.spent == (0.0, 0.0)
