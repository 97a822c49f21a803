"""One contract per concept for the scalars every layer takes: a real number, an
epsilon, a delta, a probability, a positive number, an integer, one of some options.

Estimators, mechanisms, accountants and the audit all check their scalars here, so an
epsilon or a delta means the same thing wherever it is given; what differs between
callers is said by a keyword (an accountant's spend may have epsilon 0, its total may be
infinite; a Gaussian mechanism needs delta > 0), not by another function. Every check
raises a ``TypeError`` for a value of the wrong type (booleans are not numbers here) and
a ``ValueError`` naming the parameter and the allowed range for a value out of it (NaN
included).
"""

import difflib
import math
import numbers

import numpy as np

__all__ = ["as_real", "check_delta", "check_epsilon", "check_in", "check_positive_int",
           "check_positive_number", "check_probability", "is_real_number"]


def is_real_number(value):
    """True for a real number that is not a boolean."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def as_real(value, name):
    """``float(value)`` for a real, non-boolean number (or a 0-d real numpy array); NaN
    passes (the range checks below refuse it)."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value.item()
    if not is_real_number(value):
        raise TypeError(f"{name} must be a real number, got {value!r} of type {type(value).__name__}")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{name} must be finite, got {value!r} (too large for a float)") from None


def check_epsilon(epsilon, name="epsilon", *, zero=False, infinite=False):
    """Validate a privacy parameter epsilon.

    Parameters
    ----------
    epsilon : real number
        An estimator's or a mechanism's epsilon: finite, > 0, and large enough that
        ``1 / epsilon`` is finite.
    name : str, default="epsilon"
        Name used in error messages.
    zero : bool, default=False
        Also accept 0 (what an accountant records for a release that costs no epsilon).
    infinite : bool, default=False
        Also accept ``inf`` (an accountant's total that sets no limit).

    Returns
    -------
    float
        The value; errors as in the module's docstring.
    """
    value = as_real(epsilon, name)
    if math.isnan(value) or (math.isinf(value) and not infinite):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if value < 0 or (value == 0 and not zero):
        raise ValueError(f"{name} must be {'>= 0' if zero else '> 0'}, got {value!r}")
    if value > 0 and not math.isfinite(1.0 / value):
        raise ValueError(f"{name}={value!r} is too small: 1/{name} overflows")
    return value


def check_delta(delta, name="delta", *, positive=False, one=False):
    """Validate a privacy parameter delta, a probability.

    Parameters
    ----------
    delta : real number
        In ``[0, 1)``; 0 means pure epsilon-DP.
    name : str, default="delta"
        Name used in error messages.
    positive : bool, default=False
        Refuse 0 (Gaussian noise and Renyi conversions need ``delta > 0``).
    one : bool, default=False
        Also accept 1 (an accountant's spend or total, where delta 1 limits nothing).

    Returns
    -------
    float
        The value; errors as in the module's docstring (the message names the interval).
    """
    value = as_real(delta, name)
    low_ok = value > 0 if positive else value >= 0
    high_ok = value <= 1 if one else value < 1
    if not (low_ok and high_ok):  # also refuses NaN
        interval = f"{'(' if positive else '['}0, 1{']' if one else ')'}"
        raise ValueError(f"{name} must be in {interval}, got {value!r}")
    return value


def check_probability(value, name, *, open_interval=False):
    """Validate a probability: in ``[0, 1]``, or ``(0, 1)`` with ``open_interval``
    (a confidence level)."""
    value = as_real(value, name)
    inside = 0 < value < 1 if open_interval else 0 <= value <= 1
    if not inside:  # also refuses NaN
        raise ValueError(f"{name} must be in {'(0, 1)' if open_interval else '[0, 1]'}, "
                         f"got {value!r}")
    return value


def check_positive_number(value, name, *, allow_none=False, allow_zero=False):
    """Validate a real hyper-parameter that must be finite and > 0 (``>= 0`` with
    ``allow_zero``; ``None`` if allowed).

    Parameters
    ----------
    value : float or None
        The hyper-parameter's value.
    name : str
        Its name, for messages.
    allow_none : bool, default=False
        Accept ``None``.
    allow_zero : bool, default=False
        Accept 0.

    Returns
    -------
    float or None
    """
    if allow_none and value is None:
        return None
    value = as_real(value, name)
    if not (math.isfinite(value) and (value > 0 or (allow_zero and value == 0))):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")
    return value


def check_positive_int(value, name, minimum=1, maximum=None):
    """Validate an integer hyper-parameter or count.

    Parameters
    ----------
    value : int
        A Python or numpy integer (not a bool, not a float such as ``3.0``).
    name : str
        Name used in error messages.
    minimum : int, default=1
        Smallest allowed value (0 for a count).
    maximum : int, optional
        Largest allowed value (no upper limit if ``None``).

    Returns
    -------
    int

    Raises
    ------
    TypeError
        If ``value`` is not an integer.
    ValueError
        If it is outside ``[minimum, maximum]``.
    """
    if not isinstance(value, numbers.Integral) or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got {value!r} of type {type(value).__name__}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def _same_option(value, option):
    if value is option:
        return True
    # keep True from matching 1 and "1" from matching 1
    if isinstance(value, (bool, np.bool_)) != isinstance(option, (bool, np.bool_)):
        return False
    if isinstance(value, str) != isinstance(option, str):
        return False
    try:
        equal = value == option
    except Exception:
        return False
    return isinstance(equal, (bool, np.bool_)) and bool(equal)


def check_in(value, name, options):
    """Validate a hyper-parameter that must be one of a fixed set of values.

    Parameters
    ----------
    value : object
        The value given by the user.
    name : str
        Name used in error messages.
    options : iterable
        Allowed values (compared with ``==``; strings are case-sensitive, booleans only
        match booleans).

    Returns
    -------
    object
        The matching element of ``options``.

    Raises
    ------
    ValueError
        If ``value`` is not one of ``options``; the message lists the allowed values and,
        for strings, suggests a close match.
    """
    options = list(options)
    for option in options:
        if _same_option(value, option):
            return option
    allowed = ", ".join(repr(o) for o in options)
    message = f"{name} must be one of {allowed}; got {value!r}"
    if isinstance(value, str):
        close = difflib.get_close_matches(value, [o for o in options if isinstance(o, str)], n=1)
        if close:
            message += f". Did you mean {close[0]!r}?"
    raise ValueError(message)
