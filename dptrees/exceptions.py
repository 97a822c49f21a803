"""Warnings and errors specific to differential privacy."""

__all__ = ["PrivacyLeakWarning", "BudgetExceededError", "DiscretisationError"]


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


class DiscretisationError(ValueError):
    """A value is too large to be released on the chosen noise grid."""
