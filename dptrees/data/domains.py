"""The public domains of a fit: feature bounds, target bounds and the list of classes.

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

import numbers
from typing import NamedTuple

import numpy as np

from dptrees._checks import as_real, check_positive_int, is_real_number
from dptrees.validation import (
    _check_n_samples,
    _listed,
    _numeric_float64,
    _ravel_column,
    _to_numpy,
    warn_privacy_leak,
)

__all__ = ["Bounds", "ClassEncoding", "TargetBounds", "by_feature_index", "check_bounds", "check_classes", "check_y_bounds"]


# --------------------------------------------------------------------------- records


_INFERRED = property(lambda domain: domain.leak is not None,
                     doc="Whether the bounds were read from the data (the result is not DP).")


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

    inferred = _INFERRED


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

    inferred = _INFERRED


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
    X : array-like of shape (n_samples, n_features), callable or None
        The (already validated) training data. Its values are only read when ``bounds``
        is None or leaves features out; otherwise only its shape is used (and X may be
        None if ``n_features`` is given). A callable returning such an array (a source's
        per-feature minima and maxima) is called only when values must be read.
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
    Xa, read = None, None
    if callable(X):
        X, read = None, X
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

    leaks = list(getattr(bounds, "leaks", ()))  # categories read by dptrees.data.tables
    if bounds is None:
        lower, upper, from_data = np.zeros(n_features), np.zeros(n_features), slice(None)
        what = "feature bounds"
    else:
        lower, upper, from_data = _bounds_arrays(bounds, name, n_features, feature_names)
        what = f"bounds of {_listed(label(j) for j in from_data)}"
    if bounds is None or from_data:
        if Xa is None and read is not None:
            Xa = np.asarray(read())
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
        if not is_real_number(value):
            raise TypeError(f"{name}: {side} must be a real number, got {value!r}")
        values.append(as_real(value, f"{name} ({side})"))
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
