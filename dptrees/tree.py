"""Differentially private decision trees.

:class:`DPDecisionTreeRegressor` is the DP greedy regression tree of Hoang & Nguyen
(2020, "Differentially private regression tree and forest"), built on the compiled engine
in :mod:`dptrees._core._builder`. What each node releases, and the sensitivity of each
release, is documented there; this module decides the budget of each kind of release.
"""

import math
import numbers

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from dptrees._binning import Binner
from dptrees._core import _binning
from dptrees._core._builder import RegressionTreeBuilder
from dptrees._random import check_random_state
from dptrees._tree_structure import Tree
from dptrees.accounting import check_accountant
from dptrees.mechanisms import _laplace_ratio, selection_constants
from dptrees.validation import (
    check_bounds,
    check_epsilon,
    check_features,
    check_in,
    check_positive_int,
    check_targets_regression,
    check_y_bounds,
    clip,
)

__all__ = ["DPDecisionTreeRegressor", "split_tree_budget"]

# Targets are rescaled to [0, 1] and held as rint(y * 2**31): int64 sums of up to 2**31
# rows cannot overflow, and a leaf sum moves by at most 2**31 units per record.
_FIXED_BITS = 31
_MAX_ROWS = 2**31 - 1
# Split utilities are sums of a few float64 terms of magnitude at most the node size
# (< 2**31); their rounding error is below 2**-19, so adding 2**-17 to the sensitivity of
# 1 covers the error of the utilities of both neighbouring datasets.
_UTILITY_SENSITIVITY = 1.0 + 2.0**-17


def split_tree_budget(epsilon, max_depth, weights=(1.0, 1.0, 1.0)):
    """Per-release budgets of a DP tree of depth ``max_depth`` with total ``epsilon``.

    Along any root-to-leaf path a record meets at most ``max_depth + 1`` noisy counts
    (one per depth), ``max_depth`` split choices and one leaf value. Nodes of one depth
    hold disjoint records (parallel composition), so the worst path is what a record
    pays: with weights ``(w_count, w_split, w_leaf)`` the unit is
    ``epsilon / ((max_depth + 1) w_count + max_depth w_split + w_leaf)`` and each release
    gets its weight times the unit. The total is exactly ``epsilon`` (sequential
    composition along the path).

    With equal weights this is ``epsilon / (2 max_depth + 2)`` per release. The paper
    states ``epsilon / (2 l_max + 1)``: it does not count the root's noisy count, which
    also touches every record. We count it.

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


class _PreparedRegression:
    """Validated, binned, fixed-point training data shared by trees and forests."""

    def __init__(self, estimator, X, y):
        X = check_features(X)
        y = check_targets_regression(y, X.shape[0])
        if X.shape[0] > _MAX_ROWS:
            raise ValueError(f"at most {_MAX_ROWS} rows are supported, got {X.shape[0]}")
        self.leaks = []
        bounds = check_bounds(estimator.bounds, X, n_features=X.shape[1])
        y_bounds = check_y_bounds(estimator.y_bounds, y)
        for record in (bounds, y_bounds):
            if record.leak is not None:
                self.leaks.append(record.leak)
        self.binner = Binner(bounds.lower, bounds.upper, estimator.n_bins)
        self.codes = self.binner.transform(X)
        self.y_lower, self.y_upper = y_bounds.lower, y_bounds.upper
        y01 = (clip(y, self.y_lower, self.y_upper) - self.y_lower) / (self.y_upper - self.y_lower)
        y01 = np.clip(y01, 0.0, 1.0)  # guards the last ulp of the division
        self.fixed_scale = 2.0**_FIXED_BITS
        self.y_fixed = np.rint(y01 * self.fixed_scale).astype(np.int64)
        self.y_codes = np.empty(y01.shape[0], dtype=np.uint8)
        _binning.bin_values(y01, 0.0, 1.0, estimator.n_target_bins, self.y_codes)
        self.n_features = X.shape[1]

    def subset(self, rows):
        """The same prepared data restricted to ``rows`` (a copy, contiguous)."""
        part = object.__new__(_PreparedRegression)
        part.__dict__.update(self.__dict__)
        part.codes = np.ascontiguousarray(self.codes[rows])
        part.y_fixed = np.ascontiguousarray(self.y_fixed[rows])
        part.y_codes = np.ascontiguousarray(self.y_codes[rows])
        return part


class DPDecisionTreeRegressor(RegressorMixin, BaseEstimator):
    """Differentially private greedy regression tree (Hoang & Nguyen 2020).

    Grows a tree top-down on equal-width bins of public feature bounds. Each node
    releases a noisy count (exact discrete Laplace) that decides whether it may split;
    the split is chosen privately among *all* (feature, bin edge) candidates by the
    exponential mechanism or permute-and-flip, with utility minus the squared error
    (``leaf="mean"``) or minus the absolute error (``leaf="median"``); a split whose
    noisy child counts fall below ``min_samples_leaf`` is undone. Leaves release a noisy
    mean (exact Laplace noise on a fixed-point sum, over the node's noisy count) or a
    median chosen by the exponential mechanism.

    Privacy guarantee: ``epsilon``-differential privacy for add/remove-one neighbouring
    datasets, given public ``bounds`` and ``y_bounds``. The budget of each release is
    :func:`split_tree_budget` (sequential along a path, parallel across the nodes of a
    depth); the sensitivities are derived in :mod:`dptrees._core._builder`. The fit
    spends ``epsilon`` from ``accountant``.

    Changes from the paper, to make its guarantee true:

    * the root's noisy count is counted, so each release gets ``epsilon / (2 d + 2)``
      instead of ``epsilon / (2 d + 1)`` (``d = max_depth``);
    * the paper's leaf mean adds ``Lap(1 / (N_leaf beta))`` assuming at least ``N_leaf``
      records, which only a *noisy* count has checked. Here the leaf releases a noisy sum
      (sensitivity 1 in target units) and divides by the already released noisy count:
      sound for any number of records;
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
        Total privacy budget of the fit.
    max_depth : int, default=5
        ``l_max`` of the paper.
    min_samples_split : float, default=20
        ``N_split``: a node splits only if its noisy count is at least this.
    min_samples_leaf : float, default=10
        ``N_leaf``: a split is undone if a child's noisy count is below this.
    n_bins : int, default=40
        Equal-width bins per feature (``n_bins - 1`` candidate thresholds; the paper's
        ``N_range``).
    leaf : {"mean", "median"}, default="mean"
        Leaf value; also sets the split utility (squared error for mean leaves, absolute
        error for median leaves), as in the paper.
    selection : {"exponential", "permute_and_flip"}, default="exponential"
        Private split selection. Permute-and-flip is never worse in expected utility.
    budget_weights : tuple of 3 floats, default=(1.0, 1.0, 1.0)
        Relative budget of a noisy count, a split choice and a leaf value (see
        :func:`split_tree_budget`). Equal weights are the paper's equal split; weighting
        leaves more is the option its authors suggest.
    n_target_bins : int, default=64
        Bins of the rescaled target for the absolute-error utility and median leaves.
    bounds : tuple (lower, upper), optional
        Public feature bounds (scalars or arrays of length ``n_features``). If omitted
        they are read from the data with a ``PrivacyLeakWarning``: the model is then not DP.
    y_bounds : tuple (lower, upper), optional
        Public target bounds; targets are clipped to them. Omitted: read from the data,
        with a ``PrivacyLeakWarning``.
    accountant : BudgetAccountant, optional
        Where the fit's ``epsilon`` is spent; default: the default accountant.
    random_state : None, int, SeedSequence, BitGenerator or Generator, default=None
        ``None`` uses OS entropy (use it for releases); a seed makes the noise
        reproducible and recomputable by anyone who knows it.

    Attributes
    ----------
    tree_ : Tree
        The fitted tree (node arrays).
    epsilon_spent_ : float
    budget_ : dict
        Epsilon of each kind of release (``"count"``, ``"split"``, ``"leaf"``).
    privacy_leaks_ : list of str
        Public inputs that were read from the data (empty for a DP fit).
    n_features_in_ : int
    bounds_ : tuple of ndarray
    y_bounds_ : tuple of float
    """

    def __init__(self, epsilon=1.0, *, max_depth=5, min_samples_split=20, min_samples_leaf=10,
                 n_bins=40, leaf="mean", selection="exponential",
                 budget_weights=(1.0, 1.0, 1.0), n_target_bins=64, bounds=None, y_bounds=None,
                 accountant=None, random_state=None):
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.n_bins = n_bins
        self.leaf = leaf
        self.selection = selection
        self.budget_weights = budget_weights
        self.n_target_bins = n_target_bins
        self.bounds = bounds
        self.y_bounds = y_bounds
        self.accountant = accountant
        self.random_state = random_state

    # -- parameters --------------------------------------------------------------------

    def _check_params(self):
        epsilon = check_epsilon(self.epsilon)
        check_positive_int(self.max_depth, "max_depth", minimum=0, maximum=64)
        check_positive_int(self.n_bins, "n_bins", minimum=2, maximum=256)
        check_positive_int(self.n_target_bins, "n_target_bins", minimum=2, maximum=256)
        check_in(self.leaf, "leaf", ("mean", "median"))
        check_in(self.selection, "selection", ("exponential", "permute_and_flip"))
        for name in ("min_samples_split", "min_samples_leaf"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
                math.isfinite(value) and value >= 0
            ):
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        weights = self.budget_weights
        if not (isinstance(weights, (tuple, list)) and len(weights) == 3):
            raise ValueError(f"budget_weights must be 3 numbers (count, split, leaf), got {weights!r}")
        return epsilon, split_tree_budget(epsilon, self.max_depth, weights)

    def _builder(self, budget, fixed_scale):
        """A compiled builder whose exact noise parameters realise ``budget``."""
        count_t, count_s = _laplace_ratio(1, budget["count"])  # counts: sensitivity 1
        split_q, split_eps_num, split_den = selection_constants(
            _UTILITY_SENSITIVITY, budget["split"], monotonic=True
        )
        leaf_args = {}
        if self.leaf == "mean":
            # a leaf's fixed-point sum moves by at most fixed_scale (a target of 1)
            leaf_args["leaf_t"], leaf_args["leaf_s"] = _laplace_ratio(fixed_scale, budget["leaf"])
        else:
            # integer rank scores, sensitivity 1, not monotonic: weight exp(-gap eps / 2)
            leaf_args["leaf_eps_num"] = math.floor(budget["leaf"] * 2**32)
            leaf_args["leaf_den"] = 2 * 2**32
            if leaf_args["leaf_eps_num"] < 1:
                raise ValueError("the leaf budget is below the resolution 2**-32")
        return RegressionTreeBuilder(
            n_bins=self.n_bins, n_y_bins=self.n_target_bins, max_depth=self.max_depth,
            criterion="mse" if self.leaf == "mean" else "mae", leaf=self.leaf,
            selection=self.selection, min_samples_split=float(self.min_samples_split),
            min_samples_leaf=float(self.min_samples_leaf), fixed_scale=fixed_scale,
            count_t=count_t, count_s=count_s, split_q=split_q, split_eps_num=split_eps_num,
            split_den=split_den, **leaf_args,
        )

    def _grow(self, data, budget, rng):
        """Build one tree on prepared data; returns a :class:`Tree` in target units."""
        nodes = self._builder(budget, data.fixed_scale).build(
            rng, data.codes, data.y_fixed, data.y_codes
        )
        is_split = nodes["left"] != -1
        threshold = np.full(nodes["feature"].shape[0], np.nan)
        threshold[is_split] = data.binner.thresholds(
            nodes["feature"][is_split], nodes["bin_threshold"][is_split]
        )
        value = data.y_lower + nodes.pop("value") * (data.y_upper - data.y_lower)
        return Tree(threshold=threshold, value=value, **nodes)

    # -- estimator API -----------------------------------------------------------------

    def fit(self, X, y):
        """Fit the tree, spending ``epsilon`` from the accountant.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        epsilon, budget = self._check_params()
        accountant = check_accountant(self.accountant)
        data = _PreparedRegression(self, X, y)
        rng = check_random_state(self.random_state)
        accountant.spend(epsilon, label=type(self).__name__)
        self.tree_ = self._grow(data, budget, rng)
        self._record_fit(data, epsilon, budget)
        return self

    def _record_fit(self, data, epsilon, budget):
        self.binner_ = data.binner
        self.n_features_in_ = data.n_features
        self.bounds_ = (data.binner.lower.copy(), data.binner.upper.copy())
        self.y_bounds_ = (data.y_lower, data.y_upper)
        self.privacy_leaks_ = list(data.leaks)
        self.epsilon_spent_ = epsilon
        self.budget_ = dict(budget)

    def _codes(self, X):
        check_is_fitted(self, "binner_")
        X = check_features(X, n_features=self.n_features_in_, estimator=self)
        return self.binner_.transform(X)

    def apply(self, X):
        """Index of the leaf each sample lands in."""
        return self.tree_.apply(self._codes(X))

    def predict(self, X):
        """Predicted targets: the released value of each sample's leaf.

        Prediction is post-processing of the released tree and costs no privacy.
        """
        return self.tree_.predict(self._codes(X))

    def get_depth(self):
        check_is_fitted(self, "tree_")
        return self.tree_.max_depth

    def get_n_leaves(self):
        check_is_fitted(self, "tree_")
        return self.tree_.n_leaves
