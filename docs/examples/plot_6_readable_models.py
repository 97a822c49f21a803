"""
Reading the models: categories, missing values and shape functions
==================================================================

Everything below is drawn from released values and public inputs (the bounds and
categories in ``bounds``): no training data is kept in a model or read to explain it,
so none of it costs privacy.

A table with a categorical column: the region of each block group, with public
categories, missing for some rows, and the median income, missing for the poorest fifth.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from dptrees import (
    DPDecisionTreeRegressor,
    DPExplainableBoostingRegressor,
    DPGradientBoostingRegressor,
    Numeric,
)
from dptrees.datasets import CALIFORNIA_HOUSING_BOUNDS, load_california_housing
from dptrees.plot import export_text, plot_shape, plot_terms, plot_tree

X, y, names, _, y_bounds = load_california_housing()
X = pd.DataFrame(X, columns=names)
income = X["medianIncome"]
X["medianIncome"] = income.where(income >= income.quantile(0.2))
REGIONS = ["Bay Area", "Los Angeles", "San Diego", "Central Valley", "North", "Other"]
region = np.select(
    [(X.latitude > 37.2) & (X.latitude < 38.3) & (X.longitude < -121.7),
     (X.latitude > 33.6) & (X.latitude < 34.5) & (X.longitude > -118.9),
     X.latitude < 33.3, (X.longitude > -121.7) & (X.latitude < 40), X.latitude >= 40],
    REGIONS[:5], "Other").astype(object)
region[np.random.default_rng(0).random(len(region)) < 0.05] = None  # not recorded
X = X.drop(columns=["latitude", "longitude"]).assign(region=region)

domain = {k: v for k, v in CALIFORNIA_HOUSING_BOUNDS.items()
          if k in X.columns and k != "medianIncome"}
domain["medianIncome"] = Numeric(0.0, 15.0001, missing=True)
domain["region"] = REGIONS  # the public categories

# %%
# A DP tree: a split on the region lists the categories each side receives, and every
# split on a column that may be missing says where missing values go, as ``predict``
# sends them.
tree = DPDecisionTreeRegressor(epsilon=1.0, max_depth=3, bounds=domain, y_bounds=y_bounds,
                               random_state=0).fit(X, y)
print(export_text(tree, show_counts=False, decimals=1))
plot_tree(tree, decimals=1)
plt.show()

# %%
# One tree of gradient boosting (its first round, depth 4): the same rules, and the
# released leaf value of each leaf. ``plot_tree`` sizes the text to the figure;
# ``max_depth=2`` would draw the top two levels only.
gb = DPGradientBoostingRegressor(epsilon=1.0, bounds=domain, y_bounds=y_bounds,
                                 random_state=0).fit(X, y)
plot_tree(gb, index=0, decimals=1)
plt.show()

# %%
# An explainable boosting machine: one released score per bin of each feature.
# ``explain()`` names every bin (an interval, a category, or the missing value) in a
# tidy table; the scores of the rows a record matches, plus the intercept, are its
# prediction (here in dollars).
ebm = DPExplainableBoostingRegressor(epsilon=1.0, bounds=domain, y_bounds=y_bounds,
                                     random_state=0).fit(X, y)
table = ebm.explain()
print(table[table.term == "region"][["term", "label", "score"]].round(0))

# %%
# Which terms matter: the mean absolute score of each, every bin weighing the same
# (interpret weighs bins by their training counts, which are private).
plot_terms(ebm)
plt.show()

# %%
# The shape of a numeric term, with the score of a missing value apart, and of the
# categorical one.
plot_shape(ebm, "medianIncome")
plt.show()
plot_shape(ebm, "region")
plt.show()
