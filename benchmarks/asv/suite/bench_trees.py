"""asv benchmarks for the DP trees and forests (:mod:`dptrees.tree`, :mod:`dptrees.forest`).

Data: 200,000 x 20 float64 features uniform in [0, 1) and Friedman #1 targets with
clipped noise (exact public bounds: features [0, 1], targets [-3, 33]), drawn by
``benchmarks/bench_trees.py``'s ``make_data``, smaller so that every benchmark stays
under ~10 s. Set-up
only draws the data (~0.1 s); the fitted models of the prediction suite are built once per
environment by ``setup_cache``.

* ``DPFit``: ``DPDecisionTreeRegressor(max_depth=10)`` and a 100-tree
  ``DPPartitionForestRegressor(max_depth=10)`` (1 thread and all cores): ``time_*`` and
  ``peakmem_*`` (asv's process peak RSS, data included);
* ``SklearnFit``: scikit-learn's ``DecisionTreeRegressor(max_depth=10)``, the baseline;
* ``Predict``: prediction on 200,000 fresh rows;
* ``Ratios``: ``track_fit_speedup_vs_sklearn``, sklearn's tree fit time over ours (best
  of 3 after a warm-up), timed in the same process by :func:`fit_speedup` (project target
  on 1,000,000 x 20 rows: >= 20), and
  ``track_fit_peak_memory_over_x``, the tracemalloc peak of our fit over ``X.nbytes``
  (target: < 2).

Every DP fit uses its own unlimited ``BudgetAccountant``, so that the process-wide default
ledger does not grow over the thousands of fits asv makes.
"""

import gc
import tracemalloc

import dptrees

from . import load_script

_script = load_script("bench_trees")
FEATURE_BOUNDS, Y_BOUNDS = _script.FEATURE_BOUNDS, _script.Y_BOUNDS

N_SAMPLES = 200_000
N_FEATURES = 20
MAX_DEPTH = 10
N_ESTIMATORS = 100
SEED = 20240501


def make_data(n_samples=N_SAMPLES, n_features=N_FEATURES, seed=SEED):
    """Friedman #1 with exact public bounds (``benchmarks/bench_trees.py``'s data)."""
    return _script.make_data(n_samples, n_features, seed)


def fit_speedup(ours, theirs, X, y, repeat):
    """``theirs()``'s fit time over ``ours()``'s, in this process: one fit of theirs, the
    best of ``repeat`` fits of ours after an untimed warm-up (the speed script's timing;
    only ``fit`` is timed, so a first import inside the factories is not)."""
    _, ours_best, _ = _script._time_fit(ours, X, y, repeat, warmup=True)
    _, theirs_time, _ = _script._time_fit(theirs, X, y, 1, warmup=False)
    return theirs_time / ours_best


def dp_tree():
    return dptrees.DPDecisionTreeRegressor(
        epsilon=1.0, max_depth=MAX_DEPTH, bounds=FEATURE_BOUNDS, y_bounds=Y_BOUNDS,
        random_state=SEED, accountant=dptrees.BudgetAccountant(),
    )


def dp_forest(n_jobs=1):
    return dptrees.DPPartitionForestRegressor(
        n_estimators=N_ESTIMATORS, epsilon=1.0, max_depth=MAX_DEPTH, n_jobs=n_jobs,
        bounds=FEATURE_BOUNDS,
        y_bounds=Y_BOUNDS, random_state=SEED, accountant=dptrees.BudgetAccountant(),
    )


def sklearn_tree():
    from sklearn.tree import DecisionTreeRegressor

    return DecisionTreeRegressor(max_depth=MAX_DEPTH, random_state=SEED)


class DPFit:
    """Fit time and process peak memory of our DP tree and partition forest."""

    params = [[1, -1]]
    param_names = ["n_jobs"]
    timeout = 120

    def setup(self, n_jobs):
        self.X, self.y = make_data()

    def time_fit_dp_tree(self, n_jobs):
        # single-threaded whatever n_jobs: the parameter only applies to forests
        dp_tree().fit(self.X, self.y)

    def time_fit_dp_forest(self, n_jobs):
        dp_forest(n_jobs).fit(self.X, self.y)

    def peakmem_fit_dp_tree(self, n_jobs):
        dp_tree().fit(self.X, self.y)

    def peakmem_fit_dp_forest(self, n_jobs):
        dp_forest(n_jobs).fit(self.X, self.y)


class SklearnFit:
    """scikit-learn's depth-10 regression tree on the same data: the baseline (~5-8 s)."""

    number = 1
    repeat = (1, 3, 20.0)
    warmup_time = 0.0
    timeout = 120

    def setup(self):
        self.X, self.y = make_data()

    def time_fit_sklearn_tree(self):
        sklearn_tree().fit(self.X, self.y)

    def peakmem_fit_sklearn_tree(self):
        sklearn_tree().fit(self.X, self.y)


class Predict:
    """Prediction on 200,000 fresh rows (models fitted once per environment)."""

    timeout = 180

    def setup_cache(self):
        X, y = make_data()
        return {
            "dp_tree": dp_tree().fit(X, y),
            "dp_forest": dp_forest(-1).fit(X, y),
            "sklearn_tree": sklearn_tree().fit(X, y),
        }

    def setup(self, models):
        self.X_test, _ = make_data(seed=SEED + 1)

    def time_predict_dp_tree(self, models):
        models["dp_tree"].predict(self.X_test)

    def time_predict_dp_forest(self, models):
        models["dp_forest"].predict(self.X_test)

    def time_predict_sklearn_tree(self, models):
        models["sklearn_tree"].predict(self.X_test)


class Ratios:
    """Same-process ratios: sklearn tree fit time / ours, and our fit's peak / X.nbytes."""

    unit = "ratio"
    number = 1
    repeat = 1
    warmup_time = 0.0
    timeout = 120

    def setup(self):
        self.X, self.y = make_data()

    def track_fit_speedup_vs_sklearn(self):
        # scikit-learn's fit is timed once: ~5-8 s at 200,000 rows
        return fit_speedup(dp_tree, sklearn_tree, self.X, self.y, 3)

    def track_fit_peak_memory_over_x(self):
        # numpy registers its buffers with tracemalloc; X and y predate the trace.
        gc.collect()
        est = dp_tree()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            est.fit(self.X, self.y)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        return (peak - base) / self.X.nbytes
