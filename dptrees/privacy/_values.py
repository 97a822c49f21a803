"""Checks of the numbers the accountants take: an epsilon, a delta, a count.

The accountants' own contracts (a spend's epsilon may be 0, a total's may be infinite, a
delta is a probability in ``[0, 1]``); an estimator's parameters are checked by
:mod:`dptrees.validation`.
"""

import math
import numbers
import operator

import numpy as np

__all__ = ["_as_real", "_check_count", "_check_delta", "_check_epsilon",
           "_check_positive_finite"]


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
