"""Tests for ``dptrees.privacy.individual_filter``: per-record costs, the filter, and an audit.

* :func:`individual_cost`: 0 for records that move nothing, the worst case (up to the
  relative ``2**-40`` round-up) for records that move the sums by the sensitivity,
  monotone in between, and an upper bound on the Renyi cost of the discretised release
  that :func:`~dptrees.mechanisms.gaussian_grid` describes.
* :class:`IndividualFilter`: argument checks, charging and final stopping, and a
  randomised comparison with a straightforward reference implementation.
* A statistical audit (:mod:`dptrees.audit`) of a small filtered Gaussian mechanism: the
  correct filter stays within the epsilon converted from its zCDP budget, and a broken
  filter that never stops a record is refuted. All audits are seeded (deterministic).
"""

import math

import numpy as np
import pytest

from dptrees.privacy.individual_filter import IndividualFilter, individual_cost
from dptrees.accounting import zcdp_to_approx_dp
from dptrees.audit import audit_epsilon
from dptrees.mechanisms import gaussian_grid, gaussian_mechanism

ROUND_UP = 1.0 + 2.0**-40

# (sensitivity, noise_multiplier, n_values); the last two use gaussian_grid's coarse grid
# (noise_multiplier * sqrt(n_values) large) rather than the fine one.
PARAMS = [
    (1.0, 1.0, 1),
    (1.0, 0.7, 5),
    (0.3, 2.5, 1),
    (3.0, 0.1, 64),
    (7.5, 12.0, 1000),
    (1e-3, 4.0, 17),
    (1.0, 30_000.0, 1),
    (2.0, 5_000.0, 100),
]


def worst_case(noise_multiplier):
    return 1.0 / (2.0 * noise_multiplier * noise_multiplier)


# ======================================================================================
# individual_cost
# ======================================================================================


@pytest.mark.parametrize("sensitivity, nm, n_values", PARAMS)
def test_zero_contribution_costs_exactly_nothing(sensitivity, nm, n_values):
    cost = individual_cost(np.zeros(7), sensitivity, nm, n_values)
    assert cost.shape == (7,)
    assert np.all(cost == 0.0)
    assert individual_cost(0.0, sensitivity, nm, n_values) == 0.0
    # -0.0 is a zero contribution too (not a negative one).
    assert individual_cost(-0.0, sensitivity, nm, n_values) == 0.0


@pytest.mark.parametrize("sensitivity, nm, n_values", PARAMS)
def test_full_contribution_costs_the_worst_case(sensitivity, nm, n_values):
    cost = float(individual_cost(sensitivity, sensitivity, nm, n_values))
    rho = worst_case(nm)
    # ((S + r) / (S + r))**2 / (2 nm**2), rounded up by the relative 2**-40, and no more.
    assert cost >= rho
    assert cost <= np.nextafter(rho * ROUND_UP, np.inf)
    assert math.isclose(cost, rho * ROUND_UP, rel_tol=1e-15)


@pytest.mark.parametrize("sensitivity, nm, n_values", PARAMS)
def test_cost_never_exceeds_the_worst_case(sensitivity, nm, n_values):
    c = np.random.default_rng(0).uniform(0.0, sensitivity, size=1000)
    cost = individual_cost(c, sensitivity, nm, n_values)
    assert np.all(cost <= np.nextafter(worst_case(nm) * ROUND_UP, np.inf))


@pytest.mark.parametrize("sensitivity, nm, n_values", PARAMS)
def test_cost_is_increasing_in_the_contribution(sensitivity, nm, n_values):
    c = np.linspace(0.0, sensitivity, 1001)
    cost = individual_cost(c, sensitivity, nm, n_values)
    assert cost[0] == 0.0
    assert np.all(np.diff(cost) > 0)  # strictly, including the jump from 0
    # Random (unsorted) contributions: the order of the costs follows that of c.
    r = np.random.default_rng(1).uniform(0.0, sensitivity, size=500)
    rc = individual_cost(r, sensitivity, nm, n_values)
    order = np.argsort(r, kind="stable")
    assert np.all(np.diff(rc[order]) >= 0)


def test_cost_scales_with_the_squared_contribution():
    # The point of individual accounting: a record moving the sums by S/2 pays about a
    # quarter of the worst case (the rounding slack is about 2**-10 of S here).
    for c, factor in [(0.5, 0.25), (0.1, 0.01), (0.9, 0.81)]:
        cost = float(individual_cost(c, 1.0, 1.0, 1))
        assert cost == pytest.approx(factor * worst_case(1.0), rel=1e-2)
        assert cost >= factor * worst_case(1.0)


@pytest.mark.parametrize(
    "contribution",
    [-1e-300, -1.0, [0.5, -1e-12], 1.0 + 1e-12, 2.0, [0.0, 1.0, 1.5], np.inf, -np.inf],
)
def test_contribution_out_of_range_is_rejected(contribution):
    with pytest.raises(ValueError):
        individual_cost(contribution, 1.0, 1.0, 3)


def test_nan_contribution_is_rejected():
    with pytest.raises(ValueError):
        individual_cost(np.array([0.5, np.nan]), 1.0, 1.0, 1)


@pytest.mark.parametrize("sensitivity, nm, n_values", PARAMS)
def test_cost_bounds_the_discretised_release(sensitivity, nm, n_values):
    # The release rounds to `grid` and adds a discrete Gaussian of variance sigma2_units
    # (grid units): a record moving the exact sums by c moves the rounded sums by at most
    # c / grid + sqrt(n_values) units, hence costs at most
    # (c / grid + sqrt(n_values))**2 / (2 sigma2_units). individual_cost must not be less.
    grid, sigma2_units = gaussian_grid(sensitivity, nm, n_values)
    rng = np.random.default_rng(2)
    c = np.concatenate([
        np.linspace(0.0, sensitivity, 513)[1:],
        rng.uniform(0.0, sensitivity, size=500),
        sensitivity * np.array([1e-300, 1e-12, 2.0**-30, 2.0**-10]),
        grid * np.array([0.5, 1.0, 3.0]),
    ])
    c = c[(c > 0) & (c <= sensitivity)]
    exact = (c / grid + math.sqrt(n_values)) ** 2 / (2.0 * sigma2_units)
    cost = individual_cost(c, sensitivity, nm, n_values)
    assert np.all(exact <= cost), float(np.max(exact / cost))
    # ... and it is not needlessly loose (the slack is rounding only).
    assert np.all(cost <= exact * (1 + 1e-6))


# ======================================================================================
# IndividualFilter
# ======================================================================================


@pytest.mark.parametrize(
    "budget", [0.0, -0.0, -1.0, math.inf, -math.inf, math.nan, 1, True, "1.0", None]
)
def test_filter_rejects_bad_budget(budget):
    with pytest.raises(ValueError):
        IndividualFilter(3, budget)


@pytest.mark.parametrize("budget", [1.0, 1e-300, 2.5, np.float64(0.5)])
def test_filter_starts_with_nothing_spent(budget):
    f = IndividualFilter(4, budget)
    assert f.budget == budget
    assert np.array_equal(f.spent, np.zeros(4))
    assert np.array_equal(f.active, np.ones(4, dtype=bool))


@pytest.mark.parametrize(
    "costs", [np.zeros(3), np.zeros(5), np.zeros((4, 1)), np.zeros((1, 4)), 0.0, []]
)
def test_admit_rejects_wrong_shape(costs):
    f = IndividualFilter(4, 1.0)
    with pytest.raises(ValueError):
        f.admit(costs)


@pytest.mark.parametrize("bad", [-1e-300, -0.5, -np.inf, np.nan])
def test_admit_rejects_negative_costs_and_leaves_state_alone(bad):
    f = IndividualFilter(3, 1.0)
    f.admit([0.25, 0.5, 0.0])
    spent, active = f.spent.copy(), f.active.copy()
    with pytest.raises(ValueError):
        f.admit([0.25, bad, 0.25])
    assert np.array_equal(f.spent, spent)
    assert np.array_equal(f.active, active)


def test_admit_charges_until_the_budget_then_stops_for_good():
    f = IndividualFilter(4, 1.0)
    # record 0: 0.375 per release, stopped at the third;
    # record 1: hits the budget exactly (<= budget is allowed), then any positive cost stops it;
    # record 2: cost 0 always, never charged, always in;
    # record 3: one over-budget cost at once.
    steps = [
        # costs                       expected mask              expected spent
        ([0.375, 0.5, 0.0, 1.5],      [True, True, True, False], [0.375, 0.5, 0.0, 0.0]),
        ([0.375, 0.5, 0.0, 0.0],      [True, True, True, False], [0.75, 1.0, 0.0, 0.0]),
        ([0.375, 0.0, 0.0, 0.0],      [False, True, True, False], [0.75, 1.0, 0.0, 0.0]),
        ([0.0, 2.0**-50, 0.0, 0.0],   [False, False, True, False], [0.75, 1.0, 0.0, 0.0]),
        # fits the budget again (0.75 + 0.25 = 1), but a stopped record stays stopped
        ([0.25, 0.0, 0.0, 0.1],       [False, False, True, False], [0.75, 1.0, 0.0, 0.0]),
        # cost 0 for stopped records: still not admitted
        ([0.0, 0.0, 0.0, 0.0],        [False, False, True, False], [0.75, 1.0, 0.0, 0.0]),
        ([0.0, 0.0, 1.0, 0.0],        [False, False, True, False], [0.75, 1.0, 1.0, 0.0]),
    ]
    for costs, mask, spent in steps:
        got = f.admit(np.array(costs))
        assert got.dtype == np.bool_
        assert got.tolist() == mask, costs
        assert f.spent.tolist() == spent, costs
        assert np.array_equal(f.active, got)


def test_admit_returns_a_copy():
    f = IndividualFilter(2, 1.0)
    mask = f.admit([0.5, 0.5])
    mask[:] = False
    assert f.active.all()
    assert f.admit([0.5, 0.0]).all()


def test_infinite_cost_stops_the_record():
    f = IndividualFilter(2, 1.0)
    assert f.admit([np.inf, 0.5]).tolist() == [False, True]
    assert f.spent.tolist() == [0.0, 0.5]
    assert f.admit([0.0, 0.0]).tolist() == [False, True]


def test_zero_cost_records_are_never_charged():
    rng = np.random.default_rng(3)
    f = IndividualFilter(100, 0.5)
    for _ in range(200):
        costs = rng.exponential(0.05, size=100)
        costs[:10] = 0.0  # records 0..9 never move anything
        mask = f.admit(costs)
        assert mask[:10].all()
        assert np.all(f.spent[:10] == 0.0)
    assert not f.active[10:].any()  # everyone else is eventually stopped


def reference_filter(costs_seq, budget):
    """The filter's rule, one record and one release at a time (plain Python floats)."""
    n = len(costs_seq[0])
    spent, active, masks = [0.0] * n, [True] * n, []
    for costs in costs_seq:
        for i, c in enumerate(costs):
            if active[i] and c > 0:
                if spent[i] + c > budget:
                    active[i] = False
                else:
                    spent[i] += c
        masks.append(list(active))
    return masks, spent


@pytest.mark.parametrize("seed", range(5))
def test_filter_property_random_sequences(seed):
    rng = np.random.default_rng(seed)
    n, steps = 60, 300
    # Dyadic budgets and costs (multiples of 1/64) hit the budget exactly now and then.
    budget = float(rng.choice([0.5, 1.0, 2.0, 0.3, 1.7]))
    kind = rng.integers(0, 4, size=(steps, n))
    costs_seq = np.where(
        kind == 0, 0.0,
        np.where(kind == 1, rng.integers(1, 32, size=(steps, n)) / 64.0,
                 np.where(kind == 2, rng.exponential(budget / 8, size=(steps, n)),
                          rng.uniform(0.0, 1.5 * budget, size=(steps, n)))),
    )
    # Some records cost 0 throughout, some have long stretches of 0 after big costs.
    costs_seq[:, :5] = 0.0
    costs_seq[steps // 2:, 5:10] = 0.0

    f = IndividualFilter(n, budget)
    prev_mask = np.ones(n, dtype=bool)
    prev_spent = np.zeros(n)
    total = np.zeros(n)
    for costs in costs_seq:
        mask = f.admit(costs)
        # never more than the budget, for any record, at any time
        assert np.all(f.spent <= budget)
        # stopping is final
        assert not np.any(mask & ~prev_mask)
        # the spent total grows by exactly the cost of admitted records with cost > 0 ...
        charged = mask & (costs > 0)
        assert np.array_equal(f.spent[charged], prev_spent[charged] + costs[charged])
        # ... and by nothing for anyone else (stopped now, stopped before, or cost 0)
        assert np.array_equal(f.spent[~charged], prev_spent[~charged])
        # a record is stopped exactly when its cost would take it over the budget
        newly_stopped = prev_mask & ~mask
        assert np.all(prev_spent[newly_stopped] + costs[newly_stopped] > budget)
        assert np.all(prev_spent[charged] + costs[charged] <= budget)
        total += np.where(charged, costs, 0.0)
        prev_mask, prev_spent = mask, f.spent.copy()
    assert np.all(f.spent[:5] == 0.0) and f.active[:5].all()
    ref_masks, ref_spent = reference_filter(costs_seq.tolist(), budget)
    assert f.active.tolist() == ref_masks[-1]
    assert f.spent.tolist() == ref_spent
    assert np.allclose(total, f.spent, rtol=1e-12, atol=0)
    # the sequences are long enough to stop most records and to leave some at the budget
    assert (~f.active[10:]).mean() > 0.8


def test_filter_matches_reference_mask_by_mask():
    rng = np.random.default_rng(11)
    costs_seq = (rng.integers(0, 5, size=(40, 8)) / 8.0).tolist()
    ref_masks, ref_spent = reference_filter(costs_seq, 1.0)
    f = IndividualFilter(8, 1.0)
    for costs, ref in zip(costs_seq, ref_masks):
        assert f.admit(costs).tolist() == ref
    assert f.spent.tolist() == ref_spent


# ======================================================================================
# Audit: a filtered Gaussian mechanism
# ======================================================================================
#
# T Gaussian releases of the sum of the contributions of the records the filter admits.
# Every record contributes the same amount to every release (the target record: the
# sensitivity S = 1, the worst case). The noise multiplier makes one worst-case release
# cost exactly half the budget, so the target takes part in exactly 2 releases; a filter
# that never stops it lets it into all T = 8, four times the claimed zCDP.

S = 1.0
T = 8
RHO = 2.0  # nominal budget; the exact one is BUDGET below
NM = 1.0 / math.sqrt(RHO)  # one worst-case release: 1 / (2 NM**2) = RHO / 2
# Two worst-case releases must fit: the cost has a relative 2**-40 round-up, so the
# budget is twice the computed cost (RHO up to 2**-40), and that is what is claimed.
BUDGET = 2.0 * float(individual_cost(S, S, NM, 1))
DELTA = 0.05
CLAIM = zcdp_to_approx_dp(BUDGET, DELTA)
D0 = np.array([0.0, 0.3, 0.6])  # records in both datasets (0.6: stopped after 5 releases)
D1 = np.append(D0, S)  # plus the target, at the sensitivity
AUDIT = dict(n_calibration=20_000, n_test=50_000, delta=DELTA)


class NeverStoppingFilter(IndividualFilter):
    """Broken on purpose: charges as usual but admits every record, always."""

    def admit(self, costs):
        super().admit(costs)
        return np.ones_like(self.active)


def filtered_releases(filter_cls, contributions, n, rng, masks=None):
    """``n`` runs of the T filtered releases as an ``(n, T)`` array.

    The runs are vectorised as one filter over ``n * k`` records (record ``j`` of run
    ``i`` is ``i * k + j``). Each release is :func:`gaussian_mechanism` on the ``n`` runs'
    sums: coordinates get independent noise, so each is one release of one value. Its
    grid (for ``n`` values) is finer than ``gaussian_grid(S, NM, 1)``'s and its variance
    larger than ``(NM * S)**2``, so ``individual_cost(..., n_values=1)`` still bounds the
    cost of each coordinate.
    """
    contributions = np.asarray(contributions, dtype=float)
    k = contributions.size
    contrib = np.tile(contributions, n)
    costs = individual_cost(contrib, S, NM, 1)
    filt = filter_cls(n * k, BUDGET)
    out = np.empty((n, T))
    for t in range(T):
        admitted = filt.admit(costs)
        if masks is not None:
            masks.append(admitted.reshape(n, k).copy())
        sums = np.where(admitted, contrib, 0.0).reshape(n, k).sum(axis=1)
        out[:, t] = gaussian_mechanism(sums, sensitivity=S, noise_multiplier=NM,
                                       random_state=rng)
    return out


def mechanism_for(filter_cls):
    def mechanism(data, n, rng):
        return filtered_releases(filter_cls, data, n, rng)

    return mechanism


def sum_all(outputs):
    return outputs.sum(axis=1)


def sum_first_two(outputs):
    return outputs[:, :2].sum(axis=1)


def test_audit_setup():
    assert BUDGET == pytest.approx(RHO, rel=1e-11)
    assert 2.5 < CLAIM < RHO + 2 * math.sqrt(RHO * math.log(1 / DELTA))
    # Who takes part in which release, with the correct filter and the broken one.
    masks = []
    out = filtered_releases(IndividualFilter, D1, 3, np.random.default_rng(0), masks)
    assert out.shape == (3, T)
    masks = np.array(masks)  # (T, runs, records)
    assert np.all(masks[:, :, 0])  # contribution 0: cost 0, always in
    assert np.all(masks[:, :, 1])  # 0.3: 0.09 * RHO / 2 per release, all 8 fit
    assert masks[:, 0, 2].tolist() == [True] * 5 + [False] * 3  # 0.6: 5 releases fit
    assert masks[:, 0, 3].tolist() == [True] * 2 + [False] * 6  # target: exactly 2
    assert np.all(masks == masks[:, :1, :])  # the same in every run
    broken = []
    filtered_releases(NeverStoppingFilter, D1, 3, np.random.default_rng(0), broken)
    assert np.all(np.array(broken))


@pytest.mark.parametrize("statistic", [sum_all, sum_first_two])
def test_audit_correct_filter_within_claim(record_audit, statistic):
    res = audit_epsilon(mechanism_for(IndividualFilter), D0, D1, statistic=statistic,
                        random_state=2024, **AUDIT)
    record_audit(res, CLAIM).assert_within(CLAIM)
    assert res.check(CLAIM)
    # The audit sees the target (it is not vacuous) ...
    assert res.epsilon_lower_bound > 1.0
    # ... and with the optimal statistic gets most of the way to Gaussian DP's true
    # epsilon for shift sqrt(2 rho) = 2 (about 4.57 at delta = 0.05, below the claim).
    if statistic is sum_first_two:
        assert res.epsilon_lower_bound > 2.5


def test_audit_never_stopping_filter_is_flagged(record_audit):
    res = audit_epsilon(mechanism_for(NeverStoppingFilter), D0, D1, statistic=sum_all,
                        random_state=2025, **AUDIT)
    record_audit(res, CLAIM)
    assert not res.check(CLAIM), str(res)
    with pytest.raises(AssertionError, match="privacy claim refuted"):
        res.assert_within(CLAIM)
