"""dptrees: differentially private trees, forests, boosting and federated ensembles.

Every estimator trains on sensitive data with a proven differential-privacy guarantee for
add/remove-one neighbouring datasets; public inputs (feature bounds, target bounds, class
lists, hyper-parameters) are never read from the data unless a ``PrivacyLeakWarning`` says so.
"""

import importlib.metadata as _metadata

try:
    from dptrees._core import _rng as _compiled_core  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on how the package was obtained
    raise ImportError(
        "dptrees' compiled core could not be imported. If you are running from the source "
        "tree, install the package first (`pip install .`) and run from another directory "
        "(or with `python -P`), so that the installed, built package is imported."
    ) from exc

from dptrees._sources import Blocks, Parquet
from dptrees.data.tables import Numeric
from dptrees.accounting import BudgetAccountant
from dptrees.boosting import (
    DPAdaBoostClassifier,
    DPExplainableBoostingClassifier,
    DPExplainableBoostingRegressor,
    DPGradientBoostingClassifier,
    DPGradientBoostingRegressor,
)
from dptrees.exceptions import (
    BudgetExceededError,
    CompositionWarning,
    DetachedAccountantError,
    EarlyStopWarning,
    PrivacyLeakWarning,
)
from dptrees.forest import (
    DPExtraTreesClassifier,
    DPExtraTreesRegressor,
    DPPartitionForestClassifier,
    DPPartitionForestRegressor,
)
from dptrees.tree import DPDecisionTreeClassifier, DPDecisionTreeRegressor

# The installed distribution's version, which meson-python takes from meson.build's
# project(version:): written in one place, it cannot disagree with the metadata (an
# editable install has the metadata too).
try:
    __version__ = _metadata.version("dptrees")
except _metadata.PackageNotFoundError:  # pragma: no cover - importable but not installed
    __version__ = "0+unknown"

__all__ = [
    "Blocks",
    "Parquet",
    "BudgetAccountant",
    "BudgetExceededError",
    "CompositionWarning",
    "DPAdaBoostClassifier",
    "DPDecisionTreeClassifier",
    "DPDecisionTreeRegressor",
    "DPExplainableBoostingClassifier",
    "DPExplainableBoostingRegressor",
    "DPExtraTreesClassifier",
    "DPExtraTreesRegressor",
    "DPGradientBoostingClassifier",
    "DPGradientBoostingRegressor",
    "DPPartitionForestClassifier",
    "DPPartitionForestRegressor",
    "DetachedAccountantError",
    "EarlyStopWarning",
    "Numeric",
    "PrivacyLeakWarning",
    "__version__",
]
