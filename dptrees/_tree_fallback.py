"""The small-budget fallback of the trees and forests.

With too little budget for the data, a regression tree's leaves (and a forest's) hold
more noise than signal, and its predictions are worse than the noisy mean of the
targets. Before growing anything, a regressor releases a noisy record count with a
``FALLBACK_SHARE`` of its budget; when ``epsilon`` times that count is below its
threshold (:data:`TREE_FALLBACK_EPS_ROWS` for one tree, :data:`FOREST_FALLBACK_EPS_ROWS`
for a forest, whose trees split the budget or the records), it grows one tree of depth
0 with the rest: the noisy mean of the targets (a noisy sum of targets centred on 1/2
over a noisy count, half the budget each). Otherwise it grows what it would have grown,
with the rest of the budget.

A multiclass tree or forest does the same with the threshold
:data:`CLASSIFIER_FALLBACK_EPS_ROWS_PER_CLASS` times its number of public classes; its
tree of depth 0 is the noisy class counts, whose most frequent class it predicts. Its
leaves shrink towards the noisy class prior, the sum of every leaf's noisy counts; with
many classes and little budget that prior is itself mostly noise and picks a minority
class. A binary tree keeps its budget: two noisy counts rarely swap the majority.

Privacy: the count is one more Laplace release (sensitivity 1, ``FALLBACK_SHARE *
epsilon``), recorded in the ledger; the choice between the two structures is a function
of the public ``epsilon`` and of that released count (post-processing, no privacy
cost), and either structure spends the rest of ``epsilon``, so the fit stays
``epsilon``-DP by sequential composition (``docs/proofs/index.rst``). The thresholds were
chosen on validation rows of California Housing, the red wine and Nursery
(``experiments/small_eps_regression.py --validation``; ``experiments/RESULTS.md``).
"""

#: Share of epsilon spent on the noisy record count of the fallback rule.
FALLBACK_SHARE = 0.05
#: ``epsilon x noisy record count`` below which a regression tree falls back.
TREE_FALLBACK_EPS_ROWS = 600.0
#: The same for a regression forest (partition forest, DP ExtraTrees).
FOREST_FALLBACK_EPS_ROWS = 1500.0
#: ``epsilon x noisy record count`` per public class below which a multiclass tree or
#: forest falls back (binary ones never do: see the module's docstring).
CLASSIFIER_FALLBACK_EPS_ROWS_PER_CLASS = 30.0
#: The budget weights (count, split, leaf) of a classifier's fallback tree of depth 0.
FALLBACK_CLASSIFIER_WEIGHTS = (0.02, 1.0, 1.0)

__all__ = ["CLASSIFIER_FALLBACK_EPS_ROWS_PER_CLASS", "FALLBACK_CLASSIFIER_WEIGHTS",
           "FALLBACK_SHARE", "FOREST_FALLBACK_EPS_ROWS", "TREE_FALLBACK_EPS_ROWS",
           "multiclass_threshold", "noisy_record_count", "tree_falls_back"]


def multiclass_threshold(n_classes):
    """The ``epsilon x noisy count`` threshold of a classifier's fallback, trees and
    boosting alike: ``CLASSIFIER_FALLBACK_EPS_ROWS_PER_CLASS`` per public class, or None
    for two classes (a binary model keeps its budget)."""
    if n_classes <= 2:
        return None
    return CLASSIFIER_FALLBACK_EPS_ROWS_PER_CLASS * n_classes


def noisy_record_count(plan, data, epsilon, rng):
    """Release the number of records of ``data`` (the sum of their weights, each in
    [0, 1]: sensitivity 1) with Laplace noise of budget ``FALLBACK_SHARE * epsilon``."""
    return float(plan.release(float(data.source.record_count()), 1.0,
                              FALLBACK_SHARE * epsilon, rng,
                              label="record count (small-budget fallback rule)"))


def tree_falls_back(epsilon, noisy_count, threshold):
    """Whether a tree or forest of total ``epsilon`` grows only a tree of depth 0:
    ``epsilon * noisy_count < threshold`` (public inputs and a released value:
    post-processing)."""
    return float(epsilon) * float(noisy_count) < float(threshold)
