"""Black-box privacy audits of every mechanism in ``dptrees.mechanisms``.

Each test runs a mechanism through its public API on neighbouring inputs (add/remove one
record, or a query shifted by exactly its stated sensitivity) and asks
``dptrees.audit.audit_epsilon`` for a statistically valid lower bound ``eps_lb`` on the
epsilon the mechanism can satisfy. A correct mechanism must stay within its claim
(``assert_within``); the positive controls at the end misuse the *same* API (an
understated sensitivity, a too-large epsilon, a false ``monotonic=True``) and MUST be
flagged, which shows the audits below have the power to catch such bugs.

How every test can fail
-----------------------
* ``assert_within(claim)`` fails if a mechanism leaks more than it claims: a noise scale
  that is too small, a sensitivity that forgets the grid rounding by a large factor, a
  selection rule missing its factor 2, an output that reveals its input's sub-grid
  offset.
* The neighbouring pairs are chosen to be (near) worst cases, so the true epsilon of the
  pair is close to the claim; ``assert eps_lb > floor`` then checks that the audit has not
  lost its teeth (e.g. the pair stopped being a worst case or the mechanism started to
  add far more noise than documented). The floors are well below the values these seeds
  give (see the comments) but far above what a useless audit returns (0).
* What auditing cannot see: the grid rounding is counted in the sensitivity at a cost of
  about 0.1 % of epsilon, far below the resolution of ~1e5 samples. The rounding
  accounting is therefore checked exactly (the unit shifts asserted next to the audits),
  and the audits check that nothing grosser goes wrong.

All audits are seeded, hence deterministic, and run at ``alpha = 1e-3`` because the
mechanisms are calibrated tightly (a correct, tight mechanism is wrongly refuted with
probability up to ``alpha / 2``; see tests/test_audit.py). The whole file runs in a few
seconds.
"""

import math
from fractions import Fraction

import numpy as np
import pytest

from dptrees import mechanisms as M
from dptrees.accounting import zcdp_to_approx_dp
from dptrees.audit import audit_epsilon

ALPHA = 1e-3
# Batched (fast) mechanisms: 20k calibration + 100k test runs per input.
QUICK = dict(n_calibration=20_000, n_test=100_000, alpha=ALPHA)
# Mechanisms that can only be called once per output (~20 us per call).
SCALAR = dict(n_calibration=5_000, n_test=25_000, alpha=ALPHA, batch=False)

# Vector calls of this many values give BLOCK independent outputs at once (see in_blocks).
BLOCK = 1024

DELTA = 1e-5  # delta for the zCDP mechanisms, audited at that same delta


def in_blocks(release, block=BLOCK):
    """Batched audit mechanism ``(x, n, rng) -> n outputs`` of a grid mechanism.

    ``laplace_mechanism`` and ``gaussian_mechanism`` choose their grid from the number of
    values per call, so the audited object must have one fixed call size: every call
    releases exactly ``block`` copies of ``x`` and the outputs are used as independent
    samples of ONE coordinate's release. That release is what is audited: its grid is
    ``*_grid(sensitivity, ..., block)`` and its noise that of the very same call. The
    claim for a vector (L1/L2 sensitivity of the whole array) implies the claim for one
    coordinate moving by ``sensitivity`` with the others fixed, and a coordinate's noise
    does not depend on the other coordinates' values, so each coordinate is an
    ``epsilon``-DP release of ``x``; the noise is independent across coordinates, so the
    samples are i.i.d. (The joint release of the block is NOT audited: shifting all
    ``block`` copies is not a neighbouring pair for the vector claim.)
    """

    def mechanism(x, n, rng):
        calls = -(-n // block)
        out = np.concatenate([release(np.full(block, x), rng) for _ in range(calls)])
        return out[:n]

    return mechanism


# --------------------------------------------------------------------------------------
# Integer samplers and counts
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("epsilon, floor", [(0.5, 0.35), (1.0, 0.8)])
def test_discrete_laplace_sampler_shift_by_one(record_audit, epsilon, floor):
    # Integer query of sensitivity 1 plus discrete Laplace of scale 1/eps: eps-DP, and
    # tight (every tail event has likelihood ratio exactly exp(eps)).
    def mechanism(x, n, rng):
        return x + M.discrete_laplace(1.0 / epsilon, size=n, random_state=rng)

    res = audit_epsilon(mechanism, 0, 1, random_state=101, **QUICK)
    record_audit(res, epsilon).assert_within(epsilon)
    assert res.epsilon_lower_bound > floor


def test_discrete_gaussian_sampler_within_converted_zcdp(record_audit):
    # The discrete Gaussian is NOT pure DP (its privacy loss is unbounded): adding it to an
    # integer query of sensitivity 1 is rho = 1 / (2 sigma2)-zCDP, claimed here as the
    # (eps, delta) of the zCDP -> approximate DP conversion and audited at that delta.
    sigma2 = 16.0
    claim = zcdp_to_approx_dp(1.0 / (2.0 * sigma2), DELTA)  # ~1.01

    def mechanism(x, n, rng):
        return x + M.discrete_gaussian(sigma2, size=n, random_state=rng)

    res = audit_epsilon(mechanism, 0, 1, delta=DELTA, random_state=102, **QUICK)
    record_audit(res, claim).assert_within(claim)
    assert res.delta == DELTA
    assert res.epsilon_lower_bound > 0.2


def noisy_count_mechanism(epsilon):
    """``noisy_count`` batched: an array of n identical counts gets n independent draws.

    (A histogram of disjoint counts has L1 sensitivity 1, so each cell is an
    ``epsilon``-DP count; the noise does not depend on the array's length.)
    """

    def mechanism(count, n, rng):
        return M.noisy_count(np.full(n, count), epsilon=epsilon, random_state=rng)

    return mechanism


def test_noisy_count_n_vs_n_plus_one(record_audit):
    res = audit_epsilon(noisy_count_mechanism(1.0), 10, 11, random_state=103, **QUICK)
    record_audit(res, 1.0).assert_within(1.0)
    assert res.epsilon_lower_bound > 0.8


def test_noisy_sum_add_record_at_upper_bound(record_audit):
    # D1 = D0 plus one record at the upper bound: the fixed-point sum moves by exactly the
    # sensitivity, the worst case. noisy_sum releases one value per call: not batched.
    bounds, epsilon = (0.0, 1.0), 1.0
    d0 = np.random.default_rng(0).uniform(*bounds, size=50)
    d1 = np.append(d0, bounds[1])
    scale = M.fixed_point_scale(bounds, 2**31)  # noisy_sum's default n_max
    s0, _ = M.fixed_point_sum(d0, bounds=bounds, scale=scale)
    s1, _ = M.fixed_point_sum(d1, bounds=bounds, scale=scale)
    assert s1 - s0 == math.ceil(max(abs(b) for b in bounds) * scale)  # = the sensitivity

    def mechanism(data, rng):
        return M.noisy_sum(data, bounds=bounds, epsilon=epsilon, random_state=rng)

    res = audit_epsilon(mechanism, d0, d1, random_state=104, **SCALAR)
    record_audit(res, epsilon).assert_within(epsilon)
    assert res.epsilon_lower_bound > 0.6


# --------------------------------------------------------------------------------------
# Real values on a power-of-two grid
# --------------------------------------------------------------------------------------

LAPLACE_SENSITIVITY = 2.5  # e.g. a sum of values clipped to [0, 2.5]
LAPLACE_X0, LAPLACE_X1 = 10.0, 12.5  # x1 = x0 + sensitivity: the worst-case shift


def laplace_blocks(sensitivity, epsilon):
    return in_blocks(lambda v, rng: M.laplace_mechanism(
        v, sensitivity=sensitivity, epsilon=epsilon, random_state=rng))


@pytest.mark.parametrize("epsilon, floor", [(0.5, 0.35), (1.0, 0.8)])
def test_laplace_mechanism_worst_case_shift(record_audit, epsilon, floor):
    grid, units = M.laplace_grid(LAPLACE_SENSITIVITY, BLOCK)
    shift = np.rint(LAPLACE_X1 / grid) - np.rint(LAPLACE_X0 / grid)
    assert shift == LAPLACE_SENSITIVITY / grid <= units  # full sensitivity, in grid units

    res = audit_epsilon(laplace_blocks(LAPLACE_SENSITIVITY, epsilon), LAPLACE_X0, LAPLACE_X1,
                        random_state=105, **QUICK)
    record_audit(res, epsilon).assert_within(epsilon)
    assert res.epsilon_lower_bound > floor


# Sub-grid offsets. With a power-of-two sensitivity the grid step divides it, so x and
# x + sensitivity round the same way. This sensitivity is 1024.375 grid steps of the
# scalar grid (2**-10): x = 0.3 is 307.2 steps (rounds DOWN to 307) and x + sensitivity
# is 1331.575 steps (rounds UP to 1332), so the rounded inputs are 1025 steps apart - more
# than sensitivity / grid. Only the rounding allowance in laplace_grid (+1 step per value,
# noise scale 1025.375 steps) keeps the mechanism eps-DP here; the exact assertions check
# that accounting (without it the true epsilon would be 1025 / 1024.375 = 1.0006, far below
# what an audit resolves), the audit checks that nothing grosser leaks.
SUBGRID_SENSITIVITY = 1.0 + 3 * 2.0**-13
SUBGRID_X0 = 0.3


def largest_neighbour(x0, sensitivity):
    """The largest double ``x1`` with ``x1 - x0 <= sensitivity`` exactly (in the reals).

    ``0.3 + sensitivity`` rounds up here, which would overstep the sensitivity by 2**-54.
    """
    x1 = x0 + sensitivity
    while Fraction(x1) - Fraction(x0) > Fraction(sensitivity):
        x1 = float(np.nextafter(x1, -np.inf))
    return x1


SUBGRID_X1 = largest_neighbour(SUBGRID_X0, SUBGRID_SENSITIVITY)


def test_laplace_mechanism_sub_grid_offsets_rounding_opposite_ways(record_audit):
    grid, units = M.laplace_grid(SUBGRID_SENSITIVITY, 1)
    a, b = SUBGRID_X0 / grid, SUBGRID_X1 / grid
    assert grid == 2.0**-10
    assert np.rint(a) < a and np.rint(b) > b  # rounding goes opposite ways
    shift = np.rint(b) - np.rint(a)
    assert SUBGRID_SENSITIVITY / grid < shift == math.floor(units)  # the allowance is used up
    gap = Fraction(SUBGRID_X1) - Fraction(SUBGRID_X0) - Fraction(SUBGRID_SENSITIVITY)
    assert -(2.0**-50) < gap <= 0  # a valid neighbour, as far apart as doubles allow

    # The scalar call, exactly as a user makes it (one value per call, grid 2**-10).
    def mechanism(x, rng):
        return M.laplace_mechanism(x, sensitivity=SUBGRID_SENSITIVITY, epsilon=1.0,
                                   random_state=rng)

    res = audit_epsilon(mechanism, SUBGRID_X0, SUBGRID_X1, random_state=106, **SCALAR)
    record_audit(res, 1.0).assert_within(1.0)
    assert res.epsilon_lower_bound > 0.6


def grid_residue(grid):
    """Statistic: an output's offset from the grid, in grid units, in [0, 1)."""

    def statistic(y):
        units = np.asarray(y, dtype=np.float64) / grid  # exact: grid is a power of two
        return units - np.floor(units)

    return statistic


def unrounded_grid_laplace(x, n, rng):
    """BROKEN on purpose: ``x + grid * Z`` without rounding ``x`` to the grid first.

    Same grid and noise as the scalar ``laplace_mechanism`` call, but the output keeps
    ``x``'s sub-grid offset - the grid analogue of Mironov's floating-point leak.
    """
    grid, units = M.laplace_grid(SUBGRID_SENSITIVITY, 1)
    return x + grid * M.discrete_laplace(units, size=n, random_state=rng)


@pytest.mark.parametrize("n_values", [1, 2, 5, BLOCK])
def test_laplace_outputs_lie_on_one_data_independent_grid(n_values):
    # Whatever the input (on or off the grid, neighbours at different sub-grid offsets,
    # large or negative), every output is an exact multiple of the grid step of that call:
    # the set of residues is {0}, the same for all inputs, so the float representation
    # of an output cannot tell inputs apart (unlike Mironov's naive sampler).
    grid, _ = M.laplace_grid(SUBGRID_SENSITIVITY, n_values)
    rng = np.random.default_rng(107)
    inputs = [SUBGRID_X0, SUBGRID_X1, -1.0 / 3.0, 12345.678, 0.0, grid / 2.0 + 1e-3]
    residues = set()
    for x in inputs:
        for _ in range(max(2_000 // n_values, 20)):
            values = x if n_values == 1 else np.full(n_values, x)
            y = np.atleast_1d(M.laplace_mechanism(values, sensitivity=SUBGRID_SENSITIVITY,
                                                  epsilon=1.0, random_state=rng))
            assert y.shape == (n_values,)
            residues.update(grid_residue(grid)(y).tolist())
    assert residues == {0.0}


def test_laplace_grid_residue_audit_sees_nothing_but_catches_unrounded_sampler(
        record_audit):
    # Audit on the residue statistic between neighbours at different sub-grid offsets.
    # The real mechanism: both inputs always give residue 0, so no event separates them.
    stat = grid_residue(M.laplace_grid(SUBGRID_SENSITIVITY, 1)[0])

    def mechanism(x, rng):
        return M.laplace_mechanism(x, sensitivity=SUBGRID_SENSITIVITY, epsilon=1.0,
                                   random_state=rng)

    res = audit_epsilon(mechanism, SUBGRID_X0, SUBGRID_X1, statistic=stat, random_state=108,
                        n_calibration=2_000, n_test=5_000, alpha=ALPHA, batch=False)
    record_audit(res, 1.0)
    assert res.epsilon_lower_bound == 0.0
    # Control: the same audit refutes the unrounded sampler - residues ~0.2 under x0 and
    # ~0.575 under x1 - as strongly as the sample size allows (an infinite privacy loss).
    bad = audit_epsilon(unrounded_grid_laplace, SUBGRID_X0, SUBGRID_X1, statistic=stat,
                        random_state=109, **QUICK)
    assert bad.epsilon_lower_bound > 8.0
    with pytest.raises(AssertionError, match="privacy claim refuted"):
        bad.assert_within(1.0)


GAUSS_SENSITIVITY = 1.0
GAUSS_NOISE_MULTIPLIER = 4.0  # rho = 1/32, eps ~ 1.01 at delta = 1e-5
GAUSS_X0, GAUSS_X1 = 0.0, 1.0


def gaussian_blocks(sensitivity, noise_multiplier):
    return in_blocks(lambda v, rng: M.gaussian_mechanism(
        v, sensitivity=sensitivity, noise_multiplier=noise_multiplier, random_state=rng))


def test_gaussian_mechanism_within_converted_zcdp(record_audit):
    rho = 1.0 / (2.0 * GAUSS_NOISE_MULTIPLIER**2)
    claim = zcdp_to_approx_dp(rho, DELTA)
    grid, _ = M.gaussian_grid(GAUSS_SENSITIVITY, GAUSS_NOISE_MULTIPLIER, BLOCK)
    shift = np.rint(GAUSS_X1 / grid) - np.rint(GAUSS_X0 / grid)
    assert shift == GAUSS_SENSITIVITY / grid  # full sensitivity, in grid units

    res = audit_epsilon(gaussian_blocks(GAUSS_SENSITIVITY, GAUSS_NOISE_MULTIPLIER),
                        GAUSS_X0, GAUSS_X1, delta=DELTA, random_state=110, **QUICK)
    record_audit(res, claim).assert_within(claim)
    assert res.delta == DELTA
    assert res.epsilon_lower_bound > 0.2


def test_gaussian_outputs_lie_on_the_grid():
    grid, _ = M.gaussian_grid(GAUSS_SENSITIVITY, GAUSS_NOISE_MULTIPLIER, 1)
    rng = np.random.default_rng(111)
    y = [M.gaussian_mechanism(x, sensitivity=GAUSS_SENSITIVITY,
                              noise_multiplier=GAUSS_NOISE_MULTIPLIER, random_state=rng)
         for x in (0.3, 1.3, -1.0 / 3.0) for _ in range(500)]
    assert set(grid_residue(grid)(y).tolist()) == {0.0}


# --------------------------------------------------------------------------------------
# Private selection
# --------------------------------------------------------------------------------------
#
# Records are category labels 0..3. D0 has counts [4, 5, 5, 5]; D1 adds one record of
# category 0 (counts [5, 5, 5, 5]). Two utilities, both of sensitivity 1:
#   counting:      u_c = count(c)                       (monotone: D0 -> D1 never lowers one)
#   non-monotone:  u_c = count(c) - count(not c)        (u_0 goes up by 1, the others down)
# The neighbouring pair gives the low-scoring candidate 0 a vote, where a selection rule is
# most sensitive. Exact true epsilons of these pairs (claimed 1, computed from the
# selection probabilities; quantisation of utilities lowers them by ~1e-6):
#                                   exponential   permute-and-flip
#   counting, monotonic=False          0.40           0.50
#   counting, monotonic=True           0.83           1.00   (tight)
#   non-monotone, monotonic=False      0.83           1.00   (tight)
# and for the broken claims of the positive controls below
#   counting, sensitivity 1/4          1.76           2.00
#   non-monotone, sensitivity 1/2      1.76           2.00
#   non-monotone, monotonic=True       1.76           2.00

SEL_D0 = np.repeat(np.arange(4), [4, 5, 5, 5])
SEL_D1 = np.append(SEL_D0, 0)
SELECTORS = {"exponential": M.exponential_mechanism, "permute_and_flip": M.permute_and_flip}


def counting_utility(labels):
    return np.bincount(labels, minlength=4).astype(float)


def non_monotone_utility(labels):
    counts = np.bincount(labels, minlength=4)
    return (2 * counts - counts.sum()).astype(float)


def selection_mechanism(method, utility, *, sensitivity, epsilon=1.0, monotonic=False):
    select = SELECTORS[method]

    def mechanism(labels, n, rng):
        return select(utility(labels), sensitivity=sensitivity, epsilon=epsilon,
                      monotonic=monotonic, size=n, random_state=rng)

    return mechanism


def test_selection_neighbours_move_each_utility_by_at_most_one():
    for utility in (counting_utility, non_monotone_utility):
        assert np.abs(utility(SEL_D1) - utility(SEL_D0)).max() == 1.0
    assert (counting_utility(SEL_D1) >= counting_utility(SEL_D0)).all()


@pytest.mark.parametrize("method", sorted(SELECTORS))
@pytest.mark.parametrize("monotonic, floor", [(False, 0.25), (True, 0.65)])
def test_selection_counting_utilities(record_audit, method, monotonic, floor):
    mech = selection_mechanism(method, counting_utility, sensitivity=1.0, monotonic=monotonic)
    res = audit_epsilon(mech, SEL_D0, SEL_D1, random_state=112, **QUICK)
    record_audit(res, 1.0).assert_within(1.0)
    assert res.event is not None and res.event.startswith("stat ")
    assert res.epsilon_lower_bound > floor


@pytest.mark.parametrize("method", sorted(SELECTORS))
def test_selection_non_monotone_utilities(record_audit, method):
    # The factor 2 of monotonic=False is what keeps this pair within epsilon.
    mech = selection_mechanism(method, non_monotone_utility, sensitivity=1.0)
    res = audit_epsilon(mech, SEL_D0, SEL_D1, random_state=113, **QUICK)
    record_audit(res, 1.0).assert_within(1.0)
    assert res.epsilon_lower_bound > 0.65


# --------------------------------------------------------------------------------------
# Positive controls: misuse of our own API MUST be flagged
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("factor, floor", [(2, 1.4), (3, 2.0)])
def test_control_laplace_understated_sensitivity_is_flagged(record_audit, factor, floor):
    # Stated sensitivity 2.5 / factor for a query that moves by 2.5: true epsilon = factor.
    mech = laplace_blocks(LAPLACE_SENSITIVITY / factor, 1.0)
    res = audit_epsilon(mech, LAPLACE_X0, LAPLACE_X1, random_state=114, **QUICK)
    record_audit(res, 1.0)
    assert res.epsilon_lower_bound > floor
    with pytest.raises(AssertionError, match="privacy claim refuted"):
        res.assert_within(1.0)


def test_control_noisy_count_with_epsilon_three_times_the_claim_is_flagged(record_audit):
    res = audit_epsilon(noisy_count_mechanism(3.0), 10, 11, random_state=115, **QUICK)
    record_audit(res, 1.0)
    assert res.epsilon_lower_bound > 2.0
    with pytest.raises(AssertionError, match="privacy claim refuted"):
        res.assert_within(1.0)


@pytest.mark.parametrize("method", sorted(SELECTORS))
@pytest.mark.parametrize(
    "utility, sensitivity, monotonic",
    [
        # 4x understated: with counting utilities 2x would not be a violation (they are
        # monotone, and the factor 2 of monotonic=False then covers a halved sensitivity).
        (counting_utility, 0.25, False),
        # non-monotone utilities: already a halved sensitivity breaks the claim
        (non_monotone_utility, 0.5, False),
        # ... and so does claiming monotonic=True for them (drops the factor 2)
        (non_monotone_utility, 1.0, True),
    ],
    ids=["counting-sens/4", "non_monotone-sens/2", "non_monotone-false_monotonic"],
)
def test_control_selection_broken_claim_is_flagged(record_audit, method, utility,
                                                   sensitivity, monotonic):
    mech = selection_mechanism(method, utility, sensitivity=sensitivity, monotonic=monotonic)
    res = audit_epsilon(mech, SEL_D0, SEL_D1, random_state=116, **QUICK)
    record_audit(res, 1.0)
    assert res.epsilon_lower_bound > 1.3  # true epsilon of the pair: 1.76 or 2.00
    with pytest.raises(AssertionError, match="privacy claim refuted"):
        res.assert_within(1.0)


def test_control_gaussian_understated_sensitivity_is_flagged(record_audit):
    # Sensitivity stated 4x too small: the noise is 4x too small for the claimed (eps, delta).
    claim = zcdp_to_approx_dp(1.0 / (2.0 * GAUSS_NOISE_MULTIPLIER**2), DELTA)
    mech = gaussian_blocks(GAUSS_SENSITIVITY / 4.0, GAUSS_NOISE_MULTIPLIER)
    res = audit_epsilon(mech, GAUSS_X0, GAUSS_X1, delta=DELTA, random_state=117, **QUICK)
    record_audit(res, claim)
    assert res.epsilon_lower_bound > claim + 0.5
    with pytest.raises(AssertionError, match="privacy claim refuted"):
        res.assert_within(claim)
