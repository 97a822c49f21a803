"""Client-level DP federated averaging: the protocol, independent of the model.

Geyer, Klein & Nabi (2017), with Poisson-sampled clients, a public (or DP-estimated)
clipping bound, and training that stops before a round would pass its delta. Guarantee:
``(epsilon, max_delta)``-DP for neighbouring federations that differ by one whole client.
Sensitivity of a round's sum: one client's clipped, rounded update, L2 norm at most
``S + sqrt(d) 2**-(frac_bits+1)`` (the server rejects anything larger); with adaptive
clipping the centred count of clients within the bound moves by 1/2. Rounds are
Poisson-subsampled discrete Gaussians accounted at integer Renyi orders (or with privacy
loss distributions). The proof: "Privacy proofs, federated training" in the
documentation (``docs/proofs/federated.rst``).
"""

import functools
import math
import numbers
from typing import NamedTuple

import numpy as np

from dptrees._random import check_random_state
from dptrees.accounting import INTEGER_ORDERS, PLDAccountant, RDPAccountant, check_accountant
from dptrees.privacy.pld import check_pld_coupling
from dptrees.exceptions import DetachedAccountantError
from dptrees.mechanisms import gaussian_mechanism
from dptrees.validation import (
    check_delta,
    check_epsilon,
    check_positive_int,
    warn_weak_delta,
)

__all__ = ["AdaptiveClip", "ClientContribution", "DPAggregator", "FixedClip", "clip_update",
           "INTEGER_ORDERS", "noise_multiplier_for", "rounding_norm", "vector_norm"]

#: Fixed-point grid of client updates: coordinates are multiples of 2**-FRAC_BITS.
FRAC_BITS = 24


class ClientContribution(NamedTuple):
    """What a sampled client sends: its clipped, rounded update and its clipping bit.

    Parameters
    ----------
    vector : ndarray of float64
        The update, multiples of ``2**-FRAC_BITS``, of L2 norm at most the clipping
        bound (plus rounding, see :func:`clip_update`).
    within_bound : int
        1 if the update's norm was at most the bound before clipping, else 0.
    """

    vector: np.ndarray
    within_bound: int


def vector_norm(vector, norm_ord):
    """The L2 (``norm_ord=2``) or L1 (``norm_ord=1``) norm of a float vector."""
    if norm_ord == 1:
        return math.fsum(np.abs(vector))
    return float(np.sqrt(np.dot(vector, vector)))


def rounding_norm(dimension, norm_ord, frac_bits):
    """How far rounding a ``dimension``-vector to the grid ``2**-frac_bits`` can move it
    in the norm ``norm_ord``: half a step per coordinate."""
    steps = math.sqrt(dimension) if norm_ord == 2 else dimension
    return steps * 2.0 ** -(frac_bits + 1)


def clip_update(update, clip_norm, frac_bits=FRAC_BITS, *, norm_ord=2):
    """Clip ``update`` to L2 norm ``clip_norm`` and round it to the grid ``2**-frac_bits``.

    Runs on the client. Rounding to nearest moves every coordinate by at most half a grid
    step, so the result's norm is at most ``clip_norm + sqrt(d) 2**-(frac_bits + 1)``:
    :meth:`DPAggregator.sensitivity` counts that. ``norm_ord=1`` clips the L1 norm
    instead (a Laplace round, :class:`~dptrees.federated.LaplaceAggregator`), whose
    rounding adds at most ``d 2**-(frac_bits + 1)``.

    Parameters
    ----------
    update : array-like of float
        The client's update vector.
    clip_norm : float
        The public clipping bound ``S``.
    frac_bits : int, default=24
        Fractional bits of the fixed-point grid.
    norm_ord : {2, 1}, default=2
        The norm clipped: L2, or L1.

    Returns
    -------
    ClientContribution
    """
    u = np.asarray(update, dtype=np.float64).ravel()
    if not np.all(np.isfinite(u)):
        raise ValueError("a client update must be finite (no NaN or inf)")
    norm = vector_norm(u, norm_ord)
    within = int(norm <= clip_norm)
    if norm > clip_norm:
        u = u * (clip_norm / norm)
    scale = 2.0**frac_bits
    return ClientContribution(np.rint(u * scale) / scale, within)


class FixedClip:
    """A public, fixed clipping bound ``S``.

    Parameters
    ----------
    clip_norm : float
        The bound ``S`` on a client vector's L2 norm.
    """

    def __init__(self, clip_norm):
        if not (isinstance(clip_norm, numbers.Real) and not isinstance(clip_norm, bool)
                and math.isfinite(clip_norm) and clip_norm > 0):
            raise ValueError(f"clip_norm must be a finite number > 0, got {clip_norm!r}")
        self.clip_norm = float(clip_norm)

    adaptive = False

    def update_noise_multiplier(self, noise_multiplier):
        return noise_multiplier

    def after_round(self, noisy_within, expected_clients):
        """Fixed: nothing to learn."""


class AdaptiveClip:
    """Clipping bound that tracks a quantile of the update norms, privately.

    Andrew, Thakkar, McMahan & Ramaswamy (2021): each sampled client also sends the bit
    "my update's norm was at most S"; the server releases the count of such bits with
    Gaussian noise of standard deviation ``bit_noise_multiplier`` (sensitivity 1), and
    sets ``S <- S exp(-learning_rate (noisy fraction - target_quantile))``. The bound
    depends on the data only through that noisy count, a DP release accounted with the
    update (see :class:`DPAggregator`).

    Parameters
    ----------
    initial : float
        Starting bound (public).
    target_quantile : float, default=0.5
        Fraction of updates that should fall within the bound.
    learning_rate : float, default=0.2
        Geometric step of the bound per round.
    bit_noise_multiplier : float, default=None
        Noise standard deviation ``z_b`` of the count of clients within the bound (the
        count is released centred, ``sum(b - 1/2)``, sensitivity 1/2); None uses
        ``expected_clients / 20`` (Andrew et al.'s recommendation), set when an aggregator
        takes the clip (an ``AdaptiveClip`` belongs to one aggregator: it is updated in
        place every round).
    floor : float, default=0.0
        Public lower limit of the bound, in ``[0, initial]``: ``S <- max(floor,
        S exp(...))``. Useful when the norms are bimodal (most updates tiny, a minority
        large and informative) and the quantile would sink into the tiny ones. A public
        constant applied to the noisy count's result: post-processing, no privacy cost;
        the sensitivity of every release is still the bound ``S`` of its round.
    """

    adaptive = True

    def __init__(self, initial, target_quantile=0.5, learning_rate=0.2,
                 bit_noise_multiplier=None, floor=0.0):
        if not (math.isfinite(initial) and initial > 0):
            raise ValueError(f"initial must be a finite number > 0, got {initial!r}")
        if not (math.isfinite(floor) and 0 <= floor <= initial):
            raise ValueError(f"floor must be a finite number in [0, initial], got {floor!r}")
        if not 0 < target_quantile < 1:
            raise ValueError(f"target_quantile must be in (0, 1), got {target_quantile!r}")
        if not (math.isfinite(learning_rate) and learning_rate > 0):
            raise ValueError(f"learning_rate must be > 0, got {learning_rate!r}")
        if bit_noise_multiplier is not None and not (
            isinstance(bit_noise_multiplier, numbers.Real)
            and math.isfinite(bit_noise_multiplier) and bit_noise_multiplier > 0
        ):
            raise ValueError(
                f"bit_noise_multiplier must be None or a finite number > 0, got "
                f"{bit_noise_multiplier!r}")
        self.clip_norm = float(initial)
        self.target_quantile = float(target_quantile)
        self.learning_rate = float(learning_rate)
        self.bit_noise_multiplier = bit_noise_multiplier
        self.floor = float(floor)

    def update_noise_multiplier(self, noise_multiplier):
        """The update's own noise multiplier, so that update and bits together have
        ``noise_multiplier`` (Andrew et al., Theorem 1)."""
        inv = noise_multiplier**-2 - (2.0 * self.bit_noise_multiplier) ** -2
        if inv <= 0:
            raise ValueError(
                f"bit_noise_multiplier={self.bit_noise_multiplier} is too small for "
                f"noise_multiplier={noise_multiplier}: need 2 * bit_noise_multiplier > "
                "noise_multiplier"
            )
        return inv**-0.5

    def after_round(self, noisy_within, expected_clients):
        fraction = min(1.0, max(0.0, noisy_within / expected_clients))  # post-processing
        self.clip_norm = max(self.floor, self.clip_norm * math.exp(
            -self.learning_rate * (fraction - self.target_quantile)))


def _delta_after_rounds(accounting, epsilon, sampling_probability, noise_multiplier, rounds):
    """Delta at ``epsilon`` after ``rounds`` Poisson-subsampled discrete Gaussian rounds of
    multiplier ``noise_multiplier``, composed by Renyi DP or the PLD (``accounting``)."""
    if accounting == "pld":
        return PLDAccountant().delta_after(epsilon, noise_multiplier=noise_multiplier,
                                           sampling_probability=sampling_probability,
                                           count=rounds)
    return RDPAccountant(INTEGER_ORDERS).delta_after(
        epsilon, noise_multiplier=noise_multiplier, sampling_probability=sampling_probability,
        count=rounds, discrete=True)


#: Search range of :func:`noise_multiplier_for`: below 0.3 no budget of practical size
#: affords a round of subsampled Gaussian noise; above 1e6 the noise drowns any sum.
_Z_RANGE = (0.3, 1e6)


@functools.lru_cache(maxsize=256)  # a pure function of public numbers, slow-ish to evaluate
def noise_multiplier_for(epsilon, max_delta, sampling_probability, rounds, *,
                         accounting="rdp", rel_tol=0.01):
    """The smallest noise multiplier ``z`` (within ``rel_tol``, by bisection) with which
    ``rounds`` rounds stay within ``(epsilon, max_delta)``.

    A function of public quantities only, so choosing ``z`` this way costs no privacy:
    the default of the federated estimators (``noise_multiplier="auto"``), which gives
    every round the least noise that lets all of them run.

    Parameters
    ----------
    epsilon, max_delta : float
        The guarantee the rounds must keep.
    sampling_probability : float
        ``q``, each client's chance to take part in a round.
    rounds : int
        Rounds to fit (the initial-score round included).
    accounting : {"rdp", "pld"}, default="rdp"
        How the rounds compose (as in :class:`DPAggregator`).
    rel_tol : float, default=0.01
        Relative precision of ``z``: the result fits, and ``z / (1 + rel_tol)`` may not.

    Returns
    -------
    float
        ``z``, at least 0.3 (the search starts at 1 and halves the interval from 0.3).

    Raises
    ------
    ValueError
        If even ``z = 1e6`` does not fit the rounds in the budget.
    """
    def fits(z):
        return _delta_after_rounds(accounting, epsilon, sampling_probability, z,
                                   rounds) <= max_delta

    low, high = _Z_RANGE[0], 1.0
    while not fits(high):
        low, high = high, 2.0 * high
        if high > _Z_RANGE[1]:
            hint = (", or use accounting='pld': Renyi DP at integer orders cannot certify "
                    "very small epsilons at small delta" if accounting == "rdp" else "")
            raise ValueError(f"{rounds} rounds do not fit epsilon={epsilon!r}, "
                             f"delta={max_delta!r} at any noise multiplier up to "
                             f"{_Z_RANGE[1]:g}: give fewer rounds or more budget{hint}")
    while high / low > 1.0 + rel_tol:
        mid = math.sqrt(low * high)
        low, high = (low, mid) if fits(mid) else (mid, high)
    return high


class DPAggregator:
    """The server side of client-level DP federated averaging.

    Parameters
    ----------
    n_clients : int
        Number of clients ``K`` in the federation (public).
    sampling_probability : float
        Probability ``q`` that a client takes part in a round (Poisson sampling).
    noise_multiplier : float
        ``z``: the noise standard deviation over the sensitivity of a round's release.
    clip : FixedClip or AdaptiveClip
    epsilon : float
        The epsilon at which delta is tracked.
    max_delta : float
        Training stops before a round that would make the delta at ``epsilon`` exceed it.
        A ``WeakPrivacyWarning`` says so if it is at least ``1 / n_clients``.
    frac_bits : int, default=FRAC_BITS
        Fixed-point grid of the client updates.
    accounting : {"rdp", "pld"}, default="rdp"
        How the rounds are composed: Renyi DP at integer orders
        (:meth:`~dptrees.accounting.RDPAccountant.compose_subsampled_discrete_gaussian`)
        or the privacy loss distribution (:class:`~dptrees.accounting.PLDAccountant`,
        tighter: more rounds for the same ``(epsilon, max_delta)``).
    accountant : BudgetAccountant or None, default=None
        Pays for the whole training: ``(epsilon, max_delta)`` is spent from it once,
        before the first round's release (:meth:`aggregate`), since no round is run past
        that guarantee. None uses the default accountant
        (:meth:`~dptrees.accounting.BudgetAccountant.default`), resolved when the
        aggregator is made.
    random_state : None, int, SeedSequence, BitGenerator or Generator
        Drives the client sampling and the noise.

    Attributes
    ----------
    rdp_accountant : RDPAccountant or None
        Every round, composed (integer orders), with ``accounting="rdp"``.
    pld_accountant : PLDAccountant or None
        Every round, composed, with ``accounting="pld"``.
    accountant : BudgetAccountant
        The budget the training is paid from.
    rounds : int
        Rounds aggregated so far.
    """

    #: The norm a contribution is clipped to (2: L2; the Laplace round's 1: L1), and
    #: the mechanism each round is, as the ledger names them.
    norm_ord = 2
    mechanism = "subsampled discrete Gaussian"

    def __init__(self, n_clients, sampling_probability, noise_multiplier, clip, epsilon,
                 max_delta, *, frac_bits=FRAC_BITS, accounting="rdp", accountant=None,
                 random_state=None):
        self._setup(n_clients, sampling_probability, clip, epsilon, frac_bits, accountant,
                    random_state)
        if not (math.isfinite(noise_multiplier) and noise_multiplier > 0):
            raise ValueError(f"noise_multiplier must be > 0, got {noise_multiplier!r}")
        self.noise_multiplier = float(noise_multiplier)
        if clip.adaptive and clip.bit_noise_multiplier is None:
            clip.bit_noise_multiplier = self.expected_clients / 20.0
        self.update_noise_multiplier = clip.update_noise_multiplier(self.noise_multiplier)
        self.max_delta = check_delta(max_delta, "max_delta")
        warn_weak_delta(self.max_delta, self.n_clients, "clients")
        if accounting not in ("rdp", "pld"):
            raise ValueError(f"accounting must be 'rdp' or 'pld', got {accounting!r}")
        self.accounting = accounting
        self.rdp_accountant = RDPAccountant(INTEGER_ORDERS) if accounting == "rdp" else None
        self.pld_accountant = PLDAccountant() if accounting == "pld" else None
        self._rounds_allowed = None

    def _setup(self, n_clients, sampling_probability, clip, epsilon, frac_bits, accountant,
               random_state):
        """What every aggregator has: the federation, ``q``, the clip, the budget, the
        grid, the accountant that pays and the generators."""
        self.n_clients = check_positive_int(n_clients, "n_clients")
        q = float(sampling_probability)
        if not 0 < q <= 1:
            raise ValueError(f"sampling_probability must be in (0, 1], got {q!r}")
        self.sampling_probability = q
        if not isinstance(clip, (FixedClip, AdaptiveClip)):
            raise TypeError("clip must be a FixedClip or an AdaptiveClip")
        self.clip = clip
        self.epsilon = check_epsilon(epsilon)
        self.frac_bits = check_positive_int(frac_bits, "frac_bits", maximum=40)
        self.accountant = check_accountant(accountant)
        self.rounds = 0
        self._charged = False
        self._rng = check_random_state(random_state)
        self._sample_rng, self._noise_rng = self._rng.spawn(2)

    # A copy (pickle, copy.copy, copy.deepcopy: all go through these two) must neither
    # replay the original's noise nor release rounds the original already paid for:
    # its generators are left behind and reseeded from OS entropy, and it charges
    # (epsilon, max_delta) again before its first round. Unpickled, its accountant is
    # detached, so it refuses to aggregate until given one (``copy.accountant = ...``);
    # deep-copied, it shares the original's accountant, which pays twice.

    def __getstate__(self):
        state = self.__dict__.copy()
        for name in ("_rng", "_sample_rng", "_noise_rng"):
            state.pop(name, None)
        state["_charged"] = False
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._rng = check_random_state(None)
        self._sample_rng, self._noise_rng = self._rng.spawn(2)

    @property
    def expected_clients(self):
        """``q K``: the divisor of the average (public)."""
        return self.sampling_probability * self.n_clients

    @property
    def clip_norm(self):
        return self.clip.clip_norm

    def sensitivity(self, dimension):
        """L2 change of a round's sum when one client is added or removed.

        A contribution's norm is at most ``S + sqrt(d) 2**-(frac_bits+1)`` (clipping plus
        rounding to the grid); the factor ``1 + 2**-36`` covers the ``2**-40`` slack that
        :meth:`check_contribution` allows for the floating-point rounding of clipping and
        the error of the norm it computes (relative ``~log2(d) 2**-53``), so a vector that
        passes the check is within the sensitivity exactly.
        """
        return self._norm_limit(dimension) * (1.0 + 2.0**-36)

    def _norm_limit(self, dimension):
        return self.clip_norm + rounding_norm(dimension, self.norm_ord, self.frac_bits)

    def can_run_round(self):
        """False if one more round would push delta at ``epsilon`` past ``max_delta``."""
        if self.pld_accountant is not None:
            return self.rounds < self.rounds_allowed()
        return not self.rdp_accountant.would_exceed(
            self.epsilon, self.max_delta, noise_multiplier=self.noise_multiplier,
            sampling_probability=self.sampling_probability, discrete=True,
        )

    def rounds_allowed(self, cap=1_000_000):
        """How many rounds fit ``(epsilon, max_delta)`` in all (public; at most ``cap``).

        Every round is the same Poisson-subsampled Gaussian of multiplier ``z`` (with
        adaptive clipping, update and bits together), so the count depends only on
        ``q``, ``z``, ``epsilon``, ``max_delta`` and the accounting; computed once, by
        bisection.
        """
        if self._rounds_allowed is None:
            def fits(n):
                return _delta_after_rounds(self.accounting, self.epsilon,
                                           self.sampling_probability, self.noise_multiplier,
                                           n) <= self.max_delta

            low, high = 0, 1
            while high <= cap and fits(high):
                low, high = high, 2 * high
            high = min(high, cap + 1)
            while high - low > 1:
                mid = (low + high) // 2
                low, high = (mid, high) if fits(mid) else (low, mid)
            self._rounds_allowed = low
        return self._rounds_allowed

    def sample_clients(self):
        """Indices of this round's clients: each independently with probability ``q``."""
        return np.flatnonzero(self._sample_rng.random(self.n_clients) < self.sampling_probability)

    def check_contribution(self, contribution, dimension):
        """Raise ``ValueError`` unless ``contribution`` keeps the round's sensitivity.

        A contribution must be a ``(vector, within_bound)`` pair with a finite float64
        vector of shape ``(dimension,)`` on the grid ``2**-frac_bits``, of L2 norm at most
        the clipping bound plus the rounding (the sensitivity the noise is calibrated
        for), and a bit ``within_bound`` of 0 or 1. The server checks every contribution
        it aggregates: clipping happens on the clients, and a faulty or malicious one
        must not be able to move the sum further than the noise covers.

        Returns
        -------
        ClientContribution
            The contribution, its vector as a float64 array.
        """
        try:
            vector, bit = contribution
        except (TypeError, ValueError):
            raise ValueError("a contribution must be a ClientContribution(vector, "
                             f"within_bound), got {type(contribution).__name__}") from None
        vector = np.asarray(vector)
        if vector.dtype.kind != "f":
            raise ValueError(f"a contribution's vector must be floating point, got dtype "
                             f"{vector.dtype}")
        vector = vector.astype(np.float64, copy=False)
        if vector.shape != (dimension,):
            raise ValueError(f"a contribution has shape {vector.shape}, "
                             f"expected ({dimension},)")
        if not np.all(np.isfinite(vector)):
            raise ValueError("a contribution's vector is not finite (NaN or inf)")
        scaled = vector * 2.0**self.frac_bits
        if not np.array_equal(np.rint(scaled), scaled):
            raise ValueError(f"a contribution is off the fixed-point grid 2**-{self.frac_bits}: "
                             "clip and round it with clip_update")
        norm = vector_norm(vector, self.norm_ord)
        if norm > self._norm_limit(dimension) * (1.0 + 2.0**-40):  # a few ulps of slack
            raise ValueError(f"a contribution is unclipped: its L{self.norm_ord} norm "
                             f"{norm:.6g} is above the clipping bound {self.clip_norm:.6g} "
                             "(plus rounding); clip it with clip_update")
        if isinstance(bit, (bool, np.bool_)):
            bit = int(bit)
        if not (isinstance(bit, (numbers.Integral, np.integer)) and bit in (0, 1)):
            raise ValueError(f"within_bound must be 0 or 1, got {bit!r}")
        return ClientContribution(vector, int(bit))

    def charge(self):
        """Spend ``(epsilon, max_delta)`` from :attr:`accountant`, once, before the first
        release; every later call only refuses a detached accountant (a copy's budget
        is not the owner's). :meth:`aggregate` calls it; a fit calls it first, before
        any client is asked for an update.

        Raises
        ------
        BudgetExceededError
            If the accountant cannot pay for the training (nothing is spent).
        DetachedAccountantError
            If the accountant is detached.
        """
        if self.accountant.detached:
            raise DetachedAccountantError(self.accountant._detached_message())
        if not self._charged:
            self.accountant.spend(self.epsilon, self.max_delta,
                                  label=f"federated training ({self.n_clients} clients)")
            self._charged = True

    def aggregate(self, contributions, dimension):
        """The noisy average update of one round, and the round recorded.

        The first call spends ``(epsilon, max_delta)`` from :attr:`accountant` before
        anything is released; every call refuses a detached accountant. A copy of the
        aggregator (pickled or deep-copied) has fresh generators and spends again.

        Parameters
        ----------
        contributions : list of ClientContribution or None
            From this round's sampled clients (possibly none). ``None`` stands for a
            sampled client that sent nothing (it holds no records): it takes no part,
            exactly like an absent client.
        dimension : int
            Length of the model vector (public).

        Returns
        -------
        ndarray of float64, shape (dimension,)
            ``(sum of contributions + noise) / (q K)``.

        Raises
        ------
        RuntimeError
            If the round would push delta past ``max_delta`` (a Laplace aggregator: if
            its planned rounds have run; check :meth:`can_run_round` first): nothing is
            released.
        ValueError
            If a contribution breaks the protocol (:meth:`check_contribution`): nothing
            is released.
        BudgetExceededError
            On the first round, if the accountant cannot pay for the training.
        DetachedAccountantError
            If the accountant is detached (this aggregator or its accountant was
            unpickled): set a live one first.
        """
        if not self.can_run_round():
            raise RuntimeError(self._stop_message())
        total, within, taking_part = self._exact_sum(contributions, dimension)
        self.charge()
        noisy = self._noisy_sum(total, within, taking_part, dimension)
        self.rounds += 1
        return noisy / self.expected_clients

    def _stop_message(self):
        return "this round would exceed max_delta: training must stop"

    def _noisy_sum(self, total, within, taking_part, dimension):
        """The round's release of the exact ``total`` (and, with an adaptive clip, of
        the ``within`` of the ``taking_part`` clients), composed in the accountant."""
        sensitivity = self.sensitivity(dimension)
        if self.pld_accountant is not None:
            self._check_pld_coupling(sensitivity, dimension)
        noisy = gaussian_mechanism(total, sensitivity=sensitivity,
                                   noise_multiplier=self.update_noise_multiplier,
                                   random_state=self._noise_rng)
        if self.clip.adaptive:
            # Andrew et al.: the centred sum of (b - 1/2) over the clients taking part
            # moves by 1/2 when one is added or removed (an absent client adds nothing);
            # noise std bit_noise_multiplier is multiplier 2 z_b.
            noisy_centred = gaussian_mechanism(
                within - 0.5 * taking_part, sensitivity=0.5,
                noise_multiplier=2.0 * self.clip.bit_noise_multiplier,
                random_state=self._noise_rng)
            self.clip.after_round(noisy_centred + 0.5 * self.expected_clients,
                                  self.expected_clients)
        (self.pld_accountant or self.rdp_accountant).compose_subsampled_discrete_gaussian(
            self.sampling_probability, self.noise_multiplier)
        return noisy

    def _exact_sum(self, contributions, dimension):
        """``(sum of the vectors, clients within the bound, clients taking part)`` of
        the checked contributions (:meth:`check_contribution`; None takes no part)."""
        taking_part = [self.check_contribution(c, dimension) for c in contributions
                       if c is not None]
        total = np.zeros(dimension)
        within = 0
        for c in taking_part:
            total += c.vector  # exact while |total| < 2**(52 - frac_bits): checked below
            within += c.within_bound
        if taking_part and np.max(np.abs(total)) >= 2.0 ** (52 - self.frac_bits):
            raise ValueError("the sum of the updates is too large for exact fixed-point "
                             "addition: lower frac_bits or the clipping bound")
        return total, within, len(taking_part)

    def ledger_details(self):
        """The noise of a round, as the ledger records it."""
        return {"noise_multiplier": self.noise_multiplier}

    def _check_pld_coupling(self, sensitivity, dimension):
        """The PLD accounting's coupling needs every discrete Gaussian's standard
        deviation to be at least ``PLD_MIN_SIGMA`` grid units (:mod:`dptrees.privacy.pld`)."""
        releases = [(sensitivity, self.update_noise_multiplier, dimension)]
        if self.clip.adaptive:
            releases.append((0.5, 2.0 * self.clip.bit_noise_multiplier, 1))
        for sens, multiplier, n in releases:
            check_pld_coupling(sens, multiplier, n)

    def history_delta(self):
        """Delta so far, for per-round histories: :meth:`spent`'s with
        ``accounting="rdp"``; None with ``"pld"``, where every call would compose a
        privacy loss distribution anew (call :meth:`spent` at the end instead)."""
        return self.spent()[1] if self.pld_accountant is None else None

    def spent(self):
        """``(epsilon, delta)`` of the rounds so far (delta at the tracked epsilon)."""
        return self.epsilon, (self.pld_accountant or self.rdp_accountant).get_delta(
            self.epsilon)
