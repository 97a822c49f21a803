"""Storing an estimator's constructor arguments, unchanged (scikit-learn's convention)."""

__all__ = ["store_params"]


def store_params(estimator, arguments):
    """Set every constructor argument as an attribute of the same name, as passed.

    Call as ``store_params(self, locals())`` first thing in ``__init__``: validation
    belongs in ``fit`` (scikit-learn's ``clone`` and ``set_params`` rely on it).
    """
    for name, value in arguments.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)
