"""Warnings and errors specific to differential privacy."""

__all__ = [
    "BudgetExceededError",
    "CompositionWarning",
    "DetachedAccountantError",
    "DiscretisationError",
    "EarlyStopWarning",
    "PrivacyLeakWarning",
    "WeakPrivacyWarning",
]


class PrivacyLeakWarning(UserWarning):
    """A result is no longer differentially private as claimed.

    Raised as a warning when a public input (feature bounds, target bounds, the class
    list) was left out and had to be read from the private data. The fitted model records
    the fact in its ``privacy_leaks_`` attribute.
    """


class BudgetExceededError(ValueError):
    """A privacy spend would take an accountant past its total budget.

    Nothing has been spent when this is raised: the accountant's state is unchanged.
    """


class DetachedAccountantError(BudgetExceededError):
    """A copy of an accountant in another process was asked to spend.

    A :class:`~dptrees.accounting.BudgetAccountant` that was pickled (for example to reach
    a joblib worker of ``cross_val_score(..., n_jobs=2)``) or inherited by a forked process
    is *detached*: its spends would never reach the original's budget, so two processes
    could each spend the whole of it. It refuses every spend instead. Nothing has been
    spent when this is raised.
    """


class DiscretisationError(ValueError):
    """A value is too large to be released on the chosen noise grid."""


class WeakPrivacyWarning(UserWarning):
    """A privacy parameter gives a guarantee too weak to protect anyone.

    For example ``delta >= 1 / n``: an ``(epsilon, delta)``-DP mechanism may then publish
    one of the ``n`` records in the clear. The fit goes ahead; the warning tells the
    person running it.
    """


class CompositionWarning(UserWarning):
    """Several fits have spent from the process-wide default accountant.

    The default accountant (``accountant=None`` outside any ``with accountant:`` block)
    limits nothing; it records every spend. Once it has recorded more than one fit it
    warns, once, with the total: a model chosen among several fits on the same data (a
    ``GridSearchCV``, a cross-validation, trying settings by hand) costs the *sum* of
    their budgets, not the budget of the one chosen. Tune privately with
    :class:`dptrees.model_selection.DPRandomSearch`, or cap the total with an explicit
    :class:`~dptrees.accounting.BudgetAccountant`.
    """


class EarlyStopWarning(UserWarning):
    """Training stopped before ``n_estimators`` rounds.

    For example federated boosting stops *before* a round that would push delta past its
    bound. The model is complete and private; it has fewer trees than asked for
    (``n_iter_`` says how many), so it may fit less well.
    """
