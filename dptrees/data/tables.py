"""Tables with categorical, string, boolean and missing values, encoded from public domains.

Every estimator accepts a data frame (pandas, or polars through ``to_pandas``) or an
object array whose columns are numbers, booleans, strings or categories. The public
domain of each column is given once, in ``bounds``, as a dict by column name or index:

* ``(lower, upper)``: a numeric column and its public bounds;
* a list of categories: a categorical column and its public categories (a tuple is
  always read as bounds, and so is a list of two numbers).

A categorical column with ``K`` public categories becomes the ordinal codes ``0 .. K-1``
and one more code, ``K``, for a missing value (None, NaN, ``pandas.NA``), over the public
interval ``(-0.5, K + 0.5)``: with ``n_bins >= K + 1`` each category, and the missing
value, has a bin of its own, and a split routes a missing value like any other bin, by
the same private choice. The missing code exists whether or not the data has missing
values, so the encoding is a function of the public domain alone and costs no privacy.
A boolean column is the numbers 0 and 1 over the public bounds ``(0, 1)``.

Categories are public inputs: a non-numeric column without categories in ``bounds``
takes them from the data (its pandas categorical dtype, or its distinct values), with a
:class:`~dptrees.exceptions.PrivacyLeakWarning` recorded in ``privacy_leaks_``, as for
bounds read from data. A value outside a column's categories is an error at ``fit`` and
at ``predict`` (it cannot be clipped to a category).

A numeric column may be missing only if ``bounds`` says so, with
``Numeric(lower, upper, missing=True)``: it then gets a missing bin of its own (the
last of its ``n_bins``; :class:`dptrees.data.binning.Binner`), whether or not the data has
missing values. Its present values are clipped to the bounds and a missing value is
written as ``upper + (upper - lower)``, above every present one, so that a split sends
it right, with the larger values, unless the split is the column's last edge, which
separates missing from present values. Like the categories, that is a function of the
public domain alone, and a split's private choice among all edges decides where missing
values go: no budget beyond the split's. A missing value in a numeric column that is not
declared may be missing is an error.
"""

import functools
import math
import numbers
from dataclasses import dataclass

import numpy as np

from dptrees._sources import encode_blocks, is_blockwise
from dptrees.data.domains import by_feature_index
from dptrees.validation import check_feature_names, metadata_column_names, warn_privacy_leak

__all__ = ["BOUNDS_DOC", "Numeric", "TableColumnsMixin", "TableEncoding", "category_codes",
           "columns_of", "fit_columns", "is_bounds_pair", "keeps_columns_on_failure",
           "public_bounds"]

_NUMERIC_KINDS = "biuf"

# The estimators' ``bounds`` parameter, documented once.
BOUNDS_DOC = """    bounds : pair (lower, upper), per-feature pairs, dict or None, default=None
        The features' public domain. Numeric features: ``(lower, upper)`` (scalars, or
        arrays of length ``n_features``), or one ``(lower, upper)`` pair per feature;
        values outside are clipped. A table with categorical or string columns: a dict
        by column name (or index) giving ``(lower, upper)`` for a numeric column and the
        list of public categories for a categorical one; a missing value is a category
        of its own (the fitted ``categories_`` lists them by column). A numeric column
        that may be missing: ``dptrees.Numeric(lower, upper, missing=True)``, which
        gives it a missing bin (NaN then follows each split's private choice, also at
        ``predict``). None reads bounds
        and categories from the data with a ``PrivacyLeakWarning``: the model is then
        not differentially private.
"""


@dataclass(frozen=True)
class Numeric:
    """The public domain of a numeric column: its bounds, and whether it may be missing.

    Give it in an estimator's ``bounds`` dict (``bounds={"age": Numeric(17, 90,
    missing=True)}``); ``(lower, upper)`` is short for ``Numeric(lower, upper)``.

    Parameters
    ----------
    lower, upper : float
        Public bounds, finite, ``lower < upper``; values outside are clipped.
    missing : bool, default=False
        Whether the column may hold missing values (NaN, None, ``pandas.NA``). If True
        the column gets a missing bin of its own, the last of its ``n_bins``, whether
        or not the data has missing values (a public choice: it costs no budget), and
        each split's private choice of edge decides which side missing values go to.
        If False a missing value is an error.

    Examples
    --------
    >>> from dptrees import Numeric
    >>> Numeric(0, 100, missing=True)
    Numeric(lower=0, upper=100, missing=True)
    """

    lower: float
    upper: float
    missing: bool = False

    def __post_init__(self):
        for name in ("lower", "upper"):
            value = getattr(self, name)
            if (isinstance(value, bool) or not isinstance(value, numbers.Real)
                    or not math.isfinite(value)):
                raise ValueError(f"Numeric: {name} must be a finite number, got {value!r}")
        if not self.lower < self.upper:
            raise ValueError(f"Numeric: need lower < upper, got ({self.lower}, {self.upper})")
        if not isinstance(self.missing, (bool, np.bool_)):
            raise TypeError(f"Numeric: missing must be True or False, got {self.missing!r}")
        if self.missing and not math.isfinite(self.missing_value):
            raise ValueError(f"Numeric: ({self.lower}, {self.upper}) is too wide for a missing "
                             "bin: upper + (upper - lower) must be a finite float")

    @property
    def missing_value(self):
        """The number a missing value is written as: above every present value."""
        return self.upper + (self.upper - self.lower)


def is_bounds_pair(spec):
    """Whether a domain entry is a ``(lower, upper)`` pair of real numbers."""
    return (isinstance(spec, (tuple, list)) and len(spec) == 2
            and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in spec))


def _is_categories(spec):
    """A list (array, set) of categories; a tuple is always bounds, and so is a list of
    two numbers (the layout ``bounds`` had before categories)."""
    return (isinstance(spec, (list, np.ndarray, set, frozenset))
            and not is_bounds_pair(spec))


def _as_pandas(X):
    """A pandas DataFrame for pandas or polars frames, else None."""
    if is_blockwise(X):
        return None
    if hasattr(X, "iloc") and hasattr(X, "columns"):
        return X
    if hasattr(X, "to_pandas") and hasattr(X, "columns") and hasattr(X, "schema"):  # polars
        return X.to_pandas()
    return None


def columns_of(X, n_columns=None):
    """The columns of a data frame, a 2-D array or a list of rows, as 1-D arrays
    (numeric columns of a frame keep their dtype, others are object arrays)."""
    frame = _as_pandas(X)
    if frame is not None:
        columns = [_frame_column(frame.iloc[:, j]) for j in range(frame.shape[1])]
    else:
        arr = np.asarray(X) if isinstance(X, np.ndarray) else np.asarray(X, dtype=object)
        if arr.ndim != 2:
            raise ValueError(f"expected a 2-D table, got an array of shape {arr.shape}")
        columns = [arr[:, j] for j in range(arr.shape[1])]
    if n_columns is not None and len(columns) != n_columns:
        raise ValueError(f"expected a table of {n_columns} columns, got {len(columns)}")
    return columns


def _is_number_dtype(dtype):
    """Whether a pandas column of ``dtype`` holds numbers or booleans (not categories)."""
    import pandas as pd

    return pd.api.types.is_bool_dtype(dtype) or (
        pd.api.types.is_numeric_dtype(dtype) and not isinstance(dtype, pd.CategoricalDtype))


def _frame_column(series):
    """A pandas column as numpy: float64 for numeric and boolean columns (nullable
    ones with NaN for ``pandas.NA``), object otherwise."""
    if _is_number_dtype(series.dtype):
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    return series.to_numpy(dtype=object)


def _missing_mask(values):
    if values.dtype.kind == "f":
        return np.isnan(values)
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is optional
        def missing(v):
            return v is None or (isinstance(v, float) and v != v)

        return np.frompyfunc(missing, 1, 1)(values).astype(bool)
    return np.asarray(pd.isna(values), dtype=bool)


def category_codes(values, lookup, label, *, missing_code=None):
    """Codes of ``values`` under ``lookup`` (category -> code); missing values get
    ``missing_code`` (an error if None). Values outside the categories are an error."""
    missing = _missing_mask(values)
    codes = np.fromiter((lookup.get(v, -1) for v in values), dtype=np.int64,
                        count=len(values))
    unknown = (codes < 0) & ~missing
    if unknown.any():
        # The values are not quoted: messages end up in logs, and they are private data.
        raise ValueError(f"{label} has values outside its public categories (not shown "
                         "here: they are private data). List every possible category in "
                         "the schema, or map the others to a listed one before the fit")
    if missing.any():
        if missing_code is None:
            raise ValueError(f"{label} has missing values; list a missing-value category")
        codes[missing] = missing_code
    return codes


def _column_kind(values):
    """'categorical' for strings (among other values), 'numeric' for anything else
    (numbers and booleans; other objects are refused as numbers later)."""
    if values.dtype.kind in _NUMERIC_KINDS:
        return "numeric"
    if values.dtype.kind in "US":
        return "categorical"
    present = values[~_missing_mask(values)]
    is_text = np.frompyfunc(lambda v: isinstance(v, (str, bytes)), 1, 1)(present).astype(bool)
    return "categorical" if is_text.any() else "numeric"


def _categories_from_data(values, source_dtype):
    """The column's categories: its pandas categorical dtype's, or its distinct values."""
    categories = getattr(source_dtype, "categories", None)
    if categories is not None:
        return list(categories)
    present = values[~_missing_mask(values)]
    distinct = set(present.tolist())
    try:
        return sorted(distinct)
    except TypeError:  # mixed types: a stable order that does not depend on row order
        return sorted(distinct, key=lambda v: (type(v).__name__, repr(v)))


class TableEncoding:
    """The fitted encoding of a table's columns to bounded float64 features.

    Attributes
    ----------
    categories : dict
        ``{column index: list of public categories}`` of the categorical columns.
    labels : list of str
        The columns' names (or ``"column j"``), for messages.
    names : list of str or None
        The columns' names of a data frame (None for an array).
    fit_bounds : dict
        ``{column index: (lower, upper) or None}``: the public intervals the fit bins
        with (None: read from the data, with a warning).
    fit_leaks : list of str
        The categories the fit read from the data.
    missing : dict
        ``{column index: Numeric}`` of the numeric columns with a missing bin.
    """

    def __init__(self, categories, labels, names, numeric_bounds, fit_leaks, missing=None):
        self.categories = categories
        self.missing = {} if missing is None else missing
        self.labels = labels
        self.names = names
        self._lookups = {j: {c: k for k, c in enumerate(cats)}
                         for j, cats in categories.items()}
        self.fit_bounds = {**numeric_bounds, **{j: self.interval(j) for j in categories}}
        self.fit_leaks = fit_leaks

    def column_key(self, j):
        """Column ``j``'s name in a data frame, else its index ``j``."""
        return self.names[j] if self.names else j

    def interval(self, j):
        """Public interval of categorical column ``j``'s codes (missing included)."""
        return (-0.5, len(self.categories[j]) + 0.5)

    def transform(self, X):
        """``X`` as a float64 array: categorical columns as codes, the others as numbers."""
        return self._encode(columns_of(X, len(self.labels)))

    def _encode(self, columns):
        out = np.empty((len(columns[0]) if columns else 0, len(columns)), dtype=np.float64)
        for j, values in enumerate(columns):
            if j in self.categories:
                out[:, j] = category_codes(values, self._lookups[j], self.labels[j],
                                           missing_code=len(self.categories[j]))
            elif j in self.missing:
                out[:, j] = _numeric_or_missing(values, self.missing[j], self.labels[j])
            else:
                out[:, j] = _numeric(values, self.labels[j])
        return out

    def __setstate__(self, state):
        # encodings saved before numeric missing bins existed have none
        self.__dict__.update(state)
        self.__dict__.setdefault("missing", {})


def _numeric_or_missing(values, domain, label):
    """A numeric column that may be missing: present values clipped to the bounds,
    missing ones written as ``domain.missing_value`` (above them)."""
    x = _numeric(values, label)
    missing = np.isnan(x)
    if np.isinf(x).any():
        raise ValueError(f"{label} contains infinity; all present values must be finite")
    x = np.clip(x, domain.lower, domain.upper)
    x[missing] = domain.missing_value
    return x


def _numeric(values, label):
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{label} must hold numbers: {exc}") from None


class TableBounds(dict):
    """Bounds by feature index for :func:`dptrees.data.domains.check_bounds` (``None``: read
    that feature's bounds from the data), with the leaks of categories read from data."""

    def __init__(self, bounds, leaks, missing=(), categorical=()):
        super().__init__(bounds)
        self.leaks = leaks
        self.missing = tuple(missing)
        self.categorical = tuple(categorical)


def _has_text(X):
    """Whether in-memory ``X`` may hold a categorical column: a frame with a column that
    is not numeric or boolean, or an array of strings or objects with a string."""
    frame = _as_pandas(X)
    if frame is not None:
        return not all(_is_number_dtype(dtype) for dtype in frame.dtypes)
    return (isinstance(X, np.ndarray) and X.dtype.kind in "OUS" and X.ndim == 2
            and any(_column_kind(X[:, j]) == "categorical" for j in range(X.shape[1])))


def _domain_by_column(bounds, n_columns, names):
    """``{column index: domain}`` from a dict keyed by name or index (empty for None)."""
    if bounds is None:
        return {}
    if not isinstance(bounds, dict):
        raise TypeError(
            "X has categorical or string columns: give `bounds` as a dict by column "
            "(name or index), (lower, upper) for a numeric column and a list of public "
            "categories for a categorical one, not one pair for all features")
    return {j: spec for j, (_, spec)
            in by_feature_index(bounds, "bounds", n_columns, names).items()}


def _categories_of(spec, values, label, leaks, source_dtype):
    """Public categories of column ``j``: from its domain ``spec``, else from the data."""
    if spec is not None:
        categories = list(spec)
        if not categories or len(set(categories)) != len(categories):
            raise ValueError(f"bounds: the categories of {label} must be a non-empty list "
                             "without repeats")
        return categories
    leaks.append(label)
    return _categories_from_data(values, source_dtype)


def fit_columns(estimator, X):
    """What ``fit`` learns of the columns of ``X``: a data frame's column names become
    ``estimator.feature_names_in_``, and a table with categorical columns is encoded from
    the public domains in ``estimator.bounds``.

    Sets ``estimator._table_encoding`` (None when ``X`` is all numeric and ``bounds``
    names no categories: then ``X`` passes through unchanged) and returns ``X`` for the
    numeric path; :func:`public_bounds` gives the bounds to bin it with.
    """
    check_feature_names(estimator, X, reset=True)
    estimator._table_encoding = None
    bounds = estimator.bounds
    names_domains = isinstance(bounds, dict) and any(
        _is_categories(v) or isinstance(v, Numeric) for v in bounds.values())
    if is_blockwise(X):
        return _encode_blocks(estimator, X, bounds) if names_domains else X
    frame = _as_pandas(X)  # a polars frame is converted once, here
    if not (names_domains or _has_text(X if frame is None else frame)):
        return X
    columns = columns_of(X if frame is None else frame)
    names = None if frame is None else [str(c) for c in frame.columns]
    labels = [f"column {name!r}" for name in names] if names else [
        f"column {j}" for j in range(len(columns))]
    domains = _domain_by_column(bounds, len(columns), names)
    categories, numeric_bounds, leaked, missing = {}, {}, [], {}
    for j, values in enumerate(columns):
        spec = domains.get(j)
        if _take_numeric(spec, j, numeric_bounds, missing):
            continue
        source_dtype = None if frame is None else frame.iloc[:, j].dtype
        categorical = (spec is not None and _is_categories(spec)) or (
            spec is None and (getattr(source_dtype, "categories", None) is not None
                              or _column_kind(values) == "categorical"))
        if categorical:
            categories[j] = _categories_of(spec, values, labels[j], leaked, source_dtype)
        elif spec is not None:
            numeric_bounds[j] = spec
        elif values.dtype.kind == "b" or _is_boolean(values, source_dtype):
            numeric_bounds[j] = (0.0, 1.0)  # public by the column's type
        else:
            numeric_bounds[j] = None  # read from the data by check_bounds, with a warning
    leaks = []
    if leaked:
        shown = ", ".join(leaked)
        leaks.append(warn_privacy_leak(f"categories of {shown}", param="bounds"))
    encoding = TableEncoding(categories, labels, names, numeric_bounds, leaks, missing)
    X = encoding._encode(columns)
    estimator._table_encoding = encoding
    return X


def _take_numeric(spec, j, numeric_bounds, missing):
    """Record column ``j``'s domain if it is a :class:`Numeric` (its bounds, and its
    missing bin if it has one); whether it was."""
    if not isinstance(spec, Numeric):
        return False
    numeric_bounds[j] = (spec.lower, spec.upper)
    if spec.missing:
        missing[j] = spec
    return True


def _encode_blocks(estimator, X, bounds):
    """A table read in blocks whose schema dict names categories or Numeric domains: its
    encoding is fitted from the public domains alone (no row is read; categories must be
    given, they are never read from blocks) and applied to each block as it is read
    (:func:`dptrees._sources.encode_blocks`). Sets ``estimator._table_encoding``."""
    names = metadata_column_names(X)
    if names is None:
        raise ValueError(
            "categorical columns and Numeric domains (missing values) on data read in "
            "blocks need its column names: a Dask dataframe, a 2-D dptrees.Parquet "
            "source or dptrees.Blocks of a pandas frame. For memmaps, Dask arrays and "
            "Blocks of an array, encode them as numbers first, e.g. with "
            "dptrees.preprocessing.PublicSchemaEncoder")
    labels = [f"column {name!r}" for name in names]
    domains = _domain_by_column(bounds, len(names), names)
    categories, numeric_bounds, missing = {}, {}, {}
    for j, label in enumerate(labels):
        spec = domains.get(j)
        if _take_numeric(spec, j, numeric_bounds, missing):
            continue
        if spec is not None and _is_categories(spec):
            categories[j] = _categories_of(spec, None, label, [], None)
        else:  # None: not in the dict, numeric, its bounds read from the data
            numeric_bounds[j] = spec
    encoding = TableEncoding(categories, labels, names, numeric_bounds, [], missing)
    estimator._table_encoding = encoding
    return encode_blocks(X, encoding)


# What fit_columns learns of a fit's columns.
_COLUMN_STATE = ("feature_names_in_", "_table_encoding")


def keeps_columns_on_failure(fit):
    """Decorate an estimator's ``fit``: if it fails (a budget refused, bad input), the
    columns the previous fit learned (``feature_names_in_``, the table encoding) are put
    back, so that a fitted model refused a refit still checks and encodes its inputs as
    its trees expect."""

    @functools.wraps(fit)
    def fit_or_keep_columns(self, *args, **kwargs):
        saved = {name: self.__dict__[name] for name in _COLUMN_STATE if name in self.__dict__}
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            for name in _COLUMN_STATE:
                self.__dict__.pop(name, None)
            self.__dict__.update(saved)
            raise

    return fit_or_keep_columns


class TableColumnsMixin:
    """``categories_`` and ``missing_columns_``: the public domains of a fitted model's
    categorical columns and of its numeric columns that may be missing."""

    @property
    def categories_(self):
        """dict: ``{column name (or index): list of categories}`` of the categorical
        columns of the last fit; empty when every column was numeric."""
        encoding = self._fitted_encoding("categories_")
        if encoding is None:
            return {}
        return {encoding.column_key(j): list(cats) for j, cats in encoding.categories.items()}

    @property
    def missing_columns_(self):
        """list: the numeric columns (names, or indices) given a missing bin by
        ``Numeric(..., missing=True)`` in ``bounds`` at the last fit."""
        encoding = self._fitted_encoding("missing_columns_")
        if encoding is None:
            return []
        return [encoding.column_key(j) for j in sorted(encoding.missing)]

    def _fitted_encoding(self, attribute):
        """The table encoding of the last fit (None for an all-numeric table)."""
        if not hasattr(self, "_table_encoding"):
            raise AttributeError(f"{attribute} is set by fit")
        return self._table_encoding


def public_bounds(estimator):
    """The bounds to bin the features of the current fit with: ``estimator.bounds``, or
    for an encoded table, every column's public interval (None: read from the data)."""
    encoding = getattr(estimator, "_table_encoding", None)
    if encoding is None:
        return estimator.bounds
    return TableBounds(encoding.fit_bounds, encoding.fit_leaks, encoding.missing,
                       encoding.categories)


def _is_boolean(values, source_dtype):
    if source_dtype is not None:
        import pandas as pd

        return pd.api.types.is_bool_dtype(source_dtype)
    return False


