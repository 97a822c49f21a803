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

from dptrees.data.tables import category_codes, columns_of, is_bounds_pair
from dptrees._constraints import BOOLEAN, options, validate_params

__all__ = ["PublicSchemaEncoder"]



class PublicSchemaEncoder(TransformerMixin, BaseEstimator):
    """Encode a table to float features with public bounds, from a public schema.

    Parameters
    ----------
    schema : list or tuple
        One entry per column: a list of the column's public categories, or a
        ``(lower, upper)`` tuple of its public numeric bounds. Missing values are an
        ordinary category if the schema lists them (e.g. ``"?"`` in UCI files).
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
    n_features_in_ : int

    Notes
    -----
    ``fit`` reads nothing from the data: the encoding is a function of the schema alone.
    """

    def __init__(
        self,
        schema: list[Sequence[Any] | np.ndarray] | tuple[Sequence[Any] | np.ndarray, ...],
        *,
        encoding: Literal["ordinal", "onehot"] = "ordinal",
        strip: bool = True,
    ) -> None:
        self.schema = schema
        self.encoding = encoding
        self.strip = strip

    _parameter_constraints = {
        "schema": [list, tuple],
        "encoding": [options("ordinal", "onehot")],
        "strip": BOOLEAN,
    }

    def fit(self, X: ArrayLike | None = None, y: ArrayLike | None = None) -> Self:
        """Build the encoding from the schema (``X`` is only checked for its width)."""
        validate_params(self)
        if not self.schema:
            raise ValueError("schema must be a non-empty list with one entry per column")
        self._lookups = []
        lower, upper, names = [], [], []
        for j, spec in enumerate(self.schema):
            if isinstance(spec, tuple) and is_bounds_pair(spec):  # a list is categories
                lo, hi = float(spec[0]), float(spec[1])
                if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
                    raise ValueError(f"column {j}: bounds must be finite with lower <= upper")
                self._lookups.append(None)
                lower.append(lo)
                upper.append(hi)
                names.append(f"x{j}")
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
                names.append(f"x{j}")
            else:
                lower.extend([0.0] * len(categories))
                upper.extend([1.0] * len(categories))
                names.extend(f"x{j}={c}" for c in categories)
        self.bounds_ = (np.array(lower), np.array(upper))
        self.feature_names_out_ = np.array(names, dtype=object)
        self.n_features_in_ = len(self.schema)
        if X is not None:
            columns_of(X, self.n_features_in_)
        return self

    def _codes(self, column, lookup, j):
        values = column
        if self.strip:
            values = np.array([v.strip() if isinstance(v, str) else v for v in column], dtype=object)
        return category_codes(values, lookup, f"column {j}")

    def transform(self, X: ArrayLike) -> np.ndarray:
        """The encoded features, float64 of shape (n_samples, n_features_out)."""
        if not hasattr(self, "bounds_"):
            self.fit()
        out = []
        for j, (column, lookup) in enumerate(zip(columns_of(X, self.n_features_in_),
                                                 self._lookups)):
            if lookup is None:
                try:
                    numeric = np.asarray(column, dtype=np.float64)
                except (TypeError, ValueError) as exc:
                    raise ValueError(f"column {j} is numeric in the schema: {exc}") from exc
                if not np.isfinite(numeric).all():
                    raise ValueError(
                        f"column {j} is numeric in the schema but has missing or infinite "
                        "values; list a missing-value category or impute before encoding"
                    )
                out.append(numeric[:, None])
                continue
            codes = self._codes(column, lookup, j)
            if self.encoding == "ordinal":
                out.append(codes[:, None].astype(np.float64))
            else:
                onehot = np.zeros((codes.size, len(lookup)))
                onehot[np.arange(codes.size), codes] = 1.0
                out.append(onehot)
        return np.ascontiguousarray(np.hstack(out))

    def get_feature_names_out(self, input_features: ArrayLike | None = None) -> np.ndarray:
        if not hasattr(self, "feature_names_out_"):
            self.fit()
        return self.feature_names_out_
