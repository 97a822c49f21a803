"""Turning tables with categorical columns into bounded numeric features, from public schemas.

Differentially private trees need every feature as a number with public bounds. A schema
says, for each column, either its public categories (a list) or its public numeric bounds
(a pair). Nothing is read from the data to build the encoding, so it costs no privacy; a
value outside its column's categories is an error (it cannot be clipped), a number
outside its bounds is clipped by the estimators later.
"""

from collections.abc import Sequence
from typing import Any, Literal, Self

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

import scipy.sparse as sp

from dptrees._constraints import BOOLEAN, options, validate_params
from dptrees._params import DeclaredParams, param
from dptrees.data.tables import category_codes, columns_of, is_bounds_pair
from dptrees.validation import check_feature_names

__all__ = ["PublicSchemaEncoder"]



class PublicSchemaEncoder(TransformerMixin, DeclaredParams, BaseEstimator):
    """Encode a table to float features with public bounds, from a public schema.

    Parameters
    ----------
    schema : list or tuple
        One entry per column: a list of the column's public categories, or a ``(lower,
        upper)`` tuple of its public numeric bounds. Missing values are an ordinary
        category if the schema lists them: a value such as ``"?"`` in UCI files, or
        ``None`` for every missing value (None, NaN, ``pandas.NA``), as in the
        estimators' table domains. Required: the default None is refused at fit.
    encoding : {"ordinal", "onehot"}, default="ordinal"
        ``"ordinal"``: category ``k`` of ``K`` becomes the number ``k`` with bounds
        ``(-0.5, K - 0.5)`` (with ``n_bins >= K`` each category gets a bin of its own).
        ``"onehot"``: one 0/1 column per category, bounds ``(0, 1)``.
    strip : bool, default=True
        Strip white space around string values before matching categories.

    Attributes
    ----------
    bounds_ : tuple of ndarray
        Public (lower, upper) bounds of the encoded features: pass as ``bounds=`` to the
        estimators.
    feature_names_out_ : ndarray of str
        ``column=category`` for one-hot columns, the column's name otherwise; a column is
        named by ``feature_names_in_`` when the fit saw a data frame, else ``x0, x1, ...``.
    feature_names_in_ : ndarray of str
        The data frame's column names, when ``fit`` was given one.
    n_features_in_ : int

    Notes
    -----
    ``fit`` learns nothing from the data: the encoding is a function of the schema alone.
    A table given to ``fit`` is checked as ``transform`` checks it (its width, NaN or
    infinite numbers, complex numbers, values outside the categories), so that a bad
    table is refused before a model is trained on it; nothing about it is kept but the
    frame's column names.
    """

    schema: (list[Sequence[Any] | np.ndarray] | tuple[Sequence[Any] | np.ndarray, ...]
             | None) = param(None, list, tuple, None)
    encoding: Literal["ordinal", "onehot"] = param("ordinal", options("ordinal", "onehot"))
    strip: bool = param(True, BOOLEAN)

    def fit(self, X: ArrayLike | None = None, y: ArrayLike | None = None) -> Self:
        """Build the encoding from the schema; a table ``X``, if given, is checked as
        :meth:`transform` checks it and gives the columns their names."""
        validate_params(self)
        if not self.schema:  # None is the default only for scikit-learn's conventions
            raise ValueError("schema must be a non-empty list with one entry per column")
        self.n_features_in_ = len(self.schema)
        self._saw_table = X is not None  # then transform checks the columns' names
        if X is not None:
            check_feature_names(self, X, reset=True)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self._lookups = []
        lower, upper = [], []
        for j, spec in enumerate(self.schema):
            if isinstance(spec, tuple) and is_bounds_pair(spec):  # a list is categories
                lo, hi = float(spec[0]), float(spec[1])
                if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
                    raise ValueError(f"column {j}: bounds must be finite with lower <= upper")
                self._lookups.append(None)
                lower.append(lo)
                upper.append(hi)
                continue
            if isinstance(spec, (str, bytes)) or not isinstance(spec, (list, tuple, np.ndarray)):
                raise ValueError(
                    f"column {j}: a schema entry must be a list of categories or a "
                    f"(lower, upper) tuple of numbers, got {spec!r}"
                )
            categories = list(spec)
            if len(categories) < 1 or len(set(categories)) != len(categories):
                raise ValueError(f"column {j}: categories must be a non-empty list without repeats")
            self._lookups.append({c: k for k, c in enumerate(categories)})
            if self.encoding == "ordinal":
                lower.append(-0.5)
                upper.append(len(categories) - 0.5)
            else:
                lower.extend([0.0] * len(categories))
                upper.extend([1.0] * len(categories))
        self.bounds_ = (np.array(lower), np.array(upper))
        names_in = getattr(self, "feature_names_in_", None)
        self.feature_names_out_ = self._names_out(
            [f"x{j}" for j in range(self.n_features_in_)] if names_in is None else names_in)
        if X is not None:
            self._encode(X)  # refused now, as transform would refuse it
        return self

    def _codes(self, column, lookup, j):
        values = column
        if self.strip:
            values = np.array([v.strip() if isinstance(v, str) else v for v in column], dtype=object)
        # a listed None (or NaN) is the missing-value category, as in the estimators'
        # table domains: a missing value (None, NaN, pandas.NA) takes its code
        missing_code = next((k for c, k in lookup.items()
                             if c is None or (isinstance(c, float) and c != c)), None)
        return category_codes(values, lookup, f"column {j}", missing_code=missing_code)

    def transform(self, X: ArrayLike) -> np.ndarray:
        """The encoded features, float64 of shape (n_samples, n_features_out).

        Raises
        ------
        ValueError
            For a table of the wrong width, no rows, NaN or infinite values in a numeric
            column (list a missing-value category for a categorical one), complex
            numbers, or values outside a column's categories (not quoted: they are
            private data).
        TypeError
            For a sparse matrix.
        """
        check_is_fitted(self, "bounds_")
        if self._saw_table:
            check_feature_names(self, X, reset=False)
        return self._encode(X)

    def _encode(self, X):
        if sp.issparse(X):
            raise TypeError("PublicSchemaEncoder takes a dense table (array, list of rows or "
                            "data frame), not a sparse matrix; call .toarray() first")
        if not hasattr(X, "columns") and np.ndim(np.asarray(X, dtype=object)) == 1:
            raise ValueError("Expected a 2-D table, got a 1-D array instead. Reshape your "
                             "data with array.reshape(-1, 1) for a single column or "
                             "array.reshape(1, -1) for a single row.")
        columns = columns_of(X)
        if not columns:
            raise ValueError(f"0 feature(s) (shape={np.shape(X)}) while a minimum of 1 is "
                             "required.")
        if len(columns) != self.n_features_in_:
            raise ValueError(f"X has {len(columns)} features, but PublicSchemaEncoder is "
                             f"expecting {self.n_features_in_} features as input (one per "
                             "schema entry).")
        n_rows = len(columns[0])
        if n_rows == 0:
            raise ValueError(f"Found array with 0 sample(s) (shape=(0, {len(columns)})) "
                             "while a minimum of 1 is required.")
        out = []
        for j, (column, lookup) in enumerate(zip(columns, self._lookups)):
            if lookup is None:
                out.append(self._numeric(column, j)[:, None])
                continue
            codes = self._codes(column, lookup, j)
            if self.encoding == "ordinal":
                out.append(codes[:, None].astype(np.float64))
            else:
                onehot = np.zeros((codes.size, len(lookup)))
                onehot[np.arange(codes.size), codes] = 1.0
                out.append(onehot)
        return np.ascontiguousarray(np.hstack(out))

    @staticmethod
    def _numeric(column, j):
        complex_message = (f"Complex data not supported: column {j} is numeric in the "
                           "schema and has complex values")
        if np.iscomplexobj(column):
            raise ValueError(complex_message)
        try:
            numeric = np.asarray(column, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            # an object column's complex values fail the conversion: say what they are
            if column.dtype == object and any(isinstance(v, complex) for v in column):
                raise ValueError(complex_message) from None
            raise type(exc)(f"column {j} is numeric in the schema: {exc}") from exc
        if not np.isfinite(numeric).all():
            raise ValueError(
                f"Input contains NaN or infinity: column {j} is numeric in the schema but "
                "has missing or infinite values; list a missing-value category or impute "
                "before encoding"
            )
        return numeric

    def get_feature_names_out(self, input_features: ArrayLike | None = None) -> np.ndarray:
        """``column=category`` for one-hot columns, the column's name otherwise."""
        check_is_fitted(self, "feature_names_out_")
        if input_features is None:
            return self.feature_names_out_.copy()
        input_features = np.asarray(input_features, dtype=object)
        names_in = getattr(self, "feature_names_in_", None)
        if names_in is not None and not np.array_equal(input_features, names_in):
            raise ValueError("input_features is not equal to feature_names_in_")
        if len(input_features) != self.n_features_in_:
            raise ValueError(f"input_features should have length equal to the number of "
                             f"features ({self.n_features_in_}), got {len(input_features)}")
        return self._names_out(input_features)

    def _names_out(self, columns):
        """The output names for input columns named ``columns``."""
        names = []
        for column, lookup in zip(map(str, columns), self._lookups):
            if lookup is None or self.encoding == "ordinal":
                names.append(column)
            else:
                names.extend(f"{column}={c}" for c in lookup)
        return np.array(names, dtype=object)
