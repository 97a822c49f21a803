"""Tests for the RDP curves dptrees computes itself (not dp-accounting).

* ``RDPAccountant.compose_laplace``: any pure epsilon-DP release, accounted with binary
  randomized response's curve (valid for every epsilon-DP mechanism, e.g. the discrete
  Laplace noise dptrees samples), not the continuous Laplace mechanism's.
* ``RDPAccountant.compose_subsampled_discrete_gaussian``: a Poisson-subsampled discrete
  Gaussian release, accounted by the larger of the "add" direction (dp-accounting's
  binomial expansion, exact for the discrete Gaussian at integer orders) and a proved
  bound on the "remove" direction.

References are computed independently, by summing probability mass functions over the
integers in the log domain, or with mpmath.
"""

import math
import threading

import mpmath
import numpy as np
import pytest
from scipy.special import logsumexp

import dp_accounting
from dptrees.privacy import rdp_curves
from dptrees.accounting import INTEGER_ORDERS, RDPAccountant

DEFAULT_ORDERS = tuple(
    float(a) for a in dp_accounting.rdp.rdp_privacy_accountant.DEFAULT_RDP_ORDERS
)


def _continuous_rdp(event, orders):
    acc = dp_accounting.rdp.RdpAccountant(
        list(orders), neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
    )
    acc.compose(event)
    return np.asarray(acc._rdp, dtype=float)


def _log_renyi_sum(log_p, log_q, alpha):
    """``log sum p^alpha q^(1 - alpha)``: ``(alpha - 1) D_alpha(p || q)``."""
    return logsumexp(alpha * log_p + (1.0 - alpha) * log_q)


# ======================================================================================
# (a) pure epsilon-DP releases: randomized response's curve
# ======================================================================================


def _rr_divergence_mpmath(epsilon, alpha):
    """``D_alpha(RR || RR')`` for binary randomized response, in 60-digit arithmetic."""
    with mpmath.workdps(60):
        eps, a = mpmath.mpf(epsilon), mpmath.mpf(alpha)
        p = mpmath.exp(eps) / (1 + mpmath.exp(eps))
        total = p**a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)
        return float(mpmath.log(total) / (a - 1))


def _discrete_laplace_divergence(epsilon, alphas):
    """Exact ``D_alpha`` of the discrete Laplace (pmf ~ e^(-eps |x|)) at shift 1."""
    radius = int(80 / epsilon) + 10  # tails below e^-80 of the largest term
    x = np.arange(-radius, radius + 1, dtype=float)
    log_p0 = -epsilon * np.abs(x)
    log_p0 -= logsumexp(log_p0)
    log_p1 = -epsilon * np.abs(x - 1.0)
    log_p1 -= logsumexp(log_p1)
    return np.array([_log_renyi_sum(log_p0, log_p1, a) / (a - 1.0) for a in alphas])


class TestPureDPCurve:
    EPSILONS = (1e-3, 0.1, 0.5, 1.0, 3.0, 10.0)

    @pytest.mark.parametrize("epsilon", EPSILONS)
    def test_between_continuous_laplace_and_epsilon(self, epsilon):
        ours = rdp_curves._pure_dp_rdp(epsilon, DEFAULT_ORDERS)
        laplace = _continuous_rdp(dp_accounting.LaplaceDpEvent(1.0 / epsilon), DEFAULT_ORDERS)
        assert np.all(ours >= laplace * (1 - 1e-12))
        assert np.all(ours <= epsilon)
        assert np.all(np.diff(ours) >= 0)  # Renyi divergences grow with the order
        # it is a real change: above the continuous curve somewhere
        assert np.max(ours / laplace - 1) > 1e-4

    @pytest.mark.parametrize("epsilon", (1e-6,) + EPSILONS)
    def test_is_randomized_response_divergence(self, epsilon):
        ours = rdp_curves._pure_dp_rdp(epsilon, DEFAULT_ORDERS)
        reference = [_rr_divergence_mpmath(epsilon, a) for a in DEFAULT_ORDERS]
        np.testing.assert_allclose(ours, reference, rtol=1e-10)

    @pytest.mark.parametrize("epsilon", (0.1, 0.5, 1.0, 2.0, 5.0, 10.0))
    def test_bounds_the_discrete_laplace_exactly(self, epsilon):
        # The discrete Laplace at sensitivity 1 has likelihood ratio e^eps (x <= 0) or
        # e^-eps (x >= 1) only: it *is* randomized response, so the curve is attained.
        exact = _discrete_laplace_divergence(epsilon, DEFAULT_ORDERS)
        ours = rdp_curves._pure_dp_rdp(epsilon, DEFAULT_ORDERS)
        assert np.all(ours >= exact * (1 - 1e-9))
        np.testing.assert_allclose(ours, exact, rtol=1e-9)

    def test_no_overflow_or_cancellation_at_extremes(self):
        orders = DEFAULT_ORDERS + (1e4, 1e6)
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            for epsilon in (1e-12, 1e-4, 10.0, 50.0, 700.0, 1e4):
                rdp = rdp_curves._pure_dp_rdp(epsilon, orders)
                assert np.all(np.isfinite(rdp)) and np.all(rdp >= 0) and np.all(rdp <= epsilon)
        # small epsilon: rdp(alpha) = alpha eps^2 / 2 (1 + O(eps^2)), no cancellation
        tiny = rdp_curves._pure_dp_rdp(1e-6, DEFAULT_ORDERS)
        np.testing.assert_allclose(tiny, np.array(DEFAULT_ORDERS) * 1e-12 / 2, rtol=1e-6)
        # large alpha eps: tends to eps
        assert rdp_curves._pure_dp_rdp(10.0, (1024.0,))[0] == pytest.approx(10.0, abs=1e-6)

    def test_curve_is_read_only(self):
        with pytest.raises(ValueError):
            rdp_curves._pure_dp_rdp(1.0, DEFAULT_ORDERS)[0] = 0.0

    def test_compose_laplace_uses_it(self):
        acc = RDPAccountant(DEFAULT_ORDERS).compose_laplace(0.5, count=3).compose_gaussian(2.0)
        expected = 3 * rdp_curves._pure_dp_rdp(0.5, DEFAULT_ORDERS) + _continuous_rdp(
            dp_accounting.GaussianDpEvent(2.0), DEFAULT_ORDERS
        )
        np.testing.assert_allclose(acc.rdp, expected, rtol=1e-12)
        assert acc.steps == 4
        assert RDPAccountant().compose_laplace(0.5, count=0).steps == 0

    def test_epsilon_is_slightly_larger_than_continuous_laplace(self):
        ref = dp_accounting.rdp.RdpAccountant(
            neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
        ).compose(dp_accounting.LaplaceDpEvent(1.0 / 0.1), 100)
        ours = RDPAccountant().compose_laplace(0.1, count=100).get_epsilon(1e-6)
        old = ref.get_epsilon(1e-6)
        assert old < ours < 1.1 * old
        assert ours < 100 * 0.1  # still far better than summing the epsilons

    @pytest.mark.parametrize("epsilon", [0.0, -1.0, math.nan, math.inf])
    def test_bad_epsilon(self, epsilon):
        acc = RDPAccountant()
        with pytest.raises(ValueError):
            acc.compose_laplace(epsilon)
        assert acc.steps == 0 and not acc.rdp.any()


# ======================================================================================
# (b) Poisson-subsampled discrete Gaussian
# ======================================================================================


def _discrete_gaussian_pair(sigma, radius=2000):
    """``log mu0``, ``log mu1`` of the 1-D discrete Gaussian N_Z(0, sigma^2), N_Z(1, sigma^2)."""
    x = np.arange(-radius, radius + 1, dtype=float)
    log_z = logsumexp(-(x**2) / (2 * sigma**2))
    return -(x**2) / (2 * sigma**2) - log_z, -((x - 1.0) ** 2) / (2 * sigma**2) - log_z


def _exact_directions(sigma, q, alphas):
    """Exact add ``D_alpha(mu || mu0)`` and remove ``D_alpha(mu0 || mu)`` divergences, 1-D."""
    log_mu0, log_mu1 = _discrete_gaussian_pair(sigma)
    log_mu = np.logaddexp(math.log1p(-q) + log_mu0, math.log(q) + log_mu1)
    add = np.array([_log_renyi_sum(log_mu, log_mu0, a) / (a - 1) for a in alphas])
    remove = np.array([_log_renyi_sum(log_mu0, log_mu, a) / (a - 1) for a in alphas])
    return add, remove


SIGMAS = (0.6, 1.0, 2.0, 4.0)
QS = (0.01, 0.1, 0.5)
SMALL_ORDERS = tuple(float(a) for a in range(2, 33))


class TestDiscreteGaussianFacts:
    """The facts the proof next to ``_subsampled_discrete_gaussian_rdp`` rests on."""

    @pytest.mark.parametrize("sigma", SIGMAS)
    def test_integer_moments_of_the_likelihood_ratio(self, sigma):
        # E_mu0[(mu1/mu0)^k] = exp(k (k - 1) / (2 sigma^2)) for every integer k
        log_mu0, log_mu1 = _discrete_gaussian_pair(sigma)
        for k in range(-4, 7):
            log_moment = logsumexp(log_mu0 + k * (log_mu1 - log_mu0))
            assert log_moment == pytest.approx(k * (k - 1) / (2 * sigma**2), rel=1e-10, abs=1e-12)

    @pytest.mark.parametrize("sigma", SIGMAS)
    def test_centred_moments_nonnegative_and_match(self, sigma):
        c = 0.5 / sigma**2
        log_m = rdp_curves._log_lognormal_moments(c, rdp_curves._REMOVE_TAYLOR_ORDER)
        # against the discrete Gaussian itself (even j: a sum of non-negative terms)
        log_mu0, log_mu1 = _discrete_gaussian_pair(sigma)
        d = log_mu1 - log_mu0  # log f, never 0 at an integer point
        log_abs_f_minus_1 = np.where(d > 0, d + np.log(-np.expm1(-np.abs(d))),
                                     np.log(-np.expm1(-np.abs(d))))
        for j in (2, 4, 6, 8):
            direct = logsumexp(log_mu0 + j * log_abs_f_minus_1)
            assert log_m[j] == pytest.approx(direct, rel=1e-9)
        # against 300-digit arithmetic, every j; odd ones too are >= 0 (M_1 = 0)
        with mpmath.workdps(300):
            for j in range(2, rdp_curves._REMOVE_TAYLOR_ORDER + 1):
                exact = mpmath.fsum(
                    mpmath.binomial(j, i) * (-1) ** (j - i)
                    * mpmath.exp(mpmath.mpf(c) * i * (i - 1))
                    for i in range(j + 1)
                )
                assert exact > 0
                assert log_m[j] == pytest.approx(float(mpmath.log(exact)), rel=1e-12, abs=1e-12)
        assert log_m[1] == -math.inf

    def test_centred_moments_increase_with_the_shift(self):
        previous = None
        for c in (1e-6, 1e-3, 0.05, 0.5, 2.0):
            log_m = np.array(rdp_curves._log_lognormal_moments(c, 12)[2:])
            if previous is not None:
                assert np.all(log_m > previous)
            previous = log_m

    def test_tiny_shift_needs_many_digits_and_gets_them(self):
        # M_2n ~ c^n (2n)! / n! for small c: M_12 ~ 1e-1800 needs more than the 1600
        # digits allowed, so the largest ones must come back as +inf (conservative),
        # never as a cancelled, too small value.
        c = 1e-300
        log_m = rdp_curves._log_lognormal_moments(c, 12)
        finite = [n for n in range(1, 7) if math.isfinite(log_m[2 * n])]
        assert finite == list(range(1, len(finite) + 1)) and 4 <= len(finite) < 6
        for n in finite:
            leading = n * math.log(c) + math.lgamma(2 * n + 1) - math.lgamma(n + 1)
            assert log_m[2 * n] == pytest.approx(leading, rel=1e-9)
        assert all(x == math.inf for x in log_m[2 * len(finite) + 1:])


class TestSubsampledDiscreteGaussianDirections:
    @pytest.mark.parametrize("sigma", SIGMAS)
    @pytest.mark.parametrize("q", QS)
    def test_add_direction_is_dp_accountings(self, sigma, q):
        # The exactness claim: at integer orders the continuous Gaussian's binomial
        # expansion is the discrete Gaussian's add-direction divergence (shift 1, z = sigma).
        add, _ = _exact_directions(sigma, q, SMALL_ORDERS)
        event = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
        np.testing.assert_allclose(_continuous_rdp(event, SMALL_ORDERS), add, rtol=1e-9)

    @pytest.mark.parametrize("sigma", SIGMAS)
    @pytest.mark.parametrize("q", QS)
    def test_remove_bound_covers_the_exact_divergence(self, sigma, q):
        _, remove = _exact_directions(sigma, q, SMALL_ORDERS)
        bound = rdp_curves._remove_direction_rdp(q, sigma, np.array(SMALL_ORDERS))
        assert np.all(np.isfinite(remove))
        assert np.all(bound >= remove * (1 + 1e-12))
        # ... and so does what is composed, the larger of the two directions
        acc = RDPAccountant(SMALL_ORDERS).compose_subsampled_discrete_gaussian(q, sigma)
        assert np.all(acc.rdp >= remove)

    def test_brief_second_order_bound_is_valid_too(self):
        # 1/(a-1) log(1 + C(a,2) q^2 (1-q)^-(a+1) (e^(1/z^2) - 1)) also covers the exact
        # remove direction (the proof's K = 0 idea; the code keeps tighter ones).
        a = np.array(SMALL_ORDERS)
        for sigma in SIGMAS:
            for q in QS:
                _, remove = _exact_directions(sigma, q, SMALL_ORDERS)
                log_term = (np.log(a * (a - 1) / 2) + 2 * math.log(q) - (a + 1) * math.log1p(-q)
                            + math.log(math.expm1(sigma**-2)))
                assert np.all(np.logaddexp(0.0, log_term) / (a - 1) >= remove)


def _epsilon(rdp_per_round, rounds, delta, orders=INTEGER_ORDERS):
    return dp_accounting.rdp.compute_epsilon(list(orders), rounds * rdp_per_round, delta)[0]


class TestComposeSubsampledDiscreteGaussian:
    @pytest.mark.parametrize(
        "q, z, rounds", [(0.03, 1.0, 500), (0.1, 4.0, 100), (0.01, 1.0, 1000), (0.05, 2.0, 300)]
    )
    def test_same_epsilon_as_continuous_at_typical_federated_settings(self, q, z, rounds):
        new = RDPAccountant(INTEGER_ORDERS).compose_subsampled_discrete_gaussian(q, z, rounds)
        old = RDPAccountant(INTEGER_ORDERS).compose_subsampled_gaussian(q, z, rounds)
        for delta in (1e-5, 1e-6):
            assert new.get_epsilon(delta) == pytest.approx(old.get_epsilon(delta), rel=1e-9)

    def test_remove_direction_matters_somewhere(self):
        # At order 2 the remove bound always exceeds the add direction (its expansion's
        # q^2 term is the add direction's, plus a positive remainder) ...
        for q, z in [(0.03, 1.0), (0.1, 4.0), (0.5, 2.0)]:
            new = rdp_curves._subsampled_discrete_gaussian_rdp(q, z, INTEGER_ORDERS)
            old = rdp_curves._event_rdp(
                dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)),
                INTEGER_ORDERS,
            )
            assert new[0] > old[0]
        # ... and with large q or little noise it sets the epsilon
        for q, z, rounds in [(0.1, 2.0, 100), (0.5, 2.0, 100)]:
            new = RDPAccountant(INTEGER_ORDERS).compose_subsampled_discrete_gaussian(q, z, rounds)
            old = RDPAccountant(INTEGER_ORDERS).compose_subsampled_gaussian(q, z, rounds)
            assert new.get_epsilon(1e-6) > 1.01 * old.get_epsilon(1e-6)

    @pytest.mark.parametrize("q", [0.001, 0.03, 0.1, 0.3, 0.7, 0.99])
    @pytest.mark.parametrize("z", [0.5, 1.0, 4.0, 30.0])
    def test_between_continuous_and_unsampled(self, q, z):
        rdp = rdp_curves._subsampled_discrete_gaussian_rdp(q, z, INTEGER_ORDERS)
        add = rdp_curves._event_rdp(
            dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)),
            INTEGER_ORDERS,
        )
        orders = np.array(INTEGER_ORDERS, dtype=float)
        assert np.all(np.isfinite(rdp))
        assert np.all(rdp >= add)
        # subsampling never makes it worse than the discrete Gaussian alone (convexity)
        assert np.all(rdp <= orders / (2 * z**2) * (1 + 1e-12))

    def test_no_subsampling_and_no_sampling(self):
        acc = RDPAccountant(INTEGER_ORDERS).compose_subsampled_discrete_gaussian(1.0, 2.0, count=3)
        np.testing.assert_allclose(acc.rdp, 3 * np.array(INTEGER_ORDERS) / 8.0, rtol=1e-12)
        gauss = RDPAccountant(INTEGER_ORDERS).compose_gaussian(2.0, count=3)
        np.testing.assert_allclose(acc.rdp, gauss.rdp, rtol=1e-12)
        nothing = RDPAccountant(INTEGER_ORDERS).compose_subsampled_discrete_gaussian(0.0, 2.0)
        assert nothing.steps == 1 and not nothing.rdp.any()

    def test_count_and_chaining(self):
        one = RDPAccountant(INTEGER_ORDERS)
        for _ in range(5):
            assert one.compose_subsampled_discrete_gaussian(0.05, 1.5) is one
        five = RDPAccountant(INTEGER_ORDERS).compose_subsampled_discrete_gaussian(0.05, 1.5, 5)
        assert one.steps == five.steps == 5
        np.testing.assert_allclose(one.rdp, five.rdp, rtol=1e-12)
        assert RDPAccountant(INTEGER_ORDERS).compose_subsampled_discrete_gaussian(
            0.05, 1.5, count=0).steps == 0

    def test_look_ahead(self):
        q, z, epsilon = 0.5, 2.0, 5.0  # a setting where the remove direction counts
        acc = RDPAccountant(INTEGER_ORDERS).compose_subsampled_discrete_gaussian(q, z, 10)
        rdp, steps = acc.rdp, acc.steps
        predicted = acc.delta_after(epsilon, noise_multiplier=z, sampling_probability=q,
                                    count=5, discrete=True)
        continuous = acc.delta_after(epsilon, noise_multiplier=z, sampling_probability=q,
                                     count=5)
        assert acc.steps == steps and np.array_equal(acc.rdp, rdp)
        actual = acc.copy().compose_subsampled_discrete_gaussian(q, z, 5).get_delta(epsilon)
        assert predicted == actual
        assert continuous < predicted  # the default (discrete=False) is unchanged
        assert acc.would_exceed(epsilon, predicted * (1 - 1e-9), noise_multiplier=z,
                                sampling_probability=q, count=5, discrete=True)
        assert not acc.would_exceed(epsilon, predicted, noise_multiplier=z,
                                    sampling_probability=q, count=5, discrete=True)

    def test_stops_before_the_round_that_passes_the_bound(self):
        q, z, epsilon, max_delta = 0.1, 1.0, 3.0, 1e-5
        acc = RDPAccountant(INTEGER_ORDERS)
        rounds = 0
        while not acc.would_exceed(epsilon, max_delta, noise_multiplier=z,
                                   sampling_probability=q, discrete=True):
            acc.compose_subsampled_discrete_gaussian(q, z)
            rounds += 1
            assert rounds < 1000
        assert rounds > 1 and acc.get_delta(epsilon) <= max_delta
        over = acc.copy().compose_subsampled_discrete_gaussian(q, z)
        assert over.get_delta(epsilon) > max_delta

    def test_thread_safe(self):
        acc = RDPAccountant(INTEGER_ORDERS)

        def work():
            for _ in range(50):
                acc.compose_subsampled_discrete_gaussian(0.03, 1.0)
                acc.compose_laplace(0.1)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        expected = (200 * rdp_curves._subsampled_discrete_gaussian_rdp(0.03, 1.0, acc._orders)
                    + 200 * rdp_curves._pure_dp_rdp(0.1, acc._orders))
        assert acc.steps == 400
        np.testing.assert_allclose(acc.rdp, expected, rtol=1e-12)

    @pytest.mark.parametrize("q", [-0.1, 1.5, math.nan, math.inf])
    def test_bad_sampling_probability(self, q):
        acc = RDPAccountant(INTEGER_ORDERS)
        with pytest.raises(ValueError, match="sampling_probability"):
            acc.compose_subsampled_discrete_gaussian(q, 1.0)
        with pytest.raises(ValueError, match="sampling_probability"):
            acc.would_exceed(1.0, 1e-5, noise_multiplier=1.0, sampling_probability=q,
                             discrete=True)
        assert acc.steps == 0 and not acc.rdp.any()

    @pytest.mark.parametrize("z", [0.0, -1.0, math.nan, math.inf])
    def test_bad_noise_multiplier(self, z):
        acc = RDPAccountant(INTEGER_ORDERS)
        with pytest.raises(ValueError, match="noise_multiplier"):
            acc.compose_subsampled_discrete_gaussian(0.1, z)
        with pytest.raises(ValueError, match="noise_multiplier"):
            acc.delta_after(1.0, noise_multiplier=z, sampling_probability=0.1, discrete=True)
        assert acc.steps == 0

    def test_bad_types_and_count(self):
        acc = RDPAccountant(INTEGER_ORDERS)
        with pytest.raises(TypeError):
            acc.compose_subsampled_discrete_gaussian("0.1", 1.0)
        with pytest.raises(TypeError):
            acc.compose_subsampled_discrete_gaussian(0.1, 1.0, count=1.5)
        with pytest.raises(ValueError):
            acc.compose_subsampled_discrete_gaussian(0.1, 1.0, count=-1)
        assert acc.steps == 0

    @pytest.mark.parametrize("orders", [None, (2, 3, 4.5), (1.5, 2, 3)])
    def test_non_integer_orders_are_refused(self, orders):
        acc = RDPAccountant(orders)
        with pytest.raises(ValueError, match="integer orders"):
            acc.compose_subsampled_discrete_gaussian(0.1, 1.0)
        with pytest.raises(ValueError, match="integer orders"):
            acc.would_exceed(1.0, 1e-5, noise_multiplier=1.0, sampling_probability=0.1,
                             discrete=True)
        assert acc.steps == 0 and not acc.rdp.any()
        # the other methods still work at these orders
        acc.compose_subsampled_gaussian(0.1, 1.0)
        assert acc.steps == 1
