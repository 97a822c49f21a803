"""What differs between the scikit-learn versions that ``pyproject.toml`` allows (>= 1.4).

Delete an entry when the lower bound passes the version it names.
"""

try:  # scikit-learn >= 1.6: a function
    from sklearn.utils.validation import _check_feature_names as _sklearn_check_feature_names
except ImportError:  # scikit-learn < 1.6: a method of BaseEstimator, fine on any object
    from sklearn.base import BaseEstimator

    _sklearn_check_feature_names = BaseEstimator._check_feature_names

__all__ = ["check_feature_names"]


def check_feature_names(estimator, X, *, reset):
    """scikit-learn's feature-name rules for ``X``. A polars frame is shown to it as an
    empty pandas frame with the same columns: scikit-learn < 1.6 does not read polars
    column names (only the names are compared, so nothing is copied)."""
    if hasattr(X, "schema") and hasattr(X, "to_pandas") and hasattr(X, "columns"):
        import pandas as pd

        X = pd.DataFrame(columns=list(X.columns))
    _sklearn_check_feature_names(estimator, X, reset=reset)
