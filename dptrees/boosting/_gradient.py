"""Differentially private histogram-based gradient boosting.

Guarantee: ``(epsilon, delta)``-DP with Gaussian noise (Renyi-DP or PLD accounting), pure
``epsilon``-DP with ``noise="laplace"``, for add/remove-one neighbours, given public
``bounds`` and ``y_bounds`` or ``classes``. Sensitivities (one record added or removed):
the initial score's sum and count, or class counts, by 1; a tree's leaf sums by one
clipped gradient and Hessian; a private level's or the split prior's (feature, bin) sums
by ``sqrt(n_features)`` of them in L2 (``n_features`` in L1; 17 cells on wide tables); a
selected split's utilities by one clipped gradient. Every release goes through
:class:`~dptrees.privacy.release_plan.ReleasePlan`. The proof: "Privacy proofs, gradient
boosting" in the documentation (``docs/proofs/boosting.rst``).
"""

from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
import math
from typing import Literal

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from dptrees._constraints import (
    AUTO,
    FRACTION,
    N_JOBS,
    NON_NEGATIVE,
    POSITIVE,
    integers,
    options,
    validate_params,
)
from dptrees._docs import estimator_doc, target_domain_doc
from dptrees._params import Auto, BinEdges, param
from dptrees._parallel import n_threads
from dptrees._sources._heap import empty_tree
from dptrees._progress import Progress
from dptrees.accounting import AccountantMixin
from dptrees.boosting._common import (
    falls_back,
    _HESSIAN_SHARE,
    _START_AND_PUBLIC_INPUTS_DOC,
    _BoostingFitMixin,
    _LogLossFit,
    _SquaredErrorFit,
)
from dptrees.boosting._split_prior import (
    MAX_ACTIVE,
    release_shape,
    split_prior,
    with_first_bins,
)
from dptrees.boosting._grower import (
    PrivateHistogramSplits,
    RandomSplits,
    SelectedSplits,
    grow,
)
from dptrees.boosting._split_selection import split_utilities
from dptrees.boosting._trees import BoostedClassifierMixin, BoostedRegressorMixin, full_tree
from dptrees.mechanisms import selection_constants
from dptrees.privacy.release_plan import ReleasePlan
from dptrees.data.category_order import (CATEGORY_ORDER, ORDER_ATTRIBUTE_DOC, ORDER_BUDGET,
                                         ORDER_PARAMS_DOC, reserve_order)
from dptrees.data.private_edges import BIN_EDGES_AUTO, EDGES_BUDGET, reserve_edges
from dptrees.validation import check_delta, check_epsilon


__all__ = ["DPGradientBoostingClassifier", "DPGradientBoostingRegressor"]

_EDGES_DOC = """    bin_edges : {"auto", "uniform", "private"}, default="auto"
        Where the bins of the numeric features fall. "uniform": ``n_bins``
        equal-width bins of the public bounds (nothing spent). "private": half of
        them at a numeric feature's noisy quantiles, from one noisy dyadic histogram
        of 1,024 fine cells per numeric feature, and half equal-width (a coarse grid
        over heavy tails), paid with ``edges_budget`` of the budget (one more ledger
        entry; :mod:`dptrees.data.private_edges`). "auto": "private" when
        ``epsilon`` times the initial score's noisy record count (released first) is
        at least ``EDGES_EPS_ROWS`` (10,000) and there are at most
        ``EDGES_MAX_FEATURES`` (16) numeric features, else "uniform" with the edges'
        share back to the trees (public values and a released one: no extra cost).
        ``private_edges_`` says which was used. Categorical columns keep their
        categories, missing bins stay last.
    edges_budget : float or "auto", default="auto"
        Share of the fit's budget (its zCDP ``rho``, or ``epsilon`` with Laplace
        noise) spent on the private edges, in (0, 1); the rest is shared as
        without them. "auto": :data:`~dptrees.data.private_edges.AUTO_EDGES_SHARE`.
        Unused where the bins are equal-width.
"""

#: ``select_depth="auto"`` selects the top ``k`` levels of every tree by the exponential
#: mechanism when ``epsilon * noisy record count`` is at least the ``k``-th entry (at most
#: ``max_depth``): below it the selection's share is worth more as leaf accuracy. Chosen
#: on validation rows of five data sets (``experiments/selected_splits_sweep.py``;
#: figures in ``experiments/RESULTS.md``).
SELECT_LEVEL_EPS_ROWS = (1_000, 10_000, 15_000)
#: ... the third level only for at most this many features: on a wide one-hot table
#: (Adult one-hot, about 100 columns) it lost 0.001-0.002 AUC up to 17,500, while
#: California Housing (8), Adult as a frame (12) and Nursery (8) gained or tied from
#: 11,000 (``experiments/boosting_rounds_sweep.py``'s ``select`` configs).
SELECT_THIRD_MAX_FEATURES = 16
#: Where the selection cannot be used (Laplace noise, PLD accounting), ``split="auto"``
#: draws guided splits when ``epsilon * noisy record count`` is at least this: below it the
#: split prior's histogram is too noisy to pay for its share of the budget. Chosen on
#: validation rows of Adult and California Housing; see
#: ``experiments/guided_splits_sweep.py``.
GUIDED_MIN_EPS_ROWS = 10_000
#: ``n_estimators="auto"`` and ``learning_rate="auto"`` take the ``(rounds, learning
#: rate)`` of :data:`SMALL_BUDGET_ROUNDS` when ``epsilon * noisy record count`` is below
#: this (and that many trees' releases can be made), else :data:`DEFAULT_ROUNDS`: with
#: little budget, more trees of smaller steps average more of the noise. Chosen on
#: validation rows (``experiments/boosting_rounds_sweep.py``; figures in
#: ``experiments/RESULTS.md``).
ROUNDS_EPS_ROWS = 1_000
SMALL_BUDGET_ROUNDS = (400, 0.1)
DEFAULT_ROUNDS = (100, 0.3)
#: Below :data:`ROUNDS_EPS_ROWS` of ``epsilon * noisy record count`` every release gives
#: this share of its budget to the Hessian sums (elsewhere 0.2): there a leaf's Hessian
#: sum is far below its noise, the leaf regulariser makes most of the Newton denominator,
#: and the budget does more on the gradient sums. Chosen on validation rows
#: (``experiments/boosting_rounds_sweep.py``'s ``Hessian`` configs;
#: ``experiments/RESULTS.md``).
SMALL_BUDGET_HESSIAN_SHARE = 0.05
#: ``bin_edges="auto"`` releases private edges when ``epsilon * noisy record count`` is
#: at least this, else keeps the equal-width bins and gives their reserved budget back
#: to the trees. The edges place half of each numeric feature's bins at its noisy
#: quantiles and half equal-width (``_EDGES_QUANTILE_SHARE``; pure quantile bins lost
#: on Adult, whose heavy tails carry signal). Chosen on validation rows of Adult and
#: California Housing (``experiments/private_edges_sweep.py``; figures in
#: ``experiments/RESULTS.md``): from about 7,500 both gain or tie, below it California
#: loses. Only for at most ``EDGES_MAX_FEATURES`` numeric features
#: (:mod:`dptrees.data.private_edges`).
EDGES_EPS_ROWS = 10_000
#: ``category_order="auto"`` orders the categories when ``epsilon * noisy record count``
#: is at least this (``experiments/category_order_sweep.py``; ``experiments/RESULTS.md``).
ORDER_EPS_ROWS = 10_000


def hessian_share(eps_rows):
    """The Hessian sums' share of every release's budget at ``epsilon * noisy record
    count`` = ``eps_rows`` (post-processing of the released count)."""
    return SMALL_BUDGET_HESSIAN_SHARE if eps_rows < ROUNDS_EPS_ROWS else _HESSIAN_SHARE


class _BaseDPGradientBoosting(_BoostingFitMixin, AccountantMixin, BaseEstimator):
    """Fitting machinery shared by the DP gradient-boosting estimators, central and
    federated, and the parameters both take (with the federated defaults)."""

    _EDGES_EPS_WINDOW = (EDGES_EPS_ROWS, math.inf)  # bin_edges="auto"

    n_estimators: int = param(100, integers(1, 100_000))
    learning_rate: float = param(0.3, POSITIVE)
    max_depth: int = param(3, integers(1, 16))
    n_bins: int = param(32, integers(2, 256))
    reg_lambda: float = param(1.0, POSITIVE)
    gradient_clip: float = param(1.0, POSITIVE)
    leaf_clip: float | None = param(None, None, POSITIVE)

    @property
    def _composition(self):
        text = super()._composition
        if any(e["mechanism"] == "exponential mechanism"
               for e in getattr(self, "privacy_ledger_", ())):
            text += (" Selected splits (exponential mechanism) are epsilon-DP; with Gaussian "
                     "noise their epsilon-bounded range makes them epsilon**2 / 8 = rho "
                     "zCDP, composed with the rest.")
        return text

    def _check_params(self):
        """Validate the parameters (their constraints, then the privacy rules and their
        combinations) before anything is read or spent; returns ``(epsilon, delta)``."""
        validate_params(self)
        epsilon = check_epsilon(self.epsilon)
        # Gaussian noise needs delta > 0; Laplace noise takes delta = 0.
        delta = check_delta(self.delta, positive=self.noise == "gaussian")
        n_rounds = min(rounds for rounds, _ in self._rounds_candidates())
        if self.batch_size > n_rounds:
            raise ValueError(f"batch_size must be <= n_estimators={n_rounds}, got "
                             f"{self.batch_size}")
        if self.subsample is not None and (
                self.split not in ("auto", "random")
                or (self.noise, self.accounting) != ("gaussian", "rdp")):
            raise ValueError("subsample needs split='random' (or 'auto', which it makes "
                             "'random'), noise='gaussian' and accounting='rdp'")
        if not isinstance(self.select_depth, str) and self.select_depth > 0:
            if self.select_depth > self.max_depth:
                raise ValueError(f"select_depth must be <= max_depth={self.max_depth}, got "
                                 f"{self.select_depth}")
            if (self.split in ("private", "hybrid") or self.subsample is not None
                    or (self.noise, self.accounting) == ("gaussian", "pld")):
                raise ValueError("select_depth > 0 needs random or guided splits (split "
                                 "'auto', 'random' or 'guided'), no subsample, and "
                                 "accounting='rdp' or noise='laplace'")
        return epsilon, (delta if self.noise == "gaussian" else 0.0)

    # -- budget -------------------------------------------------------------------------

    def _structure_candidates(self, n_features):
        """The ``(split, select_depth)`` pairs this fit may use, the fallback first (its
        releases must be realisable; the others are candidates only if theirs are).

        ``split="auto"`` draws random trees, their roots selected where
        ``select_depth="auto"`` says so; where the selection is not used (Laplace noise,
        PLD accounting), blind splits guided by a split prior from
        :data:`GUIDED_MIN_EPS_ROWS`, unless the trees are subsampled."""
        depths = self._select_depth_candidates(n_features)
        if self.split != "auto":
            return [(self.split, depth) for depth in depths]
        if self.subsample is not None or self._gaussian_rdp():
            return [("random", depth) for depth in depths]
        return [("random", depths[0]), ("guided", depths[0])]

    def _gaussian_rdp(self):
        return (self.noise, self.accounting) == ("gaussian", "rdp")

    def _rounds_candidates(self):
        """The ``(n_estimators, learning_rate)`` pairs this fit may use, the fallback
        first: with ``n_estimators="auto"``, :data:`DEFAULT_ROUNDS` then
        :data:`SMALL_BUDGET_ROUNDS` (a given ``learning_rate`` kept); else
        ``n_estimators`` with the given rate, or the default one for ``"auto"``."""
        rate = None if isinstance(self.learning_rate, str) else self.learning_rate
        if not isinstance(self.n_estimators, str):
            return [(self.n_estimators, rate or DEFAULT_ROUNDS[1])]
        return [(n_rounds, rate or auto_rate)
                for n_rounds, auto_rate in (DEFAULT_ROUNDS, SMALL_BUDGET_ROUNDS)]

    def _resolve_structure(self, epsilon, noisy_count, realisable):
        """The ``(split, select_depth, rounds)`` of this fit among the ``realisable``
        ones (:meth:`_rounds_candidates` times :meth:`_structure_candidates`, those whose
        releases can be made, a function of public values; the fallbacks first), from the
        public ``epsilon`` times the released ``noisy_count`` (post-processing): the
        small-budget rounds below :data:`ROUNDS_EPS_ROWS` if realisable, else the
        fallback rounds; then among their structures, of those whose threshold is
        reached, the one of the highest threshold (:data:`GUIDED_MIN_EPS_ROWS` for guided
        splits, the entry of :data:`SELECT_LEVEL_EPS_ROWS` for the number of selected
        levels); else the fallback structure."""
        eps_rows = epsilon * noisy_count
        rounds = [candidate[2] for candidate in realisable]
        rounds = rounds[-1] if eps_rows < ROUNDS_EPS_ROWS else rounds[0]
        fallback, *others = [c[:2] for c in realisable if c[2] == rounds]
        thresholds = [(self._threshold(*structure), structure) for structure in others]
        reached = [pair for pair in thresholds if eps_rows >= pair[0]]
        return (*(max(reached)[1] if reached else fallback), rounds)

    @staticmethod
    def _threshold(split, select_depth):
        """``epsilon x noisy n`` from which ``"auto"`` uses a candidate structure."""
        if split == "guided":
            return GUIDED_MIN_EPS_ROWS
        return SELECT_LEVEL_EPS_ROWS[select_depth - 1]

    def _select_depth_candidates(self, n_features):
        """The selected depths this fit may use: ``select_depth``, or ``"auto"``'s
        choices: 0, and with ``split="auto"``, Gaussian noise accounted in Renyi DP and no
        subsample, 1 up to ``len(SELECT_LEVEL_EPS_ROWS)`` (at most ``max_depth``, and
        2 for more than :data:`SELECT_THIRD_MAX_FEATURES` features, public). (With
        Laplace noise the selection cost the leaves more than it gave on validation rows,
        ``experiments/selected_splits_sweep.py --noise laplace``; PLD accounting has no
        event for it.)"""
        if not isinstance(self.select_depth, str):
            return (self.select_depth,)
        if self.split == "auto" and self.subsample is None and self._gaussian_rdp():
            levels = len(SELECT_LEVEL_EPS_ROWS) - (n_features > SELECT_THIRD_MAX_FEATURES)
            return tuple(range(min(levels, self.max_depth) + 1))
        return (0,)

    def _private_levels(self, split):
        return {"random": 0, "guided": 0, "private": self.max_depth, "hybrid": 1}[split]

    def _tree_budgets(self, plan, n_trees, split, select_depth=0, init=None):
        """(init, split prior, per-tree leaf, per-level structure) budgets: they add up to
        the total. A structure level is a private level's histogram release or a selected
        level's selection (never both: selection is for random and guided trees).
        ``init``: the initial score's budget if it is already spent (before a budget
        reserved for edges went back to the plan)."""
        init = self._init_budget(plan) if init is None else init
        rest = plan.total - init
        prior = self.split_fraction * rest if split == "guided" else 0.0
        per_tree = (rest - prior) / n_trees
        levels = self._private_levels(split) + select_depth
        if levels == 0:
            return init, prior, per_tree, 0.0
        structure = self.split_fraction * per_tree
        return init, prior, per_tree - structure, structure / levels

    # -- one tree -----------------------------------------------------------------------

    def _noisy_histograms(self, ctx, exact, budget, rng, label="split histograms",
                          cells=None, h_unit=1, **details):
        """Release exact int64 sums ``(..., 2)`` of ``(g, h)``: by default the
        (n_nodes, n_features, n_bins, 2) sums of one level's fresh nodes (a record is in
        one bin of each feature: ``cells = n_features``). ``h_unit``: the Hessians' extra
        grid (:func:`~dptrees._sources._rows.clip_active`); ``details`` go to the
        ledger."""
        if cells is None:
            cells = ctx.n_features
        g = exact[..., 0] / ctx.g_scale
        h = exact[..., 1] / (ctx.h_scale * h_unit)
        share = ctx.hessian_share
        g = ctx.plan.release(g, ctx.g_sens, budget * (1 - share), rng, cells,
                             label=f"{label}: gradient sums", **details)
        h = ctx.plan.release(h, ctx.h_sens, budget * share, rng, cells,
                             label=f"{label}: Hessian sums", **details)
        return np.stack([g, h], axis=-1)

    def _split_priors(self, ctx, rows, n_outputs, budget, rng):
        """Release, per output, the sums of the initial gradients and Hessians of all
        records per (feature, bin) (:func:`~dptrees.boosting._split_prior.release_shape`:
        the full histogram, or for more than ``MAX_ACTIVE`` features the totals and every
        cell but the first bins', each record clipped to ``MAX_ACTIVE`` active features;
        the sensitivities are derived in :mod:`dptrees.boosting._split_prior`), each with
        ``budget / n_outputs`` (a record has gradients for every output: sequential
        composition). Returns the split prior each gives (post-processing)."""
        budget = budget / n_outputs
        first_bins, cells = release_shape(ctx.n_features)
        sigma_h = ctx.plan.noise_std(ctx.h_sens * math.sqrt(cells),
                                     budget * ctx.hessian_share)
        root = np.full(1, -1, dtype=np.int32)  # a tree with no split yet: every row at 0
        rows.start_batch()
        priors = []
        for k in range(n_outputs):
            rows.start_tree(k, root, root.copy())
            if first_bins:
                hist = self._noisy_histograms(ctx, rows.histograms(0, [0]), budget, rng,
                                              label="split prior")[0]
            else:
                hist = self._noisy_sparse_histogram(ctx, rows, budget, cells, rng)
            priors.append(split_prior(hist, sigma_h, self.reg_lambda))
        return priors

    def _noisy_sparse_histogram(self, ctx, rows, budget, cells, rng):
        """Release the totals and the cells of every bin but the first of the current
        tree's rows, each row clipped to ``MAX_ACTIVE`` active features (``cells``
        cells a record moves), and return the full histogram they give
        (post-processing)."""
        norm = "l2" if ctx.plan.noise == "gaussian" else "l1"
        # Whole-number Hessians (counts) get a finer grid before they are scaled down.
        h_unit = 2**20 if ctx.h_scale == 1.0 else 1
        exact = rows.histograms(0, [0], active_clip=(MAX_ACTIVE, norm, h_unit))[0]
        # the totals (any feature's bins add up to them), then every cell but the first bins'
        sums = np.concatenate([exact[0].sum(axis=0, keepdims=True),
                               exact[:, 1:].reshape(-1, 2)])
        noisy = self._noisy_histograms(
            ctx, sums, budget, rng, "split prior", cells=cells, h_unit=h_unit,
            note=f"totals and every cell but each feature's first bin; each record scaled "
                 f"to at most {MAX_ACTIVE} features outside their first bins")
        return with_first_bins(noisy[1:].reshape(ctx.n_features, -1, 2), noisy[0])

    def _grow(self, ctx, rows, k, rng_structure, rng_noise, rng_sample):
        """Grow one full tree of depth ``max_depth`` for output ``k`` on ``rows`` (any
        source's rows: their statistics are exact integers, the same for every source)
        with :func:`~dptrees.boosting._grower.grow`, and release its leaves.

        Returns the heap arrays ``feature``, ``bin_threshold`` and the leaf values.
        """
        feature, bin_threshold = empty_tree(self.max_depth)
        policies = self._level_policies(ctx, k, rng_structure, rng_noise)
        rows.start_tree(k, feature, bin_threshold, rng_sample, self.subsample)
        grow(feature, bin_threshold, policies, rows)
        return feature, bin_threshold, self._leaf_values(ctx, rows.leaf_sums(), rng_noise)

    def _level_policies(self, ctx, k, rng_structure, rng_noise):
        """The split policy of every level of output ``k``'s next tree: the top
        :meth:`_private_levels` on noisy histograms (one release of the level's measured
        nodes each, :meth:`_noisy_histograms`), the top ``select_depth`` of random and
        guided trees selected by the exponential mechanism on the exact gradient sums
        (utility and sensitivity: :mod:`dptrees.boosting._split_selection`; one
        selection's budget per level, its nodes hold disjoint records), weighted by the
        split prior of guided trees; the others drawn at random (from the prior)."""
        depth = self.max_depth
        private_levels = self._private_levels(ctx.split)
        prior = None if ctx.priors is None else ctx.priors[k]
        private = selected = random = None
        if private_levels:
            private = PrivateHistogramSplits(
                lambda exact: self._noisy_histograms(ctx, exact, ctx.level_budget, rng_noise),
                self.reg_lambda)
        if private_levels < depth:
            random = RandomSplits(rng_structure, ctx.n_features, self.n_bins, depth, prior)
        if ctx.select_depth:
            selected = SelectedSplits(
                lambda exact: split_utilities(exact[..., 0], ctx.g_scale),
                lambda i, utilities: ctx.plan.select(
                    utilities, ctx.g_sens, ctx.level_budget, rng_noise, prior,
                    compose=i == 0,
                    label="split choice of a selected level (its nodes hold disjoint "
                          "records: one choice per record, tree and level)"),
                self.n_bins)
        return [private if level < private_levels else
                selected if level < ctx.select_depth else random for level in range(depth)]

    def _leaf_values(self, ctx, sums, rng):
        """Release the leaves' exact ``(G, H)`` sums and return their Newton values."""
        subsampled = ctx.plan.subsample is not None
        g = ctx.plan.release(sums[:, 0] / ctx.g_scale, ctx.g_sens,
                             ctx.leaf_budget * (1 - ctx.hessian_share), rng,
                             compose=not subsampled, label="leaf gradient sums")
        h = ctx.plan.release(sums[:, 1] / ctx.h_scale, ctx.h_sens,
                             ctx.leaf_budget * ctx.hessian_share, rng,
                             compose=not subsampled, label="leaf Hessian sums")
        if subsampled:  # G and H of one sample: one subsampled Gaussian
            ctx.plan.compose_subsampled(ctx.leaf_budget,
                                        "leaf gradient and Hessian sums of a Poisson sample")
        values = -g / (np.maximum(h, 0.0) + ctx.leaf_regulariser)
        if self.leaf_clip is not None:
            values = np.clip(values, -self.leaf_clip, self.leaf_clip)
        return values

    # -- fit ----------------------------------------------------------------------------

    def _plan_fit(self, fit):
        """The plan's noise and accounting, the fixed-point scales, and the (structure,
        rounds) pairs whose every release can be realised (``split="auto"`` and
        ``n_estimators="auto"`` are resolved among them after the initial score; the
        fallback rounds' fallback structure must be realisable, other rounds count only
        if their fallback structure is)."""
        self._plan_targets(fit)
        epsilon, delta = fit.params
        source, loss = fit.data.source, fit.loss
        plan = ReleasePlan(self.noise, epsilon, delta, self.accounting, self.subsample)
        fit.edges_budget = reserve_edges(plan, fit.data)
        fit.order_budget = reserve_order(plan, fit.data)
        fit.fixed = fixed = self._fixed_point(loss, source.weights is not None, epsilon)
        structures = self._structure_candidates(source.n_features)
        fit.realisable = []
        for rounds in self._rounds_candidates():
            n_trees = rounds[0] * loss.n_outputs
            for split, depth in structures:
                try:
                    self._check_releases(plan, *self._budgets(plan, n_trees, split, depth),
                                         depth, fixed.g_sens, fixed.h_sens,
                                         source.n_features, loss.n_outputs)
                    fit.realisable.append((split, depth, rounds))
                except ValueError as exc:
                    if (split, depth) != structures[0]:
                        continue
                    if not fit.realisable:  # the fallback rounds' fallback structure
                        raise ValueError(
                            f"epsilon={epsilon!r} (delta={delta!r}) spread over {n_trees} "
                            f"trees is out of the exact samplers' range: {exc}"
                        ) from exc
                    break  # other rounds are candidates only if their fallback is
        return plan

    def _release(self, fit):
        """Boost on the binned rows of the source (any source: the same model)."""
        epsilon, delta = fit.params
        plan, loss, fixed, source = fit.plan, fit.loss, fit.fixed, fit.data.source
        self._release_initial_score(fit)
        rng_init, rng_structure, rng_noise = fit.rngs
        rng_sample = fit.rng.spawn(1)[0] if self.subsample is not None else None
        init_budget, init, noisy_count = fit.init_budget, fit.init, fit.noisy_count
        split, select_depth, rounds = self._resolve_structure(epsilon, noisy_count,
                                                              fit.realisable)
        (n_rounds, learning_rate), fit.n_trees = rounds, rounds[0] * loss.n_outputs
        fit.rounds = rounds
        if falls_back(epsilon, noisy_count, loss):  # the noisy prior, with all the budget
            fit.init = self._fallback_score(plan, loss, fit.init_values, init_budget,
                                            rng_init)
            fit.trees, fit.split, fit.select_depth, fit.priors = [], "none", 0, None
            fit.step = learning_rate / self.batch_size
            return
        _, prior_budget, leaf_budget, level_budget = self._budgets(
            plan, fit.n_trees, split, select_depth, init=init_budget)
        share = hessian_share(epsilon * noisy_count)
        ctx = _Context(
            n_features=source.n_features, plan=plan, g_scale=fixed.g_scale,
            h_scale=fixed.h_scale, g_sens=fixed.g_sens, h_sens=fixed.h_sens, split=split,
            select_depth=select_depth, priors=None,
            leaf_budget=leaf_budget, level_budget=level_budget, hessian_share=share,
            leaf_regulariser=self.reg_lambda + self.noise_reg * plan.noise_std(
                fixed.g_sens, leaf_budget * (1 - share)),
        )
        trees = []
        step = learning_rate / self.batch_size
        threads = n_threads(self.n_jobs)
        with ThreadPoolExecutor(threads) if threads > 1 else nullcontext() as executor:
            rows = source.boosting_rows(loss, fixed, init, self.n_bins, threads, executor)
            if split == "guided":
                ctx.priors = self._split_priors(ctx, rows, loss.n_outputs, prior_budget,
                                                rng_noise)
            progress = Progress(self, n_rounds, "round")
            for round_ in range(n_rounds):
                if round_ % self.batch_size == 0:
                    rows.start_batch()
                round_trees = []
                for k in range(loss.n_outputs):
                    feature, bin_threshold, values = self._grow(ctx, rows, k, rng_structure,
                                                                rng_noise, rng_sample)
                    tree = full_tree(fit.data.binner, feature, bin_threshold, values)
                    rows.add_tree(k, tree, values, step)
                    round_trees.append(tree)
                trees.append(round_trees)
                if round_ % self.batch_size == self.batch_size - 1 or \
                        round_ == n_rounds - 1:
                    rows.end_batch()
                progress.step(epsilon=f"{plan.spent()[0]:.4g} of {epsilon:g}",
                              delta=f"{delta:g}")
            rows.close()
            progress.close()
        fit.trees, fit.split, fit.select_depth = trees, split, select_depth
        fit.priors, fit.init, fit.step = ctx.priors, init, step

    def _record(self, fit):
        super()._record(fit)
        self.estimators_ = fit.trees
        self.split_ = fit.split
        self.select_depth_ = fit.select_depth
        self.n_estimators_, self.learning_rate_ = fit.rounds
        self.private_edges_ = fit.edges_budget > 0
        self.gradient_clip_ = fit.fixed.g_clip
        self.split_priors_ = fit.priors
        self._step = fit.step
        self.init_score_ = fit.init
        self.n_iter_ = len(fit.trees)
        self.n_releases_ = fit.plan.n_releases
        self.pld_accountant_ = fit.plan.pld

    def _budgets(self, plan, n_trees, split, select_depth=0, init=None):
        """:meth:`_tree_budgets`, with the leaf budget of Poisson-subsampled trees."""
        init, prior, leaf, level = self._tree_budgets(plan, n_trees, split, select_depth,
                                                      init)
        if self.subsample is not None:
            leaf = plan.subsampled_budget(init, n_trees)
        return init, prior, leaf, level

    def _check_releases(self, plan, init_budget, prior_budget, leaf_budget, level_budget,
                        select_depth, g_sens, h_sens, n_features, n_outputs):
        """Check every kind of release can be realised, before anything is spent."""
        plan.check(1.0, init_budget / 2, 256)
        if select_depth:
            selection_constants(g_sens, plan.selection_epsilon(level_budget))
            level_budget = 0.0  # no private level: nothing more to check for it
        n_leaves = 2**self.max_depth
        first_bins, prior_cells = release_shape(n_features)
        checks = [(leaf_budget, n_leaves, 1),
                  (level_budget, n_leaves // 2 * n_features * self.n_bins, n_features),
                  (prior_budget / n_outputs,
                   n_features * self.n_bins if first_bins else
                   1 + n_features * (self.n_bins - 1), prior_cells)]
        for budget, n_values, cells in checks:
            if not budget:
                continue
            # the Hessian share is chosen after the initial score: each must be realisable
            for share in (_HESSIAN_SHARE, SMALL_BUDGET_HESSIAN_SHARE):
                plan.check(g_sens, budget * (1 - share), n_values, cells)
                plan.check(h_sens, budget * share, n_values, cells)

class _Context:
    """Per-fit state the tree grower reads."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)


_COMMON_PARAMS_DOC = """
    n_estimators : int or "auto", default="auto"
        Boosting rounds (one tree per round, one per class and round for multiclass);
        the budget after the initial score is split evenly over the trees. ``"auto"``:
        400 when ``epsilon`` times the noisy record count of the initial score is below
        1,000 (:data:`ROUNDS_EPS_ROWS`; with so little budget more trees of smaller steps
        average more of the noise), else 100; 100 also where 400 trees' releases could
        not be made (checked before anything is spent). The number used is
        ``n_estimators_``.
    epsilon : float, default=1.0
        Total privacy budget of the fit.
    delta : float, default=1e-6
        Target delta for ``noise="gaussian"`` (ignored, and 0 is reported, for Laplace).
    noise : {"gaussian", "laplace"}, default="gaussian"
        Gaussian noise with Renyi-DP accounting, or Laplace noise with pure DP.
    accounting : {"rdp", "pld"}, default="rdp"
        For Gaussian noise: the total budget and ``epsilon_spent_`` from Renyi DP
        (zCDP), or from the privacy loss distribution of the composed Gaussians
        (:class:`~dptrees.accounting.PLDAccountant`: about 10-20 % more noise budget for
        the same ``(epsilon, delta)``). Ignored for Laplace noise.
    learning_rate : float or "auto", default="auto"
        Shrinkage of every tree's leaf values. ``"auto"``: 0.1 where
        ``n_estimators="auto"`` chose 400 trees, else 0.3 (also for an ``n_estimators``
        given as a number). The rate used is ``learning_rate_``.
    max_depth : int, default=4
        Depth of every tree (full binary trees: ``2**max_depth`` leaves).
    split : {"auto", "random", "guided", "private", "hybrid"}, default="auto"
        How splits are chosen: uniformly at random with a data-independent generator (no
        budget); at random from a *split prior*, made once from one noisy histogram of the
        initial gradients of all records (``"guided"``: the splits go where the gain is,
        see :mod:`dptrees.boosting._split_prior`); by the best gain on noisy gradient
        histograms at every level; or on noisy histograms at the root and at random
        below. ``"auto"`` is ``"random"``, with the top levels that ``select_depth``
        chooses selected; where nothing is selected for want of Gaussian noise accounted
        in Renyi DP (Laplace noise, PLD accounting), ``"guided"`` when ``epsilon`` times
        the noisy record count of the initial score is at least 10,000 and ``subsample``
        is None. The rule used is ``split_``.
    select_depth : "auto" or int, default="auto"
        How many top levels of every random or guided tree have their splits chosen by
        the exponential mechanism on the current gradients (each node's best division
        of them, noisily; see :mod:`dptrees.boosting._split_selection`) instead of drawn
        blindly; 0 draws them all. ``"auto"``: with ``split="auto"``, 1 (the root) when
        ``epsilon`` times the noisy record count of the initial score is at least 1,000,
        2 from 10,000, 3 from 15,000 with at most 16 features (at most ``max_depth``),
        else 0 (below, the selection's share is worth more to the leaves); with any
        other ``split``, with Laplace noise, ``accounting="pld"`` or ``subsample``, 0.
        Each selected level costs one more pass over the rows per tree.
        A depth of 1 or more needs no ``subsample`` and ``accounting="rdp"`` (or Laplace
        noise). The depth used is ``select_depth_``.
    split_fraction : float, default=0.3
        Share of the budget spent on split statistics: of each tree's budget for
        ``"private"`` and ``"hybrid"`` levels and for the selected levels, of the whole
        budget after the initial score for the split prior of ``"guided"``. Unused by
        ``"random"`` trees without selected levels.
    n_bins : int, default=32
        Bins per feature, in [2, 256]: equal-width over the public bounds, or (see
        ``bin_edges``) at private quantiles.
""" + _EDGES_DOC + """    reg_lambda : float, default=50.0
        L2 regularisation of the Newton leaf values
        ``-G / (H + reg_lambda + noise_reg sigma_G)``, in units of the Hessian sum
        (records, for squared error): it shrinks leaves whose noisy Hessian mass is small.
    noise_reg : float, default=NOISE_REG
        Further regularisation in units of ``sigma_G``, the standard deviation of the
        noise on a leaf's gradient sum (public: set by ``epsilon``, ``delta``, the number
        of trees and ``gradient_clip``). The smaller the budget, the more every leaf is
        shrunk towards 0, so the model stays near its noisy initial score rather than
        following noise. Post-processing: no privacy cost. 0 turns it off. The
        regressor's default is larger than the classifier's: its Hessians are 1 per
        record, against at most 1/4 for log-loss, so the same ``noise_reg`` would
        shrink its noisy leaves several times less
        (``experiments/boosting_defaults_sweep.py``).
    gradient_clip : float
        Public bound on one record's absolute gradient (clipped).
    leaf_clip : float or None, default=None
        Clip every leaf value to ``[-leaf_clip, leaf_clip]`` before shrinkage.
    batch_size : int, default=1
        Trees of a batch are fitted to the same gradients and their values averaged
        (batched updates).
    subsample : float in (0, 1) or None, default=None
        Each tree reads a Poisson sample of the records (each independently with this
        public probability), and the fit is accounted as Poisson-subsampled discrete
        Gaussian releases (privacy amplification by subsampling): less noise per tree
        for the same ``(epsilon, delta)``, and cheaper rounds. ``split="random"`` (or
        ``"auto"``, which then draws random splits), ``noise="gaussian"`` and
        ``accounting="rdp"`` only.
""" + _START_AND_PUBLIC_INPUTS_DOC + """    verbose : int, default=0
        Show the rounds' progress (epsilon spent, time left): a tqdm bar if tqdm is
        installed, else plain lines (see :mod:`dptrees._progress`).
    n_jobs : int, optional
        Threads for the row blocks and the histograms of large nodes. ``None`` means 1,
        -1 all cores (joblib's meaning). The model does not depend on it.
"""

_ATTRIBUTES_DOC = """
    estimators_ : list of lists of Tree
        The trees of each round (one per output).
    init_score_ : ndarray
        The DP initial raw score.
    split_ : str
        The split rule of the fit (what ``split="auto"`` resolved to); ``"none"`` when
        the fit fell back to its starting score (:func:`falls_back`: regression and
        multiclass, ``epsilon`` times the noisy record count below
        ``FALLBACK_EPS_ROWS``; then ``estimators_`` is empty and ``n_iter_`` is 0).
    select_depth_ : int
        The number of selected levels of every tree (what ``select_depth="auto"``
        resolved to).
    n_estimators_ : int
        The number of rounds of the fit (what ``n_estimators="auto"`` resolved to).
    learning_rate_ : float
        The learning rate of the fit (what ``learning_rate="auto"`` resolved to).
    private_edges_ : bool
        Whether the fit released private bin edges (what ``bin_edges="auto"``
        resolved to).
    gradient_clip_ : float
        The gradient clip the fit used (what ``gradient_clip="auto"`` resolved to).
    split_priors_ : list of ndarray or None
        With guided splits, per output the ``(n_features, n_bins - 1)`` probabilities the
        trees drew their splits from (post-processing of released values); else None.
    n_iter_ : int
        Number of rounds.
    epsilon_spent_, delta_spent_ : float
        The guarantee of the fit: ``(epsilon_spent_, delta_spent_)``-DP for add/remove-one
        neighbours (``delta_spent_ = 0`` for Laplace noise).
    privacy_ledger_ : list of dict
        Each kind of release: mechanism, sensitivity, budget (``rho`` or ``epsilon``)
        and count (:meth:`privacy_report` prints it).
    rdp_accountant_ : RDPAccountant or None
        Every Gaussian release of the fit, composed (``accounting="rdp"``).
    pld_accountant_ : PLDAccountant or None
        The same with ``accounting="pld"``.
    n_releases_ : int
        Number of noisy releases (each a vector).
    privacy_leaks_ : list of str
        Public inputs read from the data (empty when the fit is DP).
"""


class _CentralGradientBoosting(_BaseDPGradientBoosting):
    """The parameters of the central gradient-boosting estimators."""

    _EDGES_QUANTILE_SHARE = 0.5  # of the private edges' bins (edges_from_cells)

    n_estimators: int | Auto = param("auto", integers(1, 100_000), AUTO)
    noise: Literal["gaussian", "laplace"] = param("gaussian", options("gaussian", "laplace"))
    accounting: Literal["rdp", "pld"] = param("rdp", options("rdp", "pld"))
    learning_rate: float | Auto = param("auto", POSITIVE, AUTO)
    max_depth: int = 4
    split: Literal["auto", "random", "guided", "private", "hybrid"] = param(
        "auto", options("auto", "random", "guided", "private", "hybrid"))
    select_depth: int | Auto = param("auto", integers(0, 16), AUTO)
    split_fraction: float = param(0.3, FRACTION)
    bin_edges: BinEdges | Auto = param("auto", BIN_EDGES_AUTO)
    edges_budget: float | Auto = param("auto", EDGES_BUDGET)
    reg_lambda: float = 50.0
    noise_reg: float = param(8.0, NON_NEGATIVE)
    batch_size: int = param(1, integers(1))
    subsample: float | None = param(None, None, FRACTION)
    init_fraction: float = param(0.01, FRACTION)
    n_jobs: int | None = param(None, N_JOBS)


@estimator_doc
class DPGradientBoostingRegressor(RegressorMixin, BoostedRegressorMixin, _SquaredErrorFit,
                                  _CentralGradientBoosting):
    __doc__ = (
        """Differentially private gradient-boosted regression trees (squared error).

    Targets are clipped to the public ``y_bounds`` and rescaled to [0, 1]; gradients are
    ``prediction - target`` clipped to ``gradient_clip`` (in units of the target range),
    Hessians are 1, so a leaf's Hessian sum is its record count. See
    :mod:`dptrees.boosting._gradient` for every release and its sensitivity.

    Parameters
    ----------"""
        + _COMMON_PARAMS_DOC.replace("gradient_clip : float",
                                     "gradient_clip : float, default=0.15")
        .replace("NOISE_REG", "8.0")
        + target_domain_doc('regression', _ATTRIBUTES_DOC)
    )

    #: Half the 0.3 it was: half the noise on every leaf, for a bias on large residuals
    #: that cost less on validation rows at every epsilon from 0.05 to 4, in MAE and RMSE
    #: (``experiments/boosting_defaults_sweep.py --param regressor_clip``).
    gradient_clip: float = 0.15

@estimator_doc
class DPGradientBoostingClassifier(ClassifierMixin, BoostedClassifierMixin, _LogLossFit,
                                   _CentralGradientBoosting):
    __doc__ = (
        """Differentially private gradient-boosted classification trees (log-loss).

    Binary: one tree per round on ``g = p - y`` (clipped to ``gradient_clip``) and
    ``h = p (1 - p)`` (at most 1/4). Multiclass: one tree per class and round on the
    softmax gradients; each record touches every class's tree, so a round costs one
    release per class (sequential composition). See :mod:`dptrees.boosting._gradient`
    for every release and its sensitivity.

    Parameters
    ----------"""
        + _COMMON_PARAMS_DOC.replace(
            "gradient_clip : float\n        Public bound on one record's absolute gradient "
            "(clipped).",
            "gradient_clip : float or \"auto\", default=\"auto\"\n        Public bound on one "
            "record's absolute gradient ``|p - y|`` (clipped). \"auto\": 0.5\n        up to "
            "``epsilon = 4``, rising to 1 (no clipping) at ``epsilon = 8``:\n        "
            "less noise where the budget is small.")
        .replace("NOISE_REG", "3.0")
        + ORDER_PARAMS_DOC.replace("``ORDER_EPS_ROWS``", f"{ORDER_EPS_ROWS:,}")
        + target_domain_doc('classification', _ATTRIBUTES_DOC.replace(
            "    gradient_clip_ :", ORDER_ATTRIBUTE_DOC + "    gradient_clip_ :"))
    )

    noise_reg: float = 3.0
    gradient_clip: float | Auto = param("auto", POSITIVE, AUTO)
    category_order: Literal["auto", "listed", "private"] = param("auto", CATEGORY_ORDER)
    order_budget: float | Auto = param("auto", ORDER_BUDGET)

    def _keeps_private_order(self, fit):
        """Whether the pending category order is released (the lifecycle's hook, after
        the charge): always with ``category_order="private"``; with "auto" when
        ``epsilon`` times the initial score's noisy record count, released here first,
        is at least :data:`ORDER_EPS_ROWS` (post-processing of a released value)."""
        self._release_initial_score(fit)
        return (self.category_order == "private"
                or fit.params[0] * fit.noisy_count >= ORDER_EPS_ROWS)

    def _record(self, fit):
        super()._record(fit)
        self.private_category_order_ = fit.order_budget > 0

