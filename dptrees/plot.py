"""Text and figures of fitted DP models, drawn from released values only.

* :func:`export_text` and :func:`plot_tree` show one fitted tree the way
  :func:`sklearn.tree.export_text` and :func:`sklearn.tree.plot_tree` do: its splits (the
  thresholds; for a categorical column, the categories each side receives; for a
  feature that may be missing, the side missing values take), the noisy counts its
  nodes released (where the model releases them) and its leaf values;
* :func:`plot_shape` and :func:`plot_terms` draw an explainable boosting machine the
  way interpret's shape plots do: one term's released scores over its bins or
  categories, and every term's importance;
* :func:`plot_privacy_utility` draws privacy-utility curves (a metric against epsilon)
  from the results the benchmark scripts write with ``--json``, or from your own records;
* :func:`plot_budget` draws how a fit's privacy budget is split over its kinds of
  release, from :meth:`privacy_report`.

Privacy: everything shown is a released value, public (the bounds and categories given
in ``bounds``), or post-processing of released values; nothing is recomputed from
training data, and no training data is stored, so nothing here costs privacy. A NaN
count in a tree means that the count was not released, and it is not shown.

The figures need matplotlib, an optional dependency: ``pip install "dptrees[plot]"``.
"""

from dptrees._plot_privacy import plot_budget, plot_privacy_utility
from dptrees._plot_terms import plot_shape, plot_terms
from dptrees._plot_trees import export_text, plot_tree

__all__ = ["export_text", "plot_tree", "plot_shape", "plot_terms", "plot_privacy_utility",
           "plot_budget"]
