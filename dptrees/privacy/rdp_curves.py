"""Renyi-DP curves of the mechanisms dptrees runs, each proved next to its code.

* the continuous (subsampled) Gaussian and zCDP releases: computed by Google's
  ``dp-accounting`` (:func:`_event_rdp`, cached);
* the Poisson-subsampled *discrete* Gaussian, both directions of the add/remove relation
  (:func:`_subsampled_discrete_gaussian_rdp`);
* any pure ``epsilon``-DP release, such as discrete Laplace (:func:`_pure_dp_rdp`);
* the best of a logarithmic number of zCDP runs (:func:`_best_of_zcdp_rdp`, Papernot &
  Steinke 2022).

:class:`~dptrees.privacy.rdp.RDPAccountant` adds them up. ``dp-accounting`` imports
SciPy and takes about a second to import, so it is imported on first use.
"""

from __future__ import annotations

import decimal
import functools
import math

import numpy as np

from dptrees._checks import as_real

__all__ = ["INTEGER_ORDERS", "LOGARITHMIC_SHAPE"]

#: Integer Renyi orders, at which the Poisson-subsampled *discrete* Gaussian's accounting
#: (:meth:`RDPAccountant.compose_subsampled_discrete_gaussian`) is proved.
INTEGER_ORDERS = tuple(range(2, 257))

#: Shape of the truncated negative binomial number of runs in
#: :meth:`RDPAccountant.compose_best_of_zcdp`: 0, the logarithmic distribution. Of the
#: shapes dp-accounting implements (>= 0) it costs least for a given mean number of runs
#: (Papernot & Steinke 2022, theorem 2: the cost grows with ``1 + shape``).
LOGARITHMIC_SHAPE = 0.0


def _dp_accounting():
    """Import ``dp_accounting`` on first use (it pulls in SciPy; ~1 s)."""
    import dp_accounting  # noqa: PLC0415

    return dp_accounting


#: Orders above dp-accounting's largest (1,024) at which zCDP budgets are converted: the
#: best order of ``rho``-zCDP is about ``sqrt(log(1 / delta) / rho)``, above 1,024 for
#: epsilon below about 0.02 at delta 1e-6, so without them those budgets cannot be
#: reached. More orders can only lower a conversion. Only for zCDP releases (Gaussian
#: noise, selections), whose curve costs nothing at any order: the subsampled Gaussian's
#: costs a sum of ``alpha`` terms per order, so the accountants' default orders stay
#: dp-accounting's.
LARGE_ORDERS = (1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
                65536, 131072, 262144, 524288, 1048576)


def zcdp_orders():
    """The orders zCDP budgets are converted at (:func:`~dptrees.privacy.zcdp.zcdp_budget`
    and the release plans of Gaussian fits): ``dp_accounting``'s ``DEFAULT_RDP_ORDERS``
    (1.1 to 1,024) and :data:`LARGE_ORDERS`."""
    return tuple(_dp_accounting().rdp.rdp_privacy_accountant.DEFAULT_RDP_ORDERS) + \
        LARGE_ORDERS


@functools.lru_cache(maxsize=256)
def _event_rdp(event, orders):
    """RDP of one ``event`` at ``orders`` (a tuple), computed by ``dp_accounting``.

    Computing the RDP of a subsampled Gaussian takes tens of milliseconds, and training
    composes the same event round after round (and peeks at it before each round), so
    the result is cached. It is a read-only array.
    """
    dpa = _dp_accounting()
    accountant = dpa.rdp.RdpAccountant(
        list(orders), neighboring_relation=dpa.NeighboringRelation.ADD_OR_REMOVE_ONE
    )
    accountant.compose(event)
    rdp = accountant.rdp
    rdp.setflags(write=False)
    return rdp


#: Highest even Taylor order of the remove-direction bound of the subsampled discrete
#: Gaussian (``_remove_direction_rdp``); every order up to it is tried, the best kept.
_REMOVE_TAYLOR_ORDER = 48


@functools.lru_cache(maxsize=64)
def _log_lognormal_moments(c, highest):
    """``log M_j`` for ``j = 0 .. highest``: ``M_j = sum_i C(j, i) (-1)^(j-i) e^(i (i-1) c)``.

    ``M_j = E_mu0[(f - 1)^j]`` for the likelihood ratio ``f`` of a Gaussian (continuous, or
    discrete under an integer shift) with ``c = ||shift||^2 / (2 sigma^2)``. The alternating
    sum cancels massively (``M_j`` is of order ``c^(j/2)`` for small ``c``), so it is
    evaluated in decimal arithmetic, with more digits while the rounding error could
    exceed a millionth of the result; what is returned is the log of the sum plus that
    error bound (an upper bound), or ``inf`` if no precision up to 1600 digits certifies
    it (conservative: a bound built on it is then never chosen). ``M_1 = 0`` exactly
    (``-inf``).
    """
    out = [0.0, -math.inf]
    prec = 200
    with decimal.localcontext() as ctx:
        while len(out) <= highest and prec <= 1600:
            ctx.prec = prec
            c_dec = decimal.Decimal(c)  # exact: c is a float
            powers = [(c_dec * i * (i - 1)).exp() for i in range(highest + 1)]
            # Each exp is correctly rounded (relative error <= 10^(1-prec) / 2), and each
            # of the j additions adds at most that much of the sum of |terms|.
            unit = decimal.Decimal(10) ** (1 - prec)
            for j in range(len(out), highest + 1):
                terms = [math.comb(j, i) * (-1) ** (j - i) * powers[i] for i in range(j + 1)]
                error = (j + 2) * unit * sum(abs(term) for term in terms)
                total = sum(terms, decimal.Decimal(0))
                if total <= error * 10**6:
                    break  # more digits needed, from this j on
                out.append(float((total + error).ln()))
            prec *= 2
    return tuple(out + [math.inf] * (highest + 1 - len(out)))


def _remove_direction_rdp(q, noise_multiplier, alphas):
    """Upper bound on ``D_alpha(mu0 || (1 - q) mu0 + q mu1)`` for a (discrete) Gaussian.

    See :func:`_subsampled_discrete_gaussian_rdp` for the notation and the proof.
    """
    c = 0.5 / noise_multiplier**2
    log_m = np.array(_log_lognormal_moments(c, _REMOVE_TAYLOR_ORDER))
    log_q, log_1mq = math.log(q), math.log1p(-q)
    out = np.empty(alphas.shape[0])
    for n, alpha in enumerate(alphas):
        beta = alpha - 1.0
        # (1) convexity: E[h] <= 1 - q + q E[(mu0/mu1)^beta] = 1 - q + q e^(alpha beta c)
        best = np.logaddexp(log_1mq, log_q + alpha * beta * c)
        # (3) symmetry and AM-GM: E[h] <= E[f^(1 + q beta)], log-convex between integers
        power = 1.0 + q * beta
        low = math.floor(power)
        t = power - low
        best = min(best, (1.0 - t) * low * (low - 1.0) * c + t * (low + 1.0) * low * c)
        # (2) the even Taylor terms up to 2K and the Lagrange tail, for every K
        even = []
        for k in range(1, _REMOVE_TAYLOR_ORDER // 2 + 1):
            j = 2 * k
            even.append(_log_comb(beta + j - 1.0, j) + j * log_q + log_m[j])
            tail = (_log_comb(beta + j, j + 1.0) + (j + 1) * log_q
                    - (beta + j + 1) * log_1mq + log_m[j])
            bound = np.logaddexp(0.0, np.logaddexp.reduce(np.array(even + [tail])))
            best = min(best, bound)
        out[n] = best / beta
    return out


def _log_comb(n, k):
    """``log C(n, k)`` for real ``n >= k - 1 >= 0``."""
    return math.lgamma(n + 1.0) - math.lgamma(k + 1.0) - math.lgamma(n - k + 1.0)


@functools.lru_cache(maxsize=256)
def _subsampled_discrete_gaussian_rdp(sampling_probability, noise_multiplier, orders):
    """Per-order RDP of one Poisson-subsampled discrete Gaussian release, both directions.

    The release is an integer-valued sum (over the sampled records or clients) plus
    multivariate discrete Gaussian noise of scale ``sigma``; neighbours shift the sum by an
    integer vector ``v`` with ``||v|| <= Delta`` and ``z = sigma / Delta``. Write ``mu0``
    for the output distribution without the record, ``mu1`` for the shifted one, ``q``
    for the sampling probability, ``mu = (1 - q) mu0 + q mu1``, ``f = mu1 / mu0`` and
    ``c = ||v||^2 / (2 sigma^2) <= 1 / (2 z^2)``. This is one pair for a fixed sum of the
    other records: their Poisson sampling mixes such pairs (shifted by an integer vector)
    with common weights, and ``(P, Q) -> sum P^alpha Q^(1 - alpha)`` is jointly convex
    for ``alpha > 1``, so a bound for every fixed pair holds for the mixture.

    Moments. For every integer ``k`` (negative ones too) ``E_mu0[f^k] = e^(k (k - 1) c)``
    exactly, because the discrete Gaussian's normaliser is invariant under integer shifts
    (Canonne, Kamath & Steinke 2020); these are the moments of the continuous Gaussian's
    ratio, a log-normal ``Y`` of mean 1. Hence ``M_j = E_mu0[(f - 1)^j] = sum_i C(j, i)
    (-1)^(j - i) e^(i (i - 1) c)``, the ``j``-th finite difference at 0 of ``i ->
    e^(c i (i - 1))``. Expanding ``e^(c i (i - 1)) = sum_n (2c)^n C(i, 2)^n / n!`` and
    ``C(i, 2)^n = sum_k N(n, k) C(i, k)`` with ``N(n, k) >= 0`` (the ``n``-tuples of pairs
    that cover a given ``k``-set exactly), ``M_j = sum_n (2c)^n N(n, j) / n!``: every
    ``M_j`` is ``>= 0`` and non-decreasing in ``c``.

    * Adding the record, ``D_alpha(mu || mu0)``: at an integer order it is the log of the
      binomial expansion ``sum_k C(alpha, k) (1 - q)^(alpha - k) q^k E_mu0[f^k]`` over
      ``alpha - 1`` (Mironov, Talwar & Zhang 2019), which ``dp-accounting`` computes for
      the continuous Gaussian from exactly these moments, increasing in ``c``: exact for
      the discrete Gaussian too.
    * Removing it, ``D_alpha(mu0 || mu) = log E_mu0[h(f)] / (alpha - 1)`` with
      ``h(f) = (1 + u)^-beta``, ``beta = alpha - 1``, ``u = q (f - 1) >= -q``.
      Three bounds, the smallest kept:
      (1) convexity of ``t -> t^-beta``: ``h(f) <= 1 - q + q f^-beta``, so ``E[h] <=
      1 - q + q E[f^-beta] = 1 - q + q e^(alpha beta c)``;
      (2) Taylor's theorem at ``u = 0`` to an even order ``2K`` with the Lagrange
      remainder ``C(-beta, 2K+1) u^(2K+1) (1 + xi)^-(beta + 2K + 1)``: its coefficient
      is negative, so it is ``<= 0`` for ``u >= 0``; for ``-q <= u < 0`` it is at most
      ``C(beta + 2K, 2K + 1) q u^(2K) (1 - q)^-(beta + 2K + 1)``. So ``h(f) <=
      sum_(j <= 2K) (-1)^j C(beta + j - 1, j) q^j (f - 1)^j + C(beta + 2K, 2K + 1)
      q^(2K + 1) (1 - q)^-(beta + 2K + 1) (f - 1)^(2K)``, and in expectation the odd
      terms (``-C q^j M_j <= 0``) may be dropped and every even one is largest at
      ``c = 1 / (2 z^2)``: ``E[h] <= 1 + sum_(even j <= 2K) C(beta + j - 1, j) q^j M_j
      + C(beta + 2K, 2K + 1) q^(2K + 1) (1 - q)^-(beta + 2K + 1) M_(2K)``, for every
      ``K`` (all up to ``_REMOVE_TAYLOR_ORDER / 2`` are tried).
      The continuous Gaussian's proof that this direction is dominated (Mironov, Talwar
      & Zhang 2019) is not needed.
      (3) symmetry: the reflection ``x -> v - x`` maps the lattice onto itself and swaps
      ``mu0`` and ``mu1``, so ``E_mu0[phi(f)] = E_mu1[phi(1 / f)] = E_mu0[f phi(1 / f)]``
      and ``E[h(f)] = E_mu0[f^alpha (q + (1 - q) f)^-beta]``; weighted AM-GM,
      ``q + (1 - q) f >= f^(1 - q)``, gives ``E[h] <= E_mu0[f^(1 + q beta)]``. The moment
      ``E[f^s]`` is log-convex in ``s`` (Hoelder), so between the integers around
      ``s = 1 + q beta`` its log is at most the linear interpolation of
      ``k (k - 1) c``.
      The smallest of (1), (2) and (3) is used.

    The larger of the two directions, order by order, bounds either one; summed over
    releases (adaptive composition of RDP) it bounds a whole run for add/remove-one
    neighbours. Without subsampling (``q = 1``) the release is ``1 / (2 z^2)``-zCDP.
    Orders must be integers (the expansion needs them). Anything not finite counts as
    infinite (conservative).
    """
    alphas = np.asarray(orders, dtype=float)
    if sampling_probability <= 0.0:
        rdp = np.zeros(len(alphas))  # no record is ever used
    elif sampling_probability >= 1.0:
        rdp = alphas / (2.0 * noise_multiplier**2)
    else:
        dpa = _dp_accounting()
        add = _event_rdp(dpa.PoissonSampledDpEvent(
            sampling_probability, dpa.GaussianDpEvent(noise_multiplier)), orders)
        remove = _remove_direction_rdp(sampling_probability, noise_multiplier, alphas)
        rdp = np.maximum(add, remove)
        rdp[~np.isfinite(rdp)] = np.inf
    rdp.setflags(write=False)
    return rdp


def _log_cosh(x):
    """``log(cosh(x))`` elementwise: accurate for small ``|x|``, finite for large."""
    x = np.abs(np.asarray(x, dtype=float))
    small = np.log1p(2.0 * np.sinh(np.minimum(x, 1.0) / 2.0) ** 2)  # cosh = 1 + 2 sinh(x/2)^2
    large = x - math.log(2.0) + np.log1p(np.exp(-2.0 * x))
    return np.where(x < 1.0, small, large)


@functools.lru_cache(maxsize=256)
def _pure_dp_rdp(epsilon, orders):
    """Per-order RDP of one ``epsilon``-DP release, whatever the mechanism (read-only).

    ``rdp(alpha) = log((e^(alpha eps) + e^((1 - alpha) eps)) / (1 + e^eps)) / (alpha - 1)``,
    the Renyi divergence between the two output distributions of binary randomized
    response, ``RR = (p, 1 - p)`` and ``RR' = (1 - p, p)`` with ``p = e^eps / (1 + e^eps)``.

    Why it bounds every ``epsilon``-DP release, in both directions: a pair ``(P, Q)`` of
    output distributions on neighbouring inputs has ``e^-eps <= dP/dQ <= e^eps``, and
    every such pair is a post-processing of ``(RR, RR')`` (Kairouz, Oh & Viswanath 2015,
    "The composition theorem for differential privacy": randomized response dominates
    every ``epsilon``-DP pair). The Renyi divergence satisfies the data-processing
    inequality, so ``D_alpha(P || Q) <= D_alpha(RR || RR')``, which is the formula; the
    reverse pair ``(Q, P)`` is also ``epsilon``-DP, so the same bound covers it
    (``(RR', RR)`` is ``(RR, RR')`` relabelled). (Elementary proof: write ``dP/dQ`` as the
    mean of a random choice between ``e^-eps`` and ``e^eps`` and apply Jensen to
    ``t -> t^alpha``; T. Steinke, "Sharp RDP & zCDP from pure DP", DifferentialPrivacy.org,
    2024.) It is at most ``eps`` and slightly above the continuous Laplace mechanism's curve
    (Mironov 2017, Prop. 6), which is only proved for that mechanism; it is exactly the
    curve of the discrete Laplace mechanism at sensitivity 1, whose likelihood ratio takes
    only the values ``e^eps`` and ``e^-eps``.

    Computed as ``(log cosh((alpha - 1/2) eps) - log cosh(eps / 2)) / (alpha - 1)`` (the
    same number: divide numerator and denominator by ``2 e^(eps/2)``), which neither
    overflows for large ``alpha eps`` nor cancels for small ``eps``, then capped at ``eps``
    against rounding.
    """
    alphas = np.asarray(orders, dtype=float)
    rdp = (_log_cosh((alphas - 0.5) * epsilon) - _log_cosh(epsilon / 2.0)) / (alphas - 1.0)
    rdp = np.minimum(rdp, epsilon)
    rdp.setflags(write=False)
    return rdp


def _check_mean_runs(mean_runs):
    mean_runs = as_real(mean_runs, "mean_runs")
    if not (math.isfinite(mean_runs) and mean_runs >= 1):
        raise ValueError(f"mean_runs must be a finite number >= 1, got {mean_runs!r}")
    return mean_runs


def _best_of_zcdp_rdp(rho, mean_runs, orders, cached=True):
    """RDP at ``orders`` of the best of a logarithmic number (mean ``mean_runs``) of
    ``rho``-zCDP runs, computed by ``dp_accounting`` (Papernot & Steinke 2022, theorem 2
    with the truncated negative binomial's shape 0)."""
    dpa = _dp_accounting()
    event = dpa.dp_event.RepeatAndSelectDpEvent(dpa.ZCDpEvent(float(rho)), float(mean_runs),
                                                 LOGARITHMIC_SHAPE)
    compute = _event_rdp if cached else _event_rdp.__wrapped__
    return np.asarray(compute(event, orders))
