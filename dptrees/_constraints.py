"""The estimators' parameter constraints, in scikit-learn's form.

Every estimator declares ``_parameter_constraints`` (scikit-learn's convention) and its
``fit`` calls :func:`validate_params` first, before any data is read or any budget is
spent: a wrong type or value gets scikit-learn's message, e.g. "The 'n_bins' parameter of
DPDecisionTreeClassifier must be an int in the range [2, 256]. Got 1 instead." (an
``InvalidParameterError``, both a ``ValueError`` and a ``TypeError``), and scikit-learn's
``check_param_validation`` can test every estimator (``tests/test_parameter_constraints.py``).

What no constraint expresses stays in the estimators' own checks: the rules of privacy
(``1 / epsilon`` finite, ``delta`` against the number of records, Gaussian noise needing
``delta > 0``), shapes (three budget weights; bounds and schemas, checked against the
data), and combinations of parameters.

Real intervals end at ``inf`` rather than at no bound, so that an infinite value is
refused like any other value outside them: ``Interval(Real, 0, inf, closed="neither")`` is
a finite number > 0.

The constraint classes live in ``sklearn.utils._param_validation``: a private module,
unchanged in what is used here from scikit-learn 1.4 (the oldest that ``pyproject.toml``
allows) to 1.9. CI runs the constraint tests on both ends of the range.
"""

import difflib
import re
from math import inf
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    InvalidParameterError,
    RealNotInt,
    StrOptions,
)

__all__ = [
    "ACCOUNTANT", "AUTO", "BOOLEAN", "DELTA", "EPSILON", "FRACTION", "HasMethods", "N_JOBS",
    "NON_NEGATIVE", "POSITIVE", "PUBLIC", "RANDOM_STATE", "VERBOSE", "fraction_or_count",
    "integers", "options", "reals", "validate_params",
]

#: A finite number > 0.
POSITIVE = Interval(Real, 0, inf, closed="neither")
#: A finite number >= 0.
NON_NEGATIVE = Interval(Real, 0, inf, closed="left")
#: A number in (0, 1).
FRACTION = Interval(Real, 0, 1, closed="neither")

EPSILON = [POSITIVE]
#: ``delta`` in [0, 1); the estimators that need ``delta > 0`` say so themselves.
DELTA = [Interval(Real, 0, 1, closed="left")]
#: joblib's meaning: None is 1, -1 all cores, any other negative counts back from them.
N_JOBS = [None, Interval(Integral, 1, None, closed="left"),
          Interval(Integral, None, -1, closed="right")]
#: See :func:`dptrees._random.check_random_state` (numpy's ``RandomState`` is refused).
RANDOM_STATE = [None, Interval(Integral, 0, None, closed="left"), np.random.SeedSequence,
                np.random.BitGenerator, np.random.Generator]
ACCOUNTANT = [None, HasMethods(["spend"])]
VERBOSE = ["verbose"]
BOOLEAN = ["boolean"]
AUTO = StrOptions({"auto"})
#: Public domains (``bounds``, ``y_bounds``, ``classes``): many shapes, checked against
#: the data with messages of their own (:mod:`dptrees.validation`).
PUBLIC = "no_validation"


def integers(low, high=None):
    """An int in ``[low, high]`` (no upper end if ``high`` is None)."""
    return Interval(Integral, low, high, closed="both" if high is not None else "left")


def reals(low, high, closed):
    """A number in the interval from ``low`` to ``high`` (``closed``: "both", "left",
    "right" or "neither"); use finite ends or ``inf`` to refuse infinite values."""
    return Interval(Real, low, high, closed=closed)


def options(*values):
    """One of the strings ``values``."""
    return StrOptions(set(values))


def fraction_or_count():
    """``max_features``-style: an int >= 1 or a float in (0, 1]."""
    return [integers(1), Interval(RealNotInt, 0, 1, closed="right")]


def validate_params(estimator):
    """Check ``estimator``'s parameters against its ``_parameter_constraints``, with
    scikit-learn's messages (``BaseEstimator._validate_params``); a mistyped string
    option also gets the closest allowed one ("Did you mean 'mean'?").

    Raises
    ------
    InvalidParameterError
        A ``ValueError`` and a ``TypeError``, naming the parameter and what it must be.
    """
    try:
        estimator._validate_params()
    except InvalidParameterError as exc:
        hint = _closest_option(estimator, str(exc))
        if hint is None:
            raise
        raise InvalidParameterError(f"{exc} Did you mean {hint!r}?") from None
    _refuse_booleans(estimator)


def _refuse_booleans(estimator):
    """scikit-learn's intervals take ``True`` for 1; a boolean given for a number is a
    mistake here, refused with the same message."""
    for name, constraints in estimator._parameter_constraints.items():
        value = getattr(estimator, name, None)
        if (not isinstance(value, (bool, np.bool_)) or constraints == "no_validation"
                or "boolean" in constraints):
            continue
        shown = [c for c in constraints if not getattr(c, "hidden", False)]
        if any(isinstance(c, Interval) for c in shown):
            allowed = " or ".join(str(c) if not isinstance(c, str) and c is not None
                                  else repr(c) for c in shown)
            raise InvalidParameterError(
                f"The {name!r} parameter of {type(estimator).__name__} must be {allowed}. "
                f"Got {value!r} instead.")


def _closest_option(estimator, message):
    found = re.match(r"The '(\w+)' parameter", message)
    name = found and found.group(1)
    value = getattr(estimator, name, None) if name else None
    if not isinstance(value, str):
        return None
    constraints = estimator._parameter_constraints.get(name, [])
    allowed = [option for c in constraints if isinstance(c, StrOptions) for option in c.options]
    close = difflib.get_close_matches(value, allowed, n=1)
    return close[0] if close else None
