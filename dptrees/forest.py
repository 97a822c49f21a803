"""Differentially private forests.

Two families on one implementation:

* **partition forests** (Hoang & Nguyen 2020): every record is assigned to one of
  ``n_estimators`` disjoint parts, one greedy DP tree grows on each part with the full
  budget (parallel composition), and the trees are averaged;
* **DP ExtraTrees** (DiffPETs, Li, Chen & Xie): trees with random candidate splits —
  ``max_features`` features, one random threshold each, drawn without looking at the
  data — chosen among by the exponential mechanism. By default every tree sees all the
  data with ``epsilon / n_estimators`` (sequential composition); ``partition=True`` gives
  each tree a disjoint part and the full ``epsilon`` instead.
"""

from concurrent.futures import ThreadPoolExecutor
import math
from typing import Literal, Self

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from dptrees._params import Auto, DeclaredParams, param
from dptrees._constraints import AUTO, BOOLEAN, VERBOSE, fraction_or_count, integers, options
from dptrees._docs import estimator_doc
from dptrees._importances import ensemble_importances
from dptrees._lifecycle import run_fit
from dptrees._parallel import n_threads
from dptrees._progress import Progress
from dptrees._sources._rows import assign_partitions
from dptrees._tree_fallback import FALLBACK_SHARE, FOREST_FALLBACK_EPS_ROWS
from dptrees.data.tables import BOUNDS_DOC, keeps_columns_on_failure
from dptrees.tree import (
    RANDOM_STATE_DOC,
    _BaseDPTree,
    _ClassificationTreeMixin,
    _RegressionTreeMixin,
    resolve_max_features,
)

__all__ = [
    "DPExtraTreesClassifier",
    "DPExtraTreesRegressor",
    "DPPartitionForestClassifier",
    "DPPartitionForestRegressor",
    "assign_partitions",
    "auto_n_estimators",
    "auto_n_thresholds",
]


#: ``n_estimators="auto"``: one tree per two units of epsilon, at most this many
AUTO_N_ESTIMATORS_MAX = 10


def auto_n_estimators(epsilon):
    """Number of trees for ``n_estimators="auto"``: a rule in epsilon only.

    ``floor(epsilon / 2)`` trees, at least 1 and at most ``AUTO_N_ESTIMATORS_MAX = 10``:
    one tree per two units of epsilon, so a single tree up to epsilon 4. A forest pays for
    each tree with a ``1 / T`` share of the records (``partition=True``) or of the budget
    (sequential composition): at small epsilon every extra tree makes each tree's leaves
    noisier relative to their records, and averaging many such trees shrinks the class
    probabilities towards the base rate, so the forest predicts the majority class. On
    the validation split of Adult's ``adult.data`` (``experiments/small_eps_trees.py``),
    10 trees stay at the majority class up to epsilon 0.5 and lose 4-6 points of accuracy
    to one tree at epsilon 1; 1-2 trees are best up to epsilon 8.

    Privacy: reads only the public ``epsilon``; nothing is spent.

    Parameters
    ----------
    epsilon : float
        The forest's total budget.

    Returns
    -------
    int
    """
    return int(min(AUTO_N_ESTIMATORS_MAX, max(1, math.floor(epsilon / 2 + 1e-9))))


def auto_n_thresholds(n_bins):
    """Random edges per drawn feature for ``n_thresholds="auto"``: a rule in ``n_bins`` only.

    ``ceil((n_bins - 1) / 2)`` distinct edges of a feature's ``n_bins - 1``, drawn
    uniformly without reading the data: whichever edge of a feature splits best, it is
    among the candidates with probability at least 1/2. With one random edge (the rule
    of DiffPETs) that probability is ``1 / (n_bins - 1)``, and a feature whose useful
    split sits at one edge (a skewed variable such as a capital gain) is rarely offered
    at it: random thresholds are weaker than greedy ones at the same epsilon. The number
    of candidates does not change the privacy cost (the selection's sensitivity does not
    depend on it); what more candidates cost is the exponential mechanism's spread over
    them (a ``log`` of their number) and a little time: a node reads each drawn
    feature's column once either way (one edge: a branch-free pass; several: the
    feature's histogram, summed up to each edge). ``n_bins - 1`` edges would make every
    drawn feature greedy; half keeps the trees random.

    Chosen on validation rows of Adult and California Housing (library defaults, 20
    seeds; ``experiments/small_eps_trees.py --validation``,
    ``experiments/etr_thresholds_sweep.py``); the figures are in
    ``experiments/RESULTS.md``.

    Privacy: reads only the public ``n_bins``; nothing is spent, and the candidates
    still read no data.

    Parameters
    ----------
    n_bins : int
        Bins per feature (``n_bins - 1`` edges).

    Returns
    -------
    int
    """
    return max(1, math.ceil((n_bins - 1) / 2))


class _BaseDPForest(_BaseDPTree):
    """Grows ``n_estimators`` DP trees, on disjoint parts or on all the data."""

    n_estimators: int | Auto = param("auto", integers(1), AUTO)
    verbose: int = param(0, VERBOSE)

    _composition = ("pure epsilon-DP. Within a tree, releases compose sequentially along a "
                    "record's root-to-leaf path and in parallel across the nodes of a "
                    "depth; a record is in every tree (sequential composition), or in one "
                    "tree of a partition forest (parallel composition). Total: the sum "
                    "over the ledger of epsilon x count.")

    #: partition forests grow greedy trees; DP ExtraTrees use the random splitter
    _greedy = False

    def _resolve_n_estimators(self, epsilon):
        """``n_estimators``, or for ``"auto"`` the rule of :func:`auto_n_estimators`."""
        if isinstance(self.n_estimators, str):
            return auto_n_estimators(epsilon)
        return int(self.n_estimators)

    @keeps_columns_on_failure
    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Fit the forest, spending ``epsilon`` once from the accountant.

        With ``partition`` each tree gets the full ``epsilon`` on its own disjoint part
        (parallel composition); otherwise each tree gets ``epsilon / n_estimators`` on
        all the data (sequential composition).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Each record's weight in [0, 1] (rows in memory only), as for the single
            trees: every sensitivity and the guarantee are unchanged. Parts of a
            partition forest are drawn without reading the weights.

        Returns
        -------
        self
        """
        return run_fit(self, X, y, sample_weight)

    # -- the fit's hooks (dptrees._lifecycle; the data are opened as for one tree) -------

    def _plan_fit(self, fit):
        """Each tree's budget: the full ``epsilon`` on its own part (``partition``) or
        ``epsilon / n_estimators`` on all the rows; one pure-epsilon plan."""
        plan, epsilon = self._edges_plan(fit)
        fit.n_trees = self._resolve_n_estimators(epsilon)
        fit.max_features = (None if self._greedy else
                            resolve_max_features(self.max_features, fit.data.n_features))
        epsilon = self._plan_fallback(fit, epsilon, fit.max_features)
        fit.tree_epsilon = epsilon if self.partition else epsilon / fit.n_trees
        fit.budget = self._tree_budget(fit.tree_epsilon)
        fit.builder = self._builder(fit.budget, fit.data, fit.max_features)
        return plan

    def _release(self, fit):
        self._falls_back(fit)
        rng = fit.rng
        if fit.fell_back:  # one tree of depth 0 on all the rows: the noisy mean
            fit.n_trees, fit.tree_epsilon = 1, fit.fallback_base * (1 - FALLBACK_SHARE)
        data, n_trees = fit.data, fit.n_trees
        partition = bool(self.partition) and not fit.fell_back
        if partition:
            data.partition(n_trees, rng)
        streams = rng.spawn(n_trees)
        threads = n_threads(self.n_jobs, n_trees)
        # threads left over by the trees go to each tree's statistics
        per_tree = max(1, n_threads(self.n_jobs) // threads)
        note = f"{fit.tree_epsilon:g} per tree" + (
            " on its own part" if partition else f", {fit.params:g} in all")

        def grow(k):
            tree = self._grow(data.part(k) if partition else data, fit.builder, streams[k],
                              per_tree)
            progress.step(epsilon=note)
            return tree

        fit.trees = []
        with ThreadPoolExecutor(max_workers=threads) as pool, \
                Progress(self, n_trees, "tree") as progress:
            for tree in pool.map(grow, range(n_trees)):
                # a record is in every tree, or (partition) in one part's tree only:
                # the parts hold disjoint records (parallel composition)
                if not partition or not fit.trees:
                    self._record_tree(fit.plan, fit.budget)
                fit.trees.append(tree)

    def _record(self, fit):
        self.estimators_ = fit.trees
        self._post_process(self.estimators_, fit.budget)
        self.n_estimators_ = fit.n_trees
        self._record_fit(fit.data, fit.params, fit.budget, fit.plan)
        self.tree_epsilon_ = fit.tree_epsilon
        self.max_features_ = fit.max_features

    def _resolve_n_thresholds(self):
        """``n_thresholds`` of the random splitter (DP ExtraTrees), or for ``"auto"`` the
        rule of :func:`auto_n_thresholds`; at most ``n_bins - 1``."""
        value = self.n_thresholds
        if isinstance(value, str):
            value = auto_n_thresholds(self.n_bins)
        self.n_thresholds_ = min(int(value), self.n_bins - 1)
        return self.n_thresholds_

    def _average(self, X):
        check_is_fitted(self, "estimators_")
        codes = self._codes(X)
        return np.mean([tree.predict(codes) for tree in self.estimators_], axis=0)

    def apply(self, X: ArrayLike) -> np.ndarray:
        """Leaf index of each sample in each tree, shape (n_samples, n_estimators)."""
        check_is_fitted(self, "estimators_")
        codes = self._codes(X)
        return np.column_stack([tree.apply(codes) for tree in self.estimators_])

    def get_depth(self) -> int:
        check_is_fitted(self, "estimators_")
        return max(tree.max_depth for tree in self.estimators_)

    @property
    def feature_importances_(self):
        """The trees' released-value importances (see
        :attr:`DPDecisionTreeRegressor.feature_importances_`), summed, normalised."""
        check_is_fitted(self, "estimators_")
        return ensemble_importances(self.estimators_, self.n_features_in_)

    def get_n_leaves(self) -> int:
        check_is_fitted(self, "estimators_")
        return sum(tree.n_leaves for tree in self.estimators_)


class _ExtraTreesParams(DeclaredParams):
    """DP ExtraTrees' own parameters (partition forests are always partitioned)."""

    max_features: Literal["sqrt", "log2"] | int | float | None = param(
        None, None, options("sqrt", "log2"), fraction_or_count())
    n_thresholds: int | Auto = param("auto", integers(1), AUTO)
    partition: bool = param(False, BOOLEAN)


class _RegressionForest(_RegressionTreeMixin, RegressorMixin, _BaseDPForest):
    _fallback_threshold = FOREST_FALLBACK_EPS_ROWS

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Average of the trees' predictions (post-processing: no privacy cost)."""
        return self._average(X)


class _ClassificationForest(_ClassificationTreeMixin, ClassifierMixin, _BaseDPForest):

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Average of the trees' class probabilities (post-processing)."""
        return self._average(X)


_COMMON_DOC = """
    n_jobs : int, optional
        Threads that grow trees in parallel (the compiled builder releases the GIL).
        ``None`` means 1, -1 all cores. Results do not depend on it: every tree has its
        own random streams.
    verbose : int, default=0
        Show the trees' progress (budget, time left): a tqdm bar if tqdm is installed,
        else plain lines (see :mod:`dptrees._progress`).
    min_samples_split, min_samples_leaf, n_bins, bin_edges, edges_budget, selection
        As for the single trees (:class:`~dptrees.tree.DPDecisionTreeRegressor`).
""" + BOUNDS_DOC + """    accountant : BudgetAccountant, optional
        Where the fit's ``epsilon`` is spent; default: the default accountant.""" + \
    RANDOM_STATE_DOC


_AUTO_TREES_DOC = """
        ``"auto"``: :func:`auto_n_estimators` of ``epsilon`` (1 tree up to epsilon 4, one
        more per 2 units of epsilon, at most 10; a rule in the public epsilon only). It
        was 10 before."""
_AUTO_THRESHOLDS_DOC = """
        ``"auto"``: :func:`auto_n_thresholds` of ``n_bins``, half the edges rounded up
        (20 for 40 bins; a rule in the public ``n_bins`` only), chosen on validation
        rows (:func:`auto_n_thresholds`)."""
_MAX_FEATURES_NOTE = """ All
        features beat ``"sqrt"`` on validation rows of Adult
        (``experiments/small_eps_trees.py``). The candidates are drawn without reading
        the data whatever ``K``."""


#: The attributes every forest has, first in its list.
_TREES_ATTRIBUTES_DOC = """
    Attributes
    ----------
    estimators_ : list of Tree
    n_estimators_ : int
        The number of trees grown (``n_estimators``, or its ``"auto"`` value)."""
_EXTRA_ATTRIBUTES_DOC = _TREES_ATTRIBUTES_DOC + """
    max_features_ : int
    n_thresholds_ : int
        Random edges per drawn feature (``n_thresholds``, or its ``"auto"`` value)."""


@estimator_doc
class DPPartitionForestRegressor(_RegressionForest):
    __doc__ = """Differentially private partition forest (Hoang & Nguyen 2020).

    Assigns every record to one of ``n_estimators`` disjoint parts (independently, record
    by record), grows one greedy :class:`~dptrees.tree.DPDecisionTreeRegressor` on each
    part with the full ``epsilon``, and predicts the average of the trees.

    With too little budget (``epsilon`` times a noisy record count released first, with
    5 % of ``epsilon``, below ``FOREST_FALLBACK_EPS_ROWS``; :mod:`dptrees._tree_fallback`)
    the forest is one tree of depth 0 on all the records: the noisy mean.

    Privacy guarantee: ``epsilon``-DP for add/remove-one neighbours, given public
    ``bounds`` and ``y_bounds``: the count takes ``0.05 epsilon``; a record lands in
    exactly one part, so it influences one tree, which spends the rest (parallel
    composition; the choice of structure is post-processing of the count; proofs in
    ``docs/proofs/index.rst``). The fit spends ``epsilon`` once.

    Parameters
    ----------
    n_estimators : int, default=25
        Number of parts and trees (the paper's ``tau``).
    epsilon : float, default=1.0
    leaf, n_target_bins, y_bounds, max_depth, budget_weights
        As for :class:`~dptrees.tree.DPDecisionTreeRegressor`.""" + _COMMON_DOC + """
""" + _TREES_ATTRIBUTES_DOC + """
    epsilon_spent_, delta_spent_, privacy_ledger_, tree_epsilon_, budget_, privacy_leaks_,
    n_features_in_, bounds_, y_bounds_
        ``budget_`` is each tree's; ``tree_epsilon_`` equals ``epsilon``.
    """

    partition = True
    _greedy = True

    n_estimators: int | Auto = 25


@estimator_doc
class DPPartitionForestClassifier(_ClassificationForest):
    __doc__ = """Differentially private partition forest of classification trees.

    One greedy :class:`~dptrees.tree.DPDecisionTreeClassifier` per disjoint part (parts
    assigned record by record), each with the full ``epsilon``; ``predict_proba`` averages
    the trees' leaf probabilities.

    Privacy guarantee: ``epsilon``-DP for add/remove-one neighbours given public ``bounds``
    and ``classes`` (parallel composition over the disjoint parts).

    Parameters
    ----------
    n_estimators : int or "auto", default="auto\"""" + _AUTO_TREES_DOC + """
    epsilon : float, default=1.0
    leaf, classes, prior_strength
        As for :class:`~dptrees.tree.DPDecisionTreeClassifier`.
    max_depth, budget_weights
        As for :class:`~dptrees.tree.DPDecisionTreeClassifier` (defaults ``"auto"`` and
        ``(0.5, 2.0, 1.0)``).""" + _COMMON_DOC + """
""" + _TREES_ATTRIBUTES_DOC + """
    classes_, n_classes_, epsilon_spent_, delta_spent_, privacy_ledger_, tree_epsilon_,
    budget_, privacy_leaks_
    """

    partition = True
    _greedy = True


_EXTRA_DOC = """
    Each node draws ``max_features`` features and ``n_thresholds`` distinct uniformly
    random bin edges for each, from a random stream of its own that reads no data, and
    the exponential mechanism (or permute-and-flip) chooses among these candidates. Noisy
    counts stop the growth and leaves release noisy values, as in the greedy trees.

    Privacy guarantee: ``epsilon``-DP for add/remove-one neighbours given public bounds
    (and {target}). The per-tree budget is ``epsilon / n_estimators`` (sequential
    composition: every tree reads every record) or, with ``partition=True``, ``epsilon``
    on disjoint parts (parallel composition); within a tree the budget is
    :func:`~dptrees.tree.split_tree_budget` with ``budget_weights`` (with equal weights,
    DiffPETs' per-level split ``eps_tree / (2 (h + 1))`` for the noisy count and the
    choice).

    Changes from DiffPETs, to make its guarantee true: no bootstrap (a bootstrap sample
    can hold one record many times, multiplying its influence; each tree reads the data
    once instead, or a disjoint part); no "pure node" stop on exact labels (it branches on
    an un-noised statistic); nodes stop on noisy counts and on depth instead.

    Parameters
    ----------
    n_estimators : {n_estimators_type}, default={n_estimators_default}
        ``t`` in DiffPETs.{n_estimators_auto}
    epsilon : float, default=1.0
    max_features : {{"sqrt", "log2"}}, int, float or None, default={max_features_default}
        ``K``: random features per node, rounded up (at least 1, at most
        ``n_features``). ``None`` means all features.{max_features_note}
    n_thresholds : {n_thresholds_type}, default={n_thresholds_default}
        Distinct random bin edges drawn per drawn feature (at most ``n_bins - 1``): a
        node has ``K * n_thresholds`` candidates. 1 is DiffPETs' rule. Any number costs
        the same privacy.{n_thresholds_auto}
    partition : bool, default=False
        Give each tree a disjoint part of the data and the full ``epsilon``."""


@estimator_doc
class DPExtraTreesRegressor(_ExtraTreesParams, _RegressionForest):
    __doc__ = ("""Differentially private ExtraTrees for regression (DiffPETs).
""" + _EXTRA_DOC.format(
    target="``y_bounds``", n_estimators_type="int", n_estimators_default="10",
    n_estimators_auto="", max_features_default='"sqrt"', max_features_note="",
    n_thresholds_type='int or "auto"', n_thresholds_default='"auto"',
    n_thresholds_auto=_AUTO_THRESHOLDS_DOC) + """
    leaf, n_target_bins, y_bounds, max_depth, budget_weights
        As for :class:`~dptrees.tree.DPDecisionTreeRegressor`; the split utility is minus
        the squared error (``n`` times the variance DiffPETs uses). With too little
        budget (``epsilon`` times a noisy record count, released first with 5 % of
        ``epsilon``, below ``FOREST_FALLBACK_EPS_ROWS``; :mod:`dptrees._tree_fallback`)
        the forest is one tree of depth 0, the noisy mean, spending the rest (the
        choice is post-processing of the count; ``docs/proofs/index.rst``).""" + \
    _COMMON_DOC + """
""" + _EXTRA_ATTRIBUTES_DOC + """
    epsilon_spent_, delta_spent_, privacy_ledger_, tree_epsilon_, budget_, privacy_leaks_,
    n_features_in_, bounds_, y_bounds_
    """)

    n_estimators: int | Auto = 10
    max_features: Literal["sqrt", "log2"] | int | float | None = "sqrt"


@estimator_doc
class DPExtraTreesClassifier(_ExtraTreesParams, _ClassificationForest):
    __doc__ = ("""Differentially private ExtraTrees for classification (DiffPETs).
""" + _EXTRA_DOC.format(
    target="``classes``", n_estimators_type='int or "auto"', n_estimators_default='"auto"',
    n_estimators_auto=_AUTO_TREES_DOC, max_features_default="None",
    max_features_note=_MAX_FEATURES_NOTE, n_thresholds_type='int or "auto"',
    n_thresholds_default='"auto"', n_thresholds_auto=_AUTO_THRESHOLDS_DOC) + """
    leaf, classes, prior_strength
        As for :class:`~dptrees.tree.DPDecisionTreeClassifier`; the split utility is Gini.
    max_depth, budget_weights
        As for :class:`~dptrees.tree.DPDecisionTreeClassifier` (defaults ``"auto"``, of
        each tree's epsilon, and ``(0.5, 2.0, 1.0)``).
""" + _COMMON_DOC + """
""" + _EXTRA_ATTRIBUTES_DOC + """
    classes_, n_classes_, epsilon_spent_, delta_spent_, privacy_ledger_, tree_epsilon_,
    budget_, privacy_leaks_
    """)

