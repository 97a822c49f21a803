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
    """scikit-learn's feature-name rules for ``X`` (a function from 1.6, a method
    before)."""
    _sklearn_check_feature_names(estimator, X, reset=reset)
