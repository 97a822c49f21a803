"""Input validation shared by every estimator and mechanism: warnings at the user's line,
feature and target arrays, sample weights, and clipping to public bounds. The scalars
(epsilon, delta, counts, options) have one contract each in :mod:`dptrees._checks`,
re-exported here; the public domains (bounds, target bounds, classes) are parsed by
:mod:`dptrees.data.domains`.

Malformed input (NaN, infinity, strings, complex numbers, wrong shapes, ill-typed
hyper-parameters) raises a ``ValueError`` or ``TypeError`` with a message that says what
is wrong and how to fix it. Messages follow scikit-learn's wording where its estimator
checks look for it (``"Reshape your data"``, ``"Complex data not supported"``,
``"X has 3 features, but ... is expecting 5 features as input"``, ``"0 feature(s)"``,
``"Unknown label type"``, ``"one class"``). Values outside public bounds are *clipped*
(:func:`clip_to_bounds`, :func:`clip`), never dropped and never an error, and nothing
reports how many values were clipped (that count is private).
"""

import inspect
import sys
import warnings

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.validation import check_array

from dptrees import _compat
from dptrees._checks import (  # noqa: F401  (the checks' public home for the estimators)
    check_delta,
    check_epsilon,
    check_in,
    check_positive_int,
    check_positive_number,
)
from dptrees.exceptions import PrivacyLeakWarning, WeakPrivacyWarning

__all__ = [
    "check_delta",
    "check_epsilon",
    "check_feature_names",
    "check_features",
    "check_in",
    "check_positive_int",
    "check_positive_number",
    "check_sample_weight",
    "check_targets_regression",
    "clip",
    "clip_to_bounds",
    "warn_privacy_leak",
    "warn_user",
    "weight_units",
    "WEIGHT_BITS",
    "WEIGHT_GRID",
]

_MAX_LISTED = 10  # at most this many offending items are named in an error message


# --------------------------------------------------------------------------- warnings


def _user_stacklevel():
    """``stacklevel`` for a warning issued from a helper of this module.

    The warning is attributed to the caller of the *outermost* ``dptrees`` frame on the
    stack (the user's ``fit`` call), however deep the call chain inside dptrees is and
    whatever runs between its frames (a ``contextlib`` context manager, a thread pool).
    """
    frame = sys._getframe(1)  # the helper that calls ``warnings.warn``
    level, outermost = 1, 1
    while frame is not None:
        if frame.f_globals.get("__name__", "").partition(".")[0] == "dptrees":
            outermost = level
        frame = frame.f_back
        level += 1
    return outermost + 1


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


# --------------------------------------------------------------------------- privacy


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
    gives a warning. Polars and Dask dataframes, 2-D :class:`~dptrees.Parquet` sources
    and :class:`~dptrees.Blocks` of a pandas frame have their columns' names (read from
    their metadata); arrays, memmaps and Blocks of an array have none.

    Parameters
    ----------
    estimator : estimator
        The estimator being fitted or predicting.
    X : array-like or DataFrame
        Its data.
    reset : bool
        True at fit (keep the names), False at predict (check them).
    """
    names = metadata_column_names(X)
    if names is not None:
        try:
            import pandas as pd
        except ImportError:  # scikit-learn keeps names of frames only
            pass
        else:  # only the names are compared: an empty frame, nothing is read or copied
            X = pd.DataFrame(columns=names)
    _compat.check_feature_names(estimator, X, reset=reset)


def metadata_column_names(X):
    """The column names of a table whose names are metadata that scikit-learn does not
    read (a polars frame before scikit-learn 1.6, a Dask dataframe, a 2-D
    :class:`~dptrees.Parquet` source, :class:`~dptrees.Blocks` of a pandas frame), or
    None. Reading them reads no row."""
    from dptrees._sources import Blocks, Parquet

    if isinstance(X, Parquet):
        return None if X.one_column else list(X.columns)
    if isinstance(X, Blocks):
        frame = X.X
        return list(frame.columns) if hasattr(frame, "columns") and hasattr(frame, "iloc") \
            else None
    polars = hasattr(X, "schema") and hasattr(X, "to_pandas")
    dask_frame = hasattr(X, "__dask_graph__") and hasattr(X, "npartitions")
    if (polars or dask_frame) and hasattr(X, "columns"):
        return list(X.columns)
    return None


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
        encoding = getattr(estimator, "_table_encoding", None)  # see dptrees.data.tables
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


# --------------------------------------------------------------------------- clipping


def clip_to_bounds(X, lower, upper):
    """Clip every column of ``X`` to its public bounds; ``X`` is not modified.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Validated features (see :func:`check_features`); NaN would pass through.
    lower, upper : float or array-like of shape (n_features,)
        Bounds, e.g. from :func:`dptrees.data.domains.check_bounds`.

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
        Bounds, e.g. from :func:`dptrees.data.domains.check_y_bounds`.

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
