"""Zero-concentrated DP: the ``rho`` of Gaussian noise, its conversion to
``(epsilon, delta)``, and the largest ``rho`` a budget allows (for one release, or for
the best of a random number of runs)."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from dptrees._checks import check_delta, check_epsilon, check_positive_number
from dptrees.privacy.rdp import RDPAccountant
from dptrees.privacy.rdp_curves import _best_of_zcdp_rdp, _check_mean_runs, zcdp_orders

__all__ = ["best_of_zcdp_budget", "gaussian_rho", "zcdp_budget", "zcdp_to_approx_dp"]


def _largest_rho(epsilon, delta, rdp_of_rho, orders=None):
    """The largest ``rho`` whose curve ``rdp_of_rho(rho, orders)`` converts to at most
    ``(epsilon, delta)``-DP (:class:`RDPAccountant`'s conversion). Bisection, rounded down."""
    epsilon = check_positive_number(epsilon, "epsilon")
    delta = check_delta(delta, positive=True)
    acc = RDPAccountant(orders)
    orders_arr = np.asarray(acc._orders)

    def reached(rho):
        return acc._epsilon(rdp_of_rho(rho, orders_arr), delta)

    def fits(rho):
        return reached(rho) <= epsilon

    high = float(epsilon)
    for _ in range(64):  # for large delta, eps(rho) can be below rho: widen the bracket
        if not fits(high):
            break
        high *= 2
    low = 0.0
    for _ in range(200):  # bisection in log scale first, then linear
        mid = math.sqrt(max(low, high * 2.0**-1000) * high) if high > 2**20 * max(low, 1e-300) \
            else (low + high) / 2
        low, high = (mid, high) if fits(mid) else (low, mid)
    if not low > 0 or reached(low) < epsilon * (1 - 1e-3):
        # dp-accounting rounds tiny RDPs to epsilon = 0; the orders cannot reach epsilon.
        raise ValueError(
            f"(epsilon={epsilon}, delta={delta}) is out of reach of the Renyi orders "
            f"(largest {max(acc._orders)}): use a larger epsilon or delta"
        )
    return low


def zcdp_budget(epsilon: float, delta: float, orders: ArrayLike | None = None) -> float:
    """The largest ``rho`` whose ``rho``-zCDP converts to at most ``(epsilon, delta)``-DP.

    The conversion is :class:`RDPAccountant`'s (``rho``-zCDP is ``(alpha, alpha rho)``-RDP
    at every order), so an estimator that splits ``rho`` over its Gaussian releases and
    records each of them in an :class:`RDPAccountant` with the same ``orders`` reports an
    epsilon of at most ``epsilon`` at ``delta``. Found by bisection, rounded down.

    Parameters
    ----------
    epsilon : float
        Target epsilon, > 0.
    delta : float
        Target delta, in (0, 1).
    orders : sequence of float, optional
        Renyi orders; default :func:`~dptrees.privacy.rdp_curves.zcdp_orders` (up to
        ``2**20``, which epsilon below about 0.02 needs).

    Returns
    -------
    float
    """
    if orders is None:
        orders = zcdp_orders()
    return _largest_rho(epsilon, delta, lambda rho, orders_arr: rho * orders_arr, orders)


def best_of_zcdp_budget(epsilon: float, delta: float, mean_runs: float,
                        orders: ArrayLike | None = None) -> float:
    """The largest ``rho`` such that the best of a random number of ``rho``-zCDP runs is
    ``(epsilon, delta)``-DP.

    The number of runs is logarithmic with mean ``mean_runs`` (see
    :meth:`RDPAccountant.compose_best_of_zcdp`), and only the best run is released. The
    conversion is :class:`RDPAccountant`'s; found by bisection, rounded down.

    Parameters
    ----------
    epsilon : float
        Target epsilon of the whole selection, > 0.
    delta : float
        Target delta, in (0, 1).
    mean_runs : float
        Mean number of runs, ``>= 1``.
    orders : sequence of float, optional
        Renyi orders, as for :class:`RDPAccountant`.

    Returns
    -------
    float
        The ``rho`` each run may spend.
    """
    mean_runs = _check_mean_runs(mean_runs)
    # Uncached: the bisection's ~200 events would crowd _event_rdp's cache, which
    # training runs use for the RDP of their repeated (subsampled) releases.
    return _largest_rho(epsilon, delta,
                        lambda rho, orders_arr: _best_of_zcdp_rdp(rho, mean_runs,
                                                                  tuple(orders_arr),
                                                                  cached=False),
                        orders)


def gaussian_rho(l2_sensitivity: float, sigma: float) -> float:
    """Zero-concentrated DP of adding Gaussian noise.

    Adding noise of standard deviation ``sigma`` to a value whose L2 norm changes by at
    most ``l2_sensitivity`` when one record is added or removed is ``rho``-zCDP with
    ``rho = l2_sensitivity**2 / (2 sigma**2)``. This holds for continuous Gaussian noise
    (Bun and Steinke 2016) and for the discrete Gaussian on the integers, with ``sigma**2``
    its scale parameter, in any dimension (Canonne, Kamath and Steinke 2020, Thms 4, 14).

    Parameters
    ----------
    l2_sensitivity : float
        L2 sensitivity of the released value, ``>= 0``.
    sigma : float
        Noise standard deviation (scale parameter for the discrete Gaussian); positive.

    Returns
    -------
    float
        ``rho``; convert it with :func:`zcdp_to_approx_dp` or compose it with
        :meth:`RDPAccountant.compose_zcdp`.
    """
    l2_sensitivity = check_positive_number(l2_sensitivity, "l2_sensitivity", allow_zero=True)
    sigma = check_positive_number(sigma, "sigma")
    return l2_sensitivity**2 / (2.0 * sigma**2)


def _ckks_epsilon(log_alpha_minus_one, rho, log_delta):
    """Epsilon at order alpha from CKS 2020 Prop. 12 applied to ``(alpha, alpha*rho)``-RDP.

    Written in terms of ``a = alpha - 1`` for accuracy near alpha = 1:
    ``alpha*rho + log(a/alpha) - (log(delta) + log(alpha)) / a``.
    """
    a = np.exp(log_alpha_minus_one)
    log_alpha = np.log1p(a)
    return (1.0 + a) * rho + log_alpha_minus_one - log_alpha - (log_delta + log_alpha) / a


def zcdp_to_approx_dp(rho: float, delta: float) -> float:
    """Convert ``rho``-zCDP to ``(epsilon, delta)``-DP.

    ``rho``-zCDP means ``(alpha, alpha * rho)``-RDP for every order ``alpha > 1``. By
    Canonne, Kamath and Steinke (2020, "The discrete Gaussian for differential privacy",
    Prop. 12 and Cor. 13), an ``(alpha, tau)``-RDP mechanism is ``(epsilon, delta)``-DP with

        epsilon = tau + log(1 - 1/alpha) - (log(delta) + log(alpha)) / (alpha - 1),

    for any ``alpha > 1``. This function minimises that over ``alpha`` (a fine grid, then a
    golden-section refinement). Every ``alpha`` gives a valid bound, so the result is sound
    however well the minimum is found; it is never larger than the classical
    ``rho + 2 sqrt(rho log(1/delta))``. The guarantee is for the same neighbouring relation
    as the zCDP one (add/remove-one in dptrees).

    Parameters
    ----------
    rho : float
        zCDP parameter, ``>= 0`` (see :func:`gaussian_rho`).
    delta : float
        Target delta, in ``(0, 1]``.

    Returns
    -------
    float
        Epsilon, ``>= 0``.
    """
    rho = check_epsilon(rho, "rho", zero=True)
    delta = check_delta(delta, one=True)
    if delta == 0:
        raise ValueError("delta must be positive: zCDP does not imply pure DP.")
    if rho == 0 or delta == 1:
        return 0.0
    log_delta = math.log(delta)

    def objective(t):
        return float(_ckks_epsilon(t, rho, log_delta))

    # Grid over t = log(alpha - 1): alpha from 1 + 1e-6 to 1 + 1e9 covers rho from ~1e-16
    # (optimal alpha ~ sqrt(log(1/delta) / rho)) to ~1e6.
    grid = np.linspace(math.log(1e-6), math.log(1e9), 2001)
    with np.errstate(over="ignore"):
        values = _ckks_epsilon(grid, rho, log_delta)
    best = int(np.argmin(values))
    lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    best_value = float(values[best])
    # Golden-section search inside the bracketing grid cell pair.
    inv_phi = (math.sqrt(5.0) - 1.0) / 2.0
    c, d = hi - inv_phi * (hi - lo), lo + inv_phi * (hi - lo)
    fc, fd = objective(c), objective(d)
    for _ in range(80):
        if fc < fd:
            hi, d, fd = d, c, fc
            c = hi - inv_phi * (hi - lo)
            fc = objective(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + inv_phi * (hi - lo)
            fd = objective(d)
    best_value = min(best_value, fc, fd)
    return max(0.0, best_value)
