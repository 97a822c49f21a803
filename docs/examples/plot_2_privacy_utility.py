"""
Privacy-utility curves
======================

How much accuracy does privacy cost? Fit four DP models at a few epsilons on California
Housing, measure the mean absolute error on held-out rows, and draw the curves with
:func:`dptrees.plot.plot_privacy_utility`: one line per model, the mean over three seeds
with their standard deviation as error bars, and a non-private model as the reference.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.metrics import mean_absolute_error

from dptrees import (
    BudgetAccountant,
    DPDecisionTreeRegressor,
    DPExplainableBoostingRegressor,
    DPGradientBoostingRegressor,
    DPPartitionForestRegressor,
)
from dptrees.datasets import load_california_housing
from dptrees.plot import plot_privacy_utility

X, y, names, bounds, y_bounds = load_california_housing()
test = np.random.default_rng(0).random(len(y)) < 0.25  # a public, random split

MODELS = {
    "DP tree": lambda **kw: DPDecisionTreeRegressor(max_depth=5, **kw),
    "DP partition forest": lambda **kw: DPPartitionForestRegressor(n_estimators=10,
                                                                   max_depth=4, **kw),
    "DP gradient boosting": lambda **kw: DPGradientBoostingRegressor(n_estimators=50, **kw),
    "DP explainable boosting": lambda **kw: DPExplainableBoostingRegressor(**kw),
}


def mae(model):
    """Mean absolute error on the test rows, in thousands of dollars."""
    return mean_absolute_error(y[test], model.predict(X[test])) / 1000


# %%
# One record per fit: the model, its epsilon, the seed and the error. Every fit spends
# on a budget of its own (these are experiments, not one release).
records = []
for name, make in MODELS.items():
    for epsilon in (0.1, 0.3, 1.0, 3.0, 10.0):
        for seed in range(3):
            model = make(epsilon=epsilon, bounds=bounds, y_bounds=y_bounds,
                         accountant=BudgetAccountant(), random_state=seed)
            model.fit(X[~test], y[~test])
            records.append({"model": name, "epsilon": epsilon, "seed": seed,
                            "mae": mae(model)})

reference = HistGradientBoostingRegressor(random_state=0).fit(X[~test], y[~test])
records.append({"model": "non-private gradient boosting", "epsilon": None,
                "mae": mae(reference)})

# %%
# Records of one model and epsilon are repeats: the curve shows their mean and standard
# deviation. A record without epsilon is drawn as a dashed reference line.
ax = plot_privacy_utility(records, metric="mae", ylabel="test MAE (thousand $)",
                          title="California Housing: error against privacy budget")
plt.show()

# %%
# The same function reads the JSON that the benchmark scripts write with ``--json``
# (e.g. ``experiments/small_eps_trees.py``, ``experiments/compare_boosting.py``), or a
# table ``{model: {epsilon: values}}``::
#
#     plot_privacy_utility("small_eps.json", metric="auc")
#     plot_privacy_utility("compare.json", key="cal/columns", ylabel="MAE")
