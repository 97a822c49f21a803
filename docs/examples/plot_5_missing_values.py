"""
Missing values in a numeric column
==================================

A numeric column that may be missing says so in ``bounds`` with
:class:`dptrees.Numeric`: ``Numeric(low, high, missing=True)`` gives it a missing bin of
its own, whether or not the data has missing values, so the bins stay a function of
public inputs and cost nothing. Each split's private choice of edge then decides where
missing values go: with the larger values, or apart from all present ones (the edge the
tree shows as "is present" / "is missing"). At predict time a NaN follows the same
route.

Here the median income of California Housing is missing for the poorest fifth of the
block groups, the case where filling in a constant goes wrong.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from dptrees import DPDecisionTreeRegressor, DPGradientBoostingRegressor, Numeric
from dptrees.datasets import CALIFORNIA_HOUSING_BOUNDS, load_california_housing
from dptrees.plot import plot_tree

X, y, names, _, y_bounds = load_california_housing()
X = pd.DataFrame(X, columns=names)
income = X["medianIncome"]
X["medianIncome"] = income.where(income >= income.quantile(0.2))  # NaN for the poorest
print(f"{X['medianIncome'].isna().mean():.0%} of the incomes are missing")

rows = np.random.default_rng(0).permutation(len(y))
train, test = rows[:16_000], rows[16_000:]

# %%
# The public domain of every column, with the income declared as possibly missing:
domain = dict(CALIFORNIA_HOUSING_BOUNDS)
del domain["medianHouseValue"]  # the target
domain["medianIncome"] = Numeric(0.0, 15.0001, missing=True)

model = DPGradientBoostingRegressor(epsilon=1.0, bounds=domain, y_bounds=y_bounds,
                                    random_state=0).fit(X.iloc[train], y[train])
print(f"missing bin: test MAE {np.abs(model.predict(X.iloc[test]) - y[test]).mean():,.0f}")

# %%
# The simplest alternative that is still private fills the gaps with a public constant,
# the middle of the column's bounds. It puts the poorest block groups among the rich:
filled = X.fillna({"medianIncome": 15.0001 / 2})
plain = dict(domain, medianIncome=(0.0, 15.0001))
imputed = DPGradientBoostingRegressor(epsilon=1.0, bounds=plain, y_bounds=y_bounds,
                                      random_state=0).fit(filled.iloc[train], y[train])
error = np.abs(imputed.predict(filled.iloc[test]) - y[test]).mean()
print(f"public midpoint: test MAE {error:,.0f}")

# %%
# A single DP tree on the same data. The missing incomes sit above every present one, so
# a split on the income sends them right, with the highest incomes, unless it is the
# column's last edge ("is present" / "is missing"); the branches below can then tell
# them apart. Where they went is read off the released splits and noisy counts.
tree = DPDecisionTreeRegressor(epsilon=1.0, max_depth=3, bounds=domain, y_bounds=y_bounds,
                               random_state=0).fit(X.iloc[train], y[train])
plot_tree(tree)
plt.show()
