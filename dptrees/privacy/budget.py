"""Privacy budgets paid for by sequential composition: :class:`BudgetAccountant`.

A total ``(epsilon, delta)`` budget that is paid for by pure sequential composition: the
epsilons and the deltas of all spends are summed. It is deliberately simple, so that its
guarantee is easy to audit: a spend that would take either sum past its total raises
:class:`~dptrees.exceptions.BudgetExceededError` and leaves the accountant unchanged.
Spending is atomic (guarded by a lock) because forests train their trees in threads that
share one accountant. Estimators take an ``accountant=None`` argument and resolve it with
:func:`check_accountant`, which falls back to the process-wide default
(:meth:`BudgetAccountant.default`, which limits nothing and warns once when several fits
have spent from it, unless a ``with accountant:`` block is active). A copy of an
accountant in another process (pickled or forked) is *detached* and refuses to spend,
so that no process can spend a budget whose owner never hears of it;
:class:`AccountantMixin` extends this to ``accountant=None``.

:func:`sequential_composition` and :func:`parallel_composition` are the two basic
composition theorems for ``(epsilon, delta)``-DP, for adding up the cost of a mechanism
made of parts before spending it. Every guarantee is for add/remove-one neighbours.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Iterable
from typing import NamedTuple

from dptrees.exceptions import BudgetExceededError, CompositionWarning, DetachedAccountantError
from dptrees._checks import check_delta, check_epsilon
from dptrees.validation import warn_user

__all__ = ["AccountantMixin", "BudgetAccountant", "SpendRecord", "check_accountant",
           "parallel_composition", "sequential_composition"]

#: Relative slack allowed when comparing a sum of spends with a total, so that spending a
#: budget in pieces that add up to it exactly (up to float rounding) is accepted. It lets
#: the sums exceed the total by at most this fraction of the total.
_RELATIVE_TOLERANCE = 1e-12


def _check_budget_pair(pair, index):
    try:
        epsilon, delta = pair
    except (TypeError, ValueError):
        raise TypeError(
            f"budget {index} must be an (epsilon, delta) pair, got {pair!r}."
        ) from None
    return (
        check_epsilon(epsilon, f"epsilon of budget {index}", zero=True, infinite=True),
        check_delta(delta, f"delta of budget {index}", one=True),
    )


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
        epsilon = check_epsilon(epsilon, "epsilon", zero=True, infinite=True)
        delta = check_delta(delta, "delta", one=True)
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
        epsilon = check_epsilon(epsilon, zero=True)
        delta = check_delta(delta, one=True)
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
        epsilon = check_epsilon(epsilon, zero=True)
        delta = check_delta(delta, one=True)
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
