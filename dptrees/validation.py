"""Input validation shared by every estimator and mechanism.

Privacy rules
-------------
Feature bounds, target bounds (regression) and the list of classes (classification) are
*public* inputs: they must be chosen without looking at the private data. If the caller
leaves one out, it is read from the data instead, a :class:`~dptrees.exceptions.PrivacyLeakWarning`
is issued (always through :func:`warn_privacy_leak`, so every message reads the same) and
the returned record carries a ``leak`` string that the estimator appends to its
``privacy_leaks_`` list::

    bounds = check_bounds(self.bounds, X)
    if bounds.leak is not None:
        self.privacy_leaks_.append(bounds.leak)

Values outside public bounds are *clipped* (:func:`clip_to_bounds`, :func:`clip`), never
dropped and never an error, and nothing reports how many values were clipped (that count
is private). A label outside a public class list cannot be clipped, so it is an error.

Malformed input (NaN, infinity, strings, complex numbers, wrong shapes, ill-typed
hyper-parameters) raises a ``ValueError`` or ``TypeError`` with a message that says what
is wrong and how to fix it. Messages follow scikit-learn's wording where its estimator
checks look for it (``"Reshape your data"``, ``"Complex data not supported"``,
``"X has 3 features, but ... is expecting 5 features as input"``, ``"0 feature(s)"``,
``"Unknown label type"``, ``"one class"``).

Zero-width intervals
--------------------
A bound with ``lower == upper`` (a feature, or a target, that is constant by public
knowledge, or a column that happens to be constant when bounds are read from the data) is
accepted and *widened* to ``[c - h, c + h]`` with ``h = max(0.5, 1e-9 * |c|)``. Downstream
code can therefore always divide by ``upper - lower`` (equal-width binning, sensitivity
scaling) and every returned interval has a finite, strictly positive width. Widening is a
deterministic function of public values, so it costs no privacy; the model stays within
the caller's declared domain up to ``h``.
"""

import difflib
import inspect
import math
import numbers
import sys
import warnings
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.validation import check_array

from dptrees import _compat
from dptrees.exceptions import PrivacyLeakWarning, WeakPrivacyWarning

__all__ = [
    "Bounds",
    "ClassEncoding",
    "TargetBounds",
    "by_feature_index",
    "check_bounds",
    "check_classes",
    "check_delta",
    "check_epsilon",
    "check_feature_names",
    "check_features",
    "check_in",
    "check_positive_int",
    "check_positive_number",
    "check_sample_weight",
    "check_targets_regression",
    "check_y_bounds",
    "clip",
    "clip_to_bounds",
    "warn_privacy_leak",
    "warn_user",
    "weight_units",
    "WEIGHT_BITS",
    "WEIGHT_GRID",
]

_MAX_LISTED = 10  # at most this many offending items are named in an error message


# --------------------------------------------------------------------------- records


class Bounds(NamedTuple):
    """Per-feature public bounds, as returned by :func:`check_bounds`.

    Parameters
    ----------
    lower, upper : ndarray of shape (n_features,), dtype float64
        Finite, with ``lower < upper`` for every feature (zero-width intervals widened).
    leak : str or None
        ``None`` if the bounds were given; otherwise a short description of the privacy
        leak, ready to be appended to an estimator's ``privacy_leaks_``.
    """

    lower: np.ndarray
    upper: np.ndarray
    leak: str | None

    @property
    def inferred(self) -> bool:
        """Whether the bounds were read from the data (the result is not DP)."""
        return self.leak is not None


class TargetBounds(NamedTuple):
    """Public bounds of a regression target, as returned by :func:`check_y_bounds`.

    Parameters
    ----------
    lower, upper : float
        Finite, with ``lower < upper`` (a zero-width interval is widened).
    leak : str or None
        ``None`` if the bounds were given; otherwise a description of the privacy leak.
    """

    lower: float
    upper: float
    leak: str | None

    @property
    def inferred(self) -> bool:
        """Whether the bounds were read from the data (the result is not DP)."""
        return self.leak is not None


class ClassEncoding(NamedTuple):
    """Class list and encoded labels, as returned by :func:`check_classes`.

    Parameters
    ----------
    classes : ndarray of shape (n_classes,)
        Sorted, distinct labels (the estimator's ``classes_``), ``n_classes >= 2``.
    y : ndarray of shape (n_samples,), dtype int64
        ``classes[y]`` equals the original labels.
    leak : str or None
        ``None`` if the class list was given; otherwise a description of the privacy leak.
    """

    classes: np.ndarray
    y: np.ndarray
    leak: str | None

    @property
    def inferred(self) -> bool:
        """Whether the class list was read from the data (the result is not DP)."""
        return self.leak is not None


# --------------------------------------------------------------------------- warnings


def _user_stacklevel():
    """``stacklevel`` for a warning issued from a helper of this module.

    Counts the frames that belong to the ``dptrees`` package, so that the warning is
    attributed to the first caller outside it (the user's ``fit`` call), however deep the
    call chain inside dptrees is.
    """
    frame = sys._getframe(1)  # the helper that calls ``warnings.warn``
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == "dptrees":
        frame = frame.f_back
        level += 1
    return level


def warn_user(message, category):
    """Issue a warning attributed to the user's call into dptrees (see
    :func:`_user_stacklevel`)."""
    warnings.warn(message, category, stacklevel=_user_stacklevel())


def warn_privacy_leak(what, *, param=None):
    """Issue the :class:`~dptrees.exceptions.PrivacyLeakWarning` for an inferred public input.

    Every validation function that reads a public input from the private data goes
    through this helper, so all messages have the same form.

    Parameters
    ----------
    what : str
        What was read from the data, e.g. ``"feature bounds"``.
    param : str, optional
        Name of the parameter the user should have passed, e.g. ``"bounds"``.

    Returns
    -------
    leak : str
        A short description of the leak, for the estimator's ``privacy_leaks_`` list,
        e.g. ``"bounds: feature bounds read from the training data"``.
    """
    how = f"pass `{param}` explicitly" if param else "pass them explicitly"
    message = (
        f"Privacy leak: {what} not given, so they were read from the training data. "
        "The result is NOT differentially private. To keep the privacy guarantee, "
        f"{how}, using public values chosen without looking at the data."
    )
    warn_user(message, PrivacyLeakWarning)
    record = f"{what} read from the training data"
    return f"{param}: {record}" if param else record


# --------------------------------------------------------------------------- scalars


def _is_real_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _as_real(value, name):
    """``float(value)`` for a real, non-boolean number (or a 0-d real numpy array)."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value.item()
    if not _is_real_number(value):
        raise TypeError(f"{name} must be a real number, got {value!r} of type {type(value).__name__}")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{name} must be finite, got {value!r} (too large for a float)") from None


def check_epsilon(epsilon, name="epsilon"):
    """Validate a privacy parameter epsilon (or any strictly positive real).

    Parameters
    ----------
    epsilon : real number
        Must be finite and strictly positive. Booleans and strings are rejected.
    name : str, default="epsilon"
        Name used in error messages.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If ``epsilon`` is not a real number.
    ValueError
        If it is NaN, infinite, zero, negative, or so small that ``1 / epsilon`` overflows.
    """
    value = _as_real(epsilon, name)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    if not np.isfinite(1.0 / value):
        raise ValueError(f"{name}={value!r} is too small: 1/{name} overflows")
    return value


def warn_weak_delta(delta, n, unit="records"):
    """Warn with :class:`~dptrees.exceptions.WeakPrivacyWarning` if ``delta >= 1 / n``.

    An ``(epsilon, delta)`` guarantee with ``delta >= 1 / n`` allows a mechanism that
    publishes one of the ``n`` records (or clients) in the clear, so it protects nobody
    in particular. The warning is shown to whoever runs the fit (who holds the data);
    nothing about ``n`` is released.

    Parameters
    ----------
    delta : float
    n : int
        Number of records (or of clients, for client-level DP).
    unit : str, default="records"
        What ``n`` counts, for the message.
    """
    if delta > 0 and n > 0 and delta >= 1.0 / n:
        # The message names no count: warnings end up in logs, and n is private.
        warn_user(f"delta={delta!r} is at least 1/n, n the number of {unit}: such a "
                  f"guarantee allows releasing one of the {unit} in the clear. Use delta "
                  f"well below 1/n (e.g. 1/n**1.1 or 1e-6).", WeakPrivacyWarning)


def check_delta(delta, name="delta"):
    """Validate a privacy parameter delta.

    Parameters
    ----------
    delta : real number
        Must lie in ``[0, 1)``; ``0`` means pure epsilon-DP.
    name : str, default="delta"
        Name used in error messages.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If ``delta`` is not a real number (booleans included).
    ValueError
        If it is NaN or outside ``[0, 1)``.
    """
    value = _as_real(delta, name)
    if not (0.0 <= value < 1.0):  # also rejects NaN
        raise ValueError(f"{name} must be in [0, 1), got {value!r}")
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
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not (
        math.isfinite(value) and (value > 0 or (allow_zero and value == 0))
    ):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")
    return float(value)


def check_positive_int(value, name, minimum=1, maximum=None):
    """Validate an integer hyper-parameter.

    Parameters
    ----------
    value : int
        A Python or numpy integer (not a bool, not a float such as ``3.0``).
    name : str
        Name used in error messages.
    minimum : int, default=1
        Smallest allowed value.
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


# --------------------------------------------------------------------------- arrays


def _listed(items):
    items = list(items)
    shown = ", ".join(repr(i) for i in items[:_MAX_LISTED])
    return f"[{shown}{', ...' if len(items) > _MAX_LISTED else ''}]"


def _finite_kw():
    params = inspect.signature(check_array).parameters
    return "ensure_all_finite" if "ensure_all_finite" in params else "force_all_finite"


_FINITE_KW = _finite_kw()  # scikit-learn renamed force_all_finite in 1.6


def _to_numpy(data, name, *, target=False):
    """Turn ``data`` (array-like, DataFrame, Series) into an ndarray, dtype preserved."""
    if data is None:
        if target:  # sklearn's check_requires_y_none looks for this wording
            raise ValueError(
                f"This estimator requires y to be passed, but the target {name} is None"
            )
        raise TypeError(f"{name} must be array-like, got None")
    if sp.issparse(data):
        raise TypeError(
            f"Sparse data was passed for {name}, but dense data is required: sparse input is "
            "not supported. Use '.toarray()' to convert to a dense numpy array."
        )
    if isinstance(data, (str, bytes, dict, set)):
        raise TypeError(f"{name} must be array-like, got {type(data).__name__}")
    try:
        # check_array converts pandas objects (including nullable extension dtypes);
        # every other check is done by our callers, with our own messages.
        return check_array(
            data,
            accept_sparse=False,
            dtype=None,
            ensure_2d=False,
            allow_nd=True,
            ensure_min_samples=0,
            ensure_min_features=0,
            input_name=name,
            **{_FINITE_KW: False},
        )
    except ValueError as exc:
        text = str(exc)
        if "Complex data not supported" in text:
            raise ValueError(
                f"Complex data not supported: {name} has complex values; pass real numbers."
            ) from None
        if "inhomogeneous" in text:
            raise ValueError(
                f"{name} is ragged: its rows do not all have the same length ({text})"
            ) from None
        raise


def _numeric_float64(arr, name, copy=False):
    """float64, C-contiguous copy-if-needed of a numeric array; rejects other dtypes."""
    kind = arr.dtype.kind
    if kind == "c":
        raise ValueError(f"Complex data not supported: {name} has complex values; pass real numbers.")
    if kind in "US":
        raise TypeError(
            f"{name} has a string dtype ({arr.dtype}); dptrees needs numbers. Encode "
            "categorical or text values as numbers first (e.g. with "
            "sklearn.preprocessing.OrdinalEncoder fitted on public categories)."
        )
    if kind == "O":
        flat = arr.ravel()
        is_text = np.frompyfunc(lambda v: isinstance(v, (str, bytes)), 1, 1)(flat).astype(bool)
        if is_text.any():
            where = np.unravel_index(int(np.argmax(is_text)), arr.shape)
            raise TypeError(
                f"{name} contains strings (first at index {tuple(int(i) for i in where)}); "
                "dptrees needs numbers. Encode categorical or text values as numbers first "
                "(e.g. with sklearn.preprocessing.OrdinalEncoder fitted on public categories)."
            )
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError, OverflowError) as exc:
            raise TypeError(
                f"{name} has dtype object and contains values that are not real numbers "
                f"({exc}). Missing values (None, pandas.NA) are not supported: replace them "
                "with a public value first."
            ) from None
        kind = "f"
    if kind not in "biuf":
        raise TypeError(f"{name} must be numeric, got an array of dtype {arr.dtype}")
    if copy:
        return np.array(arr, dtype=np.float64, order="C", copy=True)
    return np.ascontiguousarray(arr, dtype=np.float64)


def _check_all_finite(arr, name):
    if np.isfinite(arr).all():
        return
    nan = np.isnan(arr)
    if nan.any():
        where = tuple(int(i) for i in np.unravel_index(int(np.argmax(nan)), arr.shape))
        raise ValueError(
            f"Input {name} contains NaN (first at index {where}). A column that may be "
            "missing must say so in `bounds`, a dict by column: "
            "dptrees.Numeric(lower, upper, missing=True) for a numeric column (it gets a "
            "missing bin of its own), or the list of public categories for a categorical "
            "one (a missing value is a category of its own)."
        )
    where = tuple(int(i) for i in np.unravel_index(int(np.argmax(~np.isfinite(arr))), arr.shape))
    raise ValueError(
        f"Input {name} contains infinity or a value too large for dtype('float64') "
        f"(first at index {where}). All values must be finite."
    )


def _estimator_label(estimator):
    if estimator is None:
        return "the fitted model"
    if isinstance(estimator, str):
        return estimator
    return type(estimator).__name__


def check_feature_names(estimator, X, *, reset):
    """Keep the column names of a data frame ``X`` as ``estimator.feature_names_in_``
    (``reset=True``, at fit), or check that ``X`` has the names and order seen at fit
    (``reset=False``), with scikit-learn's rules and messages: a frame with other or
    reordered columns is refused; a frame where an array was fitted (or the reverse)
    gives a warning. Arrays, memmaps and block sources have no names.

    Parameters
    ----------
    estimator : estimator
        The estimator being fitted or predicting.
    X : array-like or DataFrame
        Its data.
    reset : bool
        True at fit (keep the names), False at predict (check them).
    """
    _compat.check_feature_names(estimator, X, reset=reset)


def check_features(X, *, n_features=None, estimator=None, name="X", copy=False):
    """Validate a feature matrix and return it as C-contiguous float64.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Lists, numpy arrays (any order, bool/int/float dtypes) and pandas DataFrames (if
        pandas is installed). Object arrays are accepted if every entry is a real number.
    n_features : int, optional
        If given (at predict time), the number of features the model was fitted with.
    estimator : str or estimator, optional
        Name (or instance) of the calling estimator, used in the feature-count message
        ``"X has 3 features, but <estimator> is expecting 5 features as input"``. Pass
        it: scikit-learn's ``check_estimator`` looks for a one-word name there. With a
        fitted estimator and ``n_features``, the column names of a data frame are checked
        against ``feature_names_in_`` (:func:`check_feature_names`).
    name : str, default="X"
        Name used in error messages.
    copy : bool, default=False
        Always return a new array. Otherwise ``X`` itself is returned when it already is
        a C-contiguous float64 array, so callers must not modify the result in place.

    Returns
    -------
    ndarray of shape (n_samples, n_features), dtype float64, C-contiguous

    Raises
    ------
    TypeError
        For ``None``, sparse matrices, strings and other non-numeric values.
    ValueError
        For complex values, NaN or infinity, input that is not 2-D, empty input, ragged
        lists, and a feature count different from ``n_features``.
    """
    if n_features is not None and estimator is not None and not isinstance(estimator, str):
        check_feature_names(estimator, X, reset=False)
        encoding = getattr(estimator, "_table_encoding", None)  # see dptrees._tables
        if encoding is not None:
            X = encoding.transform(X)
    arr = _to_numpy(X, name)
    if arr.ndim != 2:
        if arr.ndim == 0:
            got = "a scalar"
        elif arr.ndim == 1:
            got = f"a 1D array of shape {arr.shape}"
        else:
            got = f"an array with {arr.ndim} dimensions, shape {arr.shape}"
        raise ValueError(
            f"Expected a 2D array for {name} (n_samples, n_features), got {got} instead. "
            "Reshape your data either using array.reshape(-1, 1) if your data has a single "
            "feature or array.reshape(1, -1) if it contains a single sample."
        )
    n_rows, n_cols = arr.shape
    if n_rows == 0:
        raise ValueError(
            f"{name}: Found array with 0 sample(s) (shape={arr.shape}) while a minimum of 1 is required."
        )
    if n_cols == 0:
        raise ValueError(
            f"{name}: Found array with 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required."
        )
    if n_features is not None:
        n_features = check_positive_int(n_features, "n_features")
        if n_cols != n_features:
            raise ValueError(
                f"{name} has {n_cols} features, but {_estimator_label(estimator)} is expecting "
                f"{n_features} features as input (it was fitted with {n_features})."
            )
    out = _numeric_float64(arr, name, copy=copy)
    _check_all_finite(out, name)
    return out


def _ravel_column(arr, name):
    """sklearn's convention for targets: (n, 1) is raveled with a DataConversionWarning."""
    if arr.ndim == 2 and arr.shape[1] == 1:
        warn_user(
            "A column-vector y was passed when a 1d array was expected. Please change the "
            "shape of y to (n_samples, ), for example using ravel().",
            DataConversionWarning,
        )
        return arr.ravel()
    if arr.ndim != 1:
        what = "a scalar" if arr.ndim == 0 else f"an array of shape {arr.shape}"
        raise ValueError(
            f"{name} must be a 1D array of shape (n_samples,), got {what}. "
            "Multi-output targets are not supported."
        )
    return arr


def _check_n_samples(n, n_samples, name):
    if n == 0:
        raise ValueError(f"{name}: Found array with 0 sample(s) while a minimum of 1 is required.")
    if n_samples is not None and n != n_samples:
        raise ValueError(
            f"{name} has {n} samples, but X has {n_samples}: Found input variables with "
            f"inconsistent numbers of samples: [{n_samples}, {n}]."
        )


def check_targets_regression(y, n_samples=None, *, name="y"):
    """Validate a regression target and return it as C-contiguous float64.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        A column vector of shape ``(n_samples, 1)`` is accepted and raveled with a
        :class:`sklearn.exceptions.DataConversionWarning` (scikit-learn's convention).
    n_samples : int, optional
        Number of rows of ``X``; ``y`` must have the same length.
    name : str, default="y"
        Name used in error messages.

    Returns
    -------
    ndarray of shape (n_samples,), dtype float64, C-contiguous

    Raises
    ------
    TypeError
        For sparse matrices, strings and other non-numeric values.
    ValueError
        For ``y=None``, complex values, NaN or infinity, wrong shapes, empty ``y`` and a
        length different from ``n_samples``.
    """
    arr = _ravel_column(_to_numpy(y, name, target=True), name)
    _check_n_samples(arr.shape[0], n_samples, name)
    out = _numeric_float64(arr, name)
    _check_all_finite(out, name)
    return out


#: Sample weights are rounded to multiples of this, so that weighted sums are exact.
WEIGHT_BITS = 20
WEIGHT_GRID = 2.0**-WEIGHT_BITS


def weight_units(sample_weight: np.ndarray) -> np.ndarray:
    """Checked sample weights (multiples of :data:`WEIGHT_GRID` in [0, 1], from
    :func:`check_sample_weight`) as int64 units of the grid, in ``[0, 2**WEIGHT_BITS]``."""
    return np.rint(sample_weight / WEIGHT_GRID).astype(np.int64)


def check_sample_weight(sample_weight: ArrayLike | None, n_samples: int) -> np.ndarray | None:
    """Validate per-record weights in [0, 1] and round them to :data:`WEIGHT_GRID`.

    Privacy: a record's weight scales everything the record contributes (its count,
    target, class count, gradient and Hessian). A weight in ``[0, 1]`` keeps each of those
    in the same public range as without weights (every range contains 0), so every
    sensitivity derived for unweighted records holds unchanged; a weight above 1 would
    multiply it. The weights are the record's own private data, like its features: the
    weight of one record never changes another's. A weight of 1 is exactly the unweighted
    record (same integers, same model).

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,) or None
    n_samples : int
        Number of rows of ``X``.

    Returns
    -------
    ndarray of shape (n_samples,), dtype float64, or None
        None when ``sample_weight`` is None (every record weighs 1); otherwise a new array
        of multiples of ``WEIGHT_GRID`` in [0, 1].

    Raises
    ------
    TypeError
        For non-numeric weights.
    ValueError
        For a wrong shape or length, NaN or infinity, weights outside [0, 1] or all zero.
    """
    if sample_weight is None:
        return None
    name = "sample_weight"
    arr = _to_numpy(sample_weight, name)
    if arr.ndim != 1:
        what = "a scalar" if arr.ndim == 0 else f"an array of shape {arr.shape}"
        raise ValueError(f"{name} must be a 1D array of shape (n_samples,), got {what}")
    _check_n_samples(arr.shape[0], n_samples, name)
    weights = _numeric_float64(arr, name, copy=True)
    _check_all_finite(weights, name)
    if weights.min() < 0 or weights.max() > 1:
        raise ValueError(
            f"{name} must be in [0, 1], got values in [{weights.min():g}, {weights.max():g}]. "
            "A weight bounds what one record can contribute, so weights above 1 would "
            "break the privacy guarantee; divide the weights by a public upper bound of "
            "them (one that does not come from this data)."
        )
    np.rint(weights / WEIGHT_GRID, out=weights)
    weights *= WEIGHT_GRID
    if not weights.any():
        raise ValueError(f"{name} is all zero (after rounding to multiples of 2**-20): "
                         "no record takes part in the fit")
    return weights


# --------------------------------------------------------------------------- bounds


def _widen(lower, upper):
    """Widen zero-width intervals to ``[c - h, c + h]``, ``h = max(0.5, 1e-9 |c|)``."""
    same = lower == upper
    if np.any(same):
        half = np.maximum(0.5, 1e-9 * np.abs(lower))
        lower = np.where(same, lower - half, lower)
        upper = np.where(same, upper + half, upper)
    return lower, upper


def _check_interval(lower, upper, name, label):
    """Shared checks on (arrays of) intervals; returns them widened.

    ``label(i)`` names the i-th interval in messages.
    """
    bad = ~(np.isfinite(lower) & np.isfinite(upper))
    if bad.any():
        idx = np.flatnonzero(bad)
        raise ValueError(
            f"{name} must be finite; got non-finite bounds for {_listed(label(i) for i in idx)}"
        )
    reversed_ = lower > upper
    if reversed_.any():
        idx = np.flatnonzero(reversed_)
        details = _listed(
            f"{label(i)}: lower={float(lower.flat[i])!r} > upper={float(upper.flat[i])!r}" for i in idx
        )
        raise ValueError(f"{name}: lower bound exceeds upper bound for {details}")
    with np.errstate(over="ignore", invalid="ignore"):
        lower, upper = _widen(lower, upper)
        width_ok = np.isfinite(upper - lower) & np.isfinite(lower) & np.isfinite(upper)
    if not width_ok.all():
        idx = np.flatnonzero(~width_ok)
        raise ValueError(
            f"{name}: the interval is too wide or too close to the float64 limits for "
            f"{_listed(label(i) for i in idx)} (upper - lower must be a finite float)"
        )
    return lower, upper


def _bound_side(value, side, name, n_features):
    """One side (lower or upper) of ``bounds`` as a float64 array of length n_features."""
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name}: {side} must be a number or an array of numbers, got {value!r}")
    arr = np.asarray(value)
    if arr.dtype.kind == "O":
        arr = _numeric_float64(arr, f"{name} ({side})")
    elif arr.dtype.kind not in "iuf":
        raise TypeError(
            f"{name}: {side} must be a number or an array of numbers, got dtype {arr.dtype}"
        )
    arr = arr.astype(np.float64)
    if arr.ndim == 0:
        return np.full(n_features, float(arr))
    if arr.ndim != 1:
        raise ValueError(
            f"{name}: {side} must be a scalar or a 1D array of length n_features={n_features}, "
            f"got shape {arr.shape}"
        )
    if arr.shape[0] != n_features:
        raise ValueError(
            f"{name}: {side} has {arr.shape[0]} values, but there are {n_features} features"
        )
    return np.array(arr, dtype=np.float64, order="C", copy=True)


def _pair(bounds, name, what):
    """Split ``bounds`` into (lower, upper) or raise a helpful error."""
    is_pair = isinstance(bounds, (tuple, list)) and len(bounds) == 2
    is_pair = is_pair or (isinstance(bounds, np.ndarray) and bounds.ndim >= 1 and bounds.shape[0] == 2)
    if not is_pair:
        shape = np.shape(bounds) if isinstance(bounds, (tuple, list, np.ndarray)) else None
        raise TypeError(
            f"{name} must be None or a pair (lower, upper) of {what}; got "
            f"{type(bounds).__name__}{'' if shape is None else f' of shape {shape}'}."
        )
    return bounds[0], bounds[1]


def _numeric_table(bounds):
    """``bounds`` as a 2-D float64 array if it is a nested sequence of numbers, else None."""
    if isinstance(bounds, (str, bytes, dict)) or not isinstance(bounds, (tuple, list, np.ndarray)):
        return None
    try:
        table = np.asarray(bounds, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return table if table.ndim == 2 else None


def by_feature_index(mapping, name, n_features, feature_names):
    """``{feature index: (key, value)}`` from a dict keyed by column name
    (``feature_names``) or feature index; unknown and repeated features are errors."""
    names = None if feature_names is None else [str(f) for f in feature_names]
    out = {}
    for key, value in mapping.items():
        if isinstance(key, str):
            if names is None or key not in names:
                known = "the data has no column names" if names is None else (
                    f"columns are {_listed(names)}")
                raise ValueError(f"{name}: unknown column {key!r} ({known})")
            j = names.index(key)
        elif isinstance(key, numbers.Integral) and not isinstance(key, bool) \
                and 0 <= key < n_features:
            j = int(key)
        else:
            raise ValueError(f"{name}: keys must be column names or feature indices in "
                             f"[0, {n_features}), got {key!r}")
        if j in out:
            raise ValueError(f"{name}: feature {key!r} is given twice")
        out[j] = (key, value)
    return out


def _bounds_by_feature(bounds, name, n_features, feature_names):
    """``{feature: (low, high)}`` (keys: column names, or indices) as two arrays."""
    lower, upper = np.full(n_features, np.nan), np.full(n_features, np.nan)
    from_data = []
    for j, (key, interval) in by_feature_index(bounds, name, n_features,
                                               feature_names).items():
        if interval is None:
            from_data.append(j)
            continue
        low, high = _pair(interval, f"{name}[{key!r}]", "numbers")
        lower[j] = _bound_side(low, "lower", name, 1)[0]
        upper[j] = _bound_side(high, "upper", name, 1)[0]
    lower[from_data] = upper[from_data] = 0.0  # placeholders, read from the data later
    missing = np.flatnonzero(np.isnan(lower))
    if missing.size:
        label = [j if feature_names is None else str(feature_names[j]) for j in missing]
        raise ValueError(f"{name}: no bounds for {_listed(label)}; a dict "
                         "must give every feature's public (lower, upper)")
    return lower, upper, from_data


def _bounds_arrays(bounds, name, n_features, feature_names):
    """``lower``, ``upper`` arrays from any accepted layout of ``bounds``: a pair
    ``(lower, upper)`` of scalars or arrays, one ``(lower, upper)`` pair per feature
    (shape ``(n_features, 2)``), or a dict by column name or index. A 2 x 2 table for
    two features is read the only way that gives every feature ``lower < upper``,
    refused as ambiguous if both ways do, and read as a pair if neither does; a pair of
    numpy arrays is always a pair. Also returns the features whose bounds a dict leaves
    to be read from the data (value ``None``)."""
    if isinstance(bounds, dict):
        return _bounds_by_feature(bounds, name, n_features, feature_names)
    return (*_bounds_pair_arrays(bounds, name, n_features), [])


def _bounds_pair_arrays(bounds, name, n_features):
    """``lower``, ``upper`` from the layouts of ``bounds`` other than a dict."""
    table = _numeric_table(bounds)
    if table is not None and table.shape == (n_features, 2) and n_features != 2:
        return table[:, 0].copy(), table[:, 1].copy()
    sides_are_arrays = (isinstance(bounds, (tuple, list)) and len(bounds) == 2
                        and all(isinstance(side, np.ndarray) for side in bounds))
    if table is not None and table.shape == (2, 2) and n_features == 2 and not sides_are_arrays:
        as_pair = bool(np.all(table[0] < table[1]))
        as_rows = bool(np.all(table[:, 0] < table[:, 1]))
        if as_pair and as_rows:
            raise ValueError(
                f"{name}={bounds!r} is ambiguous for 2 features: it reads both as a pair "
                "(lower, upper) of arrays and as one (lower, upper) pair per feature. Give a "
                f"dict by feature, e.g. {name}={{0: (0, 1), 1: (0, 1)}}, or the two sides "
                "as numpy arrays, (np.array(lower), np.array(upper))")
        if as_rows:
            return table[:, 0].copy(), table[:, 1].copy()
    low, high = _pair(bounds, name, "scalars or arrays of length n_features, one (lower, "
                                    "upper) pair per feature, or a dict by feature")
    return (_bound_side(low, "lower", name, n_features),
            _bound_side(high, "upper", name, n_features))


def check_bounds(bounds, X, *, n_features=None, name="bounds", feature_names=None):
    """Validate public per-feature bounds, or read them from ``X`` with a privacy warning.

    Parameters
    ----------
    bounds : None, pair (lower, upper), per-feature pairs or dict
        ``(lower, upper)``: each a scalar (used for every feature) or an array-like of
        length ``n_features``. Or one ``(lower, upper)`` pair per feature, shape
        ``(n_features, 2)``. Or a dict ``{feature: (lower, upper)}`` giving every feature,
        keyed by column name (``feature_names``) or index. A 2 x 2 table for two features
        is read the only way that gives every feature ``lower < upper``, and refused as
        ambiguous when both ways do (a pair of numpy arrays is always a pair). ``None``
        reads ``X.min(axis=0)`` and ``X.max(axis=0)`` from the data and issues a
        :class:`~dptrees.exceptions.PrivacyLeakWarning`.
    X : array-like of shape (n_samples, n_features) or None
        The (already validated) training data. Its values are only read when ``bounds``
        is None; otherwise only its shape is used (and X may be None if ``n_features``
        is given).
    n_features : int, optional
        Number of features; defaults to ``X.shape[1]``.
    name : str, default="bounds"
        Name of the estimator's parameter, used in messages and in the leak record.
    feature_names : array-like of str, optional
        The columns' names (``feature_names_in_``), for a dict keyed by name.

    Returns
    -------
    Bounds
        Named tuple ``(lower, upper, leak)``: two new float64 arrays of length
        ``n_features`` with ``lower < upper`` (zero-width intervals are widened, see the
        module docstring), and ``leak``, None or the string to append to
        ``privacy_leaks_``. ``Bounds.inferred`` tells whether ``leak`` is set.

    Raises
    ------
    TypeError
        If ``bounds`` is not a pair or holds non-numbers.
    ValueError
        For wrong lengths, non-finite bounds, ``lower > upper``, or if ``X`` is needed
        but missing, empty, not 2-D or not finite.
    """
    Xa = None
    if X is not None:
        Xa = np.asarray(X)
        if Xa.ndim != 2:
            raise ValueError(f"X must be a 2D array to check {name}, got shape {Xa.shape}")
        if n_features is not None and Xa.shape[1] != n_features:
            raise ValueError(f"X has {Xa.shape[1]} features, but n_features={n_features}")
        if n_features is None:
            n_features = Xa.shape[1]
    if n_features is None:
        raise ValueError("check_bounds needs X or n_features to know the number of features")
    n_features = check_positive_int(n_features, "n_features")

    def label(i):
        return f"feature {int(i)}"

    leaks = list(getattr(bounds, "leaks", ()))  # categories read by dptrees._tables
    if bounds is None:
        lower, upper, from_data = np.zeros(n_features), np.zeros(n_features), slice(None)
        what = "feature bounds"
    else:
        lower, upper, from_data = _bounds_arrays(bounds, name, n_features, feature_names)
        what = f"bounds of {_listed(label(j) for j in from_data)}"
    if bounds is None or from_data:
        if Xa is None:
            raise ValueError(f"{name} is None and no data X was given to read them from")
        if Xa.shape[0] == 0:
            raise ValueError(f"cannot read {name} from X: X has 0 samples")
        Xf = _numeric_float64(Xa[:, from_data], "X")
        lower[from_data], upper[from_data] = Xf.min(axis=0), Xf.max(axis=0)
        leaks.append(warn_privacy_leak(what, param=name))
    lower, upper = _check_interval(lower, upper, name, label)
    return Bounds(lower, upper, "; ".join(leaks) or None)


def check_y_bounds(y_bounds, y, *, name="y_bounds"):
    """Validate public bounds of a regression target, or read them from ``y``.

    Parameters
    ----------
    y_bounds : None or pair (lower, upper) of real numbers
        ``None`` reads ``min(y)`` and ``max(y)`` from the data and issues a
        :class:`~dptrees.exceptions.PrivacyLeakWarning`.
    y : array-like of shape (n_samples,) or None
        The (already validated) target. Only used when ``y_bounds`` is None.
    name : str, default="y_bounds"
        Name of the estimator's parameter, used in messages and in the leak record.

    Returns
    -------
    TargetBounds
        Named tuple ``(lower, upper, leak)`` of two floats with ``lower < upper`` (a
        zero-width interval is widened, see the module docstring) and ``leak``, None or
        the string to append to ``privacy_leaks_``.

    Raises
    ------
    TypeError
        If ``y_bounds`` is not a pair of real numbers.
    ValueError
        For non-finite bounds, ``lower > upper``, or if ``y`` is needed but missing,
        empty or not finite.
    """

    def label(i):
        return "the target"

    if y_bounds is None:
        if y is None:
            raise ValueError(f"{name} is None and no target y was given to read them from")
        ya = np.asarray(y)
        if ya.size == 0:
            raise ValueError(f"cannot read {name} from y: y is empty")
        ya = _numeric_float64(ya, "y")
        lower, upper = _check_interval(
            np.array([ya.min()]), np.array([ya.max()]), f"{name} (read from y)", label
        )
        leak = warn_privacy_leak("target bounds", param=name)
        return TargetBounds(float(lower[0]), float(upper[0]), leak)

    low, high = _pair(y_bounds, name, "real numbers")
    values = []
    for side, value in (("lower", low), ("upper", high)):
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value.item()
        if not _is_real_number(value):
            raise TypeError(f"{name}: {side} must be a real number, got {value!r}")
        values.append(_as_real(value, f"{name} ({side})"))
    lower, upper = _check_interval(np.array([values[0]]), np.array([values[1]]), name, label)
    return TargetBounds(float(lower[0]), float(upper[0]), None)


# --------------------------------------------------------------------------- classes


def _is_missing(v):
    if v is None:
        return True
    try:
        return bool(v != v)  # NaN, pandas.NA raises TypeError on bool()
    except (TypeError, ValueError):
        return True


def _labels_array(labels, name, *, target=False):
    """1-D label array with missing values and complex numbers rejected."""
    arr = _to_numpy(labels, name, target=target)
    kind = arr.dtype.kind
    if kind == "c":
        raise ValueError(f"Complex data not supported: {name} has complex values.")
    if kind == "f":
        if np.isnan(arr).any():
            raise ValueError(f"Input {name} contains NaN: missing class labels are not supported.")
        if not np.isfinite(arr).all():
            raise ValueError(f"Input {name} contains infinity; class labels must be finite.")
    elif kind == "O":
        missing = np.frompyfunc(_is_missing, 1, 1)(arr).astype(bool)
        if missing.any():
            raise ValueError(
                f"Input {name} contains missing values (None or NaN): missing class labels are "
                "not supported."
            )
        numeric = np.frompyfunc(lambda v: isinstance(v, numbers.Real), 1, 1)(arr).astype(bool)
        if arr.size and numeric.all():
            # numbers stored as objects (e.g. y.astype(object)): back to a numeric dtype,
            # so that integer labels are accepted and continuous ones recognised
            arr = np.array(arr.tolist())
    elif kind not in "biuUS":
        raise TypeError(f"{name}: class labels of dtype {arr.dtype} are not supported")
    return arr


def _unique(arr, name):
    try:
        return np.unique(arr)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in arr.ravel().tolist()})
        raise TypeError(
            f"{name} mixes label types that cannot be sorted ({', '.join(kinds)}); use labels "
            "of a single type (all strings or all numbers)."
        ) from None


def _encode(y, classes):
    """int64 codes of ``y`` in ``classes`` (sorted) and a mask of unknown labels."""
    yk, ck = y.dtype.kind, classes.dtype.kind
    if (yk in "biuf" and ck in "biuf") or (yk == ck and yk in "US"):
        codes = np.searchsorted(classes, y)
        codes[codes == len(classes)] = 0
        unknown = classes[codes] != y
        return codes.astype(np.int64), unknown
    lookup = {}
    for i, c in enumerate(classes.tolist()):
        lookup[c] = i
    codes = np.zeros(y.shape[0], dtype=np.int64)
    unknown = np.zeros(y.shape[0], dtype=bool)
    for i, v in enumerate(y.tolist()):
        try:
            codes[i] = lookup[v]
        except (KeyError, TypeError):
            unknown[i] = True
    return codes, unknown


def check_classes(classes, y, *, n_samples=None, name="classes"):
    """Validate class labels against a public class list, or read the list from ``y``.

    Parameters
    ----------
    classes : None or array-like of shape (n_classes,)
        The public list of classes, at least 2 distinct labels (strings or numbers). It
        is sorted, like scikit-learn's ``classes_``. Classes absent from ``y`` are fine
        (and must be: whether a class occurs in the data is private). ``None`` reads the
        list from ``y`` and issues a :class:`~dptrees.exceptions.PrivacyLeakWarning`.
    y : array-like of shape (n_samples,)
        Class labels. A column vector ``(n_samples, 1)`` is raveled with a
        :class:`sklearn.exceptions.DataConversionWarning`.
    n_samples : int, optional
        Number of rows of ``X``; ``y`` must have the same length.
    name : str, default="classes"
        Name of the estimator's parameter, used in messages and in the leak record.

    Returns
    -------
    ClassEncoding
        Named tuple ``(classes, y, leak)``: the sorted class array, ``y`` encoded as
        int64 indices into it, and ``leak``, None or the string to append to
        ``privacy_leaks_``.

    Raises
    ------
    TypeError
        For unsortable mixes of label types, sparse matrices and unsupported dtypes.
    ValueError
        For ``y=None``, missing labels, continuous targets (``"Unknown label type"``),
        fewer than two classes, duplicate entries in ``classes``, labels of ``y`` that
        are not in ``classes``, wrong shapes and length mismatches.
    """
    from sklearn.utils.multiclass import check_classification_targets

    ya = _ravel_column(_labels_array(y, "y", target=True), "y")
    _check_n_samples(ya.shape[0], n_samples, "y")
    try:
        check_classification_targets(ya)
    except TypeError:
        _unique(ya, "y")  # raises our message for unsortable mixtures
        raise

    if classes is None:
        found = _unique(ya, "y")
        if found.shape[0] < 2:
            raise ValueError(
                f"Classifier can't train when only one class is present: y contains one class "
                f"({found.tolist()[0]!r}). Pass {name}=[...] with at least two public classes, or "
                "provide data with at least two classes."
            )
        leak = warn_privacy_leak("class labels", param=name)
        codes, _ = _encode(ya, found)
        return ClassEncoding(found, codes, leak)

    if isinstance(classes, (str, bytes)):
        raise TypeError(f"{name} must be a list of labels, got the string {classes!r}")
    ca = _labels_array(classes, name)
    if ca.ndim != 1:
        raise ValueError(f"{name} must be a 1D list of labels, got shape {ca.shape}")
    sorted_classes = _unique(ca, name)
    if sorted_classes.shape[0] != ca.shape[0]:
        values, counts = np.unique(ca, return_counts=True)
        raise ValueError(f"{name} contains duplicates: {_listed(values[counts > 1].tolist())}")
    if sorted_classes.shape[0] < 2:
        raise ValueError(
            f"{name} must list at least two classes, got {sorted_classes.shape[0]} "
            f"({_listed(sorted_classes.tolist())}): a classifier needs more than one class."
        )
    codes, unknown = _encode(ya, sorted_classes)
    if unknown.any():
        bad = _unique(ya[unknown], "y")
        raise ValueError(
            f"y contains labels that are not in {name}: {_listed(bad.tolist())} "
            f"({name}={_listed(sorted_classes.tolist())}). A record with an unknown label "
            f"cannot be clipped to a class: fix the labels or add them to {name}."
        )
    return ClassEncoding(sorted_classes, codes, None)


# --------------------------------------------------------------------------- clipping


def clip_to_bounds(X, lower, upper):
    """Clip every column of ``X`` to its public bounds; ``X`` is not modified.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Validated features (see :func:`check_features`); NaN would pass through.
    lower, upper : float or array-like of shape (n_features,)
        Bounds, e.g. from :func:`check_bounds`.

    Returns
    -------
    ndarray of shape (n_samples, n_features), dtype float64, C-contiguous
        A new array.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D, the bounds do not have one value per column, or
        ``lower > upper`` somewhere.
    """
    Xf = np.asarray(X, dtype=np.float64)
    if Xf.ndim != 2:
        raise ValueError(f"X must be a 2D array, got shape {Xf.shape}")
    lower = np.asarray(lower, dtype=np.float64)
    upper = np.asarray(upper, dtype=np.float64)
    for side, b in (("lower", lower), ("upper", upper)):
        if b.ndim > 1 or (b.ndim == 1 and b.shape[0] != Xf.shape[1]):
            raise ValueError(
                f"{side} must be a scalar or have one value per feature ({Xf.shape[1]}), "
                f"got shape {b.shape}"
            )
    if np.any(lower > upper):
        raise ValueError("lower bound exceeds upper bound")
    out = np.empty(Xf.shape, dtype=np.float64, order="C")
    np.clip(Xf, lower, upper, out=out)
    return out


def clip(y, lower, upper):
    """Clip values (e.g. a regression target) to ``[lower, upper]``; ``y`` is not modified.

    Parameters
    ----------
    y : array-like
        Validated values (see :func:`check_targets_regression`); NaN would pass through.
    lower, upper : float
        Bounds, e.g. from :func:`check_y_bounds`.

    Returns
    -------
    ndarray, same shape as ``y``, dtype float64, C-contiguous
        A new array.

    Raises
    ------
    ValueError
        If ``lower > upper`` or a bound is NaN.
    """
    yf = np.asarray(y, dtype=np.float64)
    lower = float(lower)
    upper = float(upper)
    if not lower <= upper:
        raise ValueError(f"lower bound must be <= upper bound, got lower={lower!r}, upper={upper!r}")
    out = np.empty(yf.shape, dtype=np.float64, order="C")
    np.clip(yf, lower, upper, out=out)
    return out
