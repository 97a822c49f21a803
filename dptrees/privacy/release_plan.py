"""The release plan of a fit: budget, noise, composition and ledger in one place.

:class:`ReleasePlan` is the one door through which the estimators release anything: it
charges the fit's budget to the accountant once, adds exact discrete Gaussian or Laplace
noise (or draws an exponential-mechanism selection) calibrated to the sensitivity its
caller states, composes the release's cost (zCDP, Renyi DP of Poisson-subsampled
releases, or privacy loss distributions) and records it in the ledger as it happens.
The compiled tree builder draws its own exact noise in C; the trees record each grown
tree's releases through the plan as it returns. Every guarantee is for add/remove-one
neighbours.
"""

import functools
import math

import numpy as np

from dptrees.privacy.report import Ledger
from dptrees.mechanisms import (
    _laplace_ratio,
    exponential_mechanism,
    gaussian_grid,
    gaussian_mechanism,
    laplace_grid,
    laplace_mechanism,
)
from dptrees.privacy.pld import PLDAccountant, check_pld_coupling, pld_gaussian_budget
from dptrees.privacy.rdp import RDPAccountant
from dptrees.privacy.rdp_curves import INTEGER_ORDERS, zcdp_orders
from dptrees.privacy.zcdp import zcdp_budget

__all__ = ["ReleasePlan", "base_measure_shift", "subsampled_gaussian_budget"]


@functools.lru_cache(maxsize=256)
def subsampled_gaussian_budget(epsilon, delta, sampling_probability, n_releases, init_rho,
                               unamplified_rho):
    """``1 / (2 z**2)`` for the smallest multiplier ``z`` (to 0.1 %, by bisection) such that
    an ``init_rho``-zCDP release followed by ``n_releases`` Poisson-subsampled discrete
    Gaussian releases of multiplier ``z`` is ``(epsilon, delta)``-DP by the accountant's
    own conversion (:meth:`~dptrees.accounting.RDPAccountant.compose_subsampled_discrete_gaussian`
    at :data:`~dptrees.accounting.INTEGER_ORDERS`). A function of public values only;
    cached, since the search composes the accountant a few dozen times.
    ``unamplified_rho`` is the budget the releases would share without amplification
    (their multiplier is then a safe upper end of the search).
    """
    def fits(z):
        acc = RDPAccountant(INTEGER_ORDERS).compose_zcdp(init_rho)
        acc.compose_subsampled_discrete_gaussian(sampling_probability, z, count=n_releases)
        return acc.get_epsilon(delta) <= epsilon

    high = math.sqrt(n_releases / (2.0 * unamplified_rho))
    low = high * sampling_probability / 2
    if fits(low):
        raise ValueError("the sampling probability is too small for the exact samplers")
    while high / low > 1.001:
        mid = math.sqrt(low * high)
        low, high = (low, mid) if fits(mid) else (mid, high)
    return 1.0 / (2.0 * high * high)


class ReleasePlan:
    """The door every release of a boosting fit goes through, with its noise fixed before
    the first one.

    The plan holds the fit's total budget (a zCDP ``rho`` for Gaussian noise, converted
    from ``(epsilon, delta)`` by Renyi DP or by privacy loss distributions; an
    ``epsilon`` for Laplace noise) and its accountant. Each :meth:`release` or
    :meth:`select` draws its noise through :mod:`dptrees.mechanisms`, composes its cost
    and writes its ledger entry at the moment of release, so ``privacy_ledger_`` and
    :meth:`spent` are what was released, never a reconstruction. ``budget`` is a release's
    ``rho`` (Gaussian) or ``epsilon`` (Laplace). The sensitivity of each release is its
    caller's, stated next to the call.
    """

    def __init__(self, noise, epsilon, delta, accounting="rdp", subsample=None):
        self.noise = noise
        self.epsilon = epsilon
        self.delta = delta
        self.subsample = subsample
        gaussian = noise == "gaussian"
        # the orders zcdp_budget converts at, so that spent() stays within the budget
        orders = INTEGER_ORDERS if subsample is not None else zcdp_orders()
        self.rdp = RDPAccountant(orders) if gaussian and accounting == "rdp" else None
        self.pld = PLDAccountant() if gaussian and accounting == "pld" else None
        # Shares of the total are floats: a hair below it keeps their sum below it too.
        if not gaussian:
            total = epsilon
        elif self.pld is not None:
            total = pld_gaussian_budget(epsilon, delta)
        else:
            total = zcdp_budget(epsilon, delta)
        self.total = self._whole = total * (1 - 1e-12)
        self._reservations = []  # budgets taken off the total before the estimator's
        self.epsilons = []  # Laplace releases' epsilons
        self.n_releases = 0
        self._ledger = Ledger()

    def reserve(self, share):
        """Take ``share`` (in (0, 1)) of the total off it for a release made before the
        estimator's own (the private bin edges), before the estimator splits the rest:
        every later share of ``total`` is then of what is left, and the sum stays
        within the fit's budget. Returns the reserved budget."""
        budget = share * self.total
        self.total -= budget
        self._reservations.append(budget)
        return budget

    @property
    def reserved(self):
        """float: The budgets :meth:`reserve` took off the total and :meth:`restore` did
        not give back."""
        return math.fsum(self._reservations)

    def restore(self, budget):
        """Give back ``budget``, one reserved by :meth:`reserve` and never spent (private
        edges or a category order an estimator chose not to release): every later share
        of ``total`` is then of the larger rest. Each reservation is given back as it was
        taken, never by a difference of float sums, which may fall an ulp short of the
        second of two."""
        if budget not in self._reservations:
            raise ValueError(f"cannot restore {budget!r}: the reserved budgets are "
                             f"{self._reservations!r}")
        self._reservations.remove(budget)
        self.total = self._whole - self.reserved  # exactly the whole when none is left

    def record(self, release, mechanism, sensitivity, norm, count=1, **budget):
        """Count ``count`` releases of a kind in the ledger (:class:`Ledger`): those
        drawn here, or by the compiled tree builder with noise this plan fixed."""
        self._ledger.record(release, mechanism, sensitivity, norm=norm, count=count,
                            **budget)

    def charge(self, accountant, label):
        """Spend the fit's ``(epsilon, delta)`` from ``accountant``, once, before the
        first release (a ``BudgetExceededError`` leaves nothing spent or released)."""
        accountant.spend(self.epsilon, self.delta, label=label)

    def ledger(self):
        """The ledger of the releases so far (``privacy_ledger_``)."""
        return self._ledger.entries()

    def subsampled_budget(self, init_budget, n_releases):
        """The per-release budget ``1 / (2 z**2)`` of ``n_releases`` Poisson-subsampled
        (rate ``subsample``) discrete Gaussian releases that fit, after the start, in
        ``(epsilon, delta)`` (:func:`subsampled_gaussian_budget`)."""
        return subsampled_gaussian_budget(self.epsilon, self.delta, self.subsample,
                                          n_releases, init_budget + self.reserved,
                                          self.total - init_budget)

    def compose_subsampled(self, budget, release):
        """Record one Poisson-subsampled release of total budget ``budget`` (its parts,
        drawn on the same sample, are one Gaussian mechanism of multiplier
        ``1 / sqrt(2 budget)``: their integer-order moments multiply)."""
        z = 1.0 / math.sqrt(2.0 * budget)
        self.rdp.compose_subsampled_discrete_gaussian(self.subsample, z)
        self.record(release, "subsampled discrete Gaussian", 1.0, "L2", rho=budget,
                    noise_multiplier=z, sampling_rate=self.subsample,
                    note="Poisson sample; parts on one sample as one Gaussian, sensitivity "
                         "in units of each part's own; accounted as Renyi DP")

    def release(self, values, sensitivity, budget, rng, cells=1, compose=True,
                label="release", **details):
        """``values`` plus noise for a per-record change bounded by ``sensitivity`` in
        each of at most ``cells`` (an integer) cells: L2 sensitivity ``sensitivity *
        sqrt(cells)`` for Gaussian noise (the sampler's variance is rounded up past a
        float's error in the square root), L1 ``sensitivity * cells`` for Laplace
        (exact: ``sqrt(cells)**2`` can be an ulp below ``cells``). ``label`` names the
        kind of release in the ledger, ``details`` (e.g. ``note``) go with it.
        ``compose=False``: the caller accounts for it (:meth:`compose_subsampled`)."""
        self.n_releases += 1
        l2_factor, l1_factor = math.sqrt(cells), int(cells)
        if self.noise == "gaussian":
            noise_multiplier = 1.0 / math.sqrt(2.0 * budget)
            if compose and self.pld is not None:
                self.pld.compose_discrete_gaussian(noise_multiplier)
            elif compose:
                self.rdp.compose_zcdp(budget)
            if compose:
                self.record(label, "discrete Gaussian", sensitivity * l2_factor, "L2",
                            rho=budget, noise_multiplier=noise_multiplier, **details)
            return gaussian_mechanism(values, sensitivity=sensitivity * l2_factor,
                                      noise_multiplier=noise_multiplier, random_state=rng)
        self.epsilons.append(budget)
        self.record(label, "discrete Laplace", sensitivity * l1_factor, "L1",
                    epsilon=budget, **details)
        return laplace_mechanism(values, sensitivity=sensitivity * l1_factor,
                                 epsilon=budget, random_state=rng)

    def release_rest(self, values, sensitivity, spent, rng, label="release"):
        """``values`` released with all of the budget a plan has left, as one pure-DP
        Laplace release where the plan accounts in Renyi DP: the noisy values.
        ``sensitivity``: the L1 sensitivity of the whole of ``values``; ``spent``: the budget of the estimator's own releases so far,
        out of ``total`` (a reserved release, the private edges, is already off it).

        With Gaussian noise accounted in Renyi DP, the Laplace release's ``epsilon`` is
        the largest (by bisection) for which every release so far (the plan's own Renyi
        accountant, reserved releases included) and an ``epsilon``-DP release
        (:meth:`RDPAccountant.compose_laplace`) convert to at most the plan's
        ``(epsilon, delta)``: at small budgets one Laplace release is much
        less noisy than a Gaussian one of the same ``(epsilon, delta)``. With Laplace
        noise: the rest of ``epsilon``; with PLD accounting: a Gaussian release of the
        rest of ``rho``. A public function of the budgets: the guarantee is unchanged.
        """
        values = np.asarray(values, dtype=float)
        if self.noise == "gaussian" and self.pld is not None:
            return self.release(values, sensitivity, self.total - spent, rng, label=label)
        if self.noise == "gaussian":
            composed = self.rdp.copy()  # every release so far, reserved ones included

            def fits(eps):
                trial = composed.copy().compose_laplace(eps)
                return trial.get_epsilon(self.delta) <= self.epsilon

            low, high = 0.0, float(self.epsilon)
            for _ in range(40):
                mid = (low + high) / 2
                low, high = (mid, high) if fits(mid) else (low, mid)
            if low <= 0:  # nothing left for a pure-DP release: the rest as Gaussian
                return self.release(values, sensitivity, self.total - spent, rng,
                                    label=label)
            eps = low
            self.rdp.compose_laplace(eps)
        else:  # the rest of the plan's total (a hair below epsilon: the sum stays below)
            eps = self.total + self.reserved - math.fsum(self.epsilons)
            self.epsilons.append(eps)
        self.n_releases += 1
        self.record(label, "discrete Laplace", sensitivity, "L1", epsilon=eps)
        return np.asarray(laplace_mechanism(values, sensitivity=sensitivity, epsilon=eps,
                                            random_state=rng), dtype=float)

    def select(self, utilities, sensitivity, budget, rng, base_measure=None, compose=True,
               label="selection", **details):
        """An index of ``utilities`` drawn by the exponential mechanism (utilities that
        move by at most ``sensitivity`` between neighbours), weighted by the public
        ``base_measure`` (probabilities of the candidates) if given.

        ``budget``: a ``rho`` for Gaussian plans, spent as an ``epsilon = sqrt(8 rho)``
        selection (``epsilon``-bounded range, hence ``rho``-zCDP: see
        :mod:`dptrees.boosting._split_selection`), an ``epsilon`` for Laplace plans.
        ``compose=False``: a selection on records disjoint from one already composed
        (parallel composition)."""
        epsilon = self.selection_epsilon(budget)
        if compose:
            self.n_releases += 1
            if self.noise == "gaussian":
                self.rdp.compose_zcdp(budget)
                self.record(label, "exponential mechanism", sensitivity, "utility",
                            rho=budget, selection_epsilon=epsilon,
                            note=f"an epsilon {epsilon:.4g} selection: epsilon-bounded range, "
                                 f"hence epsilon**2 / 8 = rho zCDP (Cesar & Rogers 2021)",
                            **details)
            else:
                self.epsilons.append(budget)
                self.record(label, "exponential mechanism", sensitivity, "utility",
                            epsilon=budget, **details)
        utilities = np.asarray(utilities, dtype=np.float64).ravel()
        if base_measure is not None:
            utilities = utilities + base_measure_shift(base_measure, sensitivity,
                                                       epsilon).ravel()
        return int(exponential_mechanism(utilities, sensitivity=sensitivity,
                                         epsilon=epsilon, random_state=rng))

    def selection_epsilon(self, budget):
        """The ``epsilon`` of an exponential-mechanism selection of ``budget``."""
        return math.sqrt(8.0 * budget) if self.noise == "gaussian" else budget

    def noise_std(self, sensitivity, budget):
        """Standard deviation of the noise a release of ``budget`` adds to a value of
        ``sensitivity`` (public: it depends on the parameters only)."""
        if self.noise == "gaussian":
            return sensitivity / math.sqrt(2.0 * budget)
        return math.sqrt(2.0) * sensitivity / budget

    def check(self, sensitivity, budget, n_values, cells=1):
        """Raise ``ValueError`` if a release could not be made (before anything is spent)."""
        if self.noise == "gaussian":
            l2 = sensitivity * math.sqrt(cells)
            gaussian_grid(l2, 1.0 / math.sqrt(2.0 * budget), n_values)
            if self.pld is not None:
                check_pld_coupling(l2, 1.0 / math.sqrt(2.0 * budget), n_values)
        else:
            _, units = laplace_grid(sensitivity * int(cells), n_values)
            _laplace_ratio(units, budget)

    def spent(self):
        if self.pld is not None:
            return self.pld.get_epsilon(self.delta), self.delta
        if self.noise == "gaussian":
            return self.rdp.get_epsilon(self.delta), self.delta
        return math.fsum(self.epsilons), 0.0


def base_measure_shift(prior, sensitivity, epsilon):
    """The utility shift ``2 sensitivity log(prior) / epsilon`` that makes the exponential
    mechanism draw ``i`` with probability proportional to ``prior_i exp(epsilon u_i / (2
    sensitivity))``. ``prior`` is public (a released split prior), so the shift is the
    same for neighbouring datasets and the sensitivity of the utilities is unchanged.
    Zero-probability candidates get ``-inf`` (never chosen; the split priors have
    none)."""
    prior = np.asarray(prior, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return (2.0 * sensitivity / epsilon) * np.log(prior)
