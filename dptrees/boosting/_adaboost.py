"""DP AdaBoost (SAMME) with noisy sample-weight schedules (Zhang, Dong, Xu & Wang).

See :class:`DPAdaBoostClassifier` for the algorithm, the privacy guarantee and every
sensitivity; the weak learner is :func:`dptrees.boosting._weak_learners.fit_weighted_tree`
and the schedules live in :mod:`dptrees.boosting._schedules`.
"""

from collections.abc import Iterator
import math
from typing import Literal, NamedTuple, Self

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from dptrees._constraints import (
    ACCOUNTANT,
    AUTO,
    BOOLEAN,
    EPSILON,
    N_JOBS,
    PUBLIC,
    RANDOM_STATE,
    integers,
    options,
    reals,
    validate_params,
)
from dptrees._docs import estimator_doc
from dptrees._lifecycle import run_fit
from dptrees._importances import ensemble_importances
from dptrees._params import (
    Accountant, Auto, BinEdges, Bounds, Classes, DeclaredParams, RandomStateLike, param,
)
from dptrees.privacy.release_plan import ReleasePlan
from dptrees.data.private_edges import BIN_EDGES, EDGES_BUDGET, EDGES_PARAMS_DOC, reserve_edges
from dptrees.privacy.report import PrivacyReportMixin
from dptrees.data.prepare import prepare
from dptrees.data.tables import BOUNDS_DOC, TableColumnsMixin, keeps_columns_on_failure
from dptrees.accounting import AccountantMixin
from dptrees.boosting._schedules import SCHEDULES, draw_schedule
from dptrees.boosting._weak_learners import (
    WEIGHT_GRID,
    WeightedRows,
    fit_weighted_tree,
    learner_budget,
)
from dptrees.boosting._weight_range import WeightRange, _ceil_grid, noisy_weight_range
from dptrees.mechanisms import noisy_count
from dptrees.validation import (
    check_epsilon,
    check_features,
)

__all__ = ["DPAdaBoostClassifier", "WeightRange", "noisy_weight_range"]

#: Share of ``epsilon`` spent on the one noisy record count (only if some round is noisy).
COUNT_SHARE = 0.02
#: Share of a noisy round's budget given to the noisy max in the first noisy round.
FIRST_MAX_SHARE = 2.0 / 3.0
#: The max's share in later noisy rounds, ``high / (high + low)`` of the previous noisy
#: round, is kept in this range.
MAX_SHARE_RANGE = (0.5, 0.9)
#: The weighted error used for alpha is clipped below at this (public) value: an error
#: estimated from noisy totals near 0 is not credible, and alpha at most log(19) +
#: log(K - 1) keeps one lucky learner from outvoting the rest.
MIN_ERROR = 0.05
#: With ``prior_vote``: a weak learner's leaf whose two largest noisy totals differ by
#: less than this many standard deviations of that difference's noise predicts the prior
#: class (its label would be a coin flip of the noise).
LEAF_MARGIN = 1.0
#: Smallest budget of a single release; below it the exact samplers lose resolution.
_MIN_RELEASE_EPSILON = 2.0**-28
#: Per-release budgets are shrunk by this factor so that their float sum is <= epsilon.
_SAFETY = 1.0 - 2.0**-40
_MAX_WEIGHT_LIMIT = 2.0**20  # n * max_weight < 2**51 keeps grid sums exact


# --------------------------------------------------------------------------------------
# Parameters, data and budget


class _Params(NamedTuple):
    epsilon: float
    n_estimators: int
    schedule: str
    max_depth: int
    weight_budget_fraction: float
    max_weight: float
    learning_rate: float
    n_bins: int
    error_margin: float
    prior_vote: bool


class _Budgets(NamedTuple):
    """Budget of every kind of release (see :meth:`DPAdaBoostClassifier._budgets`)."""

    count: float
    per_noisy_round: float
    per_learner: float
    split: float
    leaf: float
    n_noisy: int


# --------------------------------------------------------------------------------------
# The estimator


@estimator_doc
class DPAdaBoostClassifier(PrivacyReportMixin, TableColumnsMixin, ClassifierMixin,
                           AccountantMixin, DeclaredParams, BaseEstimator):
    __doc__ = """Differentially private AdaBoost (SAMME) with noisy weight schedules.

    The DPAda family of Zhang, Dong, Xu & Wang ("AdaBoost based on objective
    perturbation", ``shared/seeds.md`` section 3): multiclass AdaBoost (SAMME) whose
    largest and smallest sample weights are released with Laplace noise in the rounds
    picked by a *schedule* (``"every"`` = DPAda, ``"swing"`` = DPAda_Swing, ``"random"``
    = DPAda_Random, ``"improved"`` = DPAda_Improved), with DP weak learners.

    Privacy guarantee
    -----------------
    ``fit`` is ``epsilon``-DP (pure, delta = 0) for **add/remove-one** neighbouring
    datasets, given public ``bounds``, ``classes`` and hyper-parameters, by sequential
    composition of the releases below; it spends ``epsilon`` once from the accountant
    (before any release) and records it in ``epsilon_spent_``, with the budget of every
    single release in ``privacy_ledger_`` and a summary in ``budget_``. If ``bounds`` or
    ``classes`` is omitted it is read from the data, a ``PrivacyLeakWarning`` is issued,
    ``privacy_leaks_`` records it and the model is **not** DP.

    Budget split (``B = epsilon``, ``m = n_estimators``, ``R`` noisy rounds):

    * ``COUNT_SHARE * B`` (2 %) for one noisy record count ``n~`` (discrete Laplace on
      the count in units of the weight grid ``2**-20``, sensitivity ``2**20`` units, i.e.
      1 record), released once at the start and used only to build the public mean
      reference of the guard; released only if ``R > 0``;
    * ``weight_budget_fraction * B`` split equally over the ``R`` noisy rounds (if
      ``R = 0`` this share, and the count's, go to the learners);
    * the rest split equally over the ``m`` weak learners; within a learner, equally over
      its ``max_depth`` split levels and its leaf release.

    Every per-release budget is multiplied by ``1 - 2**-40`` so that their floating-point
    sum never exceeds ``epsilon``.

    The algorithm, and what was changed to make the guarantee true
    ----------------------------------------------------------------
    The paper's proof adds up the budgets of the weight releases only: its weak learners
    read the raw (weighted) data without noise, its sensitivity of the max/min weight is
    "dynamic", i.e. computed from the private weights, and normalised AdaBoost weights
    depend on every record through the normalising total. We keep the structure (SAMME,
    noisy max/min weights with a dynamic budget favouring the max, the four schedules,
    noise from round 2) and change:

    1. **Per-record weights in a public range.** Unnormalised SAMME weights ``u_i`` start
       at 1; after learner ``k`` the *correctly* classified records are multiplied by
       ``exp(-alpha_k)`` (SAMME's ``exp(alpha_k)`` on the misclassified ones, divided
       through by ``exp(alpha_k)``: SAMME normalises anyway, so the argmin of the weighted
       error and ``alpha`` are unchanged). Weights then lie in the public range
       ``[L_{k+1}, W_k]`` with ``L_{k+1} = max(L_k exp(-alpha_k), 1 / max_weight)`` and
       never grow, so one record weighs at most 1 and the learners' sensitivity never
       exceeds 1 (growing weights with a growing public bound made the learners'
       sensitivity outrun their signal after a few dozen rounds). The floor
       ``1 / max_weight`` is a smooth-boosting style cap on the ratio of the largest to
       the smallest weight (Servedio 2003). Weights are rounded to the grid ``2**-20`` so
       weighted sums are exact. They are never normalised by a private total, so a
       record's weight is a function of that record and the released history only, and
       removing a record never changes another record's weight.
    2. **Schedule drawn up front.** The schedule reads no data and is drawn from the
       random stream at the start of ``fit``, so ``R`` is known before any release and the
       budget is split in advance. Round 1 is never noisy.
    3. **Noisy max/min weights (DPweight_dynamic)** in the scheduled rounds: the max and
       the min of the current weights, each with the exact Laplace mechanism at
       sensitivity ``W_k - L_k < 1`` (weights lie in the public ``[L_k, W_k]``;
       adding a record moves the max or the min by at most the range's width, see
       :func:`noisy_weight_range`) instead of the paper's data-dependent sensitivity. The
       round's budget is split "dynamically" from public values only: the max gets
       ``FIRST_MAX_SHARE`` (2/3) in the first noisy round and ``high / (high + low)`` of
       the previous noisy round's released range later (kept in ``MAX_SHARE_RANGE``). The
       paper's guard -- noisy max at or above the mean weight, noisy min at or below it --
       uses a public *mean reference* instead of the exact mean: the previous learner's
       noisy leaf totals, split into correctly and wrongly labelled weight ``C`` and ``E``,
       give the updated total ``C exp(-alpha) + E``, divided by ``n~``. Both values are
       also kept in ``[L_k, W_k]``. The weights are then clipped into ``[low, high]`` and
       divided by ``high`` (a released number; SAMME is invariant to a common factor), so
       the largest weight is 1 again and the learners' sensitivity, 1, stays in scale with
       their signal, the total weight: that is what the release buys. Without it every
       weight decays to the floor once each record has been classified correctly a few
       times, and boosting stalls.
    4. **DP weak learners** (:func:`~dptrees.boosting._weak_learners.fit_weighted_tree`):
       a tree of depth ``max_depth`` on weighted records over public equal-width bins.
       Split choice by permute-and-flip with utility minus the weighted misclassification
       error of the children's majority labels (sensitivity ``W_k``, monotonic); leaves
       release Laplace-noised weighted class totals (L1 sensitivity ``W_k``). Levels
       compose in parallel across their disjoint nodes.
    5. **Error and alpha by post-processing.** The weighted error ``err`` is computed from
       the learner's noisy leaf totals (no extra release), clipped below at ``MIN_ERROR``;
       a learner with ``err >= (K - 1) / K`` (or with no positive noisy total) gets
       ``alpha = 0``; otherwise ``alpha = learning_rate (log((1 - err) / err) + log(K - 1))``.
       ``err`` is first raised to ``err + error_margin sigma_T / T``, where ``T`` is the
       noisy total weight of the leaves and ``sigma_T`` the (public) standard deviation
       of its noise: a learner whose edge is within the noise gets no say. With
       ``prior_vote``, the constant classifier of the largest noisy class count votes
       too (both post-processing; the paper's plain vote is ``prior_vote=False,
       error_margin=0``).
       Boosting never stops early: all ``m`` learners are fitted (their budget is spent).

    **Sample weights** ``s_i`` in [0, 1] (``fit(X, y, sample_weight)``): a learner counts
    record ``i`` with ``s_i u_i`` (rounded down to the grid), at most ``u_i``, so every
    sensitivity above holds unchanged; the record count ``n~`` is the total sample
    weight (one record moves it by at most 1), and the noisy max/min weight is taken
    over the records of positive weight (a record of weight 0 moves nothing: it is
    removed). ``u_i`` itself evolves as without sample weights.

    Parameters
    ----------
    n_estimators : int or "auto", default="auto"
        Number of boosting rounds ``m`` (weak learners). "auto": ``round(20 epsilon)``
        in [2, 50], 1 below epsilon 0.025 (:func:`auto_n_estimators`; the paper used 50).
    epsilon : float, default=1.0
        Total privacy budget ``B``.
    schedule : {"every", "swing", "random", "improved"}, default="improved"
        In which rounds the max/min weights are released (see
        :mod:`dptrees.boosting._schedules`).
    max_depth : int, default=1
        Depth of the weak learners (1 = decision stump), at most 8.
    weight_budget_fraction : float, default=0.1
        Share of ``epsilon`` spent on the noisy max/min weights of the ``R`` noisy rounds
        (the paper's split between weights and learners), in (0, 1 - COUNT_SHARE).
    max_weight : float, default=100.0
        Public cap on the ratio of the largest to the smallest weight, in [1, 2**20]:
        weights stay in ``[1 / max_weight, 1]``. A small cap can make boosting cycle (once
        the easy records sit at the floor the same weak learner keeps winning); a large one
        lets the total weight, the learners' signal, fall towards their noise. 100 was
        best of {10, 100, 1e3, 1e4} on a validation split of Adult's training file.
    learning_rate : float, default=1.0
        Multiplies every ``alpha_k``; > 0.
    n_bins : int, default=32
        Bins per feature, in [2, 256]: equal-width over the public bounds, or (see
        ``bin_edges``) at private quantiles.
""" + EDGES_PARAMS_DOC + """    prior_vote : bool, default=True
        Add the vote of the constant classifier that predicts the largest noisy class
        count (the first learner's leaf totals summed: post-processing, no budget), with
        the SAMME weight of its noisy error. With too little budget the learners' noisy
        votes then cannot pull the model below the majority class; with enough, they
        outvote it. False: the paper's plain SAMME vote (equal weights if every
        learner is useless).
    error_margin : float, default=0.0
        The weighted error behind every ``alpha`` is raised by this many standard
        deviations of the noise on the learner's total weight, relative to its noisy total
        (public noise, post-processing): a learner fitted on weights that have decayed
        into the noise, or whose edge is within it, gets ``alpha = 0`` and changes no
        weight. 0 (the paper's alpha): on a validation split of Adult's training file a
        margin of 1 or 3 raised the ROC AUC a little at epsilon 0.5-1 but lowered the
        accuracy by 1-3 points, with ``n_estimators="auto"``.
""" + BOUNDS_DOC + """    classes : array-like, optional
        The public list of classes (at least 2). Omitted: read from ``y`` with a
        ``PrivacyLeakWarning`` (not DP).
    accountant : BudgetAccountant, optional
        Where ``epsilon`` is spent; default: the default accountant.
    n_jobs : int, optional
        Threads over blocks of rows for the weighted histograms and weight updates
        (``None`` means 1, -1 all cores). The model does not depend on it: the
        statistics are exact integer sums.
    random_state : None, int, SeedSequence, BitGenerator or Generator, default=None
        ``None`` uses OS entropy (use it for releases); a seed makes the fit reproducible
        (for tests and research only).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    n_features_in_ : int
    learners_ : list of WeightedTree
        The released weak learners.
    estimator_weights_ : ndarray of shape (n_estimators,)
        ``alpha_k`` (0 for useless learners).
    estimator_errors_ : ndarray of shape (n_estimators,)
        Noisy weighted error of each learner (post-processing of its leaf totals).
    n_estimators_ : int
    noisy_rounds_ : ndarray of bool, shape (n_estimators,)
        The drawn schedule (entry ``k`` = round ``k + 1``).
    n_noisy_rounds_ : int
    weight_bounds_ : ndarray of shape (n_estimators, 2)
        Public ``(L_k, W_k)`` of each round's weights; ``W_k`` is the learner's sensitivity.
    weight_ranges_ : ndarray of shape (n_estimators, 4)
        ``(raw_max, raw_min, high, low)`` released in the noisy rounds, NaN elsewhere.
    noisy_count_ : float or None
        The released record count, or total sample weight (None if ``R = 0``).
    epsilon_spent_ : float
    budget_ : dict
        Budget of each kind of release.
    privacy_ledger_ : list of dict
        Every release of the fit (:func:`dptrees.privacy.report.ledger_entry`: mechanism,
        sensitivity, epsilon); the epsilons compose (sequentially) to at most
        ``epsilon_spent_``. :meth:`privacy_report` prints it.
    privacy_leaks_ : list of str
    bounds_ : tuple of ndarray
    binner_ : Binner
    """

    n_estimators: int | Auto = param("auto", integers(1, 100_000), AUTO)
    epsilon: float = param(1.0, EPSILON)
    schedule: Literal["every", "swing", "random", "improved"] = param(
        "improved", options(*SCHEDULES))
    max_depth: int = param(1, integers(1, 8))
    weight_budget_fraction: float = param(0.1, reals(0, 1 - COUNT_SHARE, "neither"))
    max_weight: float = param(100.0, reals(1, _MAX_WEIGHT_LIMIT, "both"))
    learning_rate: float = param(1.0, reals(0, 1e6, "right"))
    n_bins: int = param(32, integers(2, 256))
    bin_edges: BinEdges = param("uniform", BIN_EDGES)
    edges_budget: float | Auto = param("auto", EDGES_BUDGET)
    prior_vote: bool = param(True, BOOLEAN)
    error_margin: float = param(0.0, reals(0, 1e6, "both"))
    bounds: Bounds = param(None, PUBLIC)
    classes: Classes = param(None, PUBLIC)
    accountant: Accountant = param(None, ACCOUNTANT)
    n_jobs: int | None = param(None, N_JOBS)
    random_state: RandomStateLike = param(None, RANDOM_STATE)

    # ---------------------------------------------------------------- validation / plan

    def _check_params(self):
        """Validate the parameters (their constraints, then epsilon's privacy rule)
        before anything is read or spent; returns them resolved."""
        validate_params(self)
        epsilon = check_epsilon(self.epsilon)
        n_estimators = (auto_n_estimators(epsilon) if isinstance(self.n_estimators, str)
                        else int(self.n_estimators))
        return _Params(
            epsilon=epsilon,
            n_estimators=n_estimators,
            schedule=self.schedule,
            max_depth=int(self.max_depth),
            weight_budget_fraction=float(self.weight_budget_fraction),
            max_weight=float(self.max_weight),
            learning_rate=float(self.learning_rate),
            n_bins=int(self.n_bins),
            error_margin=float(self.error_margin),
            prior_vote=bool(self.prior_vote),
        )

    @staticmethod
    def _budgets(params, noisy_rounds):
        """Per-release budgets; raises ``ValueError`` (before any spend) if unrealisable."""
        eps, m = params.epsilon, params.n_estimators
        n_noisy = int(np.count_nonzero(noisy_rounds))
        if n_noisy > 0:
            count = COUNT_SHARE * eps
            weights = params.weight_budget_fraction * eps
            per_round = weights / n_noisy
        else:
            count = weights = per_round = 0.0
        per_learner = (eps - count - weights) / m
        levels = learner_budget(per_learner, params.max_depth)
        budgets = _Budgets(count=count * _SAFETY, per_noisy_round=per_round * _SAFETY,
                           per_learner=per_learner * _SAFETY, split=levels["split"] * _SAFETY,
                           leaf=levels["leaf"] * _SAFETY, n_noisy=n_noisy)
        smallest = [budgets.split, budgets.leaf]
        if n_noisy:
            smallest += [budgets.count, budgets.per_noisy_round * (1.0 - MAX_SHARE_RANGE[1])]
        if min(smallest) < _MIN_RELEASE_EPSILON:
            raise ValueError(
                f"epsilon={params.epsilon!r} is too small for n_estimators={m} and "
                f"max_depth={params.max_depth}: a single release would get "
                f"{min(smallest):.3g} < {_MIN_RELEASE_EPSILON:.3g}"
            )
        return budgets

    def _draw_plan(self, params, rng):
        """Schedule (reads no data) and budgets, from the start of the random stream."""
        schedule_rng, boost_rng = rng.spawn(2)
        noisy_rounds = draw_schedule(params.schedule, params.n_estimators, schedule_rng)
        return noisy_rounds, self._budgets(params, noisy_rounds), boost_rng

    # ---------------------------------------------------------------- fitting

    _composition = ("pure epsilon-DP: every record takes part in every round (sequential "
                    "composition); within a learner, nodes of a level hold disjoint records "
                    "(parallel composition), so a record pays one split choice per level. "
                    "Total: the sum over the ledger of epsilon x count.")

    @keeps_columns_on_failure
    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Fit the boosted ensemble, spending ``epsilon`` once from the accountant.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            An array; a ``numpy.memmap``, :class:`dptrees.Blocks` or
            :class:`dptrees.Parquet` file (read in blocks, never copied as float64); or a
            Dask array or dataframe. The model is the same from each.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Each record's weight, in [0, 1] (arrays in memory only): the weak learners
            count a record with its weight times its boosting weight, and the record
            count is the total weight. The guarantee is unchanged (no record counts for
            more than its boosting weight); a weight of 0 is the record's removal, and
            all ones give the model fitted without weights.

        Returns
        -------
        self
        """
        return run_fit(self, X, y, sample_weight)

    # -- the fit's hooks (dptrees._lifecycle) -------------------------------------------

    def _open_fit_data(self, fit, X, y, sample_weight):
        return prepare(self, X, y, sample_weight, task="classification", max_classes=256)

    def _plan_fit(self, fit):
        """The schedule (drawn without the data) and every release's budget, checked
        before anything is spent; one pure-epsilon plan records the releases."""
        plan = ReleasePlan("laplace", fit.params.epsilon, 0.0)
        fit.edges_budget = reserve_edges(plan, fit.data)  # private edges first
        params = (fit.params._replace(epsilon=fit.params.epsilon - fit.edges_budget)
                  if fit.edges_budget else fit.params)
        fit.noisy_rounds, fit.budgets, fit.boost_rng = self._draw_plan(params, fit.rng)
        return plan

    def _release(self, fit):
        fit.state = _boost(fit.data, fit.params, fit.noisy_rounds, fit.budgets,
                           fit.boost_rng, fit.plan)

    def _record(self, fit):
        data, params, budgets, state = fit.data, fit.params, fit.budgets, fit.state
        self.classes_ = data.classes
        self.n_classes_ = len(data.classes)
        self.n_features_in_ = data.n_features
        self.binner_ = data.binner
        self.bounds_ = (data.binner.lower.copy(), data.binner.upper.copy())
        self.privacy_leaks_ = list(data.leaks)
        self.learners_ = state["learners"]
        self.estimator_weights_ = state["alphas"]
        self.estimator_errors_ = state["errors"]
        self.n_estimators_ = len(state["learners"])
        self.noisy_rounds_ = fit.noisy_rounds
        self.n_noisy_rounds_ = budgets.n_noisy
        self.weight_bounds_ = state["weight_bounds"]
        self.weight_ranges_ = state["weight_ranges"]
        self.noisy_count_ = state["noisy_count"]
        self.privacy_ledger_ = fit.plan.ledger()
        self.epsilon_spent_ = params.epsilon
        self.delta_spent_ = 0.0
        self.budget_ = {
            "count": budgets.count,
            "weights": budgets.per_noisy_round * budgets.n_noisy,
            "per_noisy_round": budgets.per_noisy_round,
            "learners": budgets.per_learner * params.n_estimators,
            "per_learner": budgets.per_learner,
            "split": budgets.split,
            "leaf": budgets.leaf,
        }

    # ---------------------------------------------------------------- prediction

    def _codes(self, X):
        check_is_fitted(self, "learners_")
        X = check_features(X, n_features=self.n_features_in_, estimator=self)
        return self.binner_.transform(X)

    def _alphas(self):
        alphas = np.asarray(self.estimator_weights_, dtype=np.float64)
        if self.prior_vote:
            return alphas
        # every learner useless: vote with equal weights (post-processing)
        return alphas if alphas.sum() > 0 else np.ones_like(alphas)

    def _prior(self):
        """``(class, alpha_0)`` of the prior vote, or None without it.

        Post-processing: the first learner's noisy leaf totals, summed over its leaves,
        are noisy class counts (every weight is 1 in round 1). The constant classifier
        that predicts their largest class gets the SAMME weight of its noisy error.
        """
        if not self.prior_vote:
            return None
        counts = _noisy_class_counts(self.learners_[0])
        if counts.sum() <= 0:
            return None
        error = 1.0 - counts.max() / counts.sum()
        return int(np.argmax(counts)), _alpha(error, self.n_classes_, self.learning_rate)

    def _staged_votes(self, codes):
        """Cumulative SAMME votes (unnormalised) and alpha sums after each learner."""
        K = self.n_classes_
        votes = np.zeros((codes.shape[0], K))
        total = 0.0
        prior = self._prior()
        if prior is not None:
            label, alpha = prior
            votes += np.where(np.arange(K) == label, alpha, -alpha / (K - 1))[None, :]
            total += alpha
        for tree, alpha in zip(self.learners_, self._alphas()):
            pred = tree.predict(codes)
            onehot = np.arange(K)[None, :] == pred[:, None]
            votes += np.where(onehot, alpha, -alpha / (K - 1))
            total += alpha
            yield votes, total

    def _decision_from_votes(self, votes, total):
        pred = votes / total if total > 0 else np.zeros_like(votes)
        if self.n_classes_ == 2:
            return pred[:, 1] - pred[:, 0]
        return pred

    @property
    def feature_importances_(self):
        """Importances of the weak learners' votes, weighted by their SAMME weights
        (post-processing of the released noisy totals and weights; see
        :mod:`dptrees._importances`)."""
        check_is_fitted(self, "learners_")
        return ensemble_importances(self.learners_, self.n_features_in_, self._alphas())

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """SAMME decision values, as scikit-learn's ``AdaBoostClassifier``.

        Returns
        -------
        ndarray of shape (n_samples,) for two classes (positive means ``classes_[1]``),
        else (n_samples, n_classes)
        """
        codes = self._codes(X)
        out = None
        for votes, total in self._staged_votes(codes):
            out = (votes, total)
        return self._decision_from_votes(*out)

    def staged_decision_function(self, X: ArrayLike) -> Iterator[np.ndarray]:
        """Decision values after each boosting round (a generator)."""
        codes = self._codes(X)
        for votes, total in self._staged_votes(codes):
            yield self._decision_from_votes(votes.copy(), total)

    def _proba(self, decision):
        if self.n_classes_ == 2:
            decision = np.vstack([-decision, decision]).T / 2
        else:
            decision = decision / (self.n_classes_ - 1)
        decision = decision - decision.max(axis=1, keepdims=True)
        e = np.exp(decision)
        return e / e.sum(axis=1, keepdims=True)

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Class probabilities: softmax of the decision / (K - 1), as scikit-learn's SAMME."""
        return self._proba(self.decision_function(X))

    def _label(self, decision):
        if self.n_classes_ == 2:
            return self.classes_[(decision > 0).astype(np.int64)]
        return self.classes_[np.argmax(decision, axis=1)]

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predicted class labels."""
        return self._label(self.decision_function(X))

    def staged_predict(self, X: ArrayLike) -> Iterator[np.ndarray]:
        """Predicted labels after each boosting round (a generator)."""
        for decision in self.staged_decision_function(X):
            yield self._label(decision)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = True
        return tags


# --------------------------------------------------------------------------------------
# The boosting loop


def _mean_reference(previous, n_hat):
    """Public mean reference of the updated weights (post-processing of releases)."""
    correct, wrong, alpha = previous
    return (correct * math.exp(-alpha) + wrong) / max(n_hat, 1)


def auto_n_estimators(epsilon):
    """``n_estimators="auto"``: ``round(20 epsilon)`` in [2, 50] from the public epsilon,
    and a single learner below epsilon 0.025.

    Few learners when the budget is small, so that each (and the prior vote read from the
    first) gets enough of it; the paper's 50 from epsilon 2.5. A single learner is a DP
    tree on unit weights whose leaves predict their noisy majority class: it does not
    fall below the majority class, where two learners can (the second, fitted to
    reweighted records, can outvote the first and the prior on a large leaf). Chosen on
    a validation split of Adult's training file (one-hot), never on test data.
    """
    if epsilon < 0.025:
        return 1
    return int(min(50, max(2, round(20.0 * epsilon))))


def _noisy_class_counts(first_learner):
    """Noisy class counts, floored at 0: the first learner's leaf totals summed over its
    leaves (every weight is 1 in round 1). Post-processing; the prior vote's class, and
    the class unsure leaves fall back to."""
    return np.maximum(first_learner.noisy_totals.sum(axis=0), 0.0)


def _alpha(error, n_classes, learning_rate):
    if not math.isfinite(error) or error >= (n_classes - 1) / n_classes:
        return 0.0
    error = max(error, MIN_ERROR)
    return learning_rate * (math.log((1.0 - error) / error) + math.log(n_classes - 1))


def _boost(data, params, noisy_rounds, budgets, rng, plan):
    """The releases of ``fit`` after validation and accounting; returns the fitted state.

    Every release is recorded through ``plan`` (a pure-epsilon
    :class:`~dptrees.privacy.release_plan.ReleasePlan`) as it is made, with its budget
    from ``budgets``.
    """
    m, K = params.n_estimators, len(data.classes)
    floor = _ceil_grid(1.0 / params.max_weight)  # public: weights stay in [floor, 1]
    rows = WeightedRows(data.source, K, params.n_bins)
    lower = upper = 1.0  # public range [L_k, W_k] of the current weights
    count_rng, *round_rngs = rng.spawn(m + 1)
    n_hat = None
    if budgets.n_noisy > 0:
        # The record count (the total sample weight), in units of the weight grid: one
        # record moves it by at most 2**20 units, so discrete Laplace noise of scale
        # 2**20 / epsilon (noisy_count at epsilon * 2**-20) makes it epsilon-DP.
        n_hat = WEIGHT_GRID * noisy_count(rows.total_units(), epsilon=budgets.count * WEIGHT_GRID,
                                          random_state=count_rng)
        plan.record("noisy record count", "discrete Laplace", 1.0, "L1",
                    epsilon=budgets.count)
    learners, alphas, errors = [], np.zeros(m), np.zeros(m)
    weight_bounds = np.zeros((m, 2))
    weight_ranges = np.full((m, 4), np.nan)
    previous = None  # (correct total, wrong total, alpha) of the previous learner
    prior_vote, prior_label = params.prior_vote, None
    max_share = FIRST_MAX_SHARE
    for k in range(m):
        round_rng = round_rngs[k]
        if noisy_rounds[k]:
            eps_max = budgets.per_noisy_round * max_share
            eps_min = budgets.per_noisy_round - eps_max
            ref = _mean_reference(previous, n_hat) if previous is not None else lower
            wr = noisy_weight_range(rows.extremes(), lower=lower, upper=upper,
                                    epsilon_max=eps_max, epsilon_min=eps_min,
                                    mean_reference=ref, random_state=round_rng)
            for side, eps in (("max", eps_max), ("min", eps_min)):
                plan.record(f"round {k + 1}: noisy {side} weight", "Laplace",
                            upper - lower, "L1", epsilon=eps)
            weight_ranges[k] = wr
            # Clip into the noisy range and rescale by the public noisy max so the
            # largest weight is 1 again (SAMME is invariant to a common factor): without
            # it every weight decays to the floor once each record has been classified
            # correctly a few times.
            lower = max(floor, _ceil_grid(wr.low / wr.high))
            upper = 1.0
            rows.rescale(wr.low, wr.high, lower, upper)
            max_share = min(max(wr.high / (wr.high + wr.low), MAX_SHARE_RANGE[0]),
                            MAX_SHARE_RANGE[1])
        weight_bounds[k] = (lower, upper)
        tree = fit_weighted_tree(rows, max_depth=params.max_depth, weight_bound=upper,
                                 epsilon_split=budgets.split, epsilon_leaf=budgets.leaf,
                                 random_state=round_rng, binner=data.binner)
        for level in range(params.max_depth):
            plan.record(f"round {k + 1}: split level {level}",
                        "permute-and-flip (weighted error utility)", upper, "utility",
                        epsilon=budgets.split)
        plan.record(f"round {k + 1}: leaf totals", "Laplace", upper, "L1",
                    epsilon=budgets.leaf)
        if prior_vote:
            if prior_label is None:  # round 1: every weight is 1, totals are class counts
                prior_label = int(np.argmax(_noisy_class_counts(tree)))
            # A leaf whose top two noisy totals are within LEAF_MARGIN standard
            # deviations of their difference (2 Laplace(upper / leaf)) predicts the prior.
            tree.fall_back_to(prior_label, LEAF_MARGIN * 2.0 * upper / budgets.leaf)
        error, correct, wrong = tree.weighted_error()
        if params.error_margin > 0:
            # A pessimistic error: raised by error_margin standard deviations of the
            # noise on the total (public: L K Laplace(upper / leaf) draws) per unit of
            # the noisy total, so a learner whose edge is within the noise gets alpha 0.
            noise_std = math.sqrt(2.0 * tree.noisy_totals.size) * upper / budgets.leaf
            total = correct + wrong
            error = (error + params.error_margin * noise_std / total if total > 0
                     else math.inf)
        alpha = _alpha(error, K, params.learning_rate)
        learners.append(tree)
        alphas[k], errors[k] = alpha, error
        previous = (correct, wrong, alpha)
        if alpha > 0 and k + 1 < m:
            # Per-record update from the released learner: SAMME's exp(alpha) on the
            # misclassified records, divided through by exp(alpha) (normalisation does
            # not change SAMME), i.e. the correctly classified ones shrink. Weights never
            # grow, so the learners' sensitivity stays at most 1.
            factor = math.exp(-alpha)
            lower = min(max(floor, _ceil_grid(lower * factor)), upper)
            rows.reweight(tree, factor, lower, upper)
    return {"learners": learners, "alphas": alphas, "errors": errors,
            "weight_bounds": weight_bounds, "weight_ranges": weight_ranges,
            "noisy_count": n_hat}
