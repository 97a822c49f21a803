"""A federated round with Laplace noise: pure client-level epsilon-DP.

At small budgets one or a few federated rounds are all a fit can afford, and there the
Gaussian round's ``delta`` is expensive: at ``epsilon = 0.1``, ``delta = 1e-6`` one
Gaussian round needs a noise multiplier of about 36 on the L2 norm, while Laplace noise
on the L1 norm of a two-number vector has a standard deviation of ``sqrt(2) / epsilon``,
about 14, times its bound. :class:`LaplaceAggregator` is the protocol of
:class:`~dptrees.federated.DPAggregator` with that round.

Sensitivity, for federations that differ by one whole client: every contribution is
clipped to L1 norm ``C`` and rounded to the grid ``2**-frac_bits``
(:func:`~dptrees.federated.clip_update` with ``norm_ord=1``), so adding or removing a
client moves the round's exact sum by at most ``C + d 2**-(frac_bits+1)`` in L1 (the
server rejects any contribution above it). The sum gets discrete Laplace noise of scale
that over ``epsilon_0`` (:func:`~dptrees.mechanisms.laplace_mechanism`): an
``epsilon_0``-DP release. Poisson sampling with probability ``q`` makes it
``log(1 + q (e**epsilon_0 - 1))``-DP for add/remove neighbours (Balle, Barthe & Gaboardi
2018, Theorem 8), and ``rounds`` such rounds compose to their sum. The proof: "Privacy
proofs, federated training" in the documentation (``docs/proofs/federated.rst``).
"""

import math

from dptrees.accounting import INTEGER_ORDERS, RDPAccountant
from dptrees.federated._protocol import FRAC_BITS, DPAggregator
from dptrees.mechanisms import laplace_mechanism
from dptrees.validation import check_positive_int

__all__ = ["LaplaceAggregator", "round_epsilon"]


def round_epsilon(epsilon, sampling_probability, rounds):
    """``(epsilon_0, epsilon_round)``: the Laplace epsilon of one round's release and
    what it costs after Poisson sampling, with ``rounds * epsilon_round <= epsilon``.

    ``epsilon_0 = log(1 + (e**(epsilon / rounds) - 1) / q)`` inverts the amplification
    ``log(1 + q (e**epsilon_0 - 1))``; it is stepped down by ulps until the amplified
    cost, computed the way :meth:`LaplaceAggregator.spent` adds it up, fits.
    """
    share = epsilon / rounds
    q = sampling_probability
    eps0 = math.log1p(math.expm1(share) / q)

    def cost(e0):
        return math.log1p(q * math.expm1(e0))

    while cost(eps0) * rounds > epsilon:
        eps0 = math.nextafter(eps0, 0.0)
    return eps0, cost(eps0)


class LaplaceAggregator(DPAggregator):
    """The server of a federation whose rounds are Laplace releases: pure
    ``epsilon``-DP for add/remove-one-client neighbours, ``delta = 0``.

    Each of at most ``rounds`` rounds: Poisson-sampled clients send their updates clipped
    to L1 norm ``clip.clip_norm`` (:func:`~dptrees.federated.clip_update`,
    ``norm_ord=1``), the server checks and sums them exactly and adds discrete Laplace
    noise of scale ``sensitivity / epsilon_0``. The whole ``epsilon`` is planned for the
    ``rounds`` up front (:func:`round_epsilon`) and spent from the accountant before the
    first release. The rounds are also composed in an :class:`RDPAccountant` (the pure-DP
    curve at every integer order), so a search can account the fit.

    Parameters
    ----------
    n_clients : int
        ``K``, public.
    sampling_probability : float
        ``q``.
    clip : FixedClip
        The public bound on a contribution's L1 norm (an adaptive bound would need a
        release of its own each round; a Laplace fit has a fixed one).
    epsilon : float
        The client-level budget of all the rounds.
    rounds : int, default=1
        How many rounds the budget is planned for.
    frac_bits, accountant, random_state
        As in :class:`~dptrees.federated.DPAggregator`.

    Attributes
    ----------
    round_epsilon : float
        ``epsilon_0``, the Laplace epsilon of a round's release before sampling.
    noise_multiplier : float
        ``1 / epsilon_0``: the noise scale over the L1 sensitivity.
    rdp_accountant : RDPAccountant
        The rounds so far, each at its amplified epsilon.
    """

    norm_ord = 1
    mechanism = "subsampled discrete Laplace"
    accounting = "pure"
    pld_accountant = None
    max_delta = 0.0

    def __init__(self, n_clients, sampling_probability, clip, epsilon, *, rounds=1,
                 frac_bits=FRAC_BITS, accountant=None, random_state=None):
        self._setup(n_clients, sampling_probability, clip, epsilon, frac_bits, accountant,
                    random_state)
        if clip.adaptive:
            raise ValueError("a Laplace round needs a fixed clipping bound (FixedClip)")
        self.max_rounds = check_positive_int(rounds, "rounds")
        self.round_epsilon, self._round_cost = round_epsilon(
            self.epsilon, self.sampling_probability, self.max_rounds)
        self.noise_multiplier = self.update_noise_multiplier = 1.0 / self.round_epsilon
        self.rdp_accountant = RDPAccountant(INTEGER_ORDERS)

    def can_run_round(self):
        """False once the planned rounds have run."""
        return self.rounds < self.max_rounds

    def rounds_allowed(self, cap=1_000_000):
        return min(self.max_rounds, cap)

    def _stop_message(self):
        return f"the {self.max_rounds} planned Laplace round(s) have run"

    def _noisy_sum(self, total, within, taking_part, dimension):
        """``total`` with discrete Laplace noise of scale ``sensitivity / epsilon_0``
        (the L1 sensitivity of one client's contribution), composed at its amplified
        epsilon. :meth:`DPAggregator.aggregate` checks the contributions (L1 norm at
        most the bound plus rounding) and charges ``epsilon`` before it."""
        noisy = laplace_mechanism(total, sensitivity=self.sensitivity(dimension),
                                  epsilon=self.round_epsilon, random_state=self._noise_rng)
        self.rdp_accountant.compose_laplace(self._round_cost)
        return noisy

    def ledger_details(self):
        return {"epsilon": self.round_epsilon}

    def history_delta(self):
        return 0.0

    def spent(self):
        """``(epsilon, 0)`` of the rounds so far: their amplified epsilons, added."""
        return self.rounds * self._round_cost, 0.0
