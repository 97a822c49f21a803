"""Differentially private cyclic boosting of single-feature shape functions (DP-EBM style).

Guarantee: ``(epsilon, delta)``-DP for add/remove-one neighbours, given public bounds and
targets or classes, with individual Renyi accounting (:mod:`dptrees.privacy.individual_filter`):
each per-feature, per-cycle release of the bins' ``(G, H)`` sums has sensitivity one
record's clipped gradient ``S_G`` and Hessian bound ``S_H`` (bin 0, the baseline, is never
released), and each record pays only what it contributes. The proof: "Privacy proofs,
explainable boosting" in the documentation (``docs/proofs/explainable_boosting.rst``).
"""

import math

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from dptrees._constraints import (
    AUTO, FRACTION, N_JOBS, NON_NEGATIVE, POSITIVE, integers, validate_params,
)
from dptrees._docs import estimator_doc, target_domain_doc
from dptrees._importances import additive_importances
from dptrees._progress import Progress
from dptrees._params import Auto, BinEdges, param
from dptrees.accounting import AccountantMixin
from dptrees.boosting._common import (_HESSIAN_SHARE,
                                     _START_AND_PUBLIC_INPUTS_DOC, _BoostingFitMixin,
                                     _LogLossFit, _SquaredErrorFit, falls_back)
from dptrees.boosting._cyclic_rows import CyclicRows, ReleaseCost
from dptrees.boosting import _explain
from dptrees.boosting._trees import BoostedClassifierMixin, BoostedRegressorMixin
from dptrees.privacy.release_plan import ReleasePlan
from dptrees.data.private_edges import BIN_EDGES_AUTO, EDGES_BUDGET, reserve_edges
from dptrees.mechanisms import gaussian_grid, gaussian_mechanism
from dptrees.validation import (
    check_delta,
    check_epsilon,
    check_features,
)

__all__ = ["DPExplainableBoostingClassifier", "DPExplainableBoostingRegressor"]

# Share of the total zCDP budget spent, with max_active="auto", on the noisy mean number
# of features a record has outside bin 0 (it sets the noise of every later release).
_DENSITY_SHARE = 0.01

#: ``bin_edges="auto"`` releases private (noisy-quantile) edges when ``epsilon * noisy
#: record count`` is in ``[low, high)``, else keeps the equal-width bins and gives their
#: reserved budget back to the cycles. Chosen on validation rows of Adult and California
#: Housing (``experiments/private_edges_sweep.py``; figures in ``experiments/RESULTS.md``):
#: California loses below about 2,000 and gains from 3,700; Adult gains from 700 to
#: 5,800, ties at 11,700 and loses at 23,300, where its heavy tails, which quantile bins
#: merge, carry more signal than the noise hides.
EDGES_EPS_ROWS = (2_000, 20_000)


class _BaseDPExplainableBoosting(_BoostingFitMixin, AccountantMixin, BaseEstimator):
    """Fitting machinery shared by the DP cyclic-boosting estimators, and their
    parameters with the regressor's defaults (the classifier redeclares its own)."""

    _N_GENERATORS = 4  # the initial score's, the features' order, the noise, the density
    _EDGES_EPS_WINDOW = EDGES_EPS_ROWS  # bin_edges="auto"

    n_cycles: int | Auto = param("auto", integers(1, 10_000), AUTO)
    learning_rate: float = param(1.0, POSITIVE)
    n_bins: int | Auto = param("auto", integers(2, 256), AUTO)
    bin_edges: BinEdges | Auto = param("auto", BIN_EDGES_AUTO)
    edges_budget: float | Auto = param("auto", EDGES_BUDGET)
    reg_lambda: float = param(100.0, POSITIVE)
    noise_reg: float = param(10.0, NON_NEGATIVE)
    max_active: int | Auto = param("auto", integers(1, 100_000), AUTO)
    gradient_clip: float = param(0.3, POSITIVE)
    init_fraction: float = param(0.01, FRACTION)
    n_jobs: int | None = param(None, N_JOBS)

    def _check_params(self):
        """Validate the parameters (their constraints, then the privacy rules) before
        anything is read or spent; returns ``(epsilon, delta)``."""
        validate_params(self)
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta, positive=True)
        return epsilon, delta

    def _n_cycles(self, epsilon):
        """``"auto"``: ``round(5 sqrt(epsilon))`` in [2, 10], from the public epsilon (few
        cycles of little noise when the budget is small). Chosen on a validation split of
        Adult's training rows, never on test data."""
        if isinstance(self.n_cycles, str):
            return int(min(10, max(2, round(5 * math.sqrt(epsilon)))))
        return int(self.n_cycles)

    def _n_bins(self):
        """``"auto"``: ``round(24 epsilon**(1/5))`` in [16, 32], from the public epsilon.

        Fewer, wider bins hold more records each, so their noisy sums are less noisy
        relative to their signal, at the cost of a coarser shape function: the best
        number grows with the signal-to-noise ratio, i.e. with ``n * epsilon``. The rule
        was chosen on validation splits of training rows only (Adult, 24,000 rows, and
        California Housing, 15,000; never test rows), where the best number went from 16
        at epsilon <= 0.25 to 20-24 at 0.5-1 and 24-32 at 4; on a 6,000-row subsample of
        Adult the best moved to fewer bins, as the ``n * epsilon`` law says. The rule
        reads no data, so for much larger data a user may do better with more bins.
        """
        if isinstance(self.n_bins, str):
            return int(min(32, max(16, round(24.0 * float(self.epsilon) ** 0.2))))
        return int(self.n_bins)

    def _max_active(self, n_features, density=None):
        """Worst-case releases (per output) a record's per-cycle budget pays for.

        ``"auto"``: ``ceil(0.75 (density + 1))`` in ``[1, n_features + 1]``, where
        ``density`` is the released noisy mean number of features a record has outside
        bin 0 (:meth:`_noisy_density`; the intercept counts as one more release). The
        factor 0.75 was chosen on a validation split of Adult's training rows (one-hot
        and ordinal encodings, both about 10 features outside bin 0), never on test data.
        """
        if isinstance(self.max_active, str):
            return int(min(n_features + 1, max(1, math.ceil(0.75 * (density + 1)))))
        return int(self.max_active)

    @staticmethod
    def density_clip(n_features):
        """Public cap ``T = min(p, ceil(3 sqrt(p + 1)))`` on one record's count in the
        density release: the noise grows with ``T``, and records rarely sit outside bin 0
        in more than a few times ``sqrt(p)`` features."""
        return min(n_features, math.ceil(3.0 * math.sqrt(n_features + 1.0)))

    @classmethod
    def _noisy_density(cls, plan, rows, n_samples, n_features, budget, rng):
        """The noisy mean number of features per record outside bin 0, each record's
        number capped at :meth:`density_clip` ``T`` (a value in ``[0, T]``).

        Releases the pair (sum over records of the capped number, ``T`` times the record
        count): one record moves it by at most ``(T, T)``, L2 sensitivity ``sqrt(2) T``
        (the count scaled by ``T`` gets the same relative noise as the sum); Gaussian
        noise, ``budget``-zCDP, paid by every record. Sample weights play no part: the
        density is of the records' features, whatever they weigh. The mean is
        post-processing.
        """
        cap = cls.density_clip(n_features)
        exact = np.array([rows.capped_active_features(cap), cap * n_samples], dtype=float)
        noisy = plan.release(exact, math.sqrt(2.0) * cap, budget, rng,
                             label="active-feature density (capped sum, scaled count)")
        return float(np.clip(cap * noisy[0] / max(noisy[1], cap), 0.0, cap))

    def _plan_fit(self, fit):
        """The budget split (initial score, density, the filtered cycles) and the check
        that every release each ``max_active`` could need can be realised."""
        self._plan_targets(fit)
        epsilon, delta = fit.params
        source, loss = fit.data.source, fit.loss
        n_features = source.n_features
        plan = ReleasePlan("gaussian", epsilon, delta)
        fit.edges_budget = reserve_edges(plan, fit.data)
        fit.init_budget = self._init_budget(plan)
        fit.auto_active = auto_active = isinstance(self.max_active, str)
        fit.n_cycles = n_cycles = self._n_cycles(epsilon)
        self._split_rest(fit, plan)
        fit.fixed = fixed = self._fixed_point(loss, source.weights is not None)
        n_bins = fit.data.binner.n_bins
        try:
            plan.check(1.0, fit.init_budget / 2, 256)
            if auto_active:
                plan.check(math.sqrt(2.0) * self.density_clip(n_features),
                           fit.density_budget, 2)
            # every max_active the released density can give must be realisable
            extremes = (1, n_features + 1) if auto_active else (self._max_active(n_features),)
            for max_active in extremes:
                nm_g, nm_h = self._multipliers(fit, max_active)
                for n_values in (n_bins - 1, 1):
                    gaussian_grid(fixed.g_sens, nm_g, n_values)
                    gaussian_grid(fixed.h_sens, nm_h, n_values)
        except ValueError as exc:
            raise ValueError(
                f"epsilon={epsilon!r} (delta={delta!r}) spread over {n_cycles} cycles is "
                f"out of the exact samplers' range: {exc}"
            ) from exc
        return plan

    @staticmethod
    def _split_rest(fit, plan):
        """The density's and the cycles' budgets: what the plan holds after the initial
        score (and the private edges, if they are released)."""
        fit.density_budget = _DENSITY_SHARE * plan.total if fit.auto_active else 0.0
        fit.filtered = plan.total - fit.init_budget - fit.density_budget
        fit.cycle_budget = fit.filtered / fit.n_cycles

    @staticmethod
    def _multipliers(fit, max_active):
        """The noise multipliers of a cycle's gradient and Hessian sums when each of
        ``max_active`` features per output shares the cycle's budget."""
        per_release = fit.cycle_budget / (max_active * fit.loss.n_outputs)
        return (1.0 / math.sqrt(2.0 * per_release * (1 - _HESSIAN_SHARE)),
                1.0 / math.sqrt(2.0 * per_release * _HESSIAN_SHARE))

    def _release(self, fit):
        plan, loss, fixed, source = fit.plan, fit.loss, fit.fixed, fit.data.source
        n, n_features, n_out = source.n_samples, source.n_features, loss.n_outputs
        self._release_initial_score(fit)
        self._split_rest(fit, plan)  # the edges' budget back in the plan if not released
        n_bins, n_cycles, filtered = fit.data.binner.n_bins, fit.n_cycles, fit.filtered
        cycle_budget = fit.cycle_budget
        rng_init, rng_order, rng_noise, rng_density = fit.rngs
        init, noisy_count = fit.init, fit.noisy_count
        if falls_back(fit.params[0], noisy_count, loss):  # the noisy prior, all the budget
            init = self._fallback_score(plan, loss, fit.init_values, fit.init_budget,
                                        rng_init)
            fit.intercept, fit.history = np.array(init, dtype=float), []
            fit.scores = np.zeros((n_out, n_features, n_bins))
            fit.max_active, fit.n_cycles = 0, 0
            return
        rows = CyclicRows(source, loss, init, n_bins)
        density = (self._noisy_density(plan, rows, n, n_features, fit.density_budget,
                                       rng_density) if fit.auto_active else None)
        max_active = self._max_active(n_features, density)
        nm_g, nm_h = self._multipliers(fit, max_active)
        cost = ReleaseCost(loss, fixed, nm_g, nm_h)
        scores = np.zeros((n_out, n_features, n_bins))
        intercept = np.array(init, dtype=float)
        # sigma of the noise on a gradient sum: the shrinkage's unit (public)
        regulariser = self.reg_lambda + self.noise_reg * nm_g * fixed.g_sens
        step = self.learning_rate
        history = []

        def noisy(g_units, h_units):
            """The damped Newton step on the noisy sums (post-processing)."""
            g = gaussian_mechanism(g_units / fixed.g_scale, sensitivity=fixed.g_sens,
                                   noise_multiplier=nm_g, random_state=rng_noise)
            h = gaussian_mechanism(h_units / fixed.h_scale, sensitivity=fixed.h_sens,
                                   noise_multiplier=nm_h, random_state=rng_noise)
            return -step * g / (np.maximum(h, 0.0) + regulariser)

        # Within a feature's step (and the intercept's), every output's gradients are
        # those of the scores before the step: the updates are added after all outputs.
        progress = Progress(self, n_cycles, "cycle")
        for cycle in range(n_cycles):
            rows.start_cycle(cycle_budget)
            for f in rng_order.permutation(n_features):
                updates = np.zeros((n_out, n_bins))
                for k in range(n_out):
                    sums = rows.feature_sums(cost, k, int(f))
                    updates[k, 1:] = noisy(sums[1:, 0], sums[1:, 1])
                scores[:, f] += updates
                rows.add_feature_scores(int(f), updates)
            updates = np.zeros(n_out)
            for k in range(n_out):
                sums = rows.intercept_sums(cost, k)
                updates[k] = float(noisy(sums[0], sums[1]))
            intercept += updates
            rows.add_constants(updates)
            history.append((intercept.copy(), scores.copy()))
            progress.step(budget=f"{(cycle + 1) / n_cycles:.0%} of rho={filtered:.4g}")
        progress.close()

        # The filter guarantees the filtered releases together are `filtered`-zCDP.
        plan.rdp.compose_zcdp(filtered)
        plan.record(f"bin sums and intercept steps, {n_cycles} cycles",
                    "filtered discrete Gaussian", 1.0, "L2", rho=filtered,
                    note="individual Renyi filter (Feldman & Zrnic; "
                         "dptrees.privacy.individual_filter): each record pays for its own "
                         "clipped contribution and stops at this total")
        fit.intercept, fit.scores, fit.history = intercept, scores, history
        fit.max_active = max_active

    def _record(self, fit):
        super()._record(fit)
        self.intercept_ = fit.intercept
        self.term_scores_ = fit.scores
        self._history = fit.history
        self.n_iter_ = fit.n_cycles
        self.max_active_ = fit.max_active
        self.n_bins_ = fit.data.binner.n_bins
        self.private_edges_ = fit.edges_budget > 0


class _AdditivePrediction:
    """Raw scores ``intercept_ + sum_f term_scores_[:, f, bin_f(x)]`` (post-processing of
    the released values); before ``BoostedClassifierMixin`` / ``BoostedRegressorMixin``,
    which turn them into predictions. Staged predictions are per cycle."""

    @property
    def feature_importances_(self):
        """Each feature's spread of released bin scores (post-processing; see
        :func:`dptrees._importances.additive_importances`), normalised to 1."""
        check_is_fitted(self, "term_scores_")
        return additive_importances(self.term_scores_)

    # Explanations: post-processing of the released values and the public domains in
    # ``bounds`` (dptrees.boosting._explain); nothing here reads training data.

    @property
    def term_names_(self):
        """list of str: the name of each term (one per feature): ``feature_names_in_``,
        else ``x[0]``, ``x[1]``, ..."""
        return _explain.term_names(self)

    @property
    def term_types_(self):
        """list of str: each term's kind, ``"continuous"`` (a numeric feature) or
        ``"nominal"`` (a categorical column of a data frame, by its public
        categories)."""
        return [fb.kind for fb in _explain.term_bins(self)]

    @property
    def bin_edges_(self):
        """list: each term's bin edges in feature units (an ndarray from the public lower
        to the upper bound; the bins are ``[edge[b], edge[b + 1])``, values outside the
        bounds clipped into the end bins; a feature that may be missing has one bin
        fewer here, its last bin being for missing values), or None for a nominal
        term."""
        return [fb.edges for fb in _explain.term_bins(self)]

    @property
    def bin_labels_(self):
        """list of list of str: for each term, a label per bin of ``term_scores_``: its
        interval ``[lower, upper)``, its public categories (comma-separated; empty for a
        bin that holds no category, whose score ``predict`` never uses), or
        ``"missing"``. Public: from ``bounds``, the number of bins and the released
        private edges, if any."""
        return [[fb.bin_label(b) for b in range(fb.n_bins)]
                for fb in _explain.term_bins(self)]

    def term_importances(self):
        """The importance of each term: its mean absolute centred score.

        For each term, the released scores of the values the feature can take (every
        bin of a numeric feature, every public category, and the missing value if the
        feature may be missing), centred on their mean, then the mean of their absolute
        values (and over classes, for several). Every bin and category weighs the same:
        interpret weighs them by training-set counts, which are private and were not
        released, so none are used. Post-processing: no privacy cost.

        Returns
        -------
        ndarray of shape (n_features,)
            In score units: log-odds for a classifier, target units for a regressor.
            Not normalised (``feature_importances_`` is, with all bins).

        Examples
        --------
        >>> import numpy as np
        >>> from dptrees import DPExplainableBoostingClassifier
        >>> rng = np.random.default_rng(0)
        >>> X = rng.random((2000, 3))
        >>> y = (X[:, 0] > 0.5).astype(int)
        >>> ebm = DPExplainableBoostingClassifier(epsilon=4.0, bounds=(0, 1),
        ...                                       classes=[0, 1], random_state=0).fit(X, y)
        >>> int(np.argmax(ebm.term_importances()))
        0
        """
        return _explain.term_importances(self)

    def explain(self, *, as_frame=True):
        """The released shape functions as a tidy table, one row per term and value.

        One row per bin of a numeric feature, per public category of a categorical
        column, and for the missing value of a feature that may be missing, with the
        score ``predict`` adds for it: ``raw = intercept_ + sum of the rows a record
        matches`` (for a regressor, in target units: ``predict`` is then ``lower +
        clip(raw / (upper - lower), 0, 1) (upper - lower)`` with ``(lower, upper) =
        y_bounds_``, the intercept being ``intercept_ (upper - lower)``). Computed from
        the released ``term_scores_`` and the public ``bounds`` only: no training data
        is read, and nothing costs privacy.

        Parameters
        ----------
        as_frame : bool, default=True
            Return a pandas DataFrame (pandas is then needed), else a dict of numpy
            arrays with the same columns.

        Returns
        -------
        pandas.DataFrame or dict of ndarray
            Columns: ``term`` (its name), ``term_type`` (``"continuous"`` or
            ``"nominal"``), ``bin`` (its index in ``term_scores_``), ``label`` (the
            interval ``[lower, upper)``, the category or ``"missing"``), ``category``
            (the public category, None for a numeric feature), ``lower`` and
            ``upper`` (the bin's edges in feature units, NaN for a category or the
            missing value), ``missing`` (bool), and ``score``, or ``score_<class>``
            per class for several classes (log-odds for a classifier, target units for
            a regressor).

        Examples
        --------
        A numeric column's bins and a categorical column's public categories (with the
        missing value), from a data frame:

        >>> import numpy as np
        >>> import pandas as pd
        >>> from dptrees import DPExplainableBoostingRegressor
        >>> rng = np.random.default_rng(0)
        >>> frame = pd.DataFrame({"share": rng.random(2000),
        ...                       "colour": rng.choice(["red", "blue"], 2000)})
        >>> y = frame["share"] + (frame["colour"] == "red")
        >>> ebm = DPExplainableBoostingRegressor(
        ...     epsilon=4.0, n_bins=4, bounds={"share": (0, 1), "colour": ["red", "blue"]},
        ...     y_bounds=(0, 2), random_state=0).fit(frame, y)
        >>> ebm.explain()[["term", "term_type", "label"]]
             term   term_type        label
        0   share  continuous    [0, 0.25)
        1   share  continuous  [0.25, 0.5)
        2   share  continuous  [0.5, 0.75)
        3   share  continuous    [0.75, 1]
        4  colour     nominal          red
        5  colour     nominal         blue
        6  colour     nominal      missing
        """
        return _explain.explain(self, as_frame=as_frame)

    def _codes(self, X):
        check_is_fitted(self, "term_scores_")
        X = check_features(X, n_features=self.n_features_in_, estimator=self)
        return self.binner_.transform(X)

    @staticmethod
    def _additive(codes, intercept, scores):
        raw = np.tile(intercept, (codes.shape[0], 1))
        for f in range(codes.shape[1]):
            raw += scores[:, f, codes[:, f]].T
        return raw

    def _raw(self, X):
        return self._additive(self._codes(X), self.intercept_, self.term_scores_)

    def _staged_raw(self, X):
        codes = self._codes(X)
        for intercept, scores in self._history:
            yield self._additive(codes, intercept, scores)


_PARAMS_DOC = """
    n_cycles : "auto" or int, default="auto"
        Cycles over all features (each: one step per feature, then the intercept).
        "auto": ``round(5 sqrt(epsilon))`` in [2, 10]: fewer, less noisy steps when the
        budget is small.
    epsilon : float, default=1.0
        Total privacy budget of the fit.
    delta : float, default=1e-6
        Target delta, in (0, 1).
    learning_rate : float, default=LEARNING_RATE
        Damping of every Newton step.
    n_bins : "auto" or int, default="auto"
        Equal-width bins over the public bounds, in [2, 256]; bin 0 (at the lower bound)
        is the baseline whose score is 0. "auto": ``round(24 epsilon**(1/5))`` in
        [16, 32] (16 up to epsilon 0.15, 24 at 1, 32 from 4): wider bins, with more
        records each, where the noise is large.
    bin_edges : {"auto", "uniform", "private"}, default="auto"
        Where the bins of the numeric features fall. "uniform": ``n_bins``
        equal-width bins of the public bounds (nothing spent). "private": about equal
        shares of the records in each bin, from one noisy dyadic histogram of 1,024
        fine cells per numeric feature, paid with ``edges_budget`` of the budget (one
        more ledger entry; :mod:`dptrees.data.private_edges`). "auto": "private" when
        ``epsilon`` times the initial score's noisy record count (released first) is
        in ``EDGES_EPS_ROWS`` ([2,000, 20,000)) and there are at most 16 numeric
        features, else "uniform" with the edges' share back to the cycles (public
        values and a released one: no extra cost). ``private_edges_`` says which was
        used. Categorical columns keep their categories, missing bins stay last.
    edges_budget : float or "auto", default="auto"
        Share of the fit's zCDP budget spent on the private edges, in (0, 1); the rest
        is shared as without them. "auto":
        :data:`~dptrees.data.private_edges.AUTO_EDGES_SHARE`. Unused where the bins are
        equal-width.
    reg_lambda : float, default=REG_LAMBDA
        L2 regularisation of the steps ``-G / (H + reg_lambda + noise_reg sigma_G)``, in
        units of the Hessian sum (records, for squared error).
    noise_reg : float, default=NOISE_REG
        Further regularisation in units of ``sigma_G``, the standard deviation of the
        noise on a gradient sum (public). Post-processing; 0 turns it off. The regressor's
        default is larger (its clipped gradients are small against the noisy record counts
        in the denominator); both were chosen on validation splits of training rows
        (Adult, California Housing), never on test data.
    max_active : "auto" or int, default="auto"
        How many worst-case releases (per output) each record's per-cycle budget pays
        for; it sets the noise. A record outside bin 0 in more features than this, with
        large gradients, sits out the rest of the cycle's releases (the guarantee holds
        regardless). "auto": ``ceil(0.75 (d + 1))`` where ``d`` is a noisy mean number of
        features per record outside bin 0, released first with 1 % of the budget.
""" + _START_AND_PUBLIC_INPUTS_DOC + """    n_jobs : int, optional
        Threads over blocks of rows for the per-feature sums and score updates
        (``None`` means 1, -1 all cores). The model does not depend on it: the
        statistics are exact integer sums and every update is per record.
    verbose : int, default=0
        Show the cycles' progress (budget spent, time left): a tqdm bar if tqdm is
        installed, else plain lines (see :mod:`dptrees._progress`).
"""

_ATTRIBUTES_DOC = """
    intercept_ : ndarray of shape (n_outputs,)
        The released intercept (initial score plus its steps).
    term_scores_ : ndarray of shape (n_outputs, n_features, n_bins)
        Each feature's released shape function over its ``n_bins_`` bins (bin 0 is 0).
    term_names_ : list of str
        The name of each term (one per feature).
    term_types_ : list of str
        ``"continuous"`` or ``"nominal"`` (a categorical column) for each term.
    bin_edges_ : list of ndarray or None
        Each numeric term's bin edges in feature units (None for a nominal one).
    bin_labels_ : list of list of str
        Each term's label per bin: its interval, its public categories, or "missing".
    n_iter_ : int
        Number of cycles.
    max_active_ : int
        The ``max_active`` used (post-processing of the density release with "auto").
    n_bins_ : int
        The number of bins used.
    private_edges_ : bool
        Whether the fit released private bin edges (what ``bin_edges="auto"``
        resolved to).
    epsilon_spent_, delta_spent_ : float
        The guarantee of the fit: ``(epsilon_spent_, delta_spent_)``-DP for add/remove-one
        neighbours, every record (individual accounting included).
    privacy_ledger_ : list of dict
        Each kind of release: mechanism, sensitivity, budget (``rho`` or ``epsilon``)
        and count (:meth:`privacy_report` prints it).
    rdp_accountant_ : RDPAccountant
        The initial score's release and the filter's zCDP total, composed.
    privacy_leaks_ : list of str
        Public inputs read from the data (empty when the fit is DP).
"""


@estimator_doc
class DPExplainableBoostingRegressor(RegressorMixin, _AdditivePrediction, BoostedRegressorMixin,
                                     _SquaredErrorFit, _BaseDPExplainableBoosting):
    __doc__ = (
        """Differentially private additive model by cyclic boosting (squared error).

    Targets are clipped to the public ``y_bounds`` and rescaled to [0, 1]; gradients are
    ``prediction - target`` clipped to ``gradient_clip``, Hessians are 1 (a bin's Hessian
    sum is its record count). Each record pays for what it contributes (individual
    accounting); every release, its sensitivity and the proof: "Privacy proofs,
    explainable boosting" in the documentation.

    Parameters
    ----------"""
        + _PARAMS_DOC.replace("LEARNING_RATE", "1.0").replace("REG_LAMBDA", "100.0")
        .replace("NOISE_REG", "10.0")
        + """    gradient_clip : float, default=0.3
        Public bound on one record's absolute gradient, in units of the target range.
"""
        + target_domain_doc('regression', _ATTRIBUTES_DOC)
    )


@estimator_doc
class DPExplainableBoostingClassifier(ClassifierMixin, _AdditivePrediction,
                                      BoostedClassifierMixin, _LogLossFit,
                                      _BaseDPExplainableBoosting):
    __doc__ = (
        """Differentially private additive model by cyclic boosting (log-loss).

    Binary: one shape function per feature on ``g = p - y`` (clipped to ``gradient_clip``)
    and ``h = p (1 - p)``; multiclass: one per class and feature on the softmax
    gradients, each a release of its own. Each record pays for what it contributes
    (individual accounting); every release, its sensitivity and the proof: "Privacy
    proofs, explainable boosting" in the documentation.

    Parameters
    ----------"""
        + _PARAMS_DOC.replace("LEARNING_RATE", "0.5").replace("REG_LAMBDA", "1.0")
        .replace("NOISE_REG", "3.0")
        + """    gradient_clip : float, default=1.0
        Public bound on one record's absolute gradient.
"""
        + target_domain_doc('classification', _ATTRIBUTES_DOC)
    )

    learning_rate: float = 0.5
    reg_lambda: float = 1.0
    noise_reg: float = 3.0
    gradient_clip: float = 1.0
