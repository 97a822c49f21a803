"""Tests for the federated Laplace round (dptrees.federated.LaplaceAggregator): its
budget plan, L1 clipping and checks, the distribution of its noise, and a client-level
audit that passes on the real round and flags two injected bugs."""

import pickle

import numpy as np
import pytest
from scipy import stats

from dptrees.accounting import BudgetAccountant
from dptrees.audit import audit_pair
from dptrees.exceptions import DetachedAccountantError
from dptrees.federated import ClientContribution, FixedClip, LaplaceAggregator, clip_update
from dptrees.federated._laplace import round_epsilon
from dptrees.mechanisms import laplace_grid
from support import ALPHA


def _aggregator(K=10, q=1.0, S=1.0, epsilon=1.0, rounds=1, seed=0):
    return LaplaceAggregator(K, q, FixedClip(S), epsilon, rounds=rounds,
                             accountant=BudgetAccountant(), random_state=seed)


# -- the budget plan ---------------------------------------------------------------------

def test_round_epsilon_never_overspends():
    """``rounds`` amplified rounds add up to at most epsilon, and to nearly all of it,
    over budgets, sampling rates and round counts drawn at random."""
    rng = np.random.default_rng(0)
    for _ in range(2_000):
        epsilon = float(10 ** rng.uniform(-3, 1))
        q = float(rng.choice([1.0, rng.uniform(1e-3, 1)]))
        rounds = int(rng.integers(1, 50))
        eps0, cost = round_epsilon(epsilon, q, rounds)
        assert cost * rounds <= epsilon
        assert cost * rounds == pytest.approx(epsilon, rel=1e-9)
        assert eps0 >= cost  # sampling never makes a round dearer
    assert round_epsilon(0.1, 1.0, 1)[0] == pytest.approx(0.1, rel=1e-15)


def test_rounds_spend_what_they_planned_and_stop():
    acc = BudgetAccountant(epsilon=1.0, delta=0.0)
    agg = LaplaceAggregator(5, 0.5, FixedClip(1.0), 1.0, rounds=2, accountant=acc,
                            random_state=0)
    assert agg.spent() == (0.0, 0.0) and acc.spent == (0.0, 0.0)
    contributions = [clip_update([0.3, 0.4], 1.0, norm_ord=1) for _ in range(3)]
    for _ in range(2):
        assert agg.can_run_round()
        agg.aggregate(contributions, 2)
    assert acc.spent == (1.0, 0.0)  # charged once, before the first release
    assert agg.spent()[0] <= 1.0 and agg.spent()[1] == 0.0
    assert np.all(agg.rdp_accountant.rdp <= 1.0)  # pure-DP curves: at most epsilon
    assert not agg.can_run_round() and agg.rounds_allowed() == 2
    with pytest.raises(RuntimeError, match="planned"):
        agg.aggregate(contributions, 2)


def test_a_pickled_copy_is_detached():
    agg = _aggregator(rounds=2)
    agg.aggregate([clip_update([0.2, 0.5], 1.0, norm_ord=1)], 2)
    copy = pickle.loads(pickle.dumps(agg))
    with pytest.raises(DetachedAccountantError):
        copy.aggregate([], 2)


# -- clipping in L1 ----------------------------------------------------------------------

def test_clip_update_in_l1():
    c = clip_update([3.0, -1.0], 2.0, norm_ord=1)
    assert np.abs(c.vector).sum() == pytest.approx(2.0, abs=1e-6)
    assert c.vector[0] == pytest.approx(1.5, abs=1e-6) and c.within_bound == 0
    assert clip_update([0.5, 0.5], 1.0, norm_ord=1).within_bound == 1


def test_the_server_rejects_a_vector_clipped_in_l2_only():
    """[0.7, 0.7] has L2 norm 0.99 but L1 norm 1.4: within an L2 bound of 1, above an L1
    bound of 1, so the Laplace round refuses it (its sensitivity is in L1)."""
    agg = _aggregator()
    l2_only = clip_update([0.7, 0.7], 1.0)
    with pytest.raises(ValueError, match="L1 norm"):
        agg.aggregate([l2_only], 2)
    assert agg.rounds == 0 and agg.accountant.spent == (0.0, 0.0)


def test_an_adaptive_clip_is_refused():
    from dptrees.federated import AdaptiveClip
    with pytest.raises(ValueError, match="fixed clipping bound"):
        LaplaceAggregator(5, 1.0, AdaptiveClip(1.0), 1.0)


# -- the noise's distribution ------------------------------------------------------------

def test_the_noise_is_laplace_of_scale_sensitivity_over_epsilon():
    """Release minus exact sum, over 6,000 rounds of fresh aggregators, against the
    Laplace law of scale ``sensitivity / epsilon_0`` (q = 0.5: epsilon_0 above epsilon);
    a scale a fifth smaller is rejected by the same test."""
    K, q, S, epsilon, d = 8, 0.5, 2.0, 0.7, 2
    contributions = [clip_update([1.0, 0.5], S, norm_ord=1), clip_update([-0.5, 2.0], S,
                                                                            norm_ord=1)]
    exact = sum(c.vector for c in contributions)
    noise = []
    for seed in range(3_000):
        agg = _aggregator(K, q, S, epsilon, seed=seed)
        noise.append(agg.aggregate(contributions, d) * agg.expected_clients - exact)
    noise = np.concatenate(noise)
    eps0, _ = round_epsilon(epsilon, q, 1)
    grid, units = laplace_grid(agg.sensitivity(d), d)
    scale = units * grid / eps0
    assert scale == pytest.approx((S + d * 2.0**-25) / eps0, rel=2e-3)
    assert stats.kstest(noise, stats.laplace(scale=scale).cdf).pvalue > ALPHA
    assert stats.kstest(noise, stats.laplace(scale=0.8 * scale).cdf).pvalue < 1e-6


# -- a client-level audit ----------------------------------------------------------------

def _round_sampler(adversary, *, noise_scale=1.0, clip_adversary=True, K=4, d=2,
                   epsilon=1.0, S=1.0):
    """Coordinate 0 of one round's release (q = 1) on ``K - 1`` benign clients, plus an
    adversarial client (update ``100 S e_0``) if ``adversary``. ``noise_scale`` and
    ``clip_adversary=False`` inject bugs (too little noise, a client past the bound)."""
    rng0 = np.random.default_rng(42)
    benign = [clip_update(rng0.standard_normal(d) * 0.3, S, norm_ord=1) for _ in range(K - 1)]
    attack = np.zeros(d)
    attack[0] = 100.0 * S
    evil = (clip_update(attack, S, norm_ord=1) if clip_adversary
            else ClientContribution(attack / 25.0, 0))  # 4 S, still on the grid
    contributions = benign + [evil] if adversary else benign

    def sampler(n, rng):
        agg = LaplaceAggregator(K, 1.0, FixedClip(S), epsilon,
                                accountant=BudgetAccountant(), random_state=rng)
        agg.can_run_round = lambda: True  # the audit replays one round many times
        agg.round_epsilon /= noise_scale
        if not clip_adversary:  # the server's norm check would reject it: switch it off
            agg.check_contribution = lambda c, dimension: c
        return np.array([agg.aggregate(contributions, d)[0] for _ in range(n)])

    return sampler


def _audit(n_calibration, n_test, **kwargs):
    return audit_pair(_round_sampler(False, **kwargs), _round_sampler(True, **kwargs),
                      n_calibration=n_calibration, n_test=n_test, alpha=ALPHA,
                      random_state=0)


def test_client_level_audit_of_one_laplace_round(record_audit):
    claim = 1.0  # one round at q = 1: epsilon_0 is epsilon
    res = record_audit(_audit(4_000, 20_000), claim)
    res.assert_within(claim)
    # The audit is not vacuous: it finds a real, if smaller, epsilon.
    assert res.epsilon_lower_bound > 0.5


@pytest.mark.parametrize("bug", ["quarter_noise", "unclipped_client"])
def test_client_level_audit_flags_injected_bugs(bug, record_audit):
    kwargs = {"noise_scale": 0.25} if bug == "quarter_noise" else {"clip_adversary": False}
    res = record_audit(_audit(2_000, 10_000, **kwargs), 1.0)
    assert not res.check(1.0), res.summary()
