"""What every boosting estimator shares around the boosting itself: the public binning,
the fixed-point scales of clipped gradients and Hessians, the DP initial score (noisy
class counts, or a noisy sum and count: sensitivity 1 each), the fitted privacy
attributes, the targets' encoding and the shared parameters. Used by gradient boosting,
the explainable boosting machine and (its parameters) federated boosting."""

import math
from typing import NamedTuple, Self

import numpy as np
from numpy.typing import ArrayLike

from dptrees._constraints import (
    ACCOUNTANT,
    DELTA,
    EPSILON,
    PUBLIC,
    RANDOM_STATE,
    VERBOSE,
)
from dptrees._core import _fixedpoint
from dptrees._lifecycle import run_fit
from dptrees._tree_fallback import multiclass_threshold
from dptrees._params import (
    Accountant, Bounds, Classes, DeclaredParams, RandomStateLike, TargetBounds, param,
)
from dptrees.privacy.report import PrivacyReportMixin
from dptrees.data.prepare import MAX_ROWS, prepare
from dptrees.data.private_edges import EDGES_MAX_FEATURES
from dptrees.data.tables import BOUNDS_DOC, TableColumnsMixin, keeps_columns_on_failure
from dptrees.boosting._losses import BinaryLogistic, MultinomialLogistic, SquaredError
from dptrees.mechanisms import fixed_point_scale
from dptrees.validation import warn_weak_delta

__all__ = ["auto_gradient_clip", "falls_back"]

# Share of each leaf (or histogram) release's budget spent on the Hessian sums; the
# gradient sums carry the signal, the Hessians only scale it. (Gradient boosting spends
# less at the smallest budgets: ``_gradient.hessian_share``.)
_HESSIAN_SHARE = 0.2


def auto_gradient_clip(epsilon):
    """``gradient_clip="auto"`` of the log-loss classifier: 0.5 up to ``epsilon = 4``,
    then ``epsilon / 8`` up to 1 (no clipping of ``p - y``) from ``epsilon = 8``.

    A public function of ``epsilon`` only. A smaller clip lowers the sensitivity, hence
    the noise, of every release, at the price of a bias on badly fitted records. Chosen
    on validation rows of Adult, Mushroom and Nursery
    (``experiments/boosting_defaults_sweep.py --param gradient_clip``; figures in
    ``experiments/RESULTS.md``).
    """
    return min(1.0, max(0.5, float(epsilon) / 8.0))


#: ``epsilon x noisy record count`` below which a regression boosting fit keeps only its
#: starting score (:func:`falls_back`; multiclass: a threshold per class).
FALLBACK_EPS_ROWS = 300.0


def falls_back(epsilon, noisy_count, loss):
    """Whether a boosting fit keeps only its starting score (the noisy mean, or the noisy
    class frequencies) and spends all its budget on it: with too little budget it falls
    back to the noisy prior instead of following noise.

    True when ``epsilon * noisy_count < FALLBACK_EPS_ROWS`` for squared error, and below
    ``CLASSIFIER_FALLBACK_EPS_ROWS_PER_CLASS`` times the number of classes for
    multinomial log-loss (the trees' multiclass rule, :mod:`dptrees._tree_fallback`).
    Below it the noise on the leaves of a hundred rounds (or cycles) adds up and the
    ensemble drifts below the noisy mean, or below the majority class.
    On validation rows (``experiments/small_eps_regression.py --validation``; figures in
    ``experiments/RESULTS.md``): on the red wine (1,023 rows) both boosting families lose
    to the noisy mean at ``epsilon * n`` = 100 (eps 0.1) and gradient boosting up to
    about 1,500, the multiclass ones to the majority class at 100; on California the
    explainable boosting machine loses at 150 (eps 0.01) and gradient boosting beats the
    noisy mean from 150 on (so the rule costs it there: ``epsilon * n`` alone cannot
    tell the two data sets apart). Multiclass: 300 for every number of classes cost
    Nursery's explainable boosting machine 0.12 accuracy at ``epsilon * n`` = 311 (5
    classes, far above the majority class there;
    ``experiments/defaults_across_builds.py``), while the wine's 7 classes need the
    fallback at 100. Binary log-loss never falls back: it already stays at or above the
    majority class on Adult (its leaf shrinkage and initial log-odds), and its ranking
    (AUC) is worth keeping at small epsilon.

    ``noisy_count`` is the record count the starting score released.

    Privacy: a function of the public ``epsilon`` and loss and of a released value:
    post-processing, no privacy cost (see ``docs/proofs/boosting.rst``). The budget it
    frees is spent on one more release of the starting score's values (accounted with
    the others: the guarantee is unchanged).
    """
    if isinstance(loss, BinaryLogistic):
        return False
    threshold = (multiclass_threshold(loss.n_outputs)
                 if isinstance(loss, MultinomialLogistic) else FALLBACK_EPS_ROWS)
    return threshold is not None and float(epsilon) * float(noisy_count) < threshold


class _BoostingFitMixin(PrivacyReportMixin, TableColumnsMixin, DeclaredParams):
    """What the boosting estimators share around the boosting itself: binning over the
    public bounds, the fixed-point scales, the DP initial score and the fitted privacy
    attributes. Reads ``bounds``, ``n_bins`` and ``gradient_clip``."""

    epsilon: float = param(1.0, EPSILON)
    delta: float = param(1e-6, DELTA)
    bounds: Bounds = param(None, PUBLIC)
    accountant: Accountant = param(None, ACCOUNTANT)
    random_state: RandomStateLike = param(None, RANDOM_STATE)
    verbose: int = param(0, VERBOSE)

    @property
    def _composition(self):
        if getattr(self, "noise", "gaussian") == "laplace":
            return ("pure epsilon-DP: every record takes part in every release "
                    "(sequential composition); total: the sum over the ledger of epsilon "
                    "x count.")
        if getattr(self, "accounting", "rdp") == "pld":
            return ("each release is a discrete Gaussian mechanism (rho-zCDP, rho = "
                    "1 / (2 z**2)); all are composed by a privacy-loss-distribution "
                    "accountant and converted to (epsilon, delta).")
        return ("each release is a discrete Gaussian mechanism (rho-zCDP, rho = 1 / (2 "
                "z**2)); releases compose by adding rho (subsampled ones as Renyi DP at "
                "integer orders), and rdp_accountant_ converts the total to (epsilon, "
                "delta).")

    @keeps_columns_on_failure
    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        return run_fit(self, X, y, sample_weight)

    # -- the fit's hooks shared by every boosting estimator (dptrees._lifecycle) ---------

    def _open_fit_data(self, fit, X, y, sample_weight):
        return self._prepare(X, y, sample_weight, self._task)

    def _plan_targets(self, fit):
        """The loss and the exact values the starting score releases, read from the open
        rows and the public ``classes`` or ``y_bounds`` (before anything is spent); warns
        if ``delta`` is weak for the number of records."""
        warn_weak_delta(fit.params[1], fit.data.source.n_samples)
        fit.loss, fit.n_classes, fit.targets = self._targets(fit.data)
        fit.init_values, fit.n_init_cells = self._initial_values(fit.data.source,
                                                                 fit.n_classes)

    def _record(self, fit):
        """The fitted attributes every boosting estimator shares (:meth:`_store_fit`)
        and those of its targets."""
        self._store_fit(fit.data.binner, fit.data.leaks, fit.plan, fit.params[0])
        for name, value in fit.targets.items():
            setattr(self, name, value)

    def _prepare(self, X, y, sample_weight, task):
        """The rows of ``fit(X, y, sample_weight)``, binned and encoded
        (:func:`dptrees.data.prepare.prepare`)."""
        return prepare(self, X, y, sample_weight, task=task, n_bins=self._n_bins())

    def _n_bins(self):
        """The number of bins (a public hyper-parameter)."""
        return self.n_bins

    def _gradient_clip(self, epsilon):
        """The public gradient clip: ``gradient_clip``, or its "auto" value at
        ``epsilon`` (:func:`auto_gradient_clip`)."""
        if isinstance(self.gradient_clip, str):
            return auto_gradient_clip(epsilon)
        return float(self.gradient_clip)

    def _fixed_point(self, loss, weighted=False, epsilon=None):
        """Public fixed-point scales and per-record sensitivities of ``(g, h)`` sums.

        The scales depend on public values only (the row cap, not the row count): with
        a scale read from n, one added record could re-round every other record's value
        and move a sum by more than one record's bound. One record moves a fixed-point
        sum by its rounded value, at most ``ceil(bound * scale) / scale``. A constant
        Hessian (1: the sum is a count) needs no fractional bits, unless the records are
        ``weighted`` (it is then the weight, in [0, 1]); the scales are powers of two,
        so a record of weight 1 gives the same sums either way.
        """
        g_clip = self._gradient_clip(epsilon)
        h_clip = float(loss.hessian_bound)
        g_scale = fixed_point_scale((-g_clip, g_clip), MAX_ROWS)
        h_scale = (1.0 if loss.constant_hessian and not weighted
                   else fixed_point_scale((0.0, h_clip), MAX_ROWS))
        return _FixedPoint(g_clip, h_clip, g_scale, h_scale,
                           math.ceil(g_clip * g_scale) / g_scale,
                           math.ceil(h_clip * h_scale) / h_scale)

    #: How many generators a fit spawns from its own, in a fixed order, when it releases
    #: its initial score (the first is the score's).
    _N_GENERATORS = 3
    #: ``bin_edges="auto"`` releases the private edges when ``epsilon`` times the initial
    #: score's noisy record count is in ``[low, high)`` (each estimator's own window).
    _EDGES_EPS_WINDOW = (0.0, math.inf)

    def _init_budget(self, plan):
        """The initial score's budget: a share of the whole, with or without a budget
        reserved for private edges or a category order (it is released before they are
        decided on)."""
        return self.init_fraction * (plan.total + plan.reserved)

    def _release_initial_score(self, fit):
        """The initial score's release, once per fit (the first release, made by the
        lifecycle's hooks when a pending release waits on its noisy count):
        ``fit.init``, ``fit.noisy_count``, ``fit.init_budget`` and the fit's generators
        ``fit.rngs``."""
        if getattr(fit, "rngs", None) is not None:
            return
        fit.rngs = fit.rng.spawn(self._N_GENERATORS)
        fit.init_budget = self._init_budget(fit.plan)
        fit.init, fit.noisy_count = self._initial_score(
            fit.plan, fit.loss, fit.init_values, fit.n_init_cells, fit.init_budget,
            fit.rngs[0])

    def _keeps_private_edges(self, fit):
        """Whether the pending private edges are released (the lifecycle's hook, after
        the charge): always with ``bin_edges="private"``; with ``"auto"`` when there
        are at most ``EDGES_MAX_FEATURES`` numeric features (public) and ``epsilon``
        times the initial score's noisy record count, released here first, is in
        :attr:`_EDGES_EPS_WINDOW` (post-processing of a released value)."""
        self._release_initial_score(fit)
        low, high = self._EDGES_EPS_WINDOW
        return self.bin_edges == "private" or (
            fit.data.edges.features.size <= EDGES_MAX_FEATURES
            and low <= fit.params[0] * fit.noisy_count < high)

    @staticmethod
    def _initial_score(plan, loss, init_values, n_init_cells, budget, rng):
        """The DP starting score and the noisy record count it released: noisy class
        counts (their sum), or a noisy sum and count (each record moves one count, or
        the sum of targets in [0, 1], by at most 1)."""
        if n_init_cells == 2 and isinstance(loss, SquaredError):
            total, count = init_values
            noisy_sum = plan.release(total, 1.0, budget / 2, rng,
                                     label="initial score: sum of targets in [0, 1]")
            noisy_count = plan.release(float(count), 1.0, budget / 2, rng,
                                       label="initial score: record count")
            return loss.init_score(noisy_sum, noisy_count), float(noisy_count)
        noisy_counts = plan.release(init_values, 1.0, budget, rng,
                                    label="initial score: class counts")
        return loss.init_score(noisy_counts), float(np.sum(noisy_counts))

    @staticmethod
    def _fallback_score(plan, loss, init_values, spent, rng):
        """The starting score of a fit that falls back (:func:`falls_back`): the starting
        score's values released again with all the budget left after ``spent``
        (:meth:`~dptrees.privacy.release_plan.ReleasePlan.release_rest`: one pure-DP
        Laplace release where the plan accounts in Renyi DP). The first release, a
        hundredth of the budget, is not reused.

        Regression releases the sum of the targets *centred* on 1/2 (in [-1/2, 1/2]: one
        record moves it by at most 1/2) and the count: L1 sensitivity 3/2, a quarter less
        noise than an uncentred sum's 2; the mean is ``1/2 + centred sum / count``,
        clipped to [0, 1]. Classification releases the class counts (L1 sensitivity 1).
        The score is post-processing of the released values.
        """
        if not isinstance(loss, SquaredError):
            counts = plan.release_rest(init_values, 1.0, spent, rng,
                                       label="fallback score: class counts")
            return loss.init_score(counts)
        total, count = init_values
        centred, noisy_count = plan.release_rest(
            np.array([total - count / 2, count], dtype=float), 1.5, spent, rng,
            label="fallback score: sum of targets centred on 1/2, and record count")
        return loss.init_score(centred + max(noisy_count, 1.0) / 2, noisy_count)

    def _store_fit(self, binner, leaks, plan, epsilon):
        """The fitted attributes every boosting estimator shares: the binning, the
        public inputs read from data, and the guarantee the plan's accountant gives
        (at most ``epsilon``: sound by construction, the plan splits what
        ``zcdp_budget`` / ``epsilon`` allow)."""
        spent_epsilon, spent_delta = plan.spent()
        assert spent_epsilon <= epsilon, (spent_epsilon, epsilon)
        self.binner_ = binner
        self.n_features_in_ = binner.lower.shape[0]
        self.bounds_ = (binner.lower.copy(), binner.upper.copy())
        self.privacy_leaks_ = list(leaks)
        self.epsilon_spent_ = float(spent_epsilon)
        self.delta_spent_ = float(spent_delta)
        self.rdp_accountant_ = plan.rdp
        self.privacy_ledger_ = plan.ledger()




class _FixedPoint(NamedTuple):
    """Public clipping bounds, fixed-point scales and per-record sensitivities."""

    g_clip: float
    h_clip: float
    g_scale: float
    h_scale: float
    g_sens: float
    h_sens: float

    def to_stats(self, g, h, stats):
        """Clip and round ``g`` (and ``h``, unless None: a constant Hessian already in
        ``stats[1]``) into the int64 rows ``stats[0]`` and ``stats[1]``."""
        _fixedpoint.to_fixed_array(np.ascontiguousarray(g, dtype=np.float64),
                                   -self.g_clip, self.g_clip, self.g_scale, stats[0])
        if h is not None:
            _fixedpoint.to_fixed_array(np.ascontiguousarray(h, dtype=np.float64),
                                       0.0, self.h_clip, self.h_scale, stats[1])


_FIT_DOC = """Fit the ensemble, spending ``(epsilon, delta)`` from the accountant.

        ``X`` may be an array; a ``numpy.memmap``, :class:`dptrees.Blocks` or
        :class:`dptrees.Parquet` file (read in blocks, never copied as float64); or a
        Dask array or dataframe (statistics computed where the partitions live). The
        model is the same from each.

        Parameters
        ----------
        X : array-like, DataFrame, memmap, Blocks, Parquet or Dask collection
            Training features, of shape (n_samples, n_features).
        y : array-like of shape (n_samples,)
            Targets (regression) or class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Each record's weight, in [0, 1] (for data in memory): it scales the record's
            count, target, gradient and Hessian in every statistic, so one record still
            moves each release by at most what an unweighted record does (the same
            sensitivities, the same guarantee). Weights above 1 are refused; divide by a
            public upper bound. A weight of 1 is the unweighted record: all ones give the
            model fitted without weights.

        Returns
        -------
        self
        """

_BoostingFitMixin.fit.__doc__ = _FIT_DOC


class _SquaredErrorFit(DeclaredParams):
    """The targets of the squared-error estimators: clipped to the public ``y_bounds``
    and rescaled to [0, 1]; the starting score is their noisy mean."""

    y_bounds: TargetBounds = param(None, PUBLIC)

    _task = "regression"
    _domain = "y_bounds"

    @staticmethod
    def _targets(prepared):
        """The loss, 0 classes, and the fitted attributes of the targets."""
        return SquaredError(), 0, {"y_bounds_": prepared.y_bounds}

    @staticmethod
    def _initial_values(source, n_classes):
        """The exact values the starting score releases: the sum of the targets (an
        exact fixed-point integer over its own scale) and the record count."""
        scale = fixed_point_scale((0.0, 1.0), MAX_ROWS)
        return (source.target_fixed_sum(scale) / scale, source.record_count()), 2


class _LogLossFit(DeclaredParams):
    """The targets of the log-loss estimators: labels encoded over the public
    ``classes``; the starting score is the noisy class frequencies'."""

    classes: Classes = param(None, PUBLIC)

    _task = "classification"
    _domain = "classes"

    @staticmethod
    def _targets(prepared):
        """The log-loss, the number of classes, and the fitted attributes of the
        targets."""
        n_classes = len(prepared.classes)
        loss = BinaryLogistic() if n_classes == 2 else MultinomialLogistic(n_classes)
        return loss, n_classes, {"classes_": prepared.classes, "_loss": loss}

    @staticmethod
    def _initial_values(source, n_classes):
        """The exact class counts the starting score releases."""
        return source.class_counts(n_classes).astype(float), n_classes


# Shared with the cyclic-boosting estimators' docstrings.
_START_AND_PUBLIC_INPUTS_DOC = """    init_fraction : float, default=0.01
        Share of the budget spent on the DP initial score.
""" + BOUNDS_DOC + """    accountant : BudgetAccountant or None
        Where the fit's ``(epsilon, delta)`` is spent; None uses the default accountant.
    random_state : None, int, SeedSequence, BitGenerator or Generator
"""
