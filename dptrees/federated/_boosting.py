"""Client-level DP federated gradient boosting: one tree per federated round.

Guarantee: ``(epsilon, delta)``-DP for neighbouring federations that differ by one whole
client (about ``(2 epsilon, 2 e**epsilon delta)`` for one record inside a client, by group
privacy), given public bounds, targets or classes and hyper-parameters. Tree structures
are drawn without the data; each round every sampled client sends its per-leaf ``(G, w
H)`` sums, clipped to L2 norm ``S`` whatever its number of records, through one
:class:`~dptrees.federated.DPAggregator`. The proof: "Privacy proofs, federated training"
in the documentation (``docs/proofs/federated.rst``).
"""

import copy
import math
from typing import Literal, Self

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import ClassifierMixin, RegressorMixin

from dptrees._params import Auto, param
from dptrees._constraints import (
    AUTO,
    POSITIVE,
    integers,
    options,
    reals,
    validate_params,
)
from dptrees._docs import estimator_doc, target_domain_doc
from dptrees._lifecycle import run_fit
from dptrees.privacy.report import CLIENT, RECORD
from dptrees._progress import Progress
from dptrees._sources import _rows
from dptrees._sources._heap import empty_tree
from dptrees.federated._client_rows import ClientRows
from dptrees.federated._laplace import LaplaceAggregator
from dptrees.federated._plan import FederatedPlan
from dptrees.data.tables import BOUNDS_DOC, keeps_columns_on_failure
from dptrees.exceptions import EarlyStopWarning
from dptrees.boosting._common import _LogLossFit, _SquaredErrorFit, falls_back
from dptrees.boosting._gradient import _BaseDPGradientBoosting
from dptrees.boosting._grower import RandomSplits, grow
from dptrees.boosting._trees import BoostedClassifierMixin, BoostedRegressorMixin, full_tree
from dptrees.federated._protocol import (
    AdaptiveClip,
    DPAggregator,
    FixedClip,
    _delta_after_rounds,
    noise_multiplier_for,
)
from dptrees.validation import (
    check_delta,
    check_epsilon,
    warn_privacy_leak,
    warn_user,
)

__all__ = ["DPFederatedGradientBoostingClassifier", "DPFederatedGradientBoostingRegressor"]

#: The Hessian sums enter a client's vector weighted by the public
#: ``w = _HESSIAN_FACTOR * gradient_clip / hessian_bound`` (0.5 for log-loss with
#: ``gradient_clip=1``, 0.0625 for squared error with 0.5): the noise on a leaf's Hessian
#: sum is ``1 / w`` times that on its gradient sum. Hessian sums add up coherently while
#: gradient sums cancel, so without the weight they would fill most of the clipping bound
#: (cf. ``_HESSIAN_SHARE`` of the centralised estimators).
_HESSIAN_FACTOR = 0.125


# ======================================================================================
# Public pieces: the structure, the model clients download
# ======================================================================================


#: The neighbours of a fit without ``clients``: every record is a client of its own.
RECORD_CLIENTS = RECORD + " (fitted without `clients`: every record is a client of its own)"


class _PublicModel:
    """What the server has released so far (clients download it when sampled)."""

    def __init__(self, n_outputs, step):
        self.init_score = None
        self.trees = []  # per round, one Tree per output
        self.step = step
        self.n_outputs = n_outputs


# ======================================================================================
# Validation
# ======================================================================================


def check_clients(clients, n_samples, n_clients):
    """Validate the per-row client ids; returns (ids as intp, K). ``clients=None``
    makes every row a client of its own (ids ``0 .. n_samples - 1``)."""
    if clients is None:
        if n_clients is not None and n_samples > n_clients:
            raise ValueError(f"without `clients` every row is a client of its own, but X has "
                             f"{n_samples} rows and n_clients={n_clients}")
        return np.arange(n_samples, dtype=np.intp), n_samples if n_clients is None else n_clients
    ids = np.asarray(clients)
    if ids.ndim == 2 and ids.shape[1] == 1:
        ids = ids.ravel()
    if ids.ndim != 1:
        raise ValueError(f"clients must be a 1D array of client ids, got shape {ids.shape}")
    if ids.shape[0] != n_samples:
        raise ValueError(f"clients has {ids.shape[0]} entries but X has {n_samples} rows: "
                         "give one client id per row")
    if ids.dtype.kind == "f":
        if not np.all(np.isfinite(ids)) or np.any(ids != np.round(ids)):
            raise ValueError("clients must hold integer client ids (no NaN, inf or fractions)")
    elif ids.dtype.kind not in "iu":
        raise TypeError(f"clients must hold integer client ids, got dtype {ids.dtype}")
    if ids.shape[0] and ids.min() < 0:
        raise ValueError(f"client ids must be >= 0, got {ids.min()}")
    ids = ids.astype(np.intp)
    largest = int(ids.max()) if ids.shape[0] else -1
    if n_clients is None:
        if largest < 0:
            raise ValueError("no clients: X is empty")
        return ids, largest + 1  # read from the data: the caller warns and records it
    if largest >= n_clients:
        raise ValueError(f"client id {largest} is out of range for n_clients={n_clients} "
                         "(ids must be in 0 .. n_clients - 1)")
    return ids, n_clients


# ======================================================================================
# Estimators
# ======================================================================================


class _BaseDPFederatedGradientBoosting(_BaseDPGradientBoosting):
    """Federated fitting; prediction is the centralised estimators' (same trees)."""

    sampling_probability: float | None = param(None, None, reals(0, 1, "right"))
    expected_clients: float | None = param(None, None, POSITIVE)
    noise_multiplier: float | Auto = param("auto", POSITIVE, AUTO)
    clip_norm: float | Literal["adaptive"] | AdaptiveClip = param(
        1.0, POSITIVE, options("adaptive"), AdaptiveClip)
    n_clients: int | None = param(None, None, integers(1))
    accounting: Literal["auto", "rdp", "pld"] = param("auto", options("auto", "rdp", "pld"))

    @keeps_columns_on_failure
    def fit(self, X: ArrayLike, y: ArrayLike, clients: ArrayLike | None = None,
            sample_weight: ArrayLike | None = None) -> Self:
        """Fit across the clients given by ``clients``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Or rows read in blocks (a ``numpy.memmap``, :class:`~dptrees.Blocks`,
            :class:`~dptrees.Parquet`) or a Dask array or dataframe: the rows are binned
            where they are and the simulation keeps their one-byte bin codes, sorted by
            client (never the features as float64); the model is the same, bit for bit.
        y : array-like of shape (n_samples,)
        clients : array-like of int of shape (n_samples,), default=None
            The client (data holder) of each row, ids in ``0 .. n_clients - 1``. None
            makes every row a client of its own: the guarantee is then for one record.
            A metadata-routed fit parameter (``set_fit_request(clients=True)``), so that
            pipelines and cross-validation pass it along.
        sample_weight : array-like of shape (n_samples,), default=None
            Each record's weight, in [0, 1]: it scales the record's count, target,
            gradient and Hessian in its client's vectors. The guarantee is unchanged
            (each client's vector is clipped whatever its records weigh). All ones give
            the model fitted without weights.

        Returns
        -------
        self
        """
        return run_fit(self, X, y, sample_weight, clients=clients)

    def _check_params(self):
        """Validate the parameters (their constraints, then the privacy rules and their
        combinations) before anything is read or spent; returns ``(epsilon, delta)``."""
        validate_params(self)
        epsilon = check_epsilon(self.epsilon)
        delta = check_delta(self.delta, positive=True)
        if self.sampling_probability is not None and self.expected_clients is not None:
            raise ValueError("give sampling_probability or expected_clients, not both")
        return epsilon, delta

    def _noise_and_accounting(self, epsilon, delta, q, n_rounds):
        """``(z, accounting)`` of the fit, from public inputs only.

        ``z``: ``noise_multiplier``, or for ``"auto"`` the least that lets the
        initial-score round and ``n_rounds`` tree rounds run
        (:func:`noise_multiplier_for`). ``accounting="auto"``: Renyi DP, unless it
        cannot certify those rounds (``noise_multiplier="auto"``) or even the first round
        (a given ``z``) within the budget: then the privacy loss distribution, which is
        tighter (at very small epsilon, integer Renyi orders certify nothing).
        """
        if self.accounting != "auto":
            return (self._noise_multiplier(epsilon, delta, q, n_rounds, self.accounting),
                    self.accounting)
        try:
            z = self._noise_multiplier(epsilon, delta, q, n_rounds, "rdp")
        except ValueError:  # no noise lets Renyi DP certify the rounds
            return self._noise_multiplier(epsilon, delta, q, n_rounds, "pld"), "pld"
        # a z found for Renyi DP fits all the rounds; a given z must fit the first one
        if (isinstance(self.noise_multiplier, str)
                or _delta_after_rounds("rdp", epsilon, q, z, 1) <= delta):
            return z, "rdp"
        return z, "pld"

    def _noise_multiplier(self, epsilon, delta, q, n_rounds, accounting):
        """``noise_multiplier``, or for ``"auto"`` :func:`noise_multiplier_for` the
        initial-score round and ``n_rounds`` tree rounds under ``accounting``."""
        if isinstance(self.noise_multiplier, str):
            return noise_multiplier_for(epsilon, delta, q, n_rounds + 1,
                                        accounting=accounting)
        return float(self.noise_multiplier)

    def _laplace_aggregator(self, fit, epsilon, q, rng):
        """The initial score alone, as one Laplace round: pure epsilon-DP, with less
        noise than a Gaussian round at any ``delta`` for such a small budget.

        A client's ``[sum of targets, count]`` is clipped to L1 norm ``sqrt(2) S``, the
        smallest L1 ball that holds the L2 ball of radius ``S``: no vector that the
        Gaussian round would leave whole is clipped. (An adaptive bound starts at its
        initial value and has nothing to adapt to in one round.)
        """
        s = self._make_clip().clip_norm
        return LaplaceAggregator(fit.n_clients, q, FixedClip(math.sqrt(2.0) * s), epsilon,
                                 rounds=1, accountant=fit.accountant, random_state=rng)

    def _make_clip(self):
        if isinstance(self.clip_norm, AdaptiveClip):
            return copy.copy(self.clip_norm)  # a fresh copy: the bound moves during the fit
        if self.clip_norm == "adaptive":
            return AdaptiveClip(1.0)
        return FixedClip(float(self.clip_norm))

    # -- the fit's hooks (dptrees._lifecycle) -------------------------------------------

    def _open_fit_data(self, fit, X, y, sample_weight, clients=None):
        fit.clients = clients
        return self._prepare(X, y, sample_weight, self._task)

    def _plan_fit(self, fit):
        """The clients, the sampling probability, the noise and the accounting, from
        public inputs (or recorded as leaks); the aggregator that realises them, checked
        to allow at least the initial-score round before anything is spent."""
        epsilon, delta = fit.params
        prepared = fit.data
        fit.loss, fit.n_classes, fit.targets = self._targets(prepared)
        # the simulation keeps every record's one-byte codes, sorted by client
        fit.codes, labels = prepared.source.rows_in_memory()
        fit.loss_targets = _rows.loss_targets(labels, fit.loss)
        ids, n_clients = check_clients(fit.clients, fit.codes.shape[0], self.n_clients)
        fit.ids, fit.n_clients = ids, n_clients
        if self.n_clients is None:
            # K sets the noise's divisor q K, the bit normalisation, the default bit
            # noise and (with expected_clients) q itself: read from the data, it leaks.
            prepared.leaks.append(warn_privacy_leak("the number of clients",
                                                    param="n_clients"))
        if self.expected_clients is not None:
            if self.expected_clients > n_clients:
                raise ValueError(f"expected_clients={self.expected_clients} is more than the "
                                 f"{n_clients} clients")
            q = self.expected_clients / n_clients
        else:
            q = 0.1 if self.sampling_probability is None else float(self.sampling_probability)
        fit.rng_structure, rng_aggregator = fit.rng.spawn(2)
        # too few clients for the budget (squared error): the initial score alone, one
        # Laplace round unless a noise multiplier is given (a rule of public inputs:
        # boosting's own); one round gains nothing from sampling, so by default it
        # reads every client. The multiclass federated model stays above the majority
        # class without it.
        falls = self._task == "regression" and falls_back(epsilon, n_clients, fit.loss)
        fit.n_rounds = 0 if falls else self.n_estimators
        if (fit.n_rounds == 0 and self.expected_clients is None
                and self.sampling_probability is None):
            q = 1.0
        try:
            if fit.n_rounds == 0 and isinstance(self.noise_multiplier, str):
                aggregator = self._laplace_aggregator(fit, epsilon, q, rng_aggregator)
            else:
                z, accounting = self._noise_and_accounting(epsilon, delta, q, fit.n_rounds)
                aggregator = DPAggregator(n_clients, q, z,
                                          self._make_clip(), epsilon, delta,
                                          accounting=accounting, accountant=fit.accountant,
                                          random_state=rng_aggregator)
        except ValueError as exc:
            raise ValueError(f"invalid federated DP settings: {exc}") from exc
        if not aggregator.can_run_round():
            raise ValueError(
                f"epsilon={epsilon!r}, delta={delta!r} do not allow even the initial-score "
                f"round with noise_multiplier={aggregator.noise_multiplier:g} and sampling "
                f"probability {q:g}: raise noise_multiplier or lower the sampling probability"
            )
        return FederatedPlan(aggregator, RECORD_CLIENTS if fit.clients is None else CLIENT)

    def _release(self, fit):
        epsilon, delta = fit.params
        plan, loss, binner = fit.plan, fit.loss, fit.data.binner
        aggregator = plan.aggregator
        init_kind, n_classes = self._task, fit.n_classes
        n_features = fit.codes.shape[1]
        n_outputs = loss.n_outputs
        depth = self.max_depth
        n_leaves = 2**depth
        weights = fit.data.source.weights
        hessian_weight = _HESSIAN_FACTOR * float(self.gradient_clip) / loss.hessian_bound
        fixed = self._fixed_point(loss, weights is not None)
        model = _PublicModel(n_outputs, float(self.learning_rate))
        rows = ClientRows(fit.codes, fit.loss_targets, fit.ids, fit.n_clients, weights)
        history = []

        def run_round(kind, label, updates_of, dimension):
            sampled = aggregator.sample_clients()
            clip_norm = aggregator.clip_norm
            contributions = rows.contributions(sampled, updates_of(sampled), clip_norm,
                                               aggregator.frac_bits, aggregator.norm_ord)
            noisy_sum = plan.aggregate(contributions, dimension, label) * \
                aggregator.expected_clients
            history.append({"round": aggregator.rounds, "kind": kind,
                            "n_sampled": int(sampled.shape[0]), "clip_norm": clip_norm,
                            "delta": aggregator.history_delta()})
            return noisy_sum, clip_norm

        # The DP initial score: noisy sums in units of the clipping bound (one fully
        # clipped client is worth 1), so that the losses' floor of 1 is one client.
        init_dim = 2 if init_kind == "regression" else n_classes
        noisy, s = run_round(
            "init", "initial score: client class counts or target sums",
            lambda sampled: rows.init_updates(sampled, init_kind, n_classes), init_dim)
        noisy = noisy / s
        if init_kind == "regression":
            init = loss.init_score(noisy[0], noisy[1])
        else:
            init = loss.init_score(noisy)
        model.init_score = np.asarray(init, dtype=np.float64)

        dimension = 2 * n_outputs * n_leaves
        progress = Progress(self, fit.n_rounds, "round")
        for round_ in range(fit.n_rounds):
            if not aggregator.can_run_round():
                break
            # random trees, grown without the data; their leaves are the round's release
            structures = [grow(*empty_tree(depth), [RandomSplits(
                fit.rng_structure, n_features, self.n_bins, depth)] * depth)
                for _ in range(n_outputs)]
            rows.sync(model)
            noisy, s = run_round(
                "tree", "per-leaf gradient and weighted Hessian sums, one round per "
                "boosting round", lambda sampled: rows.tree_updates(
                    sampled, structures, loss, fixed, hessian_weight), dimension)
            g = noisy[:n_outputs * n_leaves].reshape(n_outputs, n_leaves)
            h = noisy[n_outputs * n_leaves:].reshape(n_outputs, n_leaves) / hessian_weight
            # reg_lambda in units of the noise standard deviation of a leaf's Hessian sum
            reg = self.reg_lambda * aggregator.update_noise_multiplier * s / hessian_weight
            values = -g / (np.maximum(h, 0.0) + reg)
            if self.leaf_clip is not None:
                values = np.clip(values, -self.leaf_clip, self.leaf_clip)
            model.trees.append([full_tree(binner, f, b, values[k])
                                for k, (f, b) in enumerate(structures)])
            progress.step(clients=history[-1]["n_sampled"], clip=f"{s:.4g}",
                          delta=f"{aggregator.spent()[1]:.3g} of {delta:g} at epsilon "
                                f"{epsilon:g}")
        progress.close()

        if len(model.trees) < fit.n_rounds:
            warn_user(
                f"{type(self).__name__} stopped after {len(model.trees)} of "
                f"{self.n_estimators} boosting rounds: one more round would push delta past "
                f"{delta:g} at epsilon={epsilon:g} (noise_multiplier="
                f"{aggregator.noise_multiplier:g}, sampling probability "
                f"{aggregator.sampling_probability:g}). Lower "
                "n_estimators, or raise noise_multiplier or epsilon, to run them all.",
                EarlyStopWarning)
        fit.model, fit.history, fit.hessian_weight = model, history, hessian_weight

    def _record(self, fit):
        aggregator, model = fit.plan.aggregator, fit.model
        binner = fit.data.binner
        for name, value in fit.targets.items():
            setattr(self, name, value)
        self._records_are_clients = fit.clients is None
        self.estimators_ = model.trees
        self._step = model.step
        self.init_score_ = model.init_score
        self.n_iter_ = len(model.trees)
        self.binner_ = binner
        self.n_features_in_ = fit.codes.shape[1]
        self.bounds_ = (binner.lower.copy(), binner.upper.copy())
        self.privacy_leaks_ = list(fit.data.leaks)
        self.n_clients_ = fit.n_clients
        self.sampling_probability_ = aggregator.sampling_probability
        self.noise_multiplier_ = aggregator.noise_multiplier
        self.accounting_ = aggregator.accounting
        self.n_rounds_ = aggregator.rounds
        self.epsilon_spent_, self.delta_spent_ = (float(v) for v in aggregator.spent())
        self.rdp_accountant_ = aggregator.rdp_accountant
        self.clip_norm_ = aggregator.clip_norm
        self.history_ = fit.history
        self.hessian_weight_ = fit.hessian_weight
        self.privacy_ledger_ = fit.plan.ledger()

    @property
    def _neighbours(self):
        return RECORD_CLIENTS if getattr(self, "_records_are_clients", False) else CLIENT
    _composition = ("every federated round is a Poisson-subsampled discrete Gaussian "
                    "mechanism on the sum of clipped client vectors, composed at integer "
                    "Renyi orders (or with a PLD accountant); training stops before a "
                    "round would push delta at epsilon past the delta bound. A fit that "
                    "falls back to its initial score alone makes that one round a "
                    "discrete Laplace mechanism on L1-clipped vectors instead: pure "
                    "epsilon-DP, delta 0. The fit charges its (epsilon, delta) to its "
                    "accountant once.")


_PARAMS_DOC = """
    n_estimators : int, default=100
        Largest number of boosting rounds (one federated round each; a multiclass round
        grows one tree per class). Fewer are run if the next would pass ``delta``. None
        at all for squared error when ``epsilon * n_clients`` is below
        ``FALLBACK_EPS_ROWS`` (:func:`~dptrees.boosting._common.falls_back`, public
        inputs): then the fit is the initial score alone and, unless a sampling
        probability is given, every client takes part (``q = 1``). With
        ``noise_multiplier="auto"`` that round is a Laplace release
        (:class:`~dptrees.federated.LaplaceAggregator`: each client's ``[sum of
        targets, count]`` clipped to L1 norm ``sqrt(2) clip_norm``, pure
        ``epsilon``-DP, ``delta_spent_ = 0``), else a Gaussian one at the given ``z``.
    epsilon : float, default=1.0
        Client-level epsilon at which delta is tracked.
    delta : float, default=1e-6
        Bound on the client-level delta: training stops *before* a round that would pass
        it (``n_iter_`` says how many rounds ran). Keep it below ``1 / n_clients``.
    sampling_probability : float or None, default=None
        ``q``: every client takes part in a round independently with this probability
        (Poisson sampling, the amplification the accountant assumes). None: 0.1, or
        ``expected_clients / n_clients``.
    expected_clients : float or None, default=None
        Alternative to ``sampling_probability``: ``q = expected_clients / K``.
    noise_multiplier : float or "auto", default="auto"
        ``z``: noise standard deviation over the sensitivity of a round. Rounds and
        noise trade off at a fixed budget through about ``q / z`` (for ``z`` of a few).
        "auto": the least ``z`` with which the initial-score round and all
        ``n_estimators`` rounds fit ``(epsilon, delta)`` at the sampling probability
        (:func:`~dptrees.federated._protocol.noise_multiplier_for`, public inputs only);
        the fitted ``noise_multiplier_`` gives it.
    clip_norm : float, "adaptive" or AdaptiveClip, default=1.0
        ``S``, the public bound on the L2 norm of a client's vector of per-leaf sums.
        "adaptive" tracks the median norm privately (Andrew et al. 2021, starting at 1).
    learning_rate : float, default=0.3
        Shrinkage of every tree's leaf values.
    max_depth : int, default=3
        Depth of every tree (``2**max_depth`` leaves: ``2**(max_depth+1)`` numbers per
        tree in a client's vector; fewer leaves, less noise per leaf).
    n_bins : int, default=32
        Equal-width bins over the public bounds.
    reg_lambda : float, default=1.0
        L2 regularisation of the Newton leaf values
        ``-G / (max(H, 0) + reg_lambda z S / w)`` on the noisy *sums*, in units of the
        standard deviation ``z S / w`` of the noise on a leaf's Hessian sum (``w`` the
        Hessian weight, see :mod:`dptrees.federated._boosting`): ``reg_lambda=1`` shrinks
        a leaf by half when its Hessian mass equals one noise standard deviation. (The
        centralised estimators count it in records; here clipping re-weights records,
        and what a leaf must be protected from is the noise.) Public, scale-free.
    gradient_clip : float
        Public bound on one record's absolute gradient (clipped).
    leaf_clip : float or None, default=None
        Clip every leaf value to ``[-leaf_clip, leaf_clip]`` before shrinkage.
""" + BOUNDS_DOC + """    n_clients : int or None, default=None
        ``K``, the public size of the federation (client ids run from 0 to ``K - 1``;
        an id without rows is a client without records, which takes no part). The noise
        is divided by ``q K`` and the adaptive clip's count is normalised by it, so ``K``
        must be public: None reads it from the data (largest id + 1), warns with a
        ``PrivacyLeakWarning`` and records it in ``privacy_leaks_``.
    accounting : {"auto", "rdp", "pld"}, default="auto"
        How the rounds are composed (:class:`~dptrees.federated.DPAggregator`): Renyi DP,
        or the tighter privacy loss distribution (more rounds for the same budget,
        slower to compute). "auto": Renyi DP unless it cannot certify the rounds in the
        budget (at very small epsilon), then the privacy loss distribution (a choice
        made from public inputs only; ``accounting_`` gives it).
    accountant : BudgetAccountant or None, default=None
        Pays ``(epsilon, delta)`` for the fit, before the first round's release; None
        uses the default accountant.
    random_state : None, int, SeedSequence, BitGenerator or Generator
        Drives the tree structures, the client sampling and the noise.
    verbose : int, default=0
        Show the rounds' progress (sampled clients, clipping bound, delta spent, time
        left): a tqdm bar if tqdm is installed, else plain lines (see
        :mod:`dptrees._progress`).
"""

_ATTRS_DOC = """
    estimators_ : list of lists of Tree
        The trees of each boosting round (one per output).
    init_score_ : ndarray
        The DP initial raw score.
    n_iter_ : int
        Boosting rounds run (at most ``n_estimators``).
    n_rounds_ : int
        Federated rounds run: ``n_iter_ + 1`` (the initial score is one).
    epsilon_spent_, delta_spent_ : float
        The guarantee: ``(epsilon_spent_, delta_spent_)``-DP for neighbouring federations
        that differ by one whole client (the aggregator's ``spent()``: ``epsilon`` and the
        accountant's delta there, at most ``delta``).
    privacy_ledger_ : list of dict
        Each kind of release: mechanism, sensitivity, budget (``rho`` or ``epsilon``)
        and count (:meth:`privacy_report` prints it).
    rdp_accountant_ : RDPAccountant or None
        Every federated round, composed (integer Renyi orders); None with
        ``accounting="pld"``.
    hessian_weight_ : float
        ``w``, the public weight of the Hessian sums in a client's vector.
    history_ : list of dict
        Per federated round: its kind ("init" or "tree"), clients sampled, clipping
        bound, delta after it.
    n_clients_ : int
    sampling_probability_ : float
    noise_multiplier_ : float
        The noise multiplier ``z`` of every round (chosen by "auto", or as given); for
        a Laplace round, its scale over the L1 sensitivity.
    accounting_ : {"rdp", "pld", "pure"}
        How the rounds were composed (chosen by "auto", or as given); "pure" for the
        one Laplace round of a fit that falls back.
    clip_norm_ : float
        The clipping bound after the last round (moves with "adaptive").
    privacy_leaks_ : list of str
        Public inputs read from the data (empty when the fit is DP).
"""


@estimator_doc
class DPFederatedGradientBoostingClassifier(ClassifierMixin, BoostedClassifierMixin,
                                            _LogLossFit, _BaseDPFederatedGradientBoosting):
    __doc__ = (
        """Gradient-boosted classification trees, trained across clients with client-level DP.

    ``fit(X, y, clients)`` simulates a federation from one table: row ``i`` belongs to
    client ``clients[i]``, and each client only ever computes on its own rows (without
    ``clients``, every row is a client of its own: record-level DP). Each
    round the server draws a random tree structure (no data), Poisson-samples clients,
    each sends its clipped vector of per-leaf gradient and Hessian sums (log-loss: binary
    ``g = p - y``, ``h = p (1 - p)``; multiclass, softmax per class), and the server
    releases the leaf values from their noisy sum. The released model is
    ``(epsilon_spent_, delta_spent_)``-DP for federations differing by one client with
    all its records; see :mod:`dptrees.federated._boosting` for every release and its
    sensitivity (a client's vector is clipped to L2 norm ``S``: sensitivity ``S`` plus
    rounding, whatever the client holds).

    Parameters
    ----------"""
        + _PARAMS_DOC.replace("gradient_clip : float", "gradient_clip : float, default=1.0")
        + target_domain_doc('classification', _ATTRS_DOC)
    )


@estimator_doc
class DPFederatedGradientBoostingRegressor(RegressorMixin, BoostedRegressorMixin,
                                           _SquaredErrorFit, _BaseDPFederatedGradientBoosting):
    __doc__ = (
        """Gradient-boosted regression trees, trained across clients with client-level DP.

    Targets are clipped to the public ``y_bounds`` and rescaled to [0, 1]; gradients are
    ``prediction - target`` clipped to ``gradient_clip`` (target-range units), Hessians
    are 1 (a leaf's Hessian sum is a record count). ``fit(X, y, clients)`` as in
    :class:`DPFederatedGradientBoostingClassifier`; see
    :mod:`dptrees.federated._boosting` for every release and its sensitivity (a client's
    vector, ``[sum of targets, count]`` for the initial score and per-leaf ``[G, w H]``
    for a tree, ``w = gradient_clip / 8``, is clipped to L2 norm ``S``).

    Parameters
    ----------"""
        + _PARAMS_DOC.replace("gradient_clip : float", "gradient_clip : float, default=0.5")
        + target_domain_doc('regression', _ATTRS_DOC)
    )

    #: 0.3 until it was swept: 0.5 beat it at every eps from 0.05 to 4 on California
    #: Housing and tied or beat it on Adult-age (``experiments/boosting_defaults_sweep.py
    #: --param federated_regressor_clip``); 0.15, the central regressor's, lost everywhere.
    gradient_clip: float = 0.5

