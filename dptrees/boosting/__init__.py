"""Differentially private boosted ensembles.

* :class:`DPAdaBoostClassifier` - AdaBoost (SAMME) with DP weak learners and the noisy
  sample-weight schedules of Zhang et al.;
* :class:`DPGradientBoostingRegressor` and :class:`DPGradientBoostingClassifier` -
  histogram-based gradient boosting with clipped, noised gradient statistics;
* :class:`DPExplainableBoostingRegressor` and :class:`DPExplainableBoostingClassifier` -
  additive models by cyclic single-feature boosting (DP-EBM style) with individual
  privacy accounting.
"""

from dptrees.boosting._adaboost import DPAdaBoostClassifier
from dptrees.boosting._cyclic import DPExplainableBoostingClassifier, DPExplainableBoostingRegressor
from dptrees.boosting._gradient import DPGradientBoostingClassifier, DPGradientBoostingRegressor

__all__ = [
    "DPAdaBoostClassifier",
    "DPExplainableBoostingClassifier",
    "DPExplainableBoostingRegressor",
    "DPGradientBoostingClassifier",
    "DPGradientBoostingRegressor",
]
