"""Privacy budgets and their composition.

Every estimator in dptrees answers to a privacy budget. This module holds the two kinds of
bookkeeping the library uses, and the conversions between them.

Neighbouring datasets
---------------------
Throughout, two datasets are *neighbours* when one is obtained from the other by adding or
removing one record (add/remove-one, also called unbounded DP). In federated use the "record"
is a whole client: neighbouring federations differ by the presence of one client and all of
its data. Every guarantee stated in this module is with respect to that relation.

Design
------
``BudgetAccountant``
    A total ``(epsilon, delta)`` budget that is paid for by pure sequential composition:
    the epsilons and the deltas of all spends are summed. It is deliberately simple, so that
    its guarantee is easy to audit: a spend that would take either sum past its total raises
    :class:`~dptrees.exceptions.BudgetExceededError` and leaves the accountant unchanged.
    Spending is atomic (guarded by a lock) because forests train their trees in threads
    that share one accountant. Estimators take an ``accountant=None`` argument and resolve
    it with :func:`check_accountant`, which falls back to the process-wide default
    (:meth:`BudgetAccountant.default`, unlimited unless a ``with accountant:`` block is
    active).

``sequential_composition`` / ``parallel_composition``
    The two basic composition theorems for ``(epsilon, delta)``-DP, for adding up the cost
    of a mechanism made of parts before spending it.

``RDPAccountant``
    Renyi-DP accounting for many compositions of (Poisson-subsampled) Gaussian mechanisms,
    as in DP-SGD-style boosting and federated rounds, where summing ``(epsilon, delta)``
    would be far too pessimistic. The privacy analysis is delegated to Google's
    ``dp-accounting`` package, which is maintained and peer reviewed: it computes the RDP
    of each mechanism (``dp_accounting.rdp.RdpAccountant``, add/remove-one relation) and
    converts RDP to ``(epsilon, delta)``. This class validates inputs, adds the per-order
    RDPs up, counts steps, caches the RDP of repeated mechanisms, and lets callers peek at
    the cost of the next round before paying for it. The final ``(epsilon, delta)`` it
    reports can then be spent from a ``BudgetAccountant`` in one go.

``gaussian_rho`` / ``zcdp_to_approx_dp``
    Zero-concentrated DP of (continuous or discrete) Gaussian noise and its conversion to
    ``(epsilon, delta)``-DP.

``dp-accounting`` imports SciPy and takes about a second to import, so it is imported only
when an ``RDPAccountant`` is first created; budgets alone do not pay that cost.
"""

from __future__ import annotations

import copy
import functools
import math
import numbers
import operator
import threading
from typing import NamedTuple

import numpy as np

from dptrees.exceptions import BudgetExceededError

__all__ = [
    "BudgetAccountant",
    "RDPAccountant",
    "SpendRecord",
    "check_accountant",
    "gaussian_rho",
    "parallel_composition",
    "sequential_composition",
    "zcdp_to_approx_dp",
    "zcdp_budget",
]

#: Relative slack allowed when comparing a sum of spends with a total, so that spending a
#: budget in pieces that add up to it exactly (up to float rounding) is accepted. It lets
#: the sums exceed the total by at most this fraction of the total.
_RELATIVE_TOLERANCE = 1e-12


# --------------------------------------------------------------------------------------
# Validation helpers
# --------------------------------------------------------------------------------------


def _as_real(value, name):
    """Return ``value`` as a Python float, rejecting non-numbers, booleans and NaN."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}: {value!r}.")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must not be NaN.")
    return value


def _check_epsilon(value, name="epsilon", *, allow_inf=False):
    value = _as_real(value, name)
    if value < 0:
        raise ValueError(f"{name} must be non-negative, got {value}.")
    if not allow_inf and math.isinf(value):
        raise ValueError(f"{name} must be finite, got {value}.")
    return value


def _check_delta(value, name="delta"):
    value = _as_real(value, name)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value}.")
    return value


def _check_positive_finite(value, name):
    value = _as_real(value, name)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be positive and finite, got {value}.")
    return value


def _check_count(count):
    if isinstance(count, (bool, np.bool_)):
        raise TypeError(f"count must be an integer, got {count!r}.")
    try:
        count = operator.index(count)
    except TypeError:
        raise TypeError(
            f"count must be an integer, got {type(count).__name__}: {count!r}."
        ) from None
    if count < 0:
        raise ValueError(f"count must be non-negative, got {count}.")
    return count


def _check_budget_pair(pair, index):
    try:
        epsilon, delta = pair
    except (TypeError, ValueError):
        raise TypeError(
            f"budget {index} must be an (epsilon, delta) pair, got {pair!r}."
        ) from None
    return (
        _check_epsilon(epsilon, f"epsilon of budget {index}", allow_inf=True),
        _check_delta(delta, f"delta of budget {index}"),
    )


# --------------------------------------------------------------------------------------
# Pure (epsilon, delta) budgets
# --------------------------------------------------------------------------------------


class SpendRecord(NamedTuple):
    """One entry of a :class:`BudgetAccountant` ledger.

    Attributes
    ----------
    label : str or None
        What the budget was spent on (e.g. ``"tree 3: leaf values"``), if given.
    epsilon, delta : float
        The ``(epsilon, delta)``-DP cost of that release, for add/remove-one neighbours.
    """

    label: str | None
    epsilon: float
    delta: float


class BudgetAccountant:
    """A total ``(epsilon, delta)`` privacy budget paid for by sequential composition.

    Each call to :meth:`spend` records the cost of one differentially private release. By
    the basic (sequential) composition theorem, a sequence of releases that are
    ``(epsilon_i, delta_i)``-DP for add/remove-one neighbouring datasets is
    ``(sum epsilon_i, sum delta_i)``-DP, even when each release is chosen adaptively after
    seeing the previous ones. The accountant therefore guarantees that everything paid for
    through it is ``(epsilon, delta)``-DP overall: a spend that would take either sum past
    its total raises :class:`~dptrees.exceptions.BudgetExceededError` and changes nothing.

    The accountant is thread-safe: :meth:`spend` checks and records atomically, so trees
    of a forest trained in parallel threads can share one accountant.

    Parameters
    ----------
    epsilon : float, default=inf
        Total epsilon, ``>= 0``; ``inf`` means no limit on epsilon.
    delta : float, default=1.0
        Total delta, in ``[0, 1]``; ``0`` admits only pure ``epsilon``-DP spends. With the
        default of 1 the deltas of all spends may still add up to at most 1 (a larger sum
        would be a vacuous guarantee).

    Raises
    ------
    ValueError
        If a total is out of range or NaN, or both totals are zero (nothing could ever be
        spent).
    TypeError
        If a total is not a real number.

    See Also
    --------
    check_accountant : Resolve an estimator's ``accountant`` argument.
    RDPAccountant : Tighter accounting for many Gaussian compositions.

    Notes
    -----
    Used as a context manager, an accountant becomes the process-wide default for the
    duration of the block (see :meth:`default`); blocks nest. The default is shared by all
    threads, so that worker threads of a forest see the accountant of the block their
    caller is in; entering blocks concurrently from different threads is not supported.

    ``copy.copy`` and ``copy.deepcopy`` return the accountant itself: a copy would be a
    second, independent budget over the same data, silently doubling what may be spent
    (``sklearn.base.clone`` deep-copies parameters, e.g. in cross-validation). A pickled
    accountant, however, is a snapshot and unpickles into an independent accountant.

    Examples
    --------
    >>> acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    >>> acc.spend(0.5, label="split selection")
    SpendRecord(label='split selection', epsilon=0.5, delta=0.0)
    >>> acc.remaining()
    (0.5, 1e-06)
    >>> acc.check(0.6)
    False
    """

    _default_lock = threading.Lock()
    _default_stack: list[BudgetAccountant] = []
    _process_default: BudgetAccountant | None = None

    def __init__(self, epsilon=float("inf"), delta=1.0):
        epsilon = _check_epsilon(epsilon, "epsilon", allow_inf=True)
        delta = _check_delta(delta, "delta")
        if epsilon == 0 and delta == 0:
            raise ValueError("epsilon and delta cannot both be zero: nothing could be spent.")
        self._epsilon = epsilon
        self._delta = delta
        self._spent_epsilon = 0.0
        self._spent_delta = 0.0
        self._ledger: list[SpendRecord] = []
        self._lock = threading.Lock()

    # -- totals and state ---------------------------------------------------------------

    @property
    def epsilon(self):
        """float: Total epsilon of the budget (``inf`` if unlimited)."""
        return self._epsilon

    @property
    def delta(self):
        """float: Total delta of the budget."""
        return self._delta

    @property
    def spent(self):
        """tuple of float: ``(epsilon, delta)`` spent so far, i.e. the sequential composition
        of all recorded spends; everything released so far is ``spent``-DP for add/remove-one
        neighbours."""
        with self._lock:
            return (self._spent_epsilon, self._spent_delta)

    @property
    def ledger(self):
        """list of SpendRecord: A copy of the recorded spends, oldest first."""
        with self._lock:
            return list(self._ledger)

    def __len__(self):
        """Number of spends recorded."""
        with self._lock:
            return len(self._ledger)

    def __repr__(self):
        with self._lock:
            spent_epsilon, spent_delta, n_spends = (
                self._spent_epsilon,
                self._spent_delta,
                len(self._ledger),
            )
        return (
            f"BudgetAccountant(epsilon={self._epsilon!r}, delta={self._delta!r}, "
            f"spent_epsilon={spent_epsilon!r}, spent_delta={spent_delta!r}, "
            f"n_spends={n_spends})"
        )

    # -- spending -----------------------------------------------------------------------

    @staticmethod
    def _within(spent, cost, total):
        if math.isinf(total):
            return True
        return spent + cost <= total * (1.0 + _RELATIVE_TOLERANCE)

    def _fits(self, epsilon, delta):
        # Caller holds self._lock.
        return self._within(self._spent_epsilon, epsilon, self._epsilon) and self._within(
            self._spent_delta, delta, self._delta
        )

    def check(self, epsilon, delta=0.0):
        """Tell whether a release costing ``(epsilon, delta)`` would fit in the budget.

        Nothing is spent. Under threads the answer may be stale by the time it is acted on:
        to reserve budget, call :meth:`spend` and catch ``BudgetExceededError``.

        Parameters
        ----------
        epsilon : float
            Epsilon of the release, finite and ``>= 0``.
        delta : float, default=0.0
            Delta of the release, in ``[0, 1]``.

        Returns
        -------
        bool
            True if, after it, all spends together would still be within the total
            ``(epsilon, delta)``-DP guarantee for add/remove-one neighbours.
        """
        epsilon = _check_epsilon(epsilon)
        delta = _check_delta(delta)
        with self._lock:
            return self._fits(epsilon, delta)

    def spend(self, epsilon, delta=0.0, *, label=None):
        """Record the cost of an ``(epsilon, delta)``-DP release, or refuse it.

        Call this *before* releasing (or using) the noisy result, so that a refused spend
        means nothing was disclosed.

        Parameters
        ----------
        epsilon : float
            Epsilon of the release, for add/remove-one neighbours; finite and ``>= 0``.
        delta : float, default=0.0
            Delta of the release, in ``[0, 1]``.
        label : str, optional
            What the budget is spent on; kept in the :attr:`ledger`.

        Returns
        -------
        SpendRecord
            The record added to the ledger.

        Raises
        ------
        BudgetExceededError
            If the sum of epsilons or of deltas would exceed its total (beyond a relative
            rounding tolerance of 1e-12). The accountant is then left unchanged.
        ValueError, TypeError
            If an argument is invalid; nothing is spent.
        """
        epsilon = _check_epsilon(epsilon)
        delta = _check_delta(delta)
        if label is not None and not isinstance(label, str):
            raise TypeError(f"label must be a str or None, got {type(label).__name__}.")
        record = SpendRecord(label, epsilon, delta)
        with self._lock:
            if not self._fits(epsilon, delta):
                remaining = self._remaining_unlocked()
                raise BudgetExceededError(
                    f"Privacy budget exceeded: spending (epsilon={epsilon!r}, delta={delta!r})"
                    + (f" for {label!r}" if label is not None else "")
                    + f" but only (epsilon={remaining[0]!r}, delta={remaining[1]!r}) of "
                    f"(epsilon={self._epsilon!r}, delta={self._delta!r}) remains. "
                    "Nothing was spent."
                )
            self._spent_epsilon += epsilon
            self._spent_delta += delta
            self._ledger.append(record)
        return record

    def _remaining_unlocked(self):
        return (
            max(0.0, self._epsilon - self._spent_epsilon),
            max(0.0, self._delta - self._spent_delta),
        )

    def remaining(self):
        """Budget left to spend.

        Returns
        -------
        tuple of float
            ``(epsilon, delta)`` still available: total minus spent, never negative
            (``inf`` for an unlimited epsilon).
        """
        with self._lock:
            return self._remaining_unlocked()

    # -- process-wide default -----------------------------------------------------------

    @classmethod
    def default(cls):
        """The accountant estimators use when given ``accountant=None``.

        Returns
        -------
        BudgetAccountant
            The accountant of the innermost active ``with accountant:`` block, or else a
            process-wide accountant with an unlimited budget (``epsilon=inf``,
            ``delta=1``), created on first use. The unlimited one enforces nothing but
            still keeps a ledger of every spend.
        """
        with cls._default_lock:
            if cls._default_stack:
                return cls._default_stack[-1]
            if cls._process_default is None:
                cls._process_default = cls()
            return cls._process_default

    def __enter__(self):
        with BudgetAccountant._default_lock:
            BudgetAccountant._default_stack.append(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        with BudgetAccountant._default_lock:
            stack = BudgetAccountant._default_stack
            # Remove this accountant's innermost entry, restoring the previous default.
            for i in range(len(stack) - 1, -1, -1):
                if stack[i] is self:
                    del stack[i]
                    break
        return False

    # -- copying and pickling -----------------------------------------------------------

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __getstate__(self):
        with self._lock:
            state = self.__dict__.copy()
            state["_ledger"] = list(self._ledger)
        del state["_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()


def check_accountant(accountant):
    """Resolve an estimator's ``accountant`` argument.

    Parameters
    ----------
    accountant : BudgetAccountant or None
        The budget that pays for the estimator's releases; ``None`` means the current
        default (:meth:`BudgetAccountant.default`).

    Returns
    -------
    BudgetAccountant
        The accountant to spend from. Its total bounds the ``(epsilon, delta)``-DP
        guarantee, for add/remove-one neighbours, of everything paid for through it.

    Raises
    ------
    TypeError
        If ``accountant`` is neither None nor a ``BudgetAccountant``.
    """
    if accountant is None:
        return BudgetAccountant.default()
    if not isinstance(accountant, BudgetAccountant):
        raise TypeError(
            "accountant must be a BudgetAccountant or None, got "
            f"{type(accountant).__name__}."
        )
    return accountant


# --------------------------------------------------------------------------------------
# Composition theorems for (epsilon, delta)-DP
# --------------------------------------------------------------------------------------


def sequential_composition(budgets):
    """Total cost of running several DP mechanisms on the same data.

    If each mechanism ``M_i`` is ``(epsilon_i, delta_i)``-DP for add/remove-one
    neighbouring datasets, releasing all their outputs is
    ``(sum epsilon_i, sum delta_i)``-DP. This holds whatever the mechanisms are, and also
    when each one is chosen after seeing the outputs of the previous ones (adaptive
    composition). It is what :class:`BudgetAccountant` applies to its spends.

    Parameters
    ----------
    budgets : iterable of (float, float)
        ``(epsilon_i, delta_i)`` of each mechanism.

    Returns
    -------
    tuple of float
        ``(epsilon, delta)`` of the composition; ``(0.0, 0.0)`` for no mechanism. Delta is
        capped at 1, where the guarantee is vacuous anyway.

    See Also
    --------
    parallel_composition : Cheaper, when the mechanisms see disjoint records.
    RDPAccountant : Much tighter for many Gaussian mechanisms.

    Examples
    --------
    >>> sequential_composition([(0.5, 1e-6), (0.25, 0.0)])
    (0.75, 1e-06)
    """
    pairs = [_check_budget_pair(pair, i) for i, pair in enumerate(budgets)]
    epsilon = math.fsum(e for e, _ in pairs)
    delta = min(1.0, math.fsum(d for _, d in pairs))
    return (epsilon, delta)


def parallel_composition(budgets):
    """Cost of running DP mechanisms on disjoint parts of the data.

    Split the records into disjoint parts and run an ``(epsilon_i, delta_i)``-DP mechanism
    ``M_i`` on part ``i`` only. Adding or removing one record changes one part only, so
    releasing all outputs is ``(max epsilon_i, max delta_i)``-DP for add/remove-one
    neighbouring datasets.

    This requires that

    * the parts are disjoint: each record is seen by one mechanism at most; and
    * the part a record goes to is decided by that record alone (its own features or
      label, compared with public values), independently of the other records. A
      partition computed from the data, e.g. splitting at the empirical median, does not
      qualify: removing one record could move other records between parts. For example,
      the leaves of a tree whose splits are public or were already paid for are disjoint
      parts decided record by record, so noisy counts in all leaves cost one leaf's
      budget.

    If either condition fails, use :func:`sequential_composition`. (Under replace-one
    neighbours, a replaced record may leave one part and enter another, so two parts
    change; the rule above is for add/remove-one, the relation used by dptrees.)

    Parameters
    ----------
    budgets : iterable of (float, float)
        ``(epsilon_i, delta_i)`` of the mechanism run on each part.

    Returns
    -------
    tuple of float
        ``(epsilon, delta)`` of the whole release; ``(0.0, 0.0)`` for no part. Epsilon and
        delta are maximised separately, which is valid because each part's guarantee
        implies the weaker pair of maxima.

    Examples
    --------
    >>> parallel_composition([(0.5, 0.0), (0.25, 1e-6)])
    (0.5, 1e-06)
    """
    pairs = [_check_budget_pair(pair, i) for i, pair in enumerate(budgets)]
    epsilon = max((e for e, _ in pairs), default=0.0)
    delta = max((d for _, d in pairs), default=0.0)
    return (epsilon, delta)


# --------------------------------------------------------------------------------------
# Renyi and zero-concentrated DP
# --------------------------------------------------------------------------------------


def _dp_accounting():
    """Import ``dp_accounting`` on first use (it pulls in SciPy; ~1 s)."""
    import dp_accounting  # noqa: PLC0415

    return dp_accounting


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


class RDPAccountant:
    """Renyi-DP accountant for (subsampled) Gaussian, Laplace and zCDP mechanisms.

    Composes mechanisms by adding their Renyi divergences at a fixed set of orders and
    converts the total to ``(epsilon, delta)``-DP on request. For many compositions of
    Gaussian mechanisms (boosting rounds, federated rounds) this is far tighter than
    summing ``(epsilon, delta)``. All guarantees are for add/remove-one neighbouring
    datasets; in federated use, where each round samples clients, the neighbour is one
    whole client.

    The privacy analysis is Google's ``dp-accounting`` package: the RDP of each mechanism
    is computed by ``dp_accounting.rdp.RdpAccountant`` (neighbouring relation
    ``ADD_OR_REMOVE_ONE``), and the total is converted by ``dp_accounting.rdp``'s
    ``compute_epsilon`` / ``compute_delta``, the functions that class uses itself. This
    class only adds the per-order RDPs up (composition), which is all
    ``RdpAccountant.compose`` does; doing it here lets the RDP of a repeated mechanism be
    computed once and lets :meth:`would_exceed` peek at the next round cheaply. The
    conversion is the improved one of Canonne, Kamath and Steinke (2020, Prop. 12) /
    Asoodeh et al. (2020), so epsilons are lower than those of the original moments
    accountant (Abadi et al., 2016) for the same mechanism.

    Methods that compose return the accountant, so calls can be chained. The accountant
    is thread-safe.

    Parameters
    ----------
    orders : sequence of float, optional
        Renyi orders (each ``> 1``) at which divergences are tracked; epsilon is minimised
        over them. Defaults to ``dp_accounting``'s ``DEFAULT_RDP_ORDERS`` (1.1 to 1024),
        suited to the usual privacy regimes.

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

    def __init__(self, orders=None):
        dpa = _dp_accounting()
        if orders is None:
            orders = dpa.rdp.rdp_privacy_accountant.DEFAULT_RDP_ORDERS
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
    def steps(self):
        """int: Number of mechanisms composed so far (the sum of all ``count``)."""
        return self._steps

    @property
    def orders(self):
        """numpy.ndarray: The Renyi orders tracked (a copy)."""
        return np.array(self._orders)

    @property
    def rdp(self):
        """numpy.ndarray: Renyi-DP of the composition at each order (a copy): everything
        composed so far is ``(orders[i], rdp[i])``-RDP for add/remove-one neighbours."""
        return self._rdp.copy()

    def __repr__(self):
        return f"RDPAccountant(n_orders={len(self._orders)}, steps={self._steps})"

    def copy(self):
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

    def _rdp_after(self, event, count):
        """``(rdp, steps)`` after ``count`` more ``event``s; ``self`` is left unchanged."""
        count = _check_count(count)
        increment = count * _event_rdp(event, self._orders) if count else 0.0
        with self._lock:
            return self._rdp + increment, self._steps + count

    def _compose(self, event, count):
        count = _check_count(count)
        if count:
            increment = count * _event_rdp(event, self._orders)
            with self._lock:
                # A new array, so that readers holding the old one see a consistent state.
                self._rdp = self._rdp + increment
                self._steps += count
        return self

    @staticmethod
    def _gaussian_event(noise_multiplier, sampling_probability):
        dpa = _dp_accounting()
        noise_multiplier = _check_positive_finite(noise_multiplier, "noise_multiplier")
        sampling_probability = _as_real(sampling_probability, "sampling_probability")
        if not 0.0 <= sampling_probability <= 1.0:
            raise ValueError(
                f"sampling_probability must be in [0, 1], got {sampling_probability}."
            )
        event = dpa.GaussianDpEvent(noise_multiplier)
        if sampling_probability < 1.0:
            event = dpa.PoissonSampledDpEvent(sampling_probability, event)
        return event

    def compose_gaussian(self, noise_multiplier, count=1):
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

    def compose_subsampled_gaussian(self, sampling_probability, noise_multiplier, count=1):
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

    def compose_laplace(self, epsilon, count=1):
        """Record ``count`` releases of the Laplace mechanism.

        Parameters
        ----------
        epsilon : float
            Pure-DP epsilon of one release, i.e. L1 sensitivity divided by the Laplace
            scale; positive. (``dp_accounting.LaplaceDpEvent`` takes the inverse, scale
            over sensitivity.)
        count : int, default=1
            Number of such releases.

        Returns
        -------
        RDPAccountant
            ``self``. Uses the exact RDP of the Laplace mechanism (Mironov 2017, Prop. 6).
        """
        epsilon = _check_positive_finite(epsilon, "epsilon")
        return self._compose(_dp_accounting().LaplaceDpEvent(1.0 / epsilon), count)

    def compose_zcdp(self, rho, count=1):
        """Record ``count`` releases that are each ``rho``-zero-concentrated DP.

        ``rho``-zCDP means ``(alpha, rho * alpha)``-RDP at every order ``alpha``, e.g. the
        discrete Gaussian mechanism, whose ``rho`` is given by :func:`gaussian_rho`.

        Parameters
        ----------
        rho : float
            zCDP parameter of one release, for add/remove-one neighbours; ``>= 0``.
        count : int, default=1
            Number of such releases.

        Returns
        -------
        RDPAccountant
            ``self``.
        """
        rho = _check_epsilon(rho, "rho")
        return self._compose(_dp_accounting().ZCDpEvent(rho), count)

    # -- conversion to (epsilon, delta) -------------------------------------------------

    def _epsilon(self, rdp, delta):
        delta = _check_delta(delta)
        epsilon, _ = _dp_accounting().rdp.compute_epsilon(self._orders, rdp, delta)
        return float(epsilon)

    def _delta(self, rdp, epsilon):
        epsilon = _check_epsilon(epsilon, allow_inf=True)
        if math.isinf(epsilon):
            return 0.0
        rdp_module = _dp_accounting().rdp.rdp_privacy_accountant
        delta, _ = rdp_module.compute_delta(self._orders, rdp, epsilon)
        return float(delta)

    def get_epsilon(self, delta):
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

    def get_delta(self, epsilon):
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

    def delta_after(self, epsilon, *, noise_multiplier, sampling_probability=1.0, count=1):
        """Delta at ``epsilon`` if ``count`` more Gaussian releases were composed.

        Nothing is recorded. The releases are those of :meth:`compose_subsampled_gaussian`
        (or of :meth:`compose_gaussian` with the default ``sampling_probability=1``). For
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

        Returns
        -------
        float
            The delta :meth:`get_delta` would return after composing them.
        """
        event = self._gaussian_event(noise_multiplier, sampling_probability)
        rdp, _ = self._rdp_after(event, count)
        return self._delta(rdp, epsilon)

    def would_exceed(
        self, epsilon, max_delta, *, noise_multiplier, sampling_probability=1.0, count=1
    ):
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
        noise_multiplier : float
            Noise standard deviation divided by the L2 sensitivity; positive.
        sampling_probability : float, default=1.0
            Poisson sampling probability of each release.
        count : int, default=1
            Number of further releases.

        Returns
        -------
        bool
            True if, after them, the delta at ``epsilon`` would be greater than
            ``max_delta``.
        """
        max_delta = _check_delta(max_delta, "max_delta")
        delta = self.delta_after(
            epsilon,
            noise_multiplier=noise_multiplier,
            sampling_probability=sampling_probability,
            count=count,
        )
        return delta > max_delta


def zcdp_budget(epsilon, delta, orders=None):
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
        Renyi orders, as for :class:`RDPAccountant`.

    Returns
    -------
    float
    """
    epsilon = _check_positive_finite(epsilon, "epsilon")
    delta = _check_delta(delta)
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1) for a Gaussian budget, got {delta!r}")
    acc = RDPAccountant(orders)
    orders_arr = np.asarray(acc._orders)

    def fits(rho):
        return acc._epsilon(rho * orders_arr, delta) <= epsilon

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
    reached = acc._epsilon(low * orders_arr, delta) if low > 0 else 0.0
    if not low > 0 or reached < epsilon * (1 - 1e-3):
        # dp-accounting rounds tiny RDPs to epsilon = 0; the orders cannot reach epsilon.
        raise ValueError(
            f"(epsilon={epsilon}, delta={delta}) is out of reach of the Renyi orders "
            f"(largest {max(acc._orders)}): use a larger epsilon or delta"
        )
    return low


def gaussian_rho(l2_sensitivity, sigma):
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
    l2_sensitivity = _check_epsilon(l2_sensitivity, "l2_sensitivity")
    sigma = _check_positive_finite(sigma, "sigma")
    return l2_sensitivity**2 / (2.0 * sigma**2)


def _ckks_epsilon(log_alpha_minus_one, rho, log_delta):
    """Epsilon at order alpha from CKS 2020 Prop. 12 applied to ``(alpha, alpha*rho)``-RDP.

    Written in terms of ``a = alpha - 1`` for accuracy near alpha = 1:
    ``alpha*rho + log(a/alpha) - (log(delta) + log(alpha)) / a``.
    """
    a = np.exp(log_alpha_minus_one)
    log_alpha = np.log1p(a)
    return (1.0 + a) * rho + log_alpha_minus_one - log_alpha - (log_delta + log_alpha) / a


def zcdp_to_approx_dp(rho, delta):
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
    rho = _check_epsilon(rho, "rho")
    delta = _check_delta(delta)
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
