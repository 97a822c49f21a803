"""Differentially private decision trees.

:class:`DPDecisionTreeRegressor` is the DP greedy regression tree of Hoang & Nguyen
(2020, "Differentially private regression tree and forest"); :class:`DPDecisionTreeClassifier`
is its classification twin with the Gini utility. Both run on the compiled engine in
:mod:`dptrees._core._releases`, which documents what each node releases and the sensitivity
of each release; this module decides the budget of each kind of release.
"""

from contextlib import contextmanager
import math
import numbers
from typing import Literal, Self

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from dptrees._constraints import (
    ACCOUNTANT,
    AUTO,
    EPSILON,
    N_JOBS,
    NON_NEGATIVE,
    PUBLIC,
    RANDOM_STATE,
    integers,
    options,
    validate_params,
)
from dptrees._core._builder import TreeBuilder
from dptrees._docs import estimator_doc
from dptrees._importances import ensemble_importances
from dptrees._lifecycle import run_fit
from dptrees._parallel import n_threads
from dptrees._params import (
    Accountant, Auto, BinEdges, Bounds, Classes, DeclaredParams, RandomStateLike, TargetBounds,
    param,
)
from dptrees._prediction import MostProbableClassMixin
from dptrees.privacy.release_plan import ReleasePlan
from dptrees.data.private_edges import BIN_EDGES, EDGES_BUDGET, EDGES_PARAMS_DOC, reserve_edges
from dptrees.privacy.report import PrivacyReportMixin
from dptrees.data.prepare import prepare
from dptrees.data.tables import BOUNDS_DOC, TableColumnsMixin, keeps_columns_on_failure
from dptrees._tree_data import TreeData
from dptrees._tree_fallback import (
    FALLBACK_CLASSIFIER_WEIGHTS,
    FALLBACK_SHARE,
    TREE_FALLBACK_EPS_ROWS,
    multiclass_threshold,
    noisy_record_count,
    tree_falls_back,
)
from dptrees._tree_structure import Tree
from dptrees.accounting import AccountantMixin
from dptrees.mechanisms import _laplace_ratio, selection_constants
from dptrees.validation import WEIGHT_BITS, check_epsilon, check_features

__all__ = ["DPDecisionTreeClassifier", "DPDecisionTreeRegressor", "auto_max_depth",
           "split_tree_budget"]

# Split utilities are sums of float64 terms of magnitude at most the node size (< 2**31);
# their rounding error is below 2**-19, so adding 2**-17 to the sensitivity covers the
# error of the utilities of both neighbouring datasets (see _stats.side_utility).
_FLOAT_MARGIN = 2.0**-17
# Sensitivity of the split utilities (derivations in _stats.side_utility).
_UTILITY_SENSITIVITY = {"mse": 1.0, "mae": 1.0, "gini": 2.0}


def split_tree_budget(epsilon, max_depth, weights=(1.0, 1.0, 1.0)):
    """Per-release budgets of a DP tree of depth ``max_depth`` with total ``epsilon``.

    Along any root-to-leaf path a record meets at most ``max_depth + 1`` noisy counts
    (one per depth), ``max_depth`` split choices and one leaf value. Nodes of one depth
    hold disjoint records (parallel composition), so the worst path is what a record
    pays: with weights ``(w_count, w_split, w_leaf)`` the unit is
    ``epsilon / ((max_depth + 1) w_count + max_depth w_split + w_leaf)`` and each release
    gets its weight times the unit. The total is exactly ``epsilon`` (sequential
    composition along the path).

    With equal weights this is ``epsilon / (2 max_depth + 2)`` per release, which is
    DiffPETs' per-level ``eps / (2 (h + 1))``. Hoang & Nguyen state ``epsilon / (2 l_max + 1)``:
    they do not count the root's noisy count, which also touches every record. We count it.

    Parameters
    ----------
    epsilon : float
        The tree's total budget.
    max_depth : int
        The largest depth of a leaf.
    weights : tuple of 3 floats, default=(1.0, 1.0, 1.0)
        Relative budgets ``(w_count, w_split, w_leaf)``.

    Returns
    -------
    dict with keys ``"count"``, ``"split"``, ``"leaf"``
    """
    w_count, w_split, w_leaf = (float(w) for w in weights)
    if min(w_count, w_split, w_leaf) <= 0 or not all(
        math.isfinite(w) for w in (w_count, w_split, w_leaf)
    ):
        raise ValueError(f"budget weights must be finite and > 0, got {weights}")
    unit = epsilon / ((max_depth + 1) * w_count + max_depth * w_split + w_leaf)
    return {"count": unit * w_count, "split": unit * w_split, "leaf": unit * w_leaf}


#: ``max_depth="auto"``: one level per doubling of epsilon above 1 / AUTO_DEPTH_SCALE
AUTO_DEPTH_SCALE = 80
AUTO_DEPTH_MAX = 5
#: default budget weights (count, split, leaf) of the classifiers
CLASSIFIER_BUDGET_WEIGHTS = (0.5, 2.0, 1.0)


def auto_max_depth(tree_epsilon):
    """Depth of a classification tree for ``max_depth="auto"``: a rule in epsilon only.

    ``floor(log2(80 * tree_epsilon))``, clipped to ``[0, AUTO_DEPTH_MAX = 5]``: depth 0 (the
    root only, whose leaf is the noisy class prior) below epsilon 0.025, 1 from 0.025, 2
    from 0.05, 3 from 0.1, 4 from 0.2 and 5 from 0.4. Each level halves the expected
    number of records of a leaf, so keeping ``tree_epsilon / 2**depth >= 1/80`` keeps the
    ratio of a leaf's records to the scale of its noise from falling as epsilon shrinks:
    with too little budget the tree falls back towards the (noisy) prior, not towards
    noise. Measured on the validation split of Adult's ``adult.data``
    (``experiments/small_eps_trees.py``): a depth-5 tree falls below the majority class at
    epsilon 0.01-0.1 and this rule does not, at no cost at epsilon 0.5-1.

    Privacy: reads only the public ``tree_epsilon``; nothing is spent.

    Parameters
    ----------
    tree_epsilon : float
        The budget of one tree.

    Returns
    -------
    int
    """
    d = math.floor(math.log2(max(tree_epsilon * AUTO_DEPTH_SCALE, 1e-300)) + 1e-9)
    return int(min(AUTO_DEPTH_MAX, max(0, d)))


def _check_budget_weights(weights):
    if not (isinstance(weights, (tuple, list)) and len(weights) == 3):
        raise ValueError(f"budget_weights must be 3 numbers (count, split, leaf), got {weights!r}")


def resolve_max_features(max_features, n_features):
    """Number of random features drawn per node (each with ``n_thresholds`` random
    edges), for a ``max_features`` that satisfies the forests' constraint.

    ``None`` means all features; the result is at most ``n_features``.
    """
    if max_features is None:
        return n_features
    if isinstance(max_features, str):
        k = math.sqrt(n_features) if max_features == "sqrt" else math.log2(max(n_features, 2))
        return min(n_features, max(1, math.ceil(k)))
    if isinstance(max_features, numbers.Integral):
        return min(n_features, int(max_features))
    return max(1, math.ceil(max_features * n_features))


_LEAF_RELEASES = {
    # leaf kind: (release, mechanism, sensitivity, norm)
    "mean": ("leaf sums of targets (rescaled to [0, 1], centred)", "discrete Laplace", 0.5,
             "L1"),
    "median": ("leaf medians (target-bin centres)", "exponential mechanism", 1.0, "utility"),
    "counts": ("leaf class counts", "discrete Laplace", 1.0, "L1"),
    "label": ("leaf majority classes", "permute-and-flip", 1.0, "utility"),
}


class _BaseDPTree(PrivacyReportMixin, TableColumnsMixin, AccountantMixin, DeclaredParams,
                  BaseEstimator):
    """Fitting machinery shared by the DP tree estimators (and reused by the forests)."""

    epsilon: float = param(1.0, EPSILON)
    max_depth: int | Auto = param(5, integers(0, 64), AUTO)
    min_samples_split: int = param(20, NON_NEGATIVE)
    min_samples_leaf: int = param(10, NON_NEGATIVE)
    n_bins: int = param(40, integers(2, 256))
    bin_edges: BinEdges = param("uniform", BIN_EDGES)
    edges_budget: float | Auto = param("auto", EDGES_BUDGET)
    selection: Literal["exponential", "permute_and_flip"] = param(
        "exponential", options("exponential", "permute_and_flip"))
    budget_weights: tuple = param((1.0, 1.0, 1.0), "array-like")
    bounds: Bounds = param(None, PUBLIC)
    accountant: Accountant = param(None, ACCOUNTANT)
    n_jobs: int | None = param(None, N_JOBS)
    random_state: RandomStateLike = param(None, RANDOM_STATE)

    _criterion = None  # set by subclasses
    _leaf_kind = None
    _fallback_threshold = None  # see dptrees._tree_fallback

    def _check_params(self):
        """Validate the parameters (their constraints, then the privacy rules) before
        anything is read or spent; returns the checked epsilon."""
        validate_params(self)
        epsilon = check_epsilon(self.epsilon)
        _check_budget_weights(self.budget_weights)
        return epsilon

    def _resolve_depth(self, tree_epsilon):
        """``max_depth``, or for ``"auto"`` the rule of :func:`auto_max_depth`."""
        if isinstance(self.max_depth, str):
            return auto_max_depth(tree_epsilon)
        return self.max_depth

    def _tree_budget(self, epsilon):
        """Per-release budgets of one tree with ``epsilon``; also fixes the fit's depth."""
        self._fit_max_depth = self._resolve_depth(epsilon)
        return split_tree_budget(epsilon, self._fit_max_depth, self.budget_weights)

    def _leaf_noise(self, budget, data):
        """Integer noise parameters of the leaf release, as TreeBuilder keywords."""
        raise NotImplementedError

    def _builder(self, budget, data, max_features=None, max_depth=None):
        """A compiled builder whose exact noise parameters realise ``budget``, for trees
        of ``max_depth`` (default: the fit's depth, fixed by :meth:`_tree_budget`).

        Raises ``ValueError`` (before anything is spent) when a release's budget is too
        small or too large for the exact samplers.
        """
        criterion = self._criterion_name()
        max_depth = self._fit_max_depth if max_depth is None else max_depth
        try:
            count_t, count_s = _laplace_ratio(1, budget["count"])  # counts: sensitivity 1
            split_q, split_eps_num, split_den = selection_constants(
                _UTILITY_SENSITIVITY[criterion] + _FLOAT_MARGIN, budget["split"],
                monotonic=True,
            )
            leaf_noise = self._leaf_noise(budget, data)
        except ValueError as exc:
            raise ValueError(
                f"epsilon={self.epsilon!r} cannot be realised by the exact samplers at "
                f"max_depth={max_depth} (per-release budgets {budget}): {exc}"
            ) from exc
        return TreeBuilder(
            n_bins=self.n_bins, n_labels=data.n_labels, max_depth=max_depth,
            criterion=criterion, leaf=self._leaf_name(), selection=self.selection,
            max_features=max_features or 0,
            n_thresholds=self._resolve_n_thresholds() if max_features else 1,
            min_samples_split=float(self.min_samples_split),
            min_samples_leaf=float(self.min_samples_leaf), fixed_scale=data.fixed_scale,
            count_t=count_t, count_s=count_s, split_q=split_q, split_eps_num=split_eps_num,
            split_den=split_den, weight_shift=0 if data.weights is None else WEIGHT_BITS,
            **leaf_noise,
        )

    def _resolve_n_thresholds(self):
        """Random edges per drawn feature of the random splitter (1 unless overridden)."""
        return 1

    def _grow(self, data, builder, rng, n_threads=1):
        """Build one tree on prepared data; returns a :class:`Tree` in output units."""
        noise_rng, candidate_rng = rng.spawn(2)
        nodes = data.grow_nodes(builder, noise_rng, candidate_rng, n_threads)
        is_split = nodes["left"] != -1
        threshold = np.full(nodes["feature"].shape[0], np.nan)
        threshold[is_split] = data.binner.thresholds(
            nodes["feature"][is_split], nodes["bin_threshold"][is_split]
        )
        raw = nodes.pop("value")
        value = self._output_values(raw, data)
        tree = Tree(threshold=threshold, value=value, **nodes)
        tree.noisy_value = raw  # the released leaf values, before post-processing
        return tree

    def _post_process(self, trees, budget):
        """Post-process the released values of the fitted ``trees`` (default: nothing)."""

    @keeps_columns_on_failure
    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Fit the tree, spending ``epsilon`` from the accountant.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Each record's weight in [0, 1] (rows in memory only): it scales the
            record's count, target and class count, so every sensitivity and the
            guarantee are unchanged. A weight of 0 is the record's removal; weights of
            one are the unweighted fit. See "Sample weights" in the user guide.

        Returns
        -------
        self
        """
        return run_fit(self, X, y, sample_weight)

    # -- the fit's hooks (dptrees._lifecycle) -------------------------------------------

    def _open_fit_data(self, fit, X, y, sample_weight):
        return self._training_data(X, y, n_jobs=n_threads(self.n_jobs),
                                   sample_weight=sample_weight)

    def _plan_fit(self, fit):
        """The budget split of the tree and the builder that realises it (checked
        before anything is spent); one pure-epsilon plan (private edges first). With a
        fallback rule (regressors, multiclass classifiers) a share of the rest is kept
        for the rule's count and the fallback is planned too
        (:mod:`dptrees._tree_fallback`)."""
        plan, epsilon = self._edges_plan(fit)
        epsilon = self._plan_fallback(fit, epsilon)
        fit.budget = self._tree_budget(epsilon)
        fit.builder = self._builder(fit.budget, fit.data)
        return plan

    @staticmethod
    def _edges_plan(fit):
        """The fit's pure-epsilon plan with the private edges' share reserved
        (:func:`~dptrees.data.private_edges.reserve_edges`), and the epsilon left for
        the trees: all of it with equal-width bins."""
        plan = ReleasePlan("laplace", fit.params, 0.0)
        fit.edges_budget = reserve_edges(plan, fit.data)
        return plan, (fit.params - fit.edges_budget if fit.edges_budget else fit.params)

    def _plan_fallback(self, fit, epsilon, max_features=None):
        """The budget left for the trees out of ``epsilon`` (what the private edges
        left), and (with a fallback rule) ``fit.fallback``: the budget and builder of one
        tree of depth 0 with it (checked before anything is spent); the rule's count takes
        ``FALLBACK_SHARE`` of ``epsilon`` (``fit.fallback_base``)."""
        fit.fallback, fit.fallback_base = None, epsilon
        fit.fallback_threshold = self._fallback_rule(fit.data)
        if fit.fallback_threshold is None:
            return epsilon
        epsilon = epsilon * (1 - FALLBACK_SHARE)
        budget = split_tree_budget(epsilon, 0, self._fallback_weights())
        fit.fallback = (budget, self._builder(budget, fit.data, max_features, max_depth=0))
        return epsilon

    def _fallback_rule(self, data):
        """The ``epsilon x noisy count`` threshold of the small-budget fallback, or None
        (no fallback rule)."""
        return self._fallback_threshold

    def _fallback_weights(self):
        """The budget weights of the fallback's tree of depth 0 (a regressor's mean
        takes its count from the root's, so it keeps ``budget_weights``)."""
        return self.budget_weights

    def _falls_back(self, fit):
        """With a fallback rule, release its count first (drawn from the
        fit's generator: the trees' streams, spawned from it, stay as they were) and, if
        the rule says so, switch the fit to its fallback, one tree of depth 0; sets
        ``fit.fell_back``."""
        fit.fell_back = False
        if fit.fallback is None:
            return
        noisy_count = noisy_record_count(fit.plan, fit.data, fit.fallback_base, fit.rng)
        if tree_falls_back(fit.params, noisy_count, fit.fallback_threshold):
            self._fit_max_depth = 0
            fit.budget, fit.builder = fit.fallback
            fit.fell_back = True

    def _release(self, fit):
        self._falls_back(fit)
        fit.trees = [self._grow(fit.data, fit.builder, fit.rng, n_threads(self.n_jobs))]
        self._record_tree(fit.plan, fit.budget)

    def _record(self, fit):
        self.tree_ = fit.trees[0]
        self._post_process(fit.trees, fit.budget)
        self._record_fit(fit.data, fit.params, fit.budget, fit.plan)

    @contextmanager
    def _training_data(self, X, y, n_jobs=1, sample_weight=None):
        """The rows of ``fit(X, y, sample_weight)`` (:func:`~dptrees.data.prepare.prepare`)
        as the builder reads them (:class:`~dptrees._tree_data.TreeData`), closed at the
        end. Everything is validated here, before anything is spent."""
        with prepare(self, X, y, sample_weight, task=self._task, max_classes=256,
                     n_jobs=n_jobs) as prepared:
            yield TreeData(self, prepared)

    _composition = ("pure epsilon-DP. Along a record's root-to-leaf path the releases "
                    "compose sequentially (one node per depth); nodes of one depth hold "
                    "disjoint records (parallel composition). Total: the sum over the "
                    "ledger of epsilon x count.")

    def _record_fit(self, data, epsilon, budget, plan):
        self.binner_ = data.binner
        self.n_features_in_ = data.n_features
        self.bounds_ = (data.binner.lower.copy(), data.binner.upper.copy())
        self.privacy_leaks_ = list(data.leaks)
        self.epsilon_spent_ = epsilon
        self.delta_spent_ = 0.0
        self.budget_ = dict(budget)
        self.max_depth_ = self._fit_max_depth
        self.privacy_ledger_ = plan.ledger()
        self._record_targets(data)

    def _record_tree(self, plan, budget):
        """Record the releases of one grown tree that a record takes part in: along its
        root-to-leaf path ``max_depth + 1`` noisy counts, ``max_depth`` split choices and
        one leaf release (sensitivities derived in :mod:`dptrees._core._releases`; the
        nodes of one depth hold disjoint records)."""
        d = self._fit_max_depth
        selection = ("permute-and-flip" if self.selection == "permute_and_flip"
                     else "exponential mechanism")
        leaf, mechanism, sensitivity, norm = _LEAF_RELEASES[self._leaf_name()]
        criterion = self._criterion_name()
        plan.record("node counts", "discrete Laplace", 1.0, "L1", count=d + 1,
                    epsilon=budget["count"])
        plan.record(f"split choices ({criterion} utility)", selection,
                    _UTILITY_SENSITIVITY[criterion] + _FLOAT_MARGIN, "utility", count=d,
                    epsilon=budget["split"])
        plan.record(leaf, mechanism, sensitivity, norm, epsilon=budget["leaf"])

    def _codes(self, X):
        check_is_fitted(self, "binner_")
        X = check_features(X, n_features=self.n_features_in_, estimator=self)
        return self.binner_.transform(X)

    def apply(self, X: ArrayLike) -> np.ndarray:
        """Index of the leaf each sample lands in."""
        codes = self._codes(X)
        return self.tree_.apply(codes)

    def get_depth(self) -> int:
        check_is_fitted(self, "tree_")
        return self.tree_.max_depth

    @property
    def feature_importances_(self):
        """Impurity-based importance of each feature, from released values only
        (post-processing, no privacy cost; see :mod:`dptrees._importances`): the
        decrease in squared error or Gini impurity of every split, computed from the
        released noisy counts and leaf values, summed by feature, normalised to 1."""
        check_is_fitted(self, "tree_")
        return ensemble_importances([self.tree_], self.n_features_in_)

    def get_n_leaves(self) -> int:
        check_is_fitted(self, "tree_")
        return self.tree_.n_leaves


class _RegressionTreeMixin(_BaseDPTree):
    """Regression specifics: targets rescaled to [0, 1] by public ``y_bounds``."""

    leaf: Literal["mean", "median"] = param("mean", options("mean", "median"))
    n_target_bins: int = param(64, integers(2, 256))
    y_bounds: TargetBounds = param(None, PUBLIC)

    _task = "regression"
    _fallback_threshold = TREE_FALLBACK_EPS_ROWS

    def _criterion_name(self):
        return "mse" if self.leaf == "mean" else "mae"

    def _leaf_name(self):
        return self.leaf

    def _leaf_noise(self, budget, data):
        if self.leaf == "mean":
            # a leaf's sum of targets centred on 1/2 moves by at most fixed_scale / 2
            leaf_t, leaf_s = _laplace_ratio(data.fixed_scale / 2, budget["leaf"])
            return {"leaf_t": leaf_t, "leaf_s": leaf_s}
        # integer rank scores, sensitivity 1, not monotonic: weight exp(-gap eps / 2)
        eps_num = math.floor(budget["leaf"] * 2**32)
        if eps_num < 1:
            raise ValueError("the leaf budget is below the resolution 2**-32")
        return {"leaf_eps_num": eps_num, "leaf_den": 2 * 2**32}

    def _output_values(self, values, data):
        return data.y_lower + values * (data.y_upper - data.y_lower)

    def _record_targets(self, data):
        self.y_bounds_ = (data.y_lower, data.y_upper)


class _ClassificationTreeMixin(MostProbableClassMixin, _BaseDPTree):
    """Classification specifics: Gini utility, noisy class-count leaves."""

    max_depth: int | Auto = "auto"
    budget_weights: tuple = CLASSIFIER_BUDGET_WEIGHTS
    leaf: Literal["counts", "label"] = param("counts", options("counts", "label"))
    prior_strength: float = param(1.0, NON_NEGATIVE)
    classes: Classes = param(None, PUBLIC)

    _task = "classification"

    def _fallback_rule(self, data):
        """Multiclass only, a threshold per public class (:mod:`dptrees._tree_fallback`):
        a binary tree keeps its budget."""
        return multiclass_threshold(data.n_labels)

    def _fallback_weights(self):
        """Nearly all the fallback's budget to the class counts, which are all it
        predicts from (the root's count only decides whether to split, at depth 0
        never)."""
        return FALLBACK_CLASSIFIER_WEIGHTS

    def _criterion_name(self):
        return "gini"

    def _leaf_name(self):
        return self.leaf

    def _leaf_noise(self, budget, data):
        if self.leaf == "counts":
            # the leaf's count vector: L1 sensitivity 1 (a record is in one class)
            leaf_t, leaf_s = _laplace_ratio(1, budget["leaf"])
            return {"leaf_t": leaf_t, "leaf_s": leaf_s}
        # permute-and-flip on integer class counts: sensitivity 1, monotonic, so the
        # weight is exp(-gap * eps) with no quantisation
        eps_num = math.floor(budget["leaf"] * 2**32)
        if eps_num < 1:
            raise ValueError("the leaf budget is below the resolution 2**-32")
        return {"leaf_eps_num": eps_num, "leaf_den": 2**32}

    def _output_values(self, values, data, prior=None, pseudo_count=0.0):
        """Class probabilities from the noisy counts (post-processing).

        Negative noisy counts are set to 0. With a ``prior`` (a class distribution) and
        ``pseudo_count > 0``, a leaf's probabilities are its clipped counts plus
        ``pseudo_count * prior``, normalised: the leaf is shrunk towards the prior, the
        more the fewer (noisy) records it holds. Without them a leaf whose counts are all
        0 predicts the uniform distribution. Internal nodes (NaN counts) stay NaN.
        """
        counts = np.maximum(values, 0.0)
        if prior is not None and pseudo_count > 0:
            counts = counts + pseudo_count * np.asarray(prior, dtype=float)
        totals = counts.sum(axis=1, keepdims=True)
        uniform = np.full_like(counts, 1.0 / counts.shape[1])
        probs = np.where(totals > 0, counts / np.where(totals > 0, totals, 1.0), uniform)
        probs[np.isnan(values).any(axis=1)] = np.nan
        return probs

    def _post_process(self, trees, budget):
        """Shrink every leaf towards the noisy class prior, in proportion to the noise.

        The prior is the sum of the released noisy class counts of all leaves of all
        ``trees`` (negative sums set to 0, normalised; uniform if nothing is positive):
        the leaves of a tree partition its records, so their noisy counts add up to a
        noisy count of each class. Each leaf then gets ``pseudo_count`` virtual records
        distributed as the prior (:meth:`_output_values`), with

            pseudo_count = prior_strength * sqrt(2) * b * n_classes,

        ``b = 1 / epsilon_leaf`` the discrete Laplace scale of each noisy class count
        (``sqrt(2) b`` its standard deviation). A leaf whose counts are mostly noise thus
        falls back towards the (noisy) prior rather than towards the noise, and at large
        epsilon the pseudo-count vanishes.

        Privacy: this reads only released noisy counts and public quantities (the
        budget, the number of classes, ``prior_strength``): post-processing, no privacy
        cost. ``leaf="label"`` leaves (one released class) are left as they are.
        """
        k = trees[0].noisy_value.shape[1]
        if self.leaf != "counts" or not self.prior_strength > 0:
            self.class_prior_ = None
            self.leaf_pseudo_count_ = 0.0
            return
        sums = np.zeros(k)
        for tree in trees:
            sums += np.nansum(tree.noisy_value, axis=0)
        sums = np.maximum(sums, 0.0)
        prior = sums / sums.sum() if sums.sum() > 0 else np.full(k, 1.0 / k)
        pseudo = float(self.prior_strength) * math.sqrt(2.0) / budget["leaf"] * k
        for tree in trees:
            tree.value = self._output_values(tree.noisy_value, None, prior, pseudo)
        self.class_prior_ = prior
        self.leaf_pseudo_count_ = pseudo

    def _record_targets(self, data):
        self.classes_ = data.classes
        self.n_classes_ = len(data.classes)


_MAX_DEPTH_DOC = """
    max_depth : int, default=5
        Largest depth of a leaf (``l_max`` in Hoang & Nguyen, ``h`` in DiffPETs)."""
_CLASSIFIER_MAX_DEPTH_DOC = """
    max_depth : int or "auto", default="auto"
        Largest depth of a leaf (``l_max`` in Hoang & Nguyen, ``h`` in DiffPETs).
        ``"auto"``: :func:`auto_max_depth` of the tree's epsilon, from 0 (the noisy class
        prior) below epsilon 0.025 to 5 from epsilon 0.4 (a rule in the public epsilon
        only; it was 5 before)."""

# The random_state parameter of the tree estimators (and the forests).
RANDOM_STATE_DOC = """
    random_state : None, int, SeedSequence, BitGenerator or Generator, default=None
        ``None`` uses OS entropy (use it for releases); a seed makes the noise
        reproducible and recomputable by anyone who knows it."""

_TREE_PARAMS_DOC = """
    min_samples_split : float, default=20
        A node splits only if its noisy count is at least this (``N_split``).
    min_samples_leaf : float, default=10
        A split is undone if a child's noisy count is below this (``N_leaf``).
    n_bins : int, default=40
        Bins per feature, equal-width over the public bounds (or see ``bin_edges``);
        ``n_bins - 1`` candidate thresholds per feature (the paper's ``N_range``).
""" + EDGES_PARAMS_DOC + """    selection : {"exponential", "permute_and_flip"}, default="exponential"
        Private split selection; permute-and-flip is never worse in expected utility.
    budget_weights : tuple of 3 floats
        Relative budget of a noisy count, a split choice and a leaf release (see
        :func:`split_tree_budget`). Equal weights are the papers' equal split (the
        regressors' default); the classifiers' default is ``(0.5, 2.0, 1.0)``.
""" + BOUNDS_DOC + """    accountant : BudgetAccountant, optional
        Where the fit's ``epsilon`` is spent; default: the default accountant.
    n_jobs : int, optional
        Threads for binning and for the statistics of large nodes (OpenMP in the compiled
        builder). ``None`` means 1, -1 all cores. The tree does not depend on it: every
        statistic is an exact integer sum.""" + RANDOM_STATE_DOC



@estimator_doc
class DPDecisionTreeRegressor(_RegressionTreeMixin, RegressorMixin, _BaseDPTree):
    __doc__ = """Differentially private greedy regression tree (Hoang & Nguyen 2020).

    Grows a tree top-down on equal-width bins of public feature bounds. Each node
    releases a noisy count (exact discrete Laplace) that decides whether it may split;
    the split is chosen privately among *all* (feature, bin edge) candidates by the
    exponential mechanism or permute-and-flip, with utility minus the squared error
    (``leaf="mean"``) or minus the absolute error (``leaf="median"``); a split whose
    noisy child counts fall below ``min_samples_leaf`` is undone. Leaves release a noisy
    mean (exact Laplace noise on a fixed-point sum, over the node's noisy count) or a
    median chosen by the exponential mechanism.

    Small-budget fallback (:mod:`dptrees._tree_fallback`): the fit first releases a noisy
    record count with 5 % of ``epsilon``; when ``epsilon`` times it is below
    ``TREE_FALLBACK_EPS_ROWS`` the tree is grown to depth 0 (the noisy mean of the
    targets), so that with too little budget it predicts the noisy mean rather than
    noise. The rule reads public inputs and that released count (post-processing).

    Privacy guarantee: ``epsilon``-differential privacy for add/remove-one neighbouring
    datasets, given public ``bounds`` and ``y_bounds``: the count (``0.05 epsilon``) and
    the tree (the rest) compose sequentially. The budget of each of the tree's releases
    is :func:`split_tree_budget` of the rest (sequential along a path, parallel across
    the nodes of a depth); the sensitivities are derived in
    :mod:`dptrees._core._releases`; proofs in ``docs/proofs/index.rst``. The fit spends
    ``epsilon`` from ``accountant``.

    Changes from the paper, to make its guarantee true:

    * the root's noisy count is counted, so each release gets ``epsilon / (2 d + 2)``
      instead of ``epsilon / (2 d + 1)`` (``d = max_depth``);
    * the paper's leaf mean adds ``Lap(1 / (N_leaf beta))`` assuming at least ``N_leaf``
      records, which only a *noisy* count has checked. Here the leaf releases a noisy sum
      of targets centred on the middle of ``y_bounds`` (sensitivity 1/2 in rescaled target
      units) and divides by the already released noisy count: sound for any number of
      records;
    * the paper's median leaf weights intervals between sorted targets with a utility
      scaled by ``N_leaf`` (the same unchecked assumption). Here it is the exponential
      mechanism over ``n_target_bins`` bin centres with the rank utility
      ``-|#below - #above|`` (sensitivity 1);
    * the absolute-error utility is computed on targets rounded to ``n_target_bins`` bin
      centres (its sensitivity stays 1);
    * noise and selection are exact (integer samplers), not floating point.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy budget of the fit.""" + _MAX_DEPTH_DOC + _TREE_PARAMS_DOC + """
    leaf : {"mean", "median"}, default="mean"
        Leaf value; also sets the split utility (squared error for mean leaves, absolute
        error for median leaves), as in the paper.
    n_target_bins : int, default=64
        Bins of the rescaled target for the absolute-error utility and median leaves.
    y_bounds : tuple (lower, upper), optional
        Public target bounds; targets are clipped to them. Omitted: read from the data,
        with a ``PrivacyLeakWarning``.

    Attributes
    ----------
    tree_ : Tree
        The fitted tree (node arrays).
    epsilon_spent_, delta_spent_ : float
        The fit's guarantee (``delta_spent_`` is 0: pure DP).
    privacy_ledger_ : list of dict
        Each kind of release: mechanism, sensitivity, epsilon, and how many a record
        takes part in (:meth:`privacy_report` prints it).
    budget_ : dict
        Epsilon of each kind of release (``"count"``, ``"split"``, ``"leaf"``).
    privacy_leaks_ : list of str
        Public inputs that were read from the data (empty for a DP fit).
    n_features_in_ : int
    bounds_ : tuple of ndarray
    y_bounds_ : tuple of float
    """


    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predicted targets: the released value of each sample's leaf.

        Prediction is post-processing of the released tree and costs no privacy.
        """
        codes = self._codes(X)
        return self.tree_.predict(codes)


@estimator_doc
class DPDecisionTreeClassifier(_ClassificationTreeMixin, ClassifierMixin, _BaseDPTree):
    __doc__ = """Differentially private greedy classification tree.

    The classification twin of :class:`DPDecisionTreeRegressor`: noisy counts decide
    where to stop, splits are chosen privately among all (feature, bin edge) candidates
    with the Gini utility ``-sum_children n_child Gini(child)`` (sensitivity 2, monotonic:
    see :mod:`dptrees._core._releases`), and each leaf releases its per-class counts with
    exact discrete Laplace noise (L1 sensitivity 1). ``predict_proba`` normalises a leaf's
    noisy counts (negative ones set to 0); ``predict`` takes the most probable class.

    Small-budget fallback, with more than two classes (:mod:`dptrees._tree_fallback`):
    the fit first releases a noisy record count with 5 % of ``epsilon``; when
    ``epsilon`` times it is below ``CLASSIFIER_FALLBACK_EPS_ROWS_PER_CLASS`` times the
    number of classes, the tree is grown to depth 0 (the noisy class counts: it predicts
    their most frequent class). A binary tree releases no such count.

    Privacy guarantee: ``epsilon``-differential privacy for add/remove-one neighbouring
    datasets, given public ``bounds`` and ``classes``; budget per release as
    :func:`split_tree_budget` (of what the fallback rule's count leaves). The fit spends
    ``epsilon`` from ``accountant``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy budget of the fit.""" + _CLASSIFIER_MAX_DEPTH_DOC + _TREE_PARAMS_DOC + """
    leaf : {"counts", "label"}, default="counts"
        ``"counts"``: each leaf releases its class counts with discrete Laplace noise and
        ``predict_proba`` normalises them. ``"label"``: each leaf releases only its majority
        class, chosen by permute-and-flip (``predict_proba`` is then 0/1).""" + """
    prior_strength : float >= 0, default=1.0
        With ``leaf="counts"``, shrink each leaf's class distribution towards the noisy
        class prior (the sum of all released leaf counts) with ``prior_strength * sqrt(2)
        * n_classes / epsilon_leaf`` virtual records, a multiple of the noise of the
        leaf's counts (post-processing, no privacy cost; see ``_post_process``). 0: off
        (the behaviour before). A leaf that holds mostly noise then predicts the prior
        instead of a random class: on 2,000-8,000-row samples of Adult this removed most
        fits below the majority class at epsilon 0.05-1, at a cost below 0.002 in mean
        accuracy. Averaging many trees shrinks too: with many trees at small epsilon
        (``n_estimators`` set by hand) a smaller value may predict better.
    classes : array-like, optional
        The public list of classes. Omitted: read from the data, with a
        ``PrivacyLeakWarning``. Labels outside it are an error.

    Attributes
    ----------
    tree_ : Tree
        The fitted tree; ``tree_.value`` holds each node's class probabilities.
    classes_ : ndarray
    n_classes_ : int
    max_depth_ : int
        The depth limit used (``max_depth``, or its ``"auto"`` value).
    class_prior_ : ndarray or None
        The noisy class prior leaves were shrunk towards (None if ``prior_strength=0``).
    leaf_pseudo_count_ : float
        The number of virtual prior records added to each leaf.
    epsilon_spent_, delta_spent_, privacy_ledger_, budget_, privacy_leaks_, n_features_in_,
    bounds_
        As for :class:`DPDecisionTreeRegressor`.
    """


    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Class probabilities of each sample's leaf (post-processing: no privacy cost)."""
        codes = self._codes(X)
        return self.tree_.predict(codes)
