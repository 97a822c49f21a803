"""
A DP regression tree, drawn
===========================

Fit a differentially private regression tree on the California Housing data shipped with
dptrees, print it as text with :func:`dptrees.plot.export_text` and draw it with
:func:`dptrees.plot.plot_tree`.

Both show released values only: the split thresholds (on the public grid of bin edges),
the noisy count of every node, and the noisy leaf means. Nothing is recomputed from the
training data, so looking at the tree costs no privacy.
"""

import matplotlib.pyplot as plt
import pandas as pd

from dptrees import DPDecisionTreeRegressor
from dptrees.datasets import load_california_housing
from dptrees.plot import export_text, plot_tree

X, y, names, bounds, y_bounds = load_california_housing()
X = pd.DataFrame(X, columns=names)  # the column names become feature_names_in_

# The bounds are public (census top-codes and the state's extent), not read from X.
# A fixed random_state makes this page reproducible; use None for a real release.
tree = DPDecisionTreeRegressor(epsilon=1.0, max_depth=3, bounds=bounds,
                               y_bounds=y_bounds, random_state=0).fit(X, y)

# %%
# The tree as text. Records with ``x < threshold`` take the first branch; each branch
# shows the noisy count of the node it leads to, each leaf its noisy mean house value.
print(export_text(tree))

# %%
# The same tree as a figure. Leaves are coloured by their released value.
plot_tree(tree)
plt.show()

# %%
# A classification tree shows each leaf's class, its probabilities and the noisy class
# counts they come from (shrunk towards the noisy class prior: post-processing).
from dptrees import DPDecisionTreeClassifier  # noqa: E402

expensive = y > 250_000
clf = DPDecisionTreeClassifier(epsilon=1.0, max_depth=2, bounds=bounds,
                               classes=[False, True], random_state=0).fit(X, expensive)
plot_tree(clf, class_names=["cheaper", "dearer"])
plt.show()
