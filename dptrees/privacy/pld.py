"""Privacy-loss-distribution (PLD) accounting of the discrete Gaussian releases we make.

dptrees adds exact *discrete* Gaussian noise (on a power-of-two grid, in grid units); the
privacy loss distributions of Google's ``dp-accounting`` are those of the *continuous*
Gaussian. This module bridges the two with a coupling, so that the PLD figures hold for
what is sampled.

The coupling
------------
Let ``N_Z(sigma^2)`` be the discrete Gaussian on the integers (``P[k]`` proportional to
``exp(-k^2 / (2 sigma^2))``), ``phi_s`` the density of ``N(0, s^2)``, ``tau > 0`` and
``sigma_c^2 = sigma^2 - tau^2``. Define the mechanism ``M~(x) = K(x + N(0, sigma_c^2))``
whose rounding kernel ``K`` sends ``y`` to the integer ``k`` with probability
``w(k - y) = phi_tau(k - y) / Theta(y)``, ``Theta(y) = sum_j phi_tau(j - y)`` (a
partition of unity, and ``K(y + x) = K(y) + x`` for integer ``x``).

* ``M~`` is a post-processing of the continuous Gaussian mechanism with standard
  deviation ``sigma_c``, so for an integer shift ``v`` its privacy loss distribution is
  dominated by that of ``N(0, sigma_c^2)`` vs ``N(||v||, sigma_c^2)`` (rotation
  invariance), in both directions, and the same holds after Poisson subsampling (the
  kernel acts after the subsampled sum).
* Its output distribution is that of the discrete Gaussian up to a factor ``e^(+-eta)``
  per coordinate: with ``phi_c(u) phi_tau(m - u) = phi_sigma(m) phi_s(u - a)``
  (``s^2 = sigma_c^2 tau^2 / sigma^2``), ``P[M~(x) = x + m] = phi_sigma(m) * integral
  phi_s(u - a) / Theta(u) du``; Poisson summation gives ``Theta(u) = 1 + 2 sum_k
  e^(-2 pi^2 tau^2 k^2) cos(2 pi k u)`` in ``[1 - 2 rho, 1 + 2 rho]``,
  ``rho = sum_(k >= 1) e^(-2 pi^2 tau^2 k^2)``, and ``sum_m e^(-m^2 / (2 sigma^2)) =
  sqrt(2 pi) sigma (1 + 2 rho_sigma)`` with ``rho_sigma <= rho``. So the ratio of the two
  probabilities of any point lies in ``[1 / (1 + 2 rho), (1 + 2 rho) / (1 - 2 rho)]``:
  ``|log ratio| <= eta = log((1 + 2 rho) / (1 - 2 rho))`` per coordinate, ``n eta`` for a
  release of ``n`` independent coordinates, and ``S = sum n eta`` over a whole run (the
  ratio bound is pointwise, so it composes adaptively and survives subsampling, a
  mixture).
* Hence, for any event ``E`` and neighbours ``D, D'``: ``P[run(D) in E] <= e^S P~[D](E)
  <= e^S (e^eps P~[D'](E) + delta~) <= e^(eps + 2S) P[run(D') in E] + e^S delta~``: the run
  is ``(eps + 2 S, e^S delta~)``-DP whenever the continuous-Gaussian PLD with noise
  multipliers ``z sigma_c / sigma`` certifies ``(eps, delta~)``.

Here ``tau = 4`` grid units, so ``rho < 10^-137``, and releases need ``sigma >=
tau / sqrt(1 - f^2)`` grid units for the noise multiplier factor ``f = 1 - 2^-10``
(``sigma_c / sigma >= f``): about 90.5 units, far below what
:func:`dptrees.mechanisms.gaussian_grid` uses (at least ``1024 z`` units). Every release
is assumed to hold at most ``2**40`` coordinates; ``S`` is then below ``10^-120`` per
release, and is added to the reported epsilon and delta all the same.
"""

import math
from collections import Counter
from typing import Self

from dptrees.mechanisms import gaussian_grid
from dptrees._checks import as_real, check_delta, check_epsilon, check_positive_int, check_positive_number
from dptrees.privacy.rdp_curves import _dp_accounting

__all__ = ["PLDAccountant", "PLD_MAX_EPSILON", "PLD_MIN_SIGMA", "PLD_NOISE_FACTOR",
           "check_pld_coupling", "pld_gaussian_budget"]

#: Standard deviation, in grid units, of the coupling kernel (see the module docstring).
_TAU = 4.0
#: The continuous noise multiplier used for a discrete Gaussian one: ``z * PLD_NOISE_FACTOR``.
PLD_NOISE_FACTOR = 1.0 - 2.0**-10
#: Smallest discrete-Gaussian standard deviation (grid units) the coupling needs.
PLD_MIN_SIGMA = _TAU / math.sqrt(1.0 - PLD_NOISE_FACTOR**2)
_RHO = sum(math.exp(-2.0 * math.pi**2 * _TAU**2 * k**2) for k in range(1, 4))
#: ``|log ratio|`` bound of one release of at most 2**40 coordinates.
_SLACK_PER_RELEASE = 2.0**40 * math.log1p(4.0 * _RHO / (1.0 - 2.0 * _RHO))


class PLDAccountant:
    """Privacy-loss-distribution accounting of discrete Gaussian releases.

    An alternative to :class:`~dptrees.accounting.RDPAccountant` for (Poisson-subsampled)
    discrete Gaussian releases, tighter for the same noise: ``dp-accounting``'s
    ``PLDAccountant`` (pessimistic discretisation, add/remove-one neighbours, both
    directions) composes the continuous Gaussians that a coupling proves to dominate what
    dptrees samples, and the coupling's slack is added to the result (module docstring).

    Parameters
    ----------
    value_discretization_interval : float, default=1e-4
        ``dp-accounting``'s grid of privacy-loss values (smaller: tighter, slower). The
        discretisation is pessimistic: the figures are upper bounds.

    Notes
    -----
    Each release's discrete Gaussian must have a standard deviation of at least
    :data:`PLD_MIN_SIGMA` grid units and at most ``2**40`` coordinates; the releases of
    :func:`dptrees.mechanisms.gaussian_mechanism` do.
    """

    def __init__(self, value_discretization_interval: float = 1e-4) -> None:
        self.value_discretization_interval = check_positive_number(
            value_discretization_interval, "value_discretization_interval")
        self._subsampled = Counter()  # (q, z) -> releases
        self._gaussian_mu2 = 0.0  # non-subsampled Gaussians compose into one
        self._releases = 0
        self._cache = {}

    def __getstate__(self):
        """The composed releases as plain lists (files keep string keys only); the
        cache of computed privacy-loss distributions is rebuilt on demand."""
        state = dict(self.__dict__, _cache={})
        state["_subsampled"] = [[q, z, n] for (q, z), n in self._subsampled.items()]
        return state

    def __setstate__(self, state):
        state = dict(state)
        state["_subsampled"] = Counter({(q, z): n for q, z, n in state["_subsampled"]})
        self.__dict__.update(state)

    @property
    def steps(self) -> int:
        """int: Number of releases composed."""
        return self._releases

    def compose_subsampled_discrete_gaussian(self, sampling_probability: float,
                                            noise_multiplier: float, count: int = 1) -> Self:
        """Record ``count`` Poisson-subsampled discrete Gaussian releases.

        Parameters
        ----------
        sampling_probability : float
            In ``[0, 1]``; 1 means no subsampling.
        noise_multiplier : float
            Noise standard deviation over the L2 sensitivity (grid units); positive.
        count : int, default=1
            How many such releases.

        Returns
        -------
        PLDAccountant
            ``self``.
        """
        q, z = self._check(sampling_probability, noise_multiplier)
        count = check_positive_int(count, "count", minimum=0)
        if q == 1.0:
            self._gaussian_mu2 += count / (z * PLD_NOISE_FACTOR) ** 2
        elif q > 0:
            self._subsampled[(q, z)] += count
        self._releases += count
        return self

    def compose_discrete_gaussian(self, noise_multiplier: float, count: int = 1) -> Self:
        """Record ``count`` discrete Gaussian releases on the full data (no subsampling).

        Continuous Gaussians compose exactly into one of ``mu = sqrt(sum z_i^-2)``
        (rotation invariance), which is what is accounted.

        Parameters
        ----------
        noise_multiplier, count
            As for :meth:`compose_subsampled_discrete_gaussian`.

        Returns
        -------
        PLDAccountant
            ``self``.
        """
        return self.compose_subsampled_discrete_gaussian(1.0, noise_multiplier, count)

    @staticmethod
    def _check(sampling_probability, noise_multiplier):
        z = check_positive_number(noise_multiplier, "noise_multiplier")
        q = as_real(sampling_probability, "sampling_probability")
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"sampling_probability must be in [0, 1], got {q}.")
        return q, z

    def _pld(self, extra=None):
        """dp-accounting's PLD of everything composed (plus ``extra`` = ((q, z), count))."""
        subsampled = Counter(self._subsampled)
        mu2 = self._gaussian_mu2
        releases = self._releases
        if extra is not None:
            (q, z), count = extra
            if q == 1.0:
                mu2 += count / (z * PLD_NOISE_FACTOR) ** 2
            elif q > 0:
                subsampled[(q, z)] += count
            releases += count
        key = (tuple(sorted(subsampled.items())), mu2)
        if key not in self._cache:
            dpa = _dp_accounting()
            acc = dpa.pld.PLDAccountant(
                dpa.NeighboringRelation.ADD_OR_REMOVE_ONE,
                value_discretization_interval=self.value_discretization_interval)
            for (q, z), n in sorted(subsampled.items()):
                event = dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(z * PLD_NOISE_FACTOR))
                acc.compose(event, n)
            if mu2 > 0:
                acc.compose(dpa.GaussianDpEvent(1.0 / math.sqrt(mu2)))
            self._cache[key] = acc
        return self._cache[key], releases * _SLACK_PER_RELEASE

    @staticmethod
    def _epsilon_of(acc, slack, delta):
        delta = check_delta(delta, one=True)
        if delta == 0:
            return math.inf
        return float(acc.get_epsilon(delta * math.exp(-slack))) + 2.0 * slack

    @staticmethod
    def _delta_of(acc, slack, epsilon):
        epsilon = check_epsilon(epsilon, zero=True, infinite=True)
        if math.isinf(epsilon):
            return 0.0
        if epsilon < 2.0 * slack:
            return 1.0
        return min(1.0, math.exp(slack) * float(acc.get_delta(epsilon - 2.0 * slack)))

    def get_epsilon(self, delta: float) -> float:
        """Smallest epsilon the composition is ``(epsilon, delta)``-DP for (upper bound).

        Parameters
        ----------
        delta : float
            In ``[0, 1)``.

        Returns
        -------
        float
            The epsilon; 0 when nothing was composed.
        """
        return self._of_composition(self._epsilon_of, delta)

    def get_delta(self, epsilon: float) -> float:
        """Delta at ``epsilon`` of everything composed (upper bound).

        Parameters
        ----------
        epsilon : float
            Non-negative.

        Returns
        -------
        float
            The delta; 0 when nothing was composed.
        """
        return self._of_composition(self._delta_of, epsilon)

    def _of_composition(self, bound, argument):
        """``bound(*pld, argument)`` of everything composed, or 0 before any release."""
        return bound(*self._pld(), argument) if self._releases else 0.0

    def delta_after(self, epsilon: float, *, noise_multiplier: float,
                    sampling_probability: float = 1.0, count: int = 1) -> float:
        """Delta at ``epsilon`` if ``count`` more such releases were composed (nothing is
        recorded).

        Parameters
        ----------
        epsilon : float
            Non-negative.
        noise_multiplier : float
            Of the releases to add, as for :meth:`compose_subsampled_discrete_gaussian`.
        sampling_probability : float, default=1.0
            Of the releases to add; 1 means no subsampling.
        count : int, default=1
            How many releases to add.

        Returns
        -------
        float
            The delta of the composition with them.
        """
        q, z = self._check(sampling_probability, noise_multiplier)
        return self._delta_of(*self._pld(((q, z), check_positive_int(count, "count", minimum=0))), epsilon)

    def would_exceed(self, epsilon: float, max_delta: float, *, noise_multiplier: float,
                     sampling_probability: float = 1.0, count: int = 1) -> bool:
        """Whether ``count`` more releases would push delta at ``epsilon`` past ``max_delta``.

        Parameters
        ----------
        epsilon : float
            Non-negative.
        max_delta : float
            The delta not to exceed.
        noise_multiplier, sampling_probability, count
            The releases to add, as for :meth:`delta_after`.

        Returns
        -------
        bool
            True if :meth:`delta_after` is above ``max_delta``.
        """
        max_delta = check_delta(max_delta, "max_delta", one=True)
        return self.delta_after(epsilon, noise_multiplier=noise_multiplier,
                                sampling_probability=sampling_probability,
                                count=count) > max_delta

    def __repr__(self):
        return f"PLDAccountant(steps={self._releases})"


# Above this total epsilon the PLD accounting is refused (the releases' noise would fall
# below what the coupling needs).
PLD_MAX_EPSILON = 50.0


def check_pld_coupling(sensitivity: float, noise_multiplier: float, n_values: int) -> None:
    """Raise ``ValueError`` unless the discrete Gaussian that
    :func:`dptrees.mechanisms.gaussian_mechanism` adds for these parameters has a standard
    deviation of at least :data:`PLD_MIN_SIGMA` grid units (what the coupling needs).
    Called before anything is released.

    Parameters
    ----------
    sensitivity : float
        The release's L2 sensitivity.
    noise_multiplier : float
        Its noise standard deviation over the sensitivity.
    n_values : int
        How many values it releases (they share the fixed-point grid).
    """
    _, sigma2_units = gaussian_grid(sensitivity, noise_multiplier, max(n_values, 1))
    if math.sqrt(sigma2_units) < PLD_MIN_SIGMA:
        raise ValueError("the noise is too small on its grid for the PLD accounting's "
                         "coupling: use accounting='rdp'")


def pld_gaussian_budget(epsilon: float, delta: float) -> float:
    """The largest zCDP ``rho`` whose Gaussian releases the PLD accounting certifies at
    ``(epsilon, delta)``: the PLD counterpart of :func:`dptrees.accounting.zcdp_budget`.

    Gaussian releases of total ``rho`` compose into one Gaussian of ``mu = sqrt(2 rho)``
    (continuous; rotation invariance), whose exact curve is ``delta(eps) =
    Phi(-eps / mu + mu / 2) - e^eps Phi(-eps / mu - mu / 2)`` (Balle & Wang 2018); the
    coupling of :class:`PLDAccountant` divides the noise multiplier
    by ``PLD_NOISE_FACTOR``. Bisection on that curve, then a check with the
    (pessimistic) PLD itself, backing off by 0.1 % until it agrees.

    Parameters
    ----------
    epsilon : float
        At most :data:`PLD_MAX_EPSILON`.
    delta : float
        In ``(0, 1)``.

    Returns
    -------
    float
        ``rho``.
    """
    if epsilon > PLD_MAX_EPSILON:
        raise ValueError(f"accounting='pld' takes epsilon <= {PLD_MAX_EPSILON:g} (beyond, "
                         "the noise is too small for its coupling): use accounting='rdp'")

    def analytic_delta(rho):
        mu = math.sqrt(2.0 * rho) / PLD_NOISE_FACTOR
        phi = lambda x: 0.5 * math.erfc(-x / math.sqrt(2.0))  # noqa: E731
        return phi(-epsilon / mu + mu / 2) - math.exp(epsilon) * phi(-epsilon / mu - mu / 2)

    low, high = 0.0, max(epsilon, 1.0)
    while analytic_delta(high) <= delta:
        high *= 2.0
    for _ in range(100):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if analytic_delta(mid) <= delta else (low, mid)
    rho = low
    for _ in range(50):
        check = PLDAccountant().compose_discrete_gaussian(1.0 / math.sqrt(2.0 * rho))
        if check.get_epsilon(delta) <= epsilon:
            return rho
        rho *= 0.999
    raise ValueError(f"(epsilon={epsilon}, delta={delta}) is out of reach of the PLD "
                     "accounting: use accounting='rdp'")
