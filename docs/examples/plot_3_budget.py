"""
Where the privacy budget goes
=============================

Every fitted estimator keeps a ledger of its releases (``privacy_ledger_``): what is
released, by which mechanism, the budget of one release and how many releases one record
takes part in. :func:`dptrees.plot.plot_budget` draws it as a budget breakdown.
"""

import matplotlib.pyplot as plt

from dptrees import (
    DPAdaBoostClassifier,
    DPDecisionTreeClassifier,
    DPGradientBoostingClassifier,
    DPPartitionForestRegressor,
)
from dptrees.datasets import load_california_housing
from dptrees.plot import plot_budget

X, y, names, bounds, y_bounds = load_california_housing()
expensive = y > 250_000
common = dict(epsilon=1.0, bounds=bounds, random_state=0)

tree = DPDecisionTreeClassifier(classes=[False, True], **common).fit(X, expensive)
boosting = DPGradientBoostingClassifier(classes=[False, True], **common).fit(X, expensive)
adaboost = DPAdaBoostClassifier(classes=[False, True], n_estimators=10,
                                **common).fit(X, expensive)
forest = DPPartitionForestRegressor(y_bounds=y_bounds, **common).fit(X, y)

# %%
# A tree's epsilon is split over its noisy node counts, its split choices and its leaves
# (:func:`dptrees.tree.split_tree_budget`); the classifier's default weights give most to
# the split choices. Gradient boosting adds Gaussian noise, so its ledger is in ``rho``
# (zero-concentrated DP, which adds up); its ``(epsilon, delta)`` comes from its Renyi
# accountant. AdaBoost's ledger has one entry per round: they are added up by kind.
fig, axes = plt.subplots(3, 1, figsize=(8, 9), layout="constrained")
plot_budget(tree, ax=axes[0])
plot_budget(boosting, ax=axes[1])
plot_budget(adaboost, ax=axes[2])
plt.show()

# %%
# The same as a pie, here for a partition forest: each record is in one part, so it
# meets the releases of one tree only, which gets the whole epsilon.
plot_budget(forest, kind="pie")
plt.show()
