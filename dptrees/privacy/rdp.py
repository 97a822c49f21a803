"""Renyi-DP accounting of many (subsampled) Gaussian and pure-DP releases.

:class:`RDPAccountant` composes the curves of :mod:`dptrees.privacy.rdp_curves` (as in
DP-SGD-style boosting and federated rounds, where summing ``(epsilon, delta)`` would be
far too pessimistic), counts steps, caches the curves of repeated mechanisms, lets
callers peek at the cost of the next round before paying for it, and converts to
``(epsilon, delta)`` with ``dp-accounting``. The final ``(epsilon, delta)`` it reports
can then be spent from a :class:`~dptrees.privacy.budget.BudgetAccountant` in one go.
"""

from __future__ import annotations

import copy
import math
import threading
from typing import Self

import numpy as np
from numpy.typing import ArrayLike

from dptrees._checks import as_real, check_delta, check_epsilon, check_positive_int, check_positive_number
from dptrees.privacy.rdp_curves import (
    _best_of_zcdp_rdp,
    _check_mean_runs,
    _dp_accounting,
    _event_rdp,
    _pure_dp_rdp,
    _subsampled_discrete_gaussian_rdp,
)

__all__ = ["RDPAccountant"]


class RDPAccountant:
    """Renyi-DP accountant for (subsampled) Gaussian, Laplace and zCDP mechanisms.

    Composes mechanisms by adding their Renyi divergences at a fixed set of orders and
    converts the total to ``(epsilon, delta)``-DP on request. For many compositions of
    Gaussian mechanisms (boosting rounds, federated rounds) this is far tighter than
    summing ``(epsilon, delta)``. All guarantees are for add/remove-one neighbouring
    datasets; in federated use, where each round samples clients, the neighbour is one
    whole client.

    The privacy analysis is mostly Google's ``dp-accounting`` package: the RDP of the
    Gaussian and zCDP mechanisms is computed by ``dp_accounting.rdp.RdpAccountant``
    (neighbouring relation ``ADD_OR_REMOVE_ONE``), and the total is converted by
    ``dp_accounting.rdp``'s ``compute_epsilon`` / ``compute_delta``, the functions that
    class uses itself. Two curves are computed here, each proved next to its code: the
    one every pure ``epsilon``-DP release satisfies (:meth:`compose_laplace`), and the
    "remove" direction of the subsampled *discrete* Gaussian
    (:meth:`compose_subsampled_discrete_gaussian`). This class adds the per-order RDPs
    up (composition), which is all ``RdpAccountant.compose`` does; doing it here lets the
    RDP of a repeated mechanism be computed once and lets :meth:`would_exceed` peek at
    the next round cheaply. The conversion is the improved one of Canonne, Kamath and
    Steinke (2020, Prop. 12) / Asoodeh et al. (2020), so epsilons are lower than those of
    the original moments accountant (Abadi et al., 2016) for the same mechanism.

    Methods that compose return the accountant, so calls can be chained. The accountant
    is thread-safe.

    Parameters
    ----------
    orders : sequence of float, optional
        Renyi orders (each ``> 1``) at which divergences are tracked; epsilon is minimised
        over them. Defaults to ``dp_accounting``'s ``DEFAULT_RDP_ORDERS`` (1.1 to 1024),
        suited to the usual privacy regimes; the smallest zCDP budgets need larger
        orders (:func:`~dptrees.privacy.rdp_curves.zcdp_orders`).

    See Also
    --------
    BudgetAccountant : Spend the final ``(epsilon, delta)`` from a total budget.

    Notes
    -----
    Renyi DP cannot certify pure DP: with ``delta=0``, :meth:`get_epsilon` returns ``inf``
    as soon as anything was composed, and for a single Laplace release it reports a
    slightly larger epsilon than the mechanism's own. Use it when there are many
    compositions.

    For a subsampled Gaussian with little noise, ``dp-accounting`` may fail to compute
    the RDP at some small fractional orders; it then logs a warning and counts those
    orders as infinite, which is conservative.

    Examples
    --------
    Federated training that stops before a round would push delta past its bound:

    >>> acc = RDPAccountant()
    >>> rounds = 0
    >>> while not acc.would_exceed(1.0, 1e-5, noise_multiplier=2.0, sampling_probability=0.1):
    ...     _ = acc.compose_subsampled_gaussian(0.1, 2.0)  # run the round, then record it
    ...     rounds += 1
    >>> rounds, acc.get_delta(1.0) <= 1e-5
    (11, True)
    """

    def __init__(self, orders: ArrayLike | None = None) -> None:
        if orders is None:
            orders = _dp_accounting().rdp.rdp_privacy_accountant.DEFAULT_RDP_ORDERS
        orders = np.asarray(orders, dtype=float)
        if orders.ndim != 1 or orders.size == 0:
            raise ValueError("orders must be a non-empty 1-D sequence of numbers.")
        if not np.all(np.isfinite(orders)) or np.any(orders <= 1):
            raise ValueError("orders must be finite and greater than 1.")
        self._orders = tuple(orders.tolist())
        self._rdp = np.zeros(len(self._orders))
        self._steps = 0
        self._lock = threading.Lock()

    # -- state --------------------------------------------------------------------------

    @property
    def steps(self) -> int:
        """int: Number of mechanisms composed so far (the sum of all ``count``)."""
        return self._steps

    @property
    def orders(self) -> np.ndarray:
        """numpy.ndarray: The Renyi orders tracked (a copy)."""
        return np.array(self._orders)

    @property
    def rdp(self) -> np.ndarray:
        """numpy.ndarray: Renyi-DP of the composition at each order (a copy): everything
        composed so far is ``(orders[i], rdp[i])``-RDP for add/remove-one neighbours."""
        return self._rdp.copy()

    def __repr__(self):
        return f"RDPAccountant(n_orders={len(self._orders)}, steps={self._steps})"

    def copy(self) -> Self:
        """Return an independent copy, e.g. to try compositions without committing them.

        Returns
        -------
        RDPAccountant
            An accountant in the same state; composing into it leaves this one unchanged.
        """
        new = copy.copy(self)
        with self._lock:
            new._rdp, new._steps = self._rdp.copy(), self._steps
        new._lock = threading.Lock()
        return new

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    # -- composition --------------------------------------------------------------------

    def _rdp_after(self, rdp, count):
        """``(rdp, steps)`` after ``count`` more releases of per-order RDP ``rdp``;
        ``self`` is left unchanged."""
        count = check_positive_int(count, "count", minimum=0)
        increment = count * rdp if count else 0.0
        with self._lock:
            return self._rdp + increment, self._steps + count

    def _compose(self, event, count):
        return self._compose_array(_event_rdp(event, self._orders), count)

    def _compose_array(self, rdp, count):
        """Add ``count`` releases of per-order RDP ``rdp`` (at this accountant's orders)."""
        count = check_positive_int(count, "count", minimum=0)
        if count:
            increment = count * rdp
            with self._lock:
                # A new array, so that readers holding the old one see a consistent state.
                self._rdp = self._rdp + increment
                self._steps += count
        return self

    @staticmethod
    def _gaussian_event(noise_multiplier, sampling_probability):
        dpa = _dp_accounting()
        noise_multiplier = check_positive_number(noise_multiplier, "noise_multiplier")
        sampling_probability = as_real(sampling_probability, "sampling_probability")
        if not 0.0 <= sampling_probability <= 1.0:
            raise ValueError(
                f"sampling_probability must be in [0, 1], got {sampling_probability}."
            )
        event = dpa.GaussianDpEvent(noise_multiplier)
        if sampling_probability < 1.0:
            event = dpa.PoissonSampledDpEvent(sampling_probability, event)
        return event

    def compose_gaussian(self, noise_multiplier: float, count: int = 1) -> Self:
        """Record ``count`` releases of the Gaussian mechanism on the full data.

        Parameters
        ----------
        noise_multiplier : float
            Noise standard deviation divided by the L2 sensitivity of the released value
            (the most it changes when one record is added or removed); positive.
        count : int, default=1
            Number of such releases.

        Returns
        -------
        RDPAccountant
            ``self``. Each release is ``(alpha, alpha / (2 noise_multiplier**2))``-RDP.
        """
        return self._compose(self._gaussian_event(noise_multiplier, 1.0), count)

    def compose_subsampled_gaussian(self, sampling_probability: float, noise_multiplier: float,
                                    count: int = 1) -> Self:
        """Record ``count`` Gaussian releases, each on a Poisson subsample.

        Each release includes every record (or client) independently with probability
        ``sampling_probability``, then adds Gaussian noise to a value of the sample, as in
        DP-SGD or a federated round. Subsampling amplifies privacy for add/remove-one
        neighbours only if the sampling is Poisson; a fixed-size sample is not covered.

        Parameters
        ----------
        sampling_probability : float
            Probability, in ``[0, 1]``, that a record takes part in one release.
        noise_multiplier : float
            Noise standard deviation divided by the L2 sensitivity; positive.
        count : int, default=1
            Number of such releases, with independent samples.

        Returns
        -------
        RDPAccountant
            ``self``.
        """
        event = self._gaussian_event(noise_multiplier, sampling_probability)
        return self._compose(event, count)

    def compose_subsampled_discrete_gaussian(self, sampling_probability: float,
                                            noise_multiplier: float, count: int = 1) -> Self:
        """Record ``count`` Poisson-subsampled releases with *discrete* Gaussian noise.

        For integer-valued sums (fixed-point sums of clipped contributions) plus exact
        multivariate discrete Gaussian noise, each record (or client) taking part
        independently with probability ``sampling_probability``: the release
        :class:`~dptrees.federated.DPAggregator` makes every round. Each release is
        accounted at every order by the larger of its two directions (adding or removing
        a record), each proved for the discrete Gaussian (see
        ``_subsampled_discrete_gaussian_rdp``); where the "add" direction dominates, as
        it does at the usual settings, the figure is that of
        :meth:`compose_subsampled_gaussian`.

        Parameters
        ----------
        sampling_probability, count
            As in :meth:`compose_subsampled_gaussian`.
        noise_multiplier : float
            Noise scale divided by the L2 sensitivity (in grid units); positive.

        Returns
        -------
        RDPAccountant
            ``self``.

        Raises
        ------
        ValueError
            If an order of this accountant is not an integer.
        """
        return self._compose_array(
            self._discrete_rdp(sampling_probability, noise_multiplier), count)

    def _discrete_rdp(self, sampling_probability, noise_multiplier):
        noise_multiplier = check_positive_number(noise_multiplier, "noise_multiplier")
        sampling_probability = as_real(sampling_probability, "sampling_probability")
        if not 0.0 <= sampling_probability <= 1.0:
            raise ValueError(
                f"sampling_probability must be in [0, 1], got {sampling_probability}."
            )
        if any(a != round(a) for a in self._orders):
            raise ValueError("the discrete Gaussian is accounted at integer orders only: "
                             "create the RDPAccountant with integer orders")
        return _subsampled_discrete_gaussian_rdp(sampling_probability, noise_multiplier,
                                                 self._orders)

    def compose_laplace(self, epsilon: float, count: int = 1) -> Self:
        """Record ``count`` releases that are each ``epsilon``-DP, e.g. Laplace noise.

        Meant for dptrees' (discrete, possibly vector-valued) Laplace releases, but valid
        for any pure ``epsilon``-DP release: each is accounted with the RDP curve that
        holds for every ``epsilon``-DP mechanism, that of binary randomized response (see
        ``_pure_dp_rdp`` for the proof), not the continuous Laplace mechanism's (Mironov
        2017), which is slightly smaller but proved only for that mechanism.

        Parameters
        ----------
        epsilon : float
            Pure-DP epsilon of one release (for Laplace noise, the L1 sensitivity divided
            by the scale); positive.
        count : int, default=1
            Number of such releases.

        Returns
        -------
        RDPAccountant
            ``self``.
        """
        epsilon = check_positive_number(epsilon, "epsilon")
        return self._compose_array(_pure_dp_rdp(epsilon, self._orders), count)

    def compose_zcdp(self, rho: float, count: int = 1) -> Self:
        """Record ``count`` releases that are each ``rho``-zero-concentrated DP.

        ``rho``-zCDP means ``(alpha, rho * alpha)``-RDP at every order ``alpha``, e.g. the
        discrete Gaussian mechanism, whose ``rho`` is given by :func:`gaussian_rho`.

        Parameters
        ----------
        rho : float
            zCDP parameter of one release, for add/remove-one neighbours; ``>= 0``.
        count : int, default=1
            Number of such releases; together they are ``count * rho``-zCDP.

        Returns
        -------
        RDPAccountant
            ``self``.
        """
        rho = check_epsilon(rho, "rho", zero=True)
        return self._compose(_dp_accounting().ZCDpEvent(rho), count)

    def compose_best_of_zcdp(self, rho: float, mean_runs: float) -> Self:
        """Record the best of a random number of runs of a ``rho``-zCDP mechanism.

        Private selection by random stopping (Papernot & Steinke 2022, "Hyperparameter
        tuning with Renyi differential privacy", ICLR, theorem 2): the number of runs
        ``K`` is drawn, independently of the data, from the logarithmic distribution
        ``P[K = k] = (1 - gamma)**k / (k log(1 / gamma))`` with mean ``mean_runs``
        (``mean_runs = 1``: one run); the runs are independent and only the best one's
        output is released (``K`` and the others are not). With ``eps(a) = rho a`` the
        RDP of one run, the selection is ``(a, eps'(a))``-RDP with

            eps'(a) = eps(a) + log(mean_runs) / (a - 1)
                      + min_b [(1 - 1/b) eps(b) + log(1 / gamma) / b],

        ``b`` over the orders. ``dp_accounting`` computes it
        (``RepeatAndSelectDpEvent`` with shape :data:`LOGARITHMIC_SHAPE`).

        Parameters
        ----------
        rho : float
            zCDP parameter of one run, for add/remove-one neighbours; ``>= 0``.
        mean_runs : float
            Mean number of runs, ``>= 1``.

        Returns
        -------
        RDPAccountant
            ``self``.
        """
        rho = check_epsilon(rho, "rho", zero=True)
        mean_runs = _check_mean_runs(mean_runs)
        return self._compose_array(_best_of_zcdp_rdp(rho, mean_runs, self._orders), 1)

    # -- conversion to (epsilon, delta) -------------------------------------------------

    def _epsilon(self, rdp, delta):
        delta = check_delta(delta, one=True)
        epsilon, _ = _dp_accounting().rdp.compute_epsilon(self._orders, rdp, delta)
        return float(epsilon)

    def _delta(self, rdp, epsilon):
        epsilon = check_epsilon(epsilon, zero=True, infinite=True)
        if math.isinf(epsilon):
            return 0.0
        rdp_module = _dp_accounting().rdp.rdp_privacy_accountant
        delta, _ = rdp_module.compute_delta(self._orders, rdp, epsilon)
        return float(delta)

    def get_epsilon(self, delta: float) -> float:
        """Smallest epsilon such that everything composed so far is ``(epsilon, delta)``-DP.

        Parameters
        ----------
        delta : float
            Target delta, in ``[0, 1]``.

        Returns
        -------
        float
            Epsilon for add/remove-one neighbours (``0.0`` if nothing was composed;
            ``inf`` for ``delta=0`` otherwise).
        """
        return self._epsilon(self._rdp, delta)

    def get_delta(self, epsilon: float) -> float:
        """Smallest delta such that everything composed so far is ``(epsilon, delta)``-DP.

        Parameters
        ----------
        epsilon : float
            Target epsilon, ``>= 0``.

        Returns
        -------
        float
            Delta, in ``[0, 1]``, for add/remove-one neighbours.
        """
        return self._delta(self._rdp, epsilon)

    # -- looking ahead ------------------------------------------------------------------

    def delta_after(self, epsilon: float, *, noise_multiplier: float,
                    sampling_probability: float = 1.0, count: int = 1,
                    discrete: bool = False) -> float:
        """Delta at ``epsilon`` if ``count`` more Gaussian releases were composed.

        Nothing is recorded. The releases are those of :meth:`compose_subsampled_gaussian`
        (or of :meth:`compose_gaussian` with the default ``sampling_probability=1``), or
        with ``discrete=True`` those of :meth:`compose_subsampled_discrete_gaussian`. For
        other mechanisms, compose into a :meth:`copy`.

        Parameters
        ----------
        epsilon : float
            Target epsilon, ``>= 0``.
        noise_multiplier : float
            Noise standard deviation divided by the L2 sensitivity; positive.
        sampling_probability : float, default=1.0
            Poisson sampling probability of each release.
        count : int, default=1
            Number of further releases.
        discrete : bool, default=False
            Account them as :meth:`compose_subsampled_discrete_gaussian` does.

        Returns
        -------
        float
            The delta :meth:`get_delta` would return after composing them.
        """
        if discrete:
            one = self._discrete_rdp(sampling_probability, noise_multiplier)
        else:
            one = _event_rdp(self._gaussian_event(noise_multiplier, sampling_probability),
                             self._orders)
        rdp, _ = self._rdp_after(one, count)
        return self._delta(rdp, epsilon)

    def would_exceed(
        self, epsilon: float, max_delta: float, *, noise_multiplier: float,
        sampling_probability: float = 1.0, count: int = 1, discrete: bool = False,
    ) -> bool:
        """Tell whether ``count`` more Gaussian releases would push delta past a bound.

        Call it before each round, and stop if it returns True: the composition so far
        then stays ``(epsilon, max_delta)``-DP for add/remove-one neighbours. Nothing is
        recorded.

        Parameters
        ----------
        epsilon : float
            Target epsilon, ``>= 0``.
        max_delta : float
            Largest acceptable delta, in ``[0, 1]``.
        noise_multiplier, sampling_probability, count, discrete
            The further releases, as for :meth:`delta_after`.

        Returns
        -------
        bool
            True if, after them, the delta at ``epsilon`` would be greater than
            ``max_delta``.
        """
        max_delta = check_delta(max_delta, "max_delta", one=True)
        delta = self.delta_after(
            epsilon,
            noise_multiplier=noise_multiplier,
            sampling_probability=sampling_probability,
            count=count,
            discrete=discrete,
        )
        return delta > max_delta
