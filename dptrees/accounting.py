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
    active). A copy of an accountant in another process (pickled or forked) is
    *detached* and refuses to spend, so that no process can spend a budget whose owner
    never hears of it; :class:`AccountantMixin` extends this to ``accountant=None``.

``sequential_composition`` / ``parallel_composition``
    The two basic composition theorems for ``(epsilon, delta)``-DP, for adding up the cost
    of a mechanism made of parts before spending it.

``RDPAccountant``
    Renyi-DP accounting for many compositions of (Poisson-subsampled) Gaussian mechanisms,
    as in DP-SGD-style boosting and federated rounds, where summing ``(epsilon, delta)``
    would be far too pessimistic. Google's ``dp-accounting`` package, maintained and peer
    reviewed, computes the RDP of the continuous Gaussian mechanisms and of zCDP releases
    (``dp_accounting.rdp.RdpAccountant``, add/remove-one relation) and converts RDP to
    ``(epsilon, delta)``. Two curves are our own, each proved next to its code: the
    Poisson-subsampled *discrete* Gaussian (both directions of the neighbouring relation,
    :meth:`RDPAccountant.compose_subsampled_discrete_gaussian`) and any pure-DP release,
    such as discrete Laplace (:meth:`RDPAccountant.compose_laplace`). This class validates
    inputs, adds the per-order RDPs up, counts steps, caches the RDP of repeated
    mechanisms, and lets callers peek at the cost of the next round before paying for it. The final ``(epsilon, delta)`` it
    reports can then be spent from a ``BudgetAccountant`` in one go.

``gaussian_rho`` / ``zcdp_to_approx_dp``
    Zero-concentrated DP of (continuous or discrete) Gaussian noise and its conversion to
    ``(epsilon, delta)``-DP.

``dp-accounting`` imports SciPy and takes about a second to import, so it is imported only
when an ``RDPAccountant`` is first created; budgets alone do not pay that cost.
"""

from __future__ import annotations

import copy
import decimal
import functools
import math
import numbers
import operator
import os
import threading
from collections.abc import Iterable
from typing import NamedTuple, Self

import numpy as np
from numpy.typing import ArrayLike

from dptrees.exceptions import BudgetExceededError, CompositionWarning, DetachedAccountantError
from dptrees.validation import warn_user

__all__ = [
    "INTEGER_ORDERS",
    "AccountantMixin",
    "BudgetAccountant",
    "PLDAccountant",
    "RDPAccountant",
    "SpendRecord",
    "best_of_zcdp_budget",
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


#: Integer Renyi orders, at which the Poisson-subsampled *discrete* Gaussian's accounting
#: (:meth:`RDPAccountant.compose_subsampled_discrete_gaussian`) is proved.
INTEGER_ORDERS = tuple(range(2, 257))

#: Shape of the truncated negative binomial number of runs in
#: :meth:`RDPAccountant.compose_best_of_zcdp`: 0, the logarithmic distribution. Of the
#: shapes dp-accounting implements (>= 0) it costs least for a given mean number of runs
#: (Papernot & Steinke 2022, theorem 2: the cost grows with ``1 + shape``).
LOGARITHMIC_SHAPE = 0.0


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

    Parameters
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
    (``sklearn.base.clone`` deep-copies parameters, e.g. in cross-validation).

    For the same reason an accountant belongs to the process that created it. A copy in
    another process -- made by pickling, as when joblib sends an estimator to a worker of
    ``cross_val_score(..., n_jobs=2)`` or ``GridSearchCV(..., n_jobs=2)``, or inherited by
    a forked child -- is *detached* (:attr:`detached`): its spends could never reach the
    original, so two processes could each spend the whole budget. A detached accountant
    therefore refuses every spend with :class:`~dptrees.exceptions.DetachedAccountantError`
    (a ``BudgetExceededError``) and :meth:`check` answers False; its totals, spends and
    ledger, as they were when it was copied, stay readable. An unpickled accountant is
    detached even in its owner's process: it is a snapshot, not the live budget. A search
    in worker processes thus fails loudly; run it with ``n_jobs=1``, or in threads
    (``with joblib.parallel_backend("threading"):``), which share the one accountant. A
    separate budget for another process must be made explicitly, with
    :meth:`independent_copy` or a new ``BudgetAccountant``: it is a *new* budget, and what
    all of them add up to is then yours to account for.

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

    def __init__(self, epsilon: float = float("inf"), delta: float = 1.0) -> None:
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
        self._owner = os.getpid()
        self._is_process_default = False
        self._composition_warned = False

    @classmethod
    def _unlimited_default(cls):
        """The process-wide default: no limit on epsilon or on delta (it refuses nothing
        the user did not ask for), a ledger of every spend, and one
        :class:`~dptrees.exceptions.CompositionWarning` once several fits spent from it."""
        accountant = cls()
        accountant._delta = math.inf
        accountant._is_process_default = True
        return accountant

    # -- totals and state ---------------------------------------------------------------

    @property
    def epsilon(self) -> float:
        """float: Total epsilon of the budget (``inf`` if unlimited)."""
        return self._epsilon

    @property
    def delta(self) -> float:
        """float: Total delta of the budget."""
        return self._delta

    @property
    def spent(self) -> tuple[float, float]:
        """tuple of float: ``(epsilon, delta)`` spent so far, i.e. the sequential composition
        of all recorded spends; everything released so far is ``spent``-DP for add/remove-one
        neighbours."""
        with self._lock:
            return (self._spent_epsilon, self._spent_delta)

    @property
    def ledger(self) -> list[SpendRecord]:
        """list of SpendRecord: A copy of the recorded spends, oldest first."""
        with self._lock:
            return list(self._ledger)

    @property
    def detached(self) -> bool:
        """bool: Whether this is a copy that cannot spend: one made by pickling, or one
        inherited by a forked process. Its totals, :attr:`spent` and :attr:`ledger` are
        those of the original when it was copied."""
        return self._owner != os.getpid()

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
            f"n_spends={n_spends}" + (", detached=True)" if self.detached else ")")
        )

    def _detached_message(self):
        return (
            f"{self!r} is a detached copy of a BudgetAccountant, made by pickling it (for "
            "example to send an estimator to a joblib worker process of "
            "cross_val_score(..., n_jobs=2) or GridSearchCV(..., n_jobs=2)) or by forking "
            "the process. It cannot spend from the original's budget, which would never "
            "hear of the spend; nothing was spent. Run with n_jobs=1, or in threads, which "
            "share the accountant (with joblib.parallel_backend('threading'): ...), or give "
            "each process a budget of its own explicitly (BudgetAccountant(epsilon, delta) "
            "or accountant.independent_copy()), whose total is then yours to account for."
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

    def check(self, epsilon: float, delta: float = 0.0) -> bool:
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
            ``(epsilon, delta)``-DP guarantee for add/remove-one neighbours. Always False
            for a :attr:`detached` accountant, which cannot spend.
        """
        epsilon = _check_epsilon(epsilon)
        delta = _check_delta(delta)
        if self.detached:
            return False
        with self._lock:
            return self._fits(epsilon, delta)

    def spend(self, epsilon: float, delta: float = 0.0, *,
              label: str | None = None) -> SpendRecord:
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
        DetachedAccountantError
            If this accountant is :attr:`detached` (a copy in another process): it
            refuses every spend, since the original would never see it.
        ValueError, TypeError
            If an argument is invalid; nothing is spent.
        """
        epsilon = _check_epsilon(epsilon)
        delta = _check_delta(delta)
        if label is not None and not isinstance(label, str):
            raise TypeError(f"label must be a str or None, got {type(label).__name__}.")
        if self.detached:
            raise DetachedAccountantError(self._detached_message())
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
            composed = self._composition_to_report()
        if composed is not None:
            warn_user(composed, CompositionWarning)
        return record

    def _composition_to_report(self):
        """The process default's one warning (caller holds ``self._lock``): the first time
        its total passes that of any one of its spends, i.e. of any one fit."""
        if not self._is_process_default or self._composition_warned:
            return None
        largest = max(self._ledger, key=lambda r: (r.epsilon, r.delta))
        if self._spent_epsilon <= largest.epsilon and self._spent_delta <= largest.delta:
            return None
        self._composition_warned = True
        return (
            f"The default accountant (accountant=None) has now recorded {len(self._ledger)} "
            f"spends in this process, (epsilon={self._spent_epsilon:.6g}, "
            f"delta={self._spent_delta:.3g}) in all. It limits nothing, but a model chosen "
            "among fits on the same data (GridSearchCV, cross-validation, trying settings) "
            "costs the sum of their budgets, not the chosen fit's. Tune privately with "
            "dptrees.model_selection.DPRandomSearch, or cap the total with an explicit "
            "BudgetAccountant(epsilon, delta) (`with BudgetAccountant(...):`). This warning "
            "is shown once."
        )

    def _remaining_unlocked(self):
        return (
            max(0.0, self._epsilon - self._spent_epsilon),
            max(0.0, self._delta - self._spent_delta),
        )

    def remaining(self) -> tuple[float, float]:
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
    def default(cls) -> BudgetAccountant:
        """The accountant estimators use when given ``accountant=None``.

        Returns
        -------
        BudgetAccountant
            The accountant of the innermost active ``with accountant:`` block, or else a
            process-wide accountant with an unlimited budget (``epsilon`` and ``delta``
            both ``inf``), created on first use in each process. The unlimited one refuses
            nothing but keeps a ledger of this process's spends, and warns once
            (:class:`~dptrees.exceptions.CompositionWarning`, with the total) when its
            total passes that of any one fit: a model chosen among fits on the same data
            costs their sum.
        """
        with cls._default_lock:
            if cls._default_stack:
                return cls._default_stack[-1]
            if cls._process_default is None or cls._process_default.detached:
                cls._process_default = cls._unlimited_default()
            return cls._process_default

    @classmethod
    def _innermost_block(cls):
        """The accountant of the innermost active ``with`` block, or None."""
        with cls._default_lock:
            return cls._default_stack[-1] if cls._default_stack else None

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
        self._owner = None
        self.__dict__.setdefault("_is_process_default", False)
        self.__dict__.setdefault("_composition_warned", False)

    def independent_copy(self) -> BudgetAccountant:
        """A new accountant of this process, starting with this one's totals and spends.

        Unlike ``copy.copy``, which returns this very accountant, this makes a *second,
        independent budget*: neither accountant sees the other's later spends, so together
        they may spend up to twice what remains, and what both pay for is only
        ``(epsilon, delta)``-DP if you show it (for instance by parallel composition, when
        they spend on disjoint records). That is your responsibility. It also works on a
        :attr:`detached` copy, e.g. to give a worker process a budget of its own.

        Returns
        -------
        BudgetAccountant
            Not detached, with the same ``epsilon``, ``delta``, :attr:`spent` and
            :attr:`ledger` as this accountant now.
        """
        with self._lock:
            spent_epsilon, spent_delta = self._spent_epsilon, self._spent_delta
            ledger = list(self._ledger)
        new = BudgetAccountant()
        new._epsilon, new._delta = self._epsilon, self._delta
        new._spent_epsilon, new._spent_delta, new._ledger = spent_epsilon, spent_delta, ledger
        return new


_RECORDED_ACCOUNTANT = "_accountant_when_pickled"


class AccountantMixin:
    """Resolve an estimator's ``accountant`` parameter in whichever process fits it.

    For estimators with an ``accountant=None`` parameter (a ``BudgetAccountant`` or None):
    list the mixin before ``BaseEstimator`` among the bases, and get the accountant to
    spend from in ``fit`` with :meth:`_resolve_accountant` instead of
    :func:`check_accountant`.

    ``accountant=None`` means the default accountant, :meth:`BudgetAccountant.default`:
    inside a ``with accountant:`` block, that block's budget. An estimator sent to another
    process, such as a joblib worker of ``cross_val_score(..., n_jobs=2)``, is pickled, and
    in the worker no block is active: ``None`` would resolve to the worker's own unlimited
    default, and the fit would spend outside the budget in force where it was started,
    unseen by it. So an estimator pickled with ``accountant=None`` inside a block takes the
    block's accountant along; unpickled, that is a detached copy (see
    :class:`BudgetAccountant`), and a fit of the estimator refuses to spend with
    :class:`~dptrees.exceptions.DetachedAccountantError` instead. (An explicit
    ``accountant`` is pickled as a parameter and detached in the same way.) Outside any
    block nothing is taken along: ``None`` then stands for an unlimited default, which
    enforces nothing in any process.

    The recorded accountant is not a parameter: ``get_params`` does not show it,
    ``sklearn.base.clone`` drops it (a clone resolves ``None`` afresh, in its own process),
    and a fitted estimator pickled for saving unpickles and predicts as before. To refit
    an unpickled estimator that carries one, give it an accountant explicitly
    (``set_params(accountant=...)``).
    """

    def _resolve_accountant(self):
        """The accountant a fit of this estimator spends from.

        Returns
        -------
        BudgetAccountant
            As :func:`check_accountant` resolves ``self.accountant`` in this process.

        Raises
        ------
        DetachedAccountantError
            If that accountant is detached, or if ``accountant`` is None and this
            estimator was unpickled from one pickled inside a ``with accountant:`` block
            (e.g. in a worker process). Nothing is spent.
        TypeError
            If ``accountant`` is neither None nor a ``BudgetAccountant``.
        """
        recorded = self.__dict__.get(_RECORDED_ACCOUNTANT)
        if self.accountant is None and recorded is not None and recorded.detached:
            raise DetachedAccountantError(
                f"{type(self).__name__} has accountant=None and was pickled inside a `with "
                "accountant:` block, so None stands for that block's accountant, of which "
                "this process holds only a copy. " + recorded._detached_message()
                + " To fit this unpickled estimator, set its accountant explicitly with "
                "set_params(accountant=...)."
            )
        return check_accountant(self.accountant)

    def __getstate__(self):
        state = dict(super().__getstate__() or {})
        recorded = state.pop(_RECORDED_ACCOUNTANT, None)
        if getattr(self, "accountant", None) is None:
            if recorded is None or not recorded.detached:
                recorded = BudgetAccountant._innermost_block()
            if recorded is not None:
                state[_RECORDED_ACCOUNTANT] = recorded
        return state


def check_accountant(accountant: BudgetAccountant | None) -> BudgetAccountant:
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
    DetachedAccountantError
        If the accountant is :attr:`~BudgetAccountant.detached` (a copy in another
        process, which cannot spend), before anything is computed.

    See Also
    --------
    AccountantMixin : Estimators resolve ``accountant`` through it, so that ``None`` is
        not re-resolved in a worker process.
    """
    if accountant is None:
        accountant = BudgetAccountant.default()
    elif not isinstance(accountant, BudgetAccountant):
        raise TypeError(
            "accountant must be a BudgetAccountant or None, got "
            f"{type(accountant).__name__}."
        )
    if accountant.detached:
        raise DetachedAccountantError(accountant._detached_message())
    return accountant


# --------------------------------------------------------------------------------------
# Composition theorems for (epsilon, delta)-DP
# --------------------------------------------------------------------------------------


def sequential_composition(budgets: Iterable[tuple[float, float]]) -> tuple[float, float]:
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


def parallel_composition(budgets: Iterable[tuple[float, float]]) -> tuple[float, float]:
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

    def __init__(self, orders: ArrayLike | None = None) -> None:
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
        count = _check_count(count)
        increment = count * rdp if count else 0.0
        with self._lock:
            return self._rdp + increment, self._steps + count

    def _compose(self, event, count):
        return self._compose_array(_event_rdp(event, self._orders), count)

    def _compose_array(self, rdp, count):
        """Add ``count`` releases of per-order RDP ``rdp`` (at this accountant's orders)."""
        count = _check_count(count)
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
        sampling_probability : float
            Probability, in ``[0, 1]``, that a record takes part in one release.
        noise_multiplier : float
            Noise scale divided by the L2 sensitivity (in grid units); positive.
        count : int, default=1
            Number of such releases.

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
        noise_multiplier = _check_positive_finite(noise_multiplier, "noise_multiplier")
        sampling_probability = _as_real(sampling_probability, "sampling_probability")
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
        epsilon = _check_positive_finite(epsilon, "epsilon")
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
            Number of such releases.

        Returns
        -------
        RDPAccountant
            ``self``.
        """
        rho = _check_epsilon(rho, "rho")
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
        rho = _check_epsilon(rho, "rho")
        mean_runs = _check_mean_runs(mean_runs)
        return self._compose_array(_best_of_zcdp_rdp(rho, mean_runs, self._orders), 1)

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
            discrete=discrete,
        )
        return delta > max_delta


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


def _largest_rho(epsilon, delta, rdp_of_rho, orders=None):
    """The largest ``rho`` whose curve ``rdp_of_rho(rho, orders)`` converts to at most
    ``(epsilon, delta)``-DP (:class:`RDPAccountant`'s conversion). Bisection, rounded down."""
    epsilon = _check_positive_finite(epsilon, "epsilon")
    delta = _check_delta(delta)
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1) for a Gaussian budget, got {delta!r}")
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
        Renyi orders, as for :class:`RDPAccountant`.

    Returns
    -------
    float
    """
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


def _check_mean_runs(mean_runs):
    mean_runs = _as_real(mean_runs, "mean_runs")
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


# PLD accounting lives in its own module (it builds on the helpers above).
from dptrees._pld_accounting import PLDAccountant  # noqa: E402
