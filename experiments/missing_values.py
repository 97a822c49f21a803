"""Missing numeric values: a public missing bin against imputing a public constant.

California Housing (bundled with dptrees) with values of two columns removed, fitted with
library defaults in three ways: the columns declared ``Numeric(lower, upper,
missing=True)`` in ``bounds`` (a missing bin of their own, routed by each split's private
choice); the missing values replaced by the middle of the column's public bounds (a
data-independent imputation, the simplest DP-safe alternative); and, as a reference,
the complete data. Two kinds of missingness:

* ``random``: 20% of ``medianIncome`` and of ``housingMedianAge`` missing at random;
* ``high`` and ``low``: ``medianIncome`` missing for the block groups above its 80th
  percentile (as if the richest did not answer), or below its 20th, and
  ``housingMedianAge`` for 20% at random. The missing bin can learn what "missing"
  means; the midpoint puts the missing incomes among the high ones (7.5 of 15, above
  the 80th percentile), which happens to suit ``high`` and not ``low``.

Rows are split 80/20 by a fixed public permutation (seed 0); the table prints the test
MAE of the target rescaled to [0, 1] by its public bounds, mean of the seeds. All
settings are library defaults; nothing was tuned on these data.

    python -m experiments.missing_values            # eps 0.25 and 1, 3 seeds, 3 models
    python -m experiments.missing_values --quick    # 2,000 training rows, eps 1, 1 seed
"""


import numpy as np
from sklearn.metrics import mean_absolute_error

from dptrees import (
    DPDecisionTreeRegressor,
    DPExplainableBoostingRegressor,
    DPGradientBoostingRegressor,
    Numeric,
)
from dptrees.datasets import CALIFORNIA_HOUSING_BOUNDS, load_california_housing
from experiments.cli import sweep_main

EPSILONS = (0.25, 1.0)
QUICK_EPSILONS = (1.0,)
N_SEEDS = 3
QUICK_ROWS = 2000
MODELS = {
    "dp_gb": DPGradientBoostingRegressor,
    "dp_ebm": DPExplainableBoostingRegressor,
    "dp_tree": DPDecisionTreeRegressor,
}
HOLED = ("medianIncome", "housingMedianAge")
KINDS = ("random", "high", "low")
WAYS = ("missing bin", "midpoint", "complete")
MISSING_RATE = 0.2


def remove_values(X, names, kind, rng):
    """A copy of ``X`` with values of the :data:`HOLED` columns set to NaN."""
    X = X.copy()
    income, age = names.index("medianIncome"), names.index("housingMedianAge")
    if kind == "high":
        X[X[:, income] > np.quantile(X[:, income], 1 - MISSING_RATE), income] = np.nan
    elif kind == "low":
        X[X[:, income] < np.quantile(X[:, income], MISSING_RATE), income] = np.nan
    else:
        X[rng.random(len(X)) < MISSING_RATE, income] = np.nan
    X[rng.random(len(X)) < MISSING_RATE, age] = np.nan
    return X


def domains(names, way):
    """``bounds`` by column index: holed columns as ``Numeric(..., missing=True)`` for the
    missing-bin way, plain public bounds otherwise."""
    out = {}
    for j, name in enumerate(names):
        low, high = CALIFORNIA_HOUSING_BOUNDS[name]
        out[j] = Numeric(low, high, missing=True) if (
            way == "missing bin" and name in HOLED) else (low, high)
    return out


def impute_midpoint(X, names):
    """Missing values replaced by the middle of their column's public bounds."""
    X = X.copy()
    for j, name in enumerate(names):
        low, high = CALIFORNIA_HOUSING_BOUNDS[name]
        X[np.isnan(X[:, j]), j] = (low + high) / 2
    return X


def run(epsilons, n_seeds, models, quick=False, data_dir=None, log=print):
    # data_dir: unused, the data ship with dptrees
    X, y, names, _, y_bounds = load_california_housing()
    order = np.random.default_rng(0).permutation(len(y))
    cut = int(0.8 * len(y))
    train, test = order[:cut], order[cut:]
    if quick:
        train = train[:QUICK_ROWS]
    scale = y_bounds[1] - y_bounds[0]
    results = {"epsilons": list(epsilons), "n_seeds": n_seeds, "quick": quick,
               "n_train": int(train.size), "n_test": int(test.size), "dp": {}}
    for kind in KINDS:
        holed = remove_values(X, names, kind, np.random.default_rng(1))
        inputs = {"missing bin": holed, "midpoint": impute_midpoint(holed, names),
                  "complete": X}
        for name in models:
            for eps in epsilons:
                cell = {}
                for way in WAYS:
                    data = inputs[way]
                    errors = []
                    for seed in range(n_seeds):
                        model = MODELS[name](epsilon=eps, bounds=domains(names, way),
                                             y_bounds=y_bounds, random_state=seed)
                        model.fit(data[train], y[train])
                        errors.append(mean_absolute_error(y[test], model.predict(data[test]))
                                      / scale)
                    cell[way] = float(np.mean(errors))
                results["dp"].setdefault(kind, {}).setdefault(name, {})[eps] = cell
                log(f"{kind} {name} eps {eps:g}: " + ", ".join(
                    f"{way} {cell[way]:.4f}" for way in WAYS))
    return results


def format_results(results):
    lines = [f"California Housing, {results['n_train']} training rows, {results['n_test']} "
             f"test rows; test MAE of the target in [0, 1], mean of {results['n_seeds']} "
             "seeds; library defaults" + (" (QUICK subsample)" if results["quick"] else ""),
             f"{'missing':<12} {'model':<8} {'eps':>5} " + " ".join(f"{w:>12}" for w in WAYS)]
    for kind, by_model in results["dp"].items():
        for name, by_eps in by_model.items():
            for eps, cell in by_eps.items():
                lines.append(f"{kind:<12} {name:<8} {eps:>5g} "
                             + " ".join(f"{cell[w]:>12.4f}" for w in WAYS))
    return "\n".join(lines)


main = sweep_main(__doc__, run=run, format_results=format_results, epsilons=EPSILONS,
                  quick_epsilons=QUICK_EPSILONS, n_seeds=N_SEEDS, models=MODELS,
                  quick_rows=QUICK_ROWS)

if __name__ == "__main__":
    main()
