"""Exact-distribution tests of every sampler and mechanism in dptrees.mechanisms.

Each test draws a large seeded sample and compares it with the true pmf by a chi-square
goodness-of-fit test (tails pooled so every expected count is at least 20). With fixed
seeds the outcome is deterministic; the threshold p > 1e-4 only ever fails if a sampler's
distribution is wrong (the power of these tests catches a scale error of a few percent).
"""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dptrees import mechanisms as M
from dptrees._core import _rng
from dptrees.exceptions import DiscretisationError

N = 200_000
P_MIN = 1e-4


def chi_square_pvalue(samples, support, pmf):
    """Chi-square p-value of integer ``samples`` against ``pmf`` on ``support``.

    Values outside ``support`` and cells with expected count below 20 are pooled at the
    two ends, so the test is valid and sees tail errors too.
    """
    samples = np.asarray(samples, dtype=np.int64)
    support = np.asarray(support)
    pmf = np.asarray(pmf, dtype=float)
    pmf = pmf / pmf.sum()
    inside = np.clip(samples, support[0], support[-1]) - support[0]
    counts = np.bincount(inside, minlength=support.size).astype(float)
    expected = pmf * samples.size
    # pool small cells into their neighbours, from both ends inwards
    obs, exp = list(counts), list(expected)
    while len(exp) > 2 and exp[0] < 20:
        e, o = exp.pop(0), obs.pop(0)
        exp[0] += e
        obs[0] += o
    while len(exp) > 2 and exp[-1] < 20:
        e, o = exp.pop(), obs.pop()
        exp[-1] += e
        obs[-1] += o
    obs, exp = np.array(obs), np.array(exp)
    return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


def binned_chi_square_pvalue(samples, cdf, edges):
    """Chi-square p-value of integer ``samples`` in the cells ``(edges[i], edges[i+1]]``.

    ``cdf(x)`` is the exact ``P[X <= x]`` at integers; the outer cells are open-ended.
    """
    samples = np.asarray(samples)
    edges = np.asarray(edges)
    probs = np.diff(np.concatenate([[0.0], cdf(edges), [1.0]]))
    counts = np.bincount(np.searchsorted(edges, samples, side="left"), minlength=probs.size)
    return stats.chisquare(counts, probs * samples.size).pvalue


def discrete_laplace_cdf(x, scale):
    """Exact ``P[X <= x]`` of the discrete Laplace distribution at integer ``x``."""
    x = np.asarray(x, dtype=float)
    p = math.exp(-1.0 / scale)
    return np.where(x < 0, p ** (-x) / (1 + p), 1 - p ** (x + 1) / (1 + p))


def discrete_laplace_pmf(support, scale):
    p = math.exp(-1.0 / scale)
    return (1 - p) / (1 + p) * p ** np.abs(support)


def discrete_gaussian_pmf(support, sigma2):
    return np.exp(-np.asarray(support, dtype=float) ** 2 / (2 * sigma2))


def full_support(scale_like):
    width = int(40 * scale_like) + 10
    return np.arange(-width, width + 1)


# --------------------------------------------------------------------------------------
# Samplers

@pytest.mark.parametrize("n", [1, 2, 3, 7, 10, 2**31 + 11])
def test_uniform_below_is_uniform(n):
    out = np.empty(N, dtype=np.uint64)
    _rng.uniform_below_array(np.random.default_rng(n), n, out)
    assert out.max() < n
    if n <= 10:
        support = np.arange(n)
        assert chi_square_pvalue(out.astype(np.int64), support, np.ones(n)) > P_MIN or n == 1
    else:
        # large n: the top and bottom halves and the residues mod 3 are balanced
        halves = np.bincount((out >= n // 2).astype(int), minlength=2)
        assert stats.chisquare(halves, [N * (n // 2) / n, N * (n - n // 2) / n]).pvalue > P_MIN
        residues = np.bincount((out % 3).astype(int), minlength=3)
        assert stats.chisquare(residues).pvalue > P_MIN


@pytest.mark.parametrize("gamma", [0.0, 0.1, 0.5, 1.0, 2.5, 7.25])
def test_bernoulli_exp_has_the_right_mean(gamma):
    draws = M.bernoulli_exp(gamma, size=N, random_state=int(gamma * 100))
    assert draws.dtype == bool
    test = stats.binomtest(int(draws.sum()), N, math.exp(-gamma))
    assert test.pvalue > P_MIN


@pytest.mark.parametrize("scale", [0.3, 1.0, 2.5, 37.0, 1000.0 / 3.0])
def test_discrete_laplace_matches_pmf(scale):
    draws = M.discrete_laplace(scale, size=N, random_state=7)
    support = full_support(scale)
    assert chi_square_pvalue(draws, support, discrete_laplace_pmf(support, scale)) > P_MIN


def test_discrete_laplace_detects_a_wrong_scale():
    """The chi-square test has the power to see a 3 % scale error (a sanity check)."""
    draws = M.discrete_laplace(2.5 * 1.03, size=N, random_state=7)
    support = full_support(2.5)
    assert chi_square_pvalue(draws, support, discrete_laplace_pmf(support, 2.5)) < P_MIN


@pytest.mark.parametrize("sigma2", [0.5, 1.0, 2.25, 10.0, 1000.0, 2.0**40 / 2**33])
def test_discrete_gaussian_matches_pmf(sigma2):
    draws = M.discrete_gaussian(sigma2, size=N, random_state=11)
    support = full_support(math.sqrt(sigma2) / 4)
    assert chi_square_pvalue(draws, support, discrete_gaussian_pmf(support, sigma2)) > P_MIN


def test_discrete_gaussian_large_variance_moments():
    sigma2 = 2.0**40
    draws = M.discrete_gaussian(sigma2, size=N, random_state=3).astype(float)
    sd = math.sqrt(sigma2)
    assert abs(draws.mean()) < 5 * sd / math.sqrt(N)
    assert abs(draws.var() / sigma2 - 1) < 5 * math.sqrt(2 / N)
    assert stats.kstest(draws / sd, "norm").pvalue > P_MIN


def test_samplers_are_reproducible_and_accept_generators():
    a = M.discrete_laplace(3.0, size=100, random_state=42)
    b = M.discrete_laplace(3.0, size=100, random_state=np.random.default_rng(42))
    c = M.discrete_laplace(3.0, size=100, random_state=np.random.SeedSequence(42))
    assert np.array_equal(a, b) and np.array_equal(a, c)
    assert not np.array_equal(a, M.discrete_laplace(3.0, size=100, random_state=43))
    assert isinstance(M.discrete_laplace(1.0, random_state=0), int)
    assert M.discrete_gaussian(2.0, size=(3, 4), random_state=0).shape == (3, 4)


# --------------------------------------------------------------------------------------
# Grid mechanisms

def test_laplace_mechanism_noise_is_exact_discrete_laplace_on_the_grid():
    sensitivity, epsilon = 0.75, 0.5
    x = np.full(N, 3.14159)
    out = M.laplace_mechanism(x, sensitivity=sensitivity, epsilon=epsilon, random_state=5)
    grid, sensitivity_units = M.laplace_grid(sensitivity, N)
    scale_units = sensitivity_units / epsilon
    units = out / grid
    assert np.array_equal(units, np.rint(units)), "outputs must be grid points"
    noise = (units - np.rint(3.14159 / grid)).astype(np.int64)
    edges = np.rint(np.linspace(-6, 6, 61) * scale_units)
    cdf = lambda x: discrete_laplace_cdf(x, scale_units)  # noqa: E731
    assert binned_chi_square_pvalue(noise, cdf, edges) > P_MIN
    # a 2 % larger scale is visibly different: the test has power
    cdf_wrong = lambda x: discrete_laplace_cdf(x, scale_units * 1.02)  # noqa: E731
    assert binned_chi_square_pvalue(noise, cdf_wrong, edges) < P_MIN
    # the noise in value units is sensitivity / epsilon, inflated by the rounding only
    assert 1.0 <= scale_units * grid / (sensitivity / epsilon) < 1.0 + 2 * N / 2**10 / N


def test_laplace_mechanism_scalar_and_shape():
    assert isinstance(M.laplace_mechanism(1.0, sensitivity=1, epsilon=1, random_state=0), float)
    out = M.laplace_mechanism(np.zeros((2, 3)), sensitivity=1, epsilon=1, random_state=0)
    assert out.shape == (2, 3)


def test_grid_outputs_do_not_depend_on_sub_grid_digits():
    """Inputs that round to the same grid point give identical output distributions."""
    grid, _ = M.laplace_grid(1.0, 1000)
    a = M.laplace_mechanism(np.full(1000, 1.0), sensitivity=1, epsilon=1, random_state=9)
    b = M.laplace_mechanism(np.full(1000, 1.0 + grid / 3), sensitivity=1, epsilon=1,
                            random_state=9)
    assert np.array_equal(a, b)


def test_gaussian_mechanism_noise_is_exact_discrete_gaussian_on_the_grid():
    sensitivity, multiplier, size = 2.0, 1.5, 50_000
    out = M.gaussian_mechanism(np.zeros(size), sensitivity=sensitivity,
                               noise_multiplier=multiplier, random_state=4)
    grid, sigma2_units = M.gaussian_grid(sensitivity, multiplier, size)
    units = out / grid
    assert np.array_equal(units, np.rint(units))
    sd = math.sqrt(sigma2_units)
    assert stats.kstest(units / sd, "norm").pvalue > P_MIN
    # noise standard deviation ~ multiplier * sensitivity (rounding inflates it a little)
    assert 1.0 <= sd * grid / (multiplier * sensitivity) < 1.01


@pytest.mark.parametrize("multiplier, n_values", [(1e3, 1), (1e5, 100), (1e6, 10)])
def test_gaussian_grid_keeps_the_variance_in_range_for_huge_noise(multiplier, n_values):
    grid, sigma2_units = M.gaussian_grid(1.0, multiplier, n_values)
    assert sigma2_units <= 2**52
    # the L2 sensitivity in grid units, rounding included, is covered by the noise
    assert math.sqrt(sigma2_units) >= multiplier * (1.0 / grid + math.sqrt(n_values))


def test_gaussian_grid_refuses_noise_beyond_the_sampler():
    with pytest.raises(ValueError, match="smaller groups"):
        M.gaussian_grid(1.0, 1e6, 10_000)


def test_values_too_large_for_the_grid_are_refused():
    with pytest.raises(DiscretisationError, match="too large"):
        M.laplace_mechanism([1e300], sensitivity=1e-3, epsilon=1)


# --------------------------------------------------------------------------------------
# Counts and sums

def test_noisy_count_adds_discrete_laplace_of_scale_one_over_epsilon():
    counts = np.full(N, 17)
    released = M.noisy_count(counts, epsilon=0.8, random_state=2)
    support = full_support(1 / 0.8)
    assert chi_square_pvalue(released - 17, support, discrete_laplace_pmf(support, 1 / 0.8)) > P_MIN
    assert isinstance(M.noisy_count(5, epsilon=1.0, random_state=0), int)


def test_fixed_point_sum_moves_by_exactly_one_record():
    """The Casacuberta et al. failure: float sums of clipped values move by more than the
    clip bound. Fixed-point sums move by exactly the record's own rounded value."""
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.uniform(-1, 1, 10_000), [1e-17, -1e-17]])
    scale = M.fixed_point_scale((-1, 1), values.size)
    full, _ = M.fixed_point_sum(values, bounds=(-1, 1), scale=scale)
    for i in range(0, values.size, 997):
        without, _ = M.fixed_point_sum(np.delete(values, i), bounds=(-1, 1), scale=scale)
        assert full - without == int(np.rint(np.clip(values[i], -1, 1) * scale))
        assert abs(full - without) <= scale


def test_fixed_point_sum_clips_to_the_bounds():
    total, scale = M.fixed_point_sum([5.0, -5.0, 0.5], bounds=(0.0, 1.0))
    assert total / scale == pytest.approx(1.5)


def test_noisy_sum_is_centred_on_the_clipped_sum_with_the_right_spread():
    values = np.linspace(0, 2, 101)  # clipped at 1
    truth = np.clip(values, 0, 1).sum()
    draws = np.array([M.noisy_sum(values, bounds=(0, 1), epsilon=2.0, random_state=s)
                      for s in range(2000)])
    # Laplace noise of scale 1/2: mean 0, variance 2 * 0.25
    assert abs(draws.mean() - truth) < 5 * math.sqrt(0.5 / 2000)
    assert draws.var() == pytest.approx(0.5, rel=0.15)


# --------------------------------------------------------------------------------------
# Selection

def permute_and_flip_pmf(utilities, epsilon, sensitivity):
    """Exact permute-and-flip probabilities by enumerating all orders."""
    u = np.asarray(utilities, dtype=float)
    p = np.exp(epsilon * (u - u.max()) / (2 * sensitivity))
    probs = np.zeros(len(u))
    orders = list(itertools.permutations(range(len(u))))
    for order in orders:
        stay = 1.0
        for i in order:
            probs[i] += stay * p[i] / len(orders)
            stay *= 1 - p[i]
    return probs


UTILITIES = [0.0, 1.0, 2.5, 3.0, -1.0]


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_permute_and_flip_matches_its_exact_distribution(epsilon):
    chosen = M.permute_and_flip(UTILITIES, sensitivity=1.0, epsilon=epsilon, size=N,
                                random_state=1)
    pmf = permute_and_flip_pmf(UTILITIES, epsilon, 1.0)
    assert chi_square_pvalue(chosen, np.arange(len(UTILITIES)), pmf) > P_MIN


@pytest.mark.parametrize("epsilon, monotonic", [(0.5, False), (2.0, False), (2.0, True)])
def test_exponential_mechanism_matches_softmax(epsilon, monotonic):
    chosen = M.exponential_mechanism(UTILITIES, sensitivity=1.0, epsilon=epsilon,
                                     monotonic=monotonic, size=N, random_state=2)
    factor = 1.0 if monotonic else 2.0
    pmf = np.exp(epsilon * np.array(UTILITIES) / factor)
    assert chi_square_pvalue(chosen, np.arange(len(UTILITIES)), pmf) > P_MIN


def test_selection_scales_with_the_sensitivity():
    u = np.array(UTILITIES) * 1000.0
    chosen = M.exponential_mechanism(u, sensitivity=1000.0, epsilon=2.0, size=N,
                                     random_state=3)
    pmf = np.exp(2.0 * np.array(UTILITIES) / 2)
    assert chi_square_pvalue(chosen, np.arange(len(UTILITIES)), pmf) > P_MIN


@pytest.mark.parametrize("select", [M.permute_and_flip, M.exponential_mechanism])
def test_selection_never_picks_excluded_candidates(select):
    u = np.array([-np.inf, 0.0, -np.inf, 0.0])
    chosen = select(u, sensitivity=1.0, epsilon=1.0, size=10_000, random_state=0)
    assert set(np.unique(chosen)) == {1, 3}


@pytest.mark.parametrize("select", [M.permute_and_flip, M.exponential_mechanism])
def test_selection_handles_huge_gaps_and_many_candidates(select):
    u = np.zeros(5000)
    u[1234] = 1e9  # the others have probability exp(-5e8): never chosen
    assert np.all(select(u, sensitivity=1.0, epsilon=1.0, size=20, random_state=0) == 1234)


# --------------------------------------------------------------------------------------
# Bad input

@pytest.mark.parametrize("epsilon", [0, -1, float("nan"), float("inf")])
def test_non_positive_or_non_finite_epsilon_is_refused(epsilon):
    with pytest.raises(ValueError, match="epsilon"):
        M.laplace_mechanism(1.0, sensitivity=1, epsilon=epsilon)
    with pytest.raises(ValueError, match="epsilon"):
        M.permute_and_flip([1.0, 2.0], sensitivity=1, epsilon=epsilon)
    with pytest.raises(ValueError, match="epsilon"):
        M.noisy_count(3, epsilon=epsilon)


def test_bad_arguments_get_clear_errors():
    with pytest.raises(ValueError, match="finite"):
        M.laplace_mechanism([1.0, np.nan], sensitivity=1, epsilon=1)
    with pytest.raises(ValueError, match="NaN"):
        M.exponential_mechanism([1.0, np.nan], sensitivity=1, epsilon=1)
    with pytest.raises(ValueError, match="excluded"):
        M.exponential_mechanism([-np.inf, -np.inf], sensitivity=1, epsilon=1)
    with pytest.raises(ValueError, match="non-empty"):
        M.permute_and_flip([], sensitivity=1, epsilon=1)
    with pytest.raises(ValueError, match="sensitivity"):
        M.permute_and_flip([1.0], sensitivity=0, epsilon=1)
    with pytest.raises(TypeError, match="integers"):
        M.noisy_count(np.array([1.5]), epsilon=1)
    with pytest.raises(TypeError, match="scale"):
        M.discrete_laplace("1", size=3)
    with pytest.raises(ValueError, match="sigma2"):
        M.discrete_gaussian(0.1, size=3)  # not a multiple of 2**-32
    with pytest.raises(ValueError, match="gamma"):
        M.bernoulli_exp(-1.0)
    with pytest.raises(TypeError, match="random_state"):
        M.discrete_laplace(1.0, random_state="seed")


@pytest.mark.parametrize("count", [np.uint64(2**64 - 1), np.array([0, 2**63 + 5], dtype=np.uint64),
                                   np.int64(-(2**63)), 2**62 + 1])
def test_noisy_count_rejects_counts_that_would_wrap(count):
    """Before: ``np.uint64(2**64 - 1)`` was cast to int64 and released as about -1."""
    with pytest.raises(ValueError, match="2\\*\\*62"):
        M.noisy_count(count, epsilon=1.0, random_state=0)


def test_noisy_count_keeps_large_valid_counts():
    out = M.noisy_count(np.uint64(2**62), epsilon=1.0, random_state=0)
    assert abs(out - 2**62) < 100
