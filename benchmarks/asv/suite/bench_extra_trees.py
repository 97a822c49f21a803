"""asv benchmarks for DP ExtraTrees (:class:`dptrees.DPExtraTreesClassifier`).

Data: the 200,000 x 20 features and Friedman #1 targets of ``bench_trees`` (imported from
the sibling suite, not copied), with the balanced class ``y > median(y)``; public bounds:
features [0, 1], classes {0, 1}. The plain script ``benchmarks/bench_extra_trees.py``
runs the same comparison with 100 trees on 1,000,000 rows (project target: >= 10x faster
than scikit-learn); here the forests have 20 trees of depth 10 so that every benchmark
stays under ~10 s on 2 cores.

* ``DPExtraTreesFit``: ``DPExtraTreesClassifier(n_estimators=20, max_depth=10)`` with
  ``partition=False`` (DiffPETs: every tree reads every row) and ``partition=True``
  (disjoint parts), all cores;
* ``SklearnExtraTreesFit``: ``ExtraTreesClassifier(n_estimators=20, max_depth=10)``, all
  cores: the baseline;
* ``ExtraTreesRatios``: ``track_fit_speedup_vs_sklearn``: scikit-learn's fit time over
  ours, both timed in the same process, for each ``partition`` (unit "ratio").

Every DP fit uses its own unlimited ``BudgetAccountant``.
"""

import numpy as np

import dptrees

from .bench_trees import (FEATURE_BOUNDS, MAX_DEPTH, N_FEATURES, N_SAMPLES, SEED,
                          fit_speedup)
from .bench_trees import make_data as _make_regression_data

N_ESTIMATORS = 20
N_JOBS = -1


def make_data(n_samples=N_SAMPLES, n_features=N_FEATURES, seed=SEED):
    """Features of ``bench_trees.make_data`` and the class ``y > median(y)``."""
    X, y = _make_regression_data(n_samples, n_features, seed)
    return X, (y > np.median(y)).astype(np.int64)


def dp_extra_trees(partition):
    return dptrees.DPExtraTreesClassifier(
        n_estimators=N_ESTIMATORS, epsilon=1.0, max_features="sqrt", partition=partition,
        max_depth=MAX_DEPTH,
        n_bins=40, bounds=FEATURE_BOUNDS, classes=[0, 1],
        accountant=dptrees.BudgetAccountant(), n_jobs=N_JOBS, random_state=SEED,
    )


def sklearn_extra_trees():
    from sklearn.ensemble import ExtraTreesClassifier

    return ExtraTreesClassifier(n_estimators=N_ESTIMATORS, max_depth=MAX_DEPTH,
                                n_jobs=N_JOBS, random_state=SEED)


class DPExtraTreesFit:
    """Fit time of 20 DP ExtraTrees of depth 10, all rows per tree or disjoint parts."""

    params = [[False, True]]
    param_names = ["partition"]
    timeout = 120

    def setup(self, partition):
        self.X, self.y = make_data()

    def time_fit_dp_extra_trees(self, partition):
        dp_extra_trees(partition).fit(self.X, self.y)


class SklearnExtraTreesFit:
    """scikit-learn's ExtraTreesClassifier on the same data: the baseline."""

    number = 1
    repeat = (1, 3, 20.0)
    warmup_time = 0.0
    timeout = 120

    def setup(self):
        self.X, self.y = make_data()

    def time_fit_sklearn_extra_trees(self):
        sklearn_extra_trees().fit(self.X, self.y)


class ExtraTreesRatios:
    """scikit-learn's fit time over ours, in the same process (target at 1M x 20: >= 10)."""

    params = [[False, True]]
    param_names = ["partition"]
    unit = "ratio"
    number = 1
    repeat = 1
    warmup_time = 0.0
    timeout = 120

    def setup(self, partition):
        self.X, self.y = make_data()

    def track_fit_speedup_vs_sklearn(self, partition):
        return fit_speedup(lambda: dp_extra_trees(partition), sklearn_extra_trees, self.X,
                           self.y, 2)
