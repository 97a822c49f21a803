"""Tests for ``dptrees.audit``: the harness itself, negative and positive controls.

Negative controls are correctly calibrated mechanisms: the audit must not refute their
claim. Positive controls are broken on purpose: the audit MUST refute their claim,
otherwise the harness lacks the power to catch the bugs it exists for. All audits are
seeded, so every number below is deterministic.
"""

import math

import numpy as np
import pytest
from scipy import stats

from dptrees.audit import (
    AuditResult,
    audit_epsilon,
    audit_pair,
    clopper_pearson,
    epsilon_bound_from_counts,
)

# --------------------------------------------------------------------------------------
# Mechanisms
# --------------------------------------------------------------------------------------

D0 = np.arange(10)  # neighbouring datasets for counting queries: D1 = D0 plus one record
D1 = np.arange(11)


def laplace_count(scale):
    """Counting query (sensitivity 1) plus Laplace(scale) noise, batched."""

    def mechanism(data, n, rng):
        return len(data) + rng.laplace(0.0, scale, size=n)

    return mechanism


def gaussian_count(sigma):
    def mechanism(data, n, rng):
        return len(data) + rng.normal(0.0, sigma, size=n)

    return mechanism


def classical_gaussian_sigma(epsilon, delta, sensitivity=1.0):
    """Dwork & Roth (2014), Thm A.1: (epsilon, delta)-DP for epsilon < 1."""
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def randomized_response_once(bit, rng):
    """One report of randomized response with epsilon = ln 3 (truth w.p. 3/4); not batched."""
    return bit if rng.random() < 0.75 else 1 - bit


def exponential_mechanism(epsilon, stated_sensitivity, n_candidates=5):
    """Exponential mechanism over ``n_candidates`` with counting utilities, batched.

    Records are candidate labels; the utility of candidate ``c`` is the number of records
    labelled ``c`` (true sensitivity 1). Selection probabilities are proportional to
    ``exp(epsilon * u / (2 * stated_sensitivity))``.
    """

    def mechanism(labels, n, rng):
        utility = np.bincount(labels, minlength=n_candidates).astype(float)
        logits = epsilon * utility / (2.0 * stated_sensitivity)
        p = np.exp(logits - logits.max())
        return rng.choice(n_candidates, size=n, p=p / p.sum())

    return mechanism


# Candidate 0 has one vote less than the others under D0; D1 adds a vote for it.
EM_D0 = np.repeat(np.arange(5), [9, 10, 10, 10, 10])
EM_D1 = np.append(EM_D0, 0)


# --------------------------------------------------------------------------------------
# Naive floating-point Laplace (Mironov 2012)
# --------------------------------------------------------------------------------------
#
# Textbook Laplace noise computed in floating point is NOT differentially private, at any
# scale (Mironov, "On significance of the least significant bits for differential
# privacy", CCS 2012). The noise b*log(2U) takes at most one value per 53-bit uniform U,
# so for a given input x the set of reachable outputs x + noise (after rounding) is a
# sparse, x-dependent subset of the doubles: at most about 1/e of the doubles in any range
# are reachable, far fewer near x. An output that x0 could have produced but x1 could not
# is proof that the input was x0 - a privacy loss of infinity, whatever b is. This control
# is why dptrees never releases float Laplace noise: its compiled core samples exact
# integer (discrete) distributions instead.
#
# The distinguishing event below is "y could have been produced from x0", decided exactly:
# invert y to the uniform U that would produce it, then check the 53-bit grid values
# k * 2**-53 next to that estimate with the very same float formula, bit for bit.


def naive_float_laplace(x, b, n, rng):
    """``n`` draws of x + Laplace(b) computed exactly as numpy's ``Generator.laplace``.

    numpy (``random_laplace`` in ``distributions.c``): U = a 53-bit uniform double in
    [0, 1), redrawn if 0; if U >= 0.5 the output is ``x - b*log(2 - U - U)``, otherwise
    ``x + b*log(U + U)``. (On the machine these tests were written on the outputs are
    bit-identical to ``rng.laplace(x, b, n)`` for the same generator state, i.e. numpy's
    own Laplace sampler has the same weakness.)
    """
    u = rng.random(n)
    zero = u == 0.0
    while zero.any():  # probability 2**-53 per draw; mirrors numpy's rejection
        u[zero] = rng.random(int(zero.sum()))
        zero = u == 0.0
    out = np.empty(n)
    hi = u >= 0.5
    out[hi] = x - b * np.log(2.0 - u[hi] - u[hi])
    out[~hi] = x + b * np.log(u[~hi] + u[~hi])
    return out


def reproducible_from(x, b, radius=3):
    """Vectorised predicate: could ``naive_float_laplace(x, b, ...)`` output exactly y?

    For each y, and for both branches of the sampler, estimate U by inverting the formula
    (``U = 1 - exp(-(y - x)/b)/2`` or ``U = exp((y - x)/b)/2``), then recompute the output
    for the 2*radius + 1 grid values ``k * 2**-53`` around the estimate with the sampler's
    own floating-point operations and test for bit-equality. The inversion is accurate to
    about one grid step, so radius=3 never misses a reachable y (tested below).
    """
    offsets = np.arange(-radius, radius + 1, dtype=np.float64)
    scale = 2.0**53

    def predicate(y):
        y = np.asarray(y, dtype=np.float64)
        z = y - x
        with np.errstate(over="ignore", under="ignore"):
            u_upper = 1.0 - 0.5 * np.exp(np.minimum(-z / b, 700.0))
            u_lower = 0.5 * np.exp(np.minimum(z / b, 700.0))
        hit = np.zeros(y.shape, dtype=bool)
        for estimate, upper in ((u_upper, True), (u_lower, False)):
            k = np.rint(np.clip(estimate, 0.0, 1.0) * scale)[:, None] + offsets
            u = k * 2.0**-53  # exact: k is an integer below 2**54
            if upper:
                valid = (u >= 0.5) & (u < 1.0)
                u = np.where(valid, u, 0.75)
                y_again = x - b * np.log(2.0 - u - u)
            else:
                valid = (u > 0.0) & (u < 0.5)
                u = np.where(valid, u, 0.25)
                y_again = x + b * np.log(u + u)
            hit |= (valid & (y_again == y[:, None])).any(axis=1)
        return hit

    predicate.__name__ = f"reproducible_from({x!r})"
    return predicate


# Controls run at confidence 99.9%: with a fixed seed they are deterministic anyway, but a
# correctly calibrated mechanism whose claim is tight (Laplace, randomized response) is
# refuted with probability up to alpha/2, and numpy may change its random streams.
ALPHA = 1e-3

FLOAT_B = 10.0  # Laplace scale for sensitivity 1 at the claimed epsilon = 0.1
FLOAT_EPS = 0.1


def float_laplace_mechanism(x, n, rng):
    return naive_float_laplace(x, FLOAT_B, n, rng)


# --------------------------------------------------------------------------------------
# Negative controls: correct mechanisms are not refuted
# --------------------------------------------------------------------------------------


def test_correct_laplace_is_not_refuted_and_bound_is_nearly_tight():
    res = audit_epsilon(laplace_count(1.0), D0, D1, n_calibration=20_000, n_test=100_000,
                        alpha=ALPHA, random_state=1)
    res.assert_within(1.0)
    # the harness has power: the best event {stat > 11} has likelihood ratio exactly e
    assert res.epsilon_lower_bound > 0.8


def test_correct_gaussian_with_delta_is_not_refuted():
    eps, delta = 0.5, 1e-5
    sigma = classical_gaussian_sigma(eps, delta)
    res = audit_epsilon(gaussian_count(sigma), D0, D1, n_calibration=20_000,
                        n_test=100_000, delta=delta, alpha=ALPHA, random_state=2)
    assert res.delta == delta
    res.assert_within(eps)


def test_randomized_response_not_batched_is_not_refuted():
    res = audit_epsilon(randomized_response_once, 0, 1, n_calibration=5_000,
                        n_test=30_000, batch=False, alpha=ALPHA, random_state=3)
    res.assert_within(math.log(3.0))
    assert res.epsilon_lower_bound > 0.9
    assert res.event in {"stat == 0.0", "stat == 1.0", "stat != 0.0", "stat != 1.0"}


def test_correct_exponential_mechanism_is_not_refuted():
    res = audit_epsilon(exponential_mechanism(1.0, 1.0), EM_D0, EM_D1,
                        n_calibration=20_000, n_test=100_000, alpha=ALPHA, random_state=4)
    res.assert_within(1.0)


def test_correct_float_laplace_threshold_events_see_nothing():
    # Contrast for the Mironov control: looking only at thresholds/values of the output
    # finds nothing, the distribution is right; only the bit-level event exposes it.
    res = audit_epsilon(float_laplace_mechanism, 0.0, 1.0, n_calibration=20_000,
                        n_test=100_000, alpha=ALPHA, random_state=5)
    res.assert_within(FLOAT_EPS)


# --------------------------------------------------------------------------------------
# Positive controls: broken mechanisms MUST be refuted
# --------------------------------------------------------------------------------------


def test_laplace_with_half_the_noise_is_refuted():
    # claims epsilon = 1 (scale 1) but uses scale 1/2: true epsilon = 2
    res = audit_epsilon(laplace_count(0.5), D0, D1, n_calibration=20_000, n_test=100_000,
                        alpha=ALPHA, random_state=6)
    assert res.epsilon_lower_bound > 1.5
    assert not res.check(1.0)
    with pytest.raises(AssertionError, match=r"(?s)claimed epsilon 1 .*event: stat"):
        res.assert_within(1.0)


def test_exponential_mechanism_with_understated_sensitivity_is_refuted():
    # Sensitivity stated as 1/4 instead of 1: true epsilon 2 for claimed 1. (Stating 1/2
    # would not be a violation here: counting utilities are monotone - adding a record
    # never lowers a utility - and for monotone utilities exp(eps*u/Delta) is already
    # eps-DP; the usual factor 2 covers utilities moving in opposite directions.)
    res = audit_epsilon(exponential_mechanism(1.0, 0.25), EM_D0, EM_D1,
                        n_calibration=20_000, n_test=100_000, alpha=ALPHA, random_state=7)
    assert res.event in {"stat == 0.0", "stat != 0.0"}  # found via the chosen index
    assert res.epsilon_lower_bound > 1.5
    with pytest.raises(AssertionError, match="privacy claim refuted"):
        res.assert_within(1.0)


def test_gaussian_with_understated_sensitivity_is_refuted_despite_delta():
    eps, delta = 0.5, 1e-5
    sigma = classical_gaussian_sigma(eps, delta, sensitivity=0.1)  # true sensitivity 1
    res = audit_epsilon(gaussian_count(sigma), D0, D1, n_calibration=20_000,
                        n_test=100_000, delta=delta, alpha=ALPHA, random_state=8)
    assert res.epsilon_lower_bound > 1.5
    assert not res.check(eps)


def test_float_laplace_predicate_is_exact_on_its_own_outputs():
    # No false negatives: every output of the sampler is recognised as reproducible from
    # its own input. Otherwise the control below would prove nothing.
    rng = np.random.default_rng(9)
    for x in (0.0, 1.0, -3.5):
        y = naive_float_laplace(x, FLOAT_B, 50_000, rng)
        assert reproducible_from(x, FLOAT_B)(y).all()


def test_naive_float_laplace_is_refuted_mironov():
    # Claimed: sensitivity 1, b = 10, so epsilon = 0.1. Every output from x0 = 0 passes
    # the predicate, only ~19% of outputs from x1 = 1 do. The harness also tries the
    # complement, "y could NOT have come from x0": it never happens under x0 and happens
    # ~81% of the time under x1, an infinite privacy loss - the bound is limited only by
    # n_test (~ ln(0.8 * n_test / 3.7) ~ 10), 100 times the claim, however large b is.
    res = audit_epsilon(float_laplace_mechanism, 0.0, 1.0, n_calibration=20_000,
                        n_test=100_000, events=[reproducible_from(0.0, FLOAT_B)],
                        alpha=ALPHA, random_state=10)
    assert res.event in {"reproducible_from(0.0)", "not (reproducible_from(0.0))"}
    n = res.n_test
    k0, k1 = res.counts if res.event == "reproducible_from(0.0)" else (n - res.counts[0],
                                                                       n - res.counts[1])
    assert k0 == n  # no output of x0 is rejected
    assert 0.15 < k1 / n < 0.25
    assert res.epsilon_lower_bound > 8.0
    # even the predicate alone, without its complement, refutes the claim 10-fold
    assert epsilon_bound_from_counts(k0, n, k1, n) > 1.0
    with pytest.raises(AssertionError, match="reproducible_from"):
        res.assert_within(FLOAT_EPS)


# --------------------------------------------------------------------------------------
# The harness
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mechanism, data",
    [(laplace_count(1.0), D0), (laplace_count(0.01), D1),
     (exponential_mechanism(1.0, 0.25), EM_D0)],
)
def test_identical_inputs_give_zero(mechanism, data):
    res = audit_epsilon(mechanism, data, data, n_calibration=10_000, n_test=50_000,
                        random_state=12)
    assert res.epsilon_lower_bound == 0.0
    assert res.check(0.0)
    res.assert_within(0.0)


@pytest.mark.parametrize(
    "k, n", [(0, 10), (10, 10), (1, 10), (7, 20), (123, 1000), (5, 100_000), (50, 50_000)]
)
@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.5])
def test_clopper_pearson_matches_scipy(k, n, alpha):
    lo, hi = clopper_pearson(k, n, alpha)
    ref = stats.binomtest(k, n).proportion_ci(confidence_level=1 - alpha, method="exact")
    # scipy finds the ends by root-finding (tolerance ~1e-8 relative); we invert the Beta
    # distribution, which is more accurate: check the defining equations tightly.
    assert lo == pytest.approx(ref.low, rel=1e-6, abs=1e-15)
    assert hi == pytest.approx(ref.high, rel=1e-6, abs=1e-15)
    if k > 0:
        assert stats.binom.sf(k - 1, n, lo) == pytest.approx(alpha / 2, rel=1e-9)
    if k < n:
        assert stats.binom.cdf(k, n, hi) == pytest.approx(alpha / 2, rel=1e-9)
    assert isinstance(lo, float) and isinstance(hi, float)


def test_clopper_pearson_known_values_and_vectorised():
    # k = 0: upper = 1 - (alpha/2)**(1/n); k = n: lower = (alpha/2)**(1/n)
    assert clopper_pearson(0, 100, 0.05) == (0.0, pytest.approx(1 - 0.025 ** (1 / 100)))
    assert clopper_pearson(100, 100, 0.05) == (pytest.approx(0.025 ** (1 / 100)), 1.0)
    k = np.array([0, 3, 50, 100])
    lo, hi = clopper_pearson(k, 100, 0.1)
    assert lo.shape == hi.shape == (4,)
    np.testing.assert_allclose(lo[1:], stats.beta.ppf(0.05, k[1:], 100 - k[1:] + 1))
    np.testing.assert_allclose(hi[:-1], stats.beta.ppf(0.95, k[:-1] + 1, 100 - k[:-1]))
    with pytest.raises(ValueError):
        clopper_pearson(11, 10)
    with pytest.raises(ValueError):
        clopper_pearson(1, 10, alpha=1.5)


def test_epsilon_bound_from_counts_formula():
    alpha, delta = 0.05, 0.001
    k0, k1, n = 3000, 1000, 10_000
    lo0 = stats.beta.ppf(alpha / 4, k0, n - k0 + 1)
    hi1 = stats.beta.ppf(1 - alpha / 4, k1 + 1, n - k1)
    expected = math.log((lo0 - delta) / hi1)
    assert epsilon_bound_from_counts(k0, n, k1, n, alpha=alpha, delta=delta) == (
        pytest.approx(expected, rel=1e-9)
    )
    # symmetric in the two inputs, floored at 0
    assert epsilon_bound_from_counts(k1, n, k0, n, alpha=alpha, delta=delta) == (
        pytest.approx(expected, rel=1e-9)
    )
    assert epsilon_bound_from_counts(500, 1000, 500, 1000) == 0.0
    assert epsilon_bound_from_counts(5, 1000, 0, 1000, delta=0.01) == 0.0


def test_delta_absorbs_rare_catastrophic_leak():
    # With probability 1% the mechanism publishes its input (2 or 3), otherwise a fair
    # coin: it is (0, 0.01)-DP but not eps-DP for any finite eps.
    def leaky(bit, n, rng):
        coin = rng.integers(0, 2, size=n)
        return np.where(rng.random(n) < 0.01, 2 + bit, coin)

    kw = dict(n_calibration=20_000, n_test=100_000, random_state=13)
    pure = audit_epsilon(leaky, 0, 1, **kw)
    assert pure.epsilon_lower_bound > 4.0
    assert pure.event in {"stat == 2.0", "stat == 3.0"}
    approx = audit_epsilon(leaky, 0, 1, delta=0.01, **kw)
    assert approx.epsilon_lower_bound == 0.0
    too_small = audit_epsilon(leaky, 0, 1, delta=0.005, **kw)
    assert too_small.epsilon_lower_bound > 2.0


def test_reproducible_for_fixed_seed():
    kw = dict(n_calibration=5_000, n_test=20_000)
    a = audit_epsilon(laplace_count(0.5), D0, D1, random_state=14, **kw)
    b = audit_epsilon(laplace_count(0.5), D0, D1, random_state=14, **kw)
    c = audit_epsilon(laplace_count(0.5), D0, D1, random_state=np.random.default_rng(14), **kw)
    d = audit_epsilon(laplace_count(0.5), D0, D1, random_state=15, **kw)
    assert isinstance(a, AuditResult)
    assert a == b == c
    assert d != a
    nb = dict(n_calibration=1_000, n_test=2_000, batch=False)
    assert audit_epsilon(randomized_response_once, 0, 1, random_state=16, **nb) == (
        audit_epsilon(randomized_response_once, 0, 1, random_state=16, **nb)
    )


def test_calibration_and_test_streams_are_independent():
    # the four phases (calibration/test x D0/D1) must draw from different streams
    seen = []

    def record(data, n, rng):
        x = rng.random(n)
        seen.append(x[:4].copy())
        return x

    audit_pair(lambda n, rng: record(None, n, rng), lambda n, rng: record(None, n, rng),
               n_calibration=100, n_test=100, random_state=17)
    assert len(seen) == 4
    assert len({tuple(s) for s in seen}) == 4


def test_audit_pair_statistic_and_chunking():
    # two samplers with vector outputs, reduced by a statistic; chunked draws
    def sampler(shift):
        return lambda n, rng: rng.laplace(0.0, 0.5, size=(n, 3)) + [shift, 0.0, 0.0]

    res = audit_pair(sampler(0.0), sampler(1.0), n_calibration=10_000, n_test=50_000,
                     statistic=lambda out: out[:, 0], chunk_size=4_096, random_state=18)
    assert res.epsilon_lower_bound > 1.3
    assert not res.check(1.0)


def test_no_eligible_event_gives_zero():
    res = audit_epsilon(laplace_count(0.5), D0, D1, n_calibration=100, n_test=100,
                        min_count=1_000, random_state=19)
    assert res.event is None and res.epsilon_lower_bound == 0.0
    assert res.check(0.0)


def test_input_validation():
    with pytest.raises(ValueError, match="statistic="):
        audit_pair(lambda n, rng: rng.random((n, 2)), lambda n, rng: rng.random((n, 2)),
                   n_calibration=10, n_test=10, random_state=0)
    with pytest.raises(ValueError, match="must return 10 outputs"):
        audit_pair(lambda n, rng: rng.random(n + 1), lambda n, rng: rng.random(n),
                   n_calibration=10, n_test=10, random_state=0)
    with pytest.raises(ValueError, match="shape"):
        audit_epsilon(laplace_count(1.0), D0, D1, n_calibration=10, n_test=10,
                      statistic=lambda out: out[:5], random_state=0)
    with pytest.raises(ValueError, match="shape"):
        audit_epsilon(laplace_count(1.0), D0, D1, n_calibration=10, n_test=10,
                      events=lambda out: True, random_state=0)
    with pytest.raises(ValueError, match="alpha"):
        audit_epsilon(laplace_count(1.0), D0, D1, alpha=0.0)
    with pytest.raises(ValueError, match="delta"):
        audit_epsilon(laplace_count(1.0), D0, D1, delta=1.0)
    with pytest.raises(ValueError, match="auto_events"):
        audit_epsilon(laplace_count(1.0), D0, D1, auto_events=False)
    with pytest.raises(TypeError):
        audit_epsilon(laplace_count(1.0), D0, D1, n_test=10.5)
    with pytest.raises(TypeError):
        audit_epsilon(laplace_count(1.0), D0, D1, random_state="seed")
    with pytest.raises(ValueError):
        audit_epsilon(laplace_count(1.0), D0, D1, n_calibration=10, n_test=10,
                      random_state=0).check(-1.0)


def test_non_scalar_outputs_with_user_events_only():
    # outputs are dicts (not stackable as numbers); only predicates can look at them
    def mech(bit, rng):
        return {"bit": bit if rng.random() < 0.9 else 1 - bit}

    is_one = {"bit is 1": lambda outs: np.array([o["bit"] == 1 for o in outs])}
    res = audit_epsilon(mech, 0, 1, n_calibration=2_000, n_test=5_000, events=is_one,
                        batch=False, random_state=20)
    assert res.event in {"bit is 1", "not (bit is 1)"}
    assert 1.5 < res.epsilon_lower_bound <= math.log(9)
