"""Private hyperparameter search with a proven total cost.

:class:`DPRandomSearch` tunes any dptrees estimator on private data and releases the best
trial's parameters, fitted model and noisy score. Guarantee, for add/remove-one
neighbours and whatever the number of trials: ``epsilon``-DP with ``delta = 0`` (pure-DP
trials at ``epsilon / 3`` each, Liu & Talwar's random stopping), ``(epsilon, delta)``-DP
with ``delta > 0`` (zCDP trials, Papernot & Steinke's Renyi-DP selection). Each trial
fits on a fit part and is scored with noise on a disjoint validation part: the score's
sensitivity is 1 (accuracy: a count of correct predictions) or ``error_bound`` (clipped
absolute errors). The number of trials is not released. The proof: "Privacy proofs,
private search" in the documentation (``docs/proofs/search.rst``).
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple, Self

import functools
import inspect
import math

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, check_X_y, has_fit_parameter

from dptrees import mechanisms
from dptrees._constraints import (
    ACCOUNTANT,
    DELTA,
    EPSILON,
    FRACTION,
    POSITIVE,
    RANDOM_STATE,
    HasMethods,
    options,
    reals,
    validate_params,
)
from dptrees._params import DeclaredParams, param, positional
from dptrees.privacy.report import PrivacyReportMixin, ledger_entry
from dptrees._random import RandomStateLike, check_random_state
from dptrees.accounting import (
    AccountantMixin,
    BudgetAccountant,
    RDPAccountant,
    best_of_zcdp_budget,
)
from dptrees.validation import check_sample_weight

__all__ = ["DPRandomSearch", "trial_epsilon", "trial_rho"]

#: Factor of the random-stopping theorem: the search is ``STOPPING_FACTOR * epsilon_t``-DP.
STOPPING_FACTOR = 3

_SCORINGS = ("accuracy", "neg_mean_absolute_error")
_RESERVED = ("epsilon", "delta", "accountant", "random_state")
# scikit-learn renamed force_all_finite to ensure_all_finite in 1.6 (we support >= 1.4).
_FINITE_KEYWORD = ("ensure_all_finite"
                   if "ensure_all_finite" in inspect.signature(check_X_y).parameters
                   else "force_all_finite")
# Relative tolerance when comparing an estimator's reported epsilon with its assignment.
_EPS_RTOL = 1e-9


def trial_epsilon(epsilon: float) -> float:
    """Per-trial epsilon of a search of total ``epsilon``: ``epsilon / 3``
    (proof: ``docs/proofs/search.rst``).

    Parameters
    ----------
    epsilon : float
        The search's total budget.

    Returns
    -------
    float
    """
    return float(epsilon) / STOPPING_FACTOR


def trial_rho(epsilon: float, delta: float, mean_trials: float) -> float:
    """Per-trial zCDP budget of a Renyi search of total ``(epsilon, delta)``.

    The largest ``rho`` such that the best of a logarithmic number of ``rho``-zCDP trials
    with mean ``mean_trials`` is ``(epsilon, delta)``-DP
    (:func:`dptrees.accounting.best_of_zcdp_budget`; proof: docs/proofs/search.rst).

    Parameters
    ----------
    epsilon : float
        The search's total epsilon.
    delta : float
        The search's total delta, in (0, 1).
    mean_trials : float
        Mean number of trials, ``>= 1``.

    Returns
    -------
    float
    """
    return best_of_zcdp_budget(epsilon, delta, mean_trials)


def _logarithmic_gamma(mean):
    """The parameter ``gamma`` of the logarithmic distribution ``P[K = k] = (1 -
    gamma)**k / (k log(1 / gamma))`` whose mean ``(1 / gamma - 1) / log(1 / gamma)`` is
    ``mean``, rounded up: a larger ``gamma`` has a smaller mean and a smaller
    ``log(1 / gamma)``, so the accounting for ``mean`` stays an upper bound."""
    if mean == 1:
        return 1.0

    def mean_of(gamma):
        return (1.0 / gamma - 1.0) / -math.log(gamma)

    low, high = 0.0, 1.0  # mean_of decreases from inf (gamma -> 0) to 1 (gamma -> 1)
    for _ in range(200):
        mid = (low + high) / 2
        if mid <= 0 or mid >= 1:  # the bracket is one float wide: log(mid) would be 0
            break
        low, high = (mid, high) if mean_of(mid) > mean else (low, mid)
    return high


def _logarithmic_trials(gamma, rng):
    """One draw of the number of trials from the logarithmic distribution (``gamma = 1``:
    one trial); reads no data."""
    return 1 if gamma >= 1 else int(rng.logseries(1.0 - gamma))


def _sample_params(distributions, rng):
    """One draw of candidate parameters; reads no data.

    ``distributions`` is a dict (or a list of dicts, one chosen uniformly) of name ->
    list of values (one chosen uniformly) or an object with ``rvs(random_state=...)``.
    """
    if isinstance(distributions, (list, tuple)):
        distributions = distributions[int(rng.integers(len(distributions)))]
    params = {}
    for name in sorted(distributions):
        dist = distributions[name]
        if hasattr(dist, "rvs"):
            value = dist.rvs(random_state=rng)
            if isinstance(value, np.generic):
                value = value.item()
        else:
            value = dist[int(rng.integers(len(dist)))]
        params[name] = value
    return params


class _TrialBudget(NamedTuple):
    """One trial's budget: ``epsilon``-DP (pure search, ``rho`` None), or ``rho``-zCDP
    (Renyi search, whose trial estimators get ``(epsilon, delta)``: the conversion of
    slightly less than ``rho``, so that they spend at most ``rho``)."""

    epsilon: float
    delta: float
    rho: float | None

    def estimator_params(self):
        return ({"epsilon": self.epsilon} if self.rho is None
                else {"epsilon": self.epsilon, "delta": self.delta})


@functools.lru_cache(maxsize=64)
def _renyi_trial_budget(epsilon, delta, mean_trials):
    """A Renyi search's :class:`_TrialBudget` (cached: a bisection over dp-accounting's
    selection bound takes a fraction of a second)."""
    rho = trial_rho(epsilon, delta, mean_trials)
    # The estimator turns (epsilon_t, delta) back into a rho (zcdp_budget, rounded down):
    # give it the conversion of a hair less than rho, so that it cannot exceed rho.
    epsilon_t = RDPAccountant().compose_zcdp(rho * (1 - 1e-9)).get_epsilon(delta)
    return _TrialBudget(epsilon_t, delta, rho)


def _noisy_total(values, bound, integral, budget, rng):
    """The sum of ``values`` (each in [0, ``bound``]; booleans counted if ``integral``)
    plus the noise of ``budget``. Sensitivity ``bound``: one record adds or removes one
    value. Pure: discrete Laplace; Renyi: discrete Gaussian, ``budget.rho``-zCDP."""
    if budget.rho is None:
        if integral:
            count = int(np.count_nonzero(values))
            return float(mechanisms.noisy_count(count, epsilon=budget.epsilon,
                                                random_state=rng))
        return float(mechanisms.noisy_sum(values, bounds=(0.0, bound),
                                          epsilon=budget.epsilon, random_state=rng))
    noise_multiplier = 1.0 / math.sqrt(2.0 * budget.rho)
    if integral:
        total, sensitivity = float(np.count_nonzero(values)), 1.0
    else:
        # An exact fixed-point sum below 2**52 (10 bits of headroom in the scale), so
        # that it and one record's rounded value, at most ceil(bound * scale) units, are
        # exact floats: the Gaussian mechanism sees the true sensitivity.
        scale = mechanisms.fixed_point_scale((0.0, bound), max(len(values), 1) * 2**10)
        units, _ = mechanisms.fixed_point_sum(values, bounds=(0.0, bound), scale=scale)
        total, sensitivity = units / scale, math.ceil(bound * scale) / scale
    return float(mechanisms.gaussian_mechanism(total, sensitivity=sensitivity,
                                               noise_multiplier=noise_multiplier,
                                               random_state=rng))


def _delegate(name):
    """The search's method ``name``: the winner's, and only where the winner (before a
    fit, the base estimator) has it (``available_if``)."""
    def has(search):
        return hasattr(getattr(search, "best_estimator_", search.estimator), name)

    @available_if(has)
    def method(self, X: ArrayLike) -> np.ndarray:
        check_is_fitted(self, "best_estimator_")
        return getattr(self.best_estimator_, name)(X)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"The best estimator's ``{name}``."
    return method


class DPRandomSearch(PrivacyReportMixin, AccountantMixin, MetaEstimatorMixin, DeclaredParams,
                     BaseEstimator):
    """Differentially private random hyperparameter search (random stopping).

    Runs a random number of trials (mean ``mean_trials``), each fitting a clone of
    ``estimator`` with random parameters on a fit part of the rows and scoring it with
    noise on a disjoint validation part, and keeps the best trial's model. With
    ``delta=0`` the trials are pure DP at ``epsilon / 3`` and the search is
    ``epsilon``-DP; with ``delta > 0`` they are zCDP (Gaussian noise, the boosting
    estimators' default) and the search is ``(epsilon, delta)``-DP, each trial getting
    about a third of the ``rho`` of one fit at ``epsilon``. For add/remove-one
    neighbours; the proofs are in "Privacy proofs, private search"
    (``docs/proofs/search.rst``).

    Parameters
    ----------
    estimator : estimator
        A dptrees estimator (with ``epsilon`` and ``accountant`` parameters, reporting
        ``epsilon_spent_``). With ``delta=0``: pure DP at its ``epsilon`` (e.g. gradient
        boosting with ``noise="laplace"``, trees, forests). With ``delta > 0``: with a
        ``delta`` parameter and a Renyi accountant ``rdp_accountant_`` showing it is
        zCDP (e.g. gradient or explainable boosting with their default Gaussian noise,
        without ``subsample``). Its public inputs (bounds, classes) are set by you.
    param_distributions : dict or list of dicts
        Parameter name -> list of values (uniform choice) or a distribution with
        ``rvs(random_state=...)`` (e.g. ``scipy.stats``). A list of dicts picks one dict
        uniformly per trial. ``epsilon``, ``delta``, ``accountant`` and ``random_state``
        are set by the search and may not appear.
    epsilon : float, default=1.0
        Total epsilon of the search, > 0.
    delta : float, default=0.0
        Total delta of the search, in [0, 1). 0: a pure-DP search of pure-DP trials;
        > 0: a Renyi search of zCDP trials (e.g. 1e-6, the boosting estimators'
        default).
    mean_trials : float, default=10
        Mean number of trials (geometric with ``delta=0``, logarithmic otherwise),
        ``>= 1`` (1 means exactly one trial). More trials explore more settings; with
        ``delta > 0`` they also cost more (``log(mean_trials)`` in the bound).
    validation_fraction : float, default=0.2
        Probability that a record goes to the validation part, in (0, 1).
    scoring : {"accuracy", "neg_mean_absolute_error"}, default="accuracy"
    error_bound : float, optional
        Public bound on one record's absolute error, required for
        ``"neg_mean_absolute_error"`` (errors are clipped to it).
    accountant : BudgetAccountant or None
        Pays ``(epsilon, delta)`` once per fit; None for the default.
    random_state : None, int or numpy Generator
        None (OS entropy) for a release; seeds are for tests.

    Attributes
    ----------
    best_params_ : dict
    best_estimator_ : estimator
        The winning trial's model (fitted on the fit part; no refit).
    best_score_ : float
        Its noisy validation score (a noisy count of correct predictions, or minus a
        noisy clipped error sum).
    trial_epsilon_ : float
        The ``epsilon`` each trial's estimator was given.
    trial_rho_ : float or None
        The zCDP budget of each trial (Renyi search), None for a pure search.
    epsilon_spent_, delta_spent_ : float
    privacy_ledger_ : list of dict
        The selection, each trial's fit and each trial's noisy score
        (:meth:`privacy_report` prints them).
    privacy_leaks_ : list of str
        Public inputs any trial read from the data (its ``privacy_leaks_``): then the
        search is not differentially private, and :meth:`privacy_report` says so.
    classes_ : ndarray
        The best estimator's, if it has them.

    Notes
    -----
    ``best_estimator_`` is released with the user's ``accountant`` and ``random_state``
    (those of ``estimator``), never a trial's: refitting it or cloning it spends from
    your budget, and no generator of the search travels with it.
    """

    @property
    def _composition(self):
        if self.delta == 0:
            return ("pure epsilon-DP: each trial (a fit on the fit part, a noisy score on "
                    "the disjoint validation part) is epsilon/3-DP; the best of a geometric "
                    "number of them is epsilon-DP (random stopping, Liu & Talwar 2019). "
                    "The number of trials is not released.")
        return ("(epsilon, delta)-DP: each trial is rho_t-zCDP; the best of a logarithmic "
                "number of them is Renyi DP (Papernot & Steinke 2022, theorem 2), "
                "converted to (epsilon, delta). The number of trials is not released.")

    def _public_input_values(self):
        return self.best_estimator_._public_input_values() if hasattr(
            self.best_estimator_, "_public_input_values") else {}

    estimator: BaseEstimator = positional(HasMethods(["fit", "get_params"]))
    param_distributions: (dict[str, Any] | list[dict[str, Any]]
                          | tuple[dict[str, Any], ...]) = positional(dict, list, tuple)
    epsilon: float = param(1.0, EPSILON)
    delta: float = param(0.0, DELTA)
    mean_trials: float = param(10, reals(1, math.inf, "left"))
    validation_fraction: float = param(0.2, FRACTION)
    scoring: Literal["accuracy", "neg_mean_absolute_error"] = param(
        "accuracy", options(*_SCORINGS))
    error_bound: float | None = param(None, None, POSITIVE)
    accountant: BudgetAccountant | None = param(None, ACCOUNTANT)
    random_state: RandomStateLike = param(None, RANDOM_STATE)

    # -- checks ----------------------------------------------------------------------

    def _check_params(self):
        validate_params(self)
        eps, m, v = self.epsilon, self.mean_trials, self.validation_fraction
        bound = None
        if self.scoring == "neg_mean_absolute_error":
            bound = self.error_bound
            if bound is None:
                raise ValueError("scoring='neg_mean_absolute_error' needs a public "
                                 "error_bound > 0, got None")
        est = self.estimator
        est_params = est.get_params(deep=False)
        missing = [p for p in ("epsilon", "accountant") if p not in est_params]
        if missing:
            raise TypeError(
                f"{type(est).__name__} has no {' or '.join(missing)} parameter: the search "
                "needs a dptrees (differentially private) estimator whose epsilon it can "
                "set and whose spending it can check")
        dists = self.param_distributions
        dict_list = list(dists) if isinstance(dists, (list, tuple)) else [dists]
        if not dict_list:
            raise ValueError("param_distributions is empty")
        for d in dict_list:
            if not isinstance(d, dict) or not d:
                raise ValueError(f"param_distributions must be non-empty dicts, got {d!r}")
            for name, dist in d.items():
                if name in _RESERVED:
                    raise ValueError(f"{name!r} is set by the search and cannot be searched")
                if name not in est_params:
                    raise ValueError(
                        f"{name!r} is not a parameter of {type(est).__name__}; valid: "
                        f"{sorted(est_params)}")
                if not hasattr(dist, "rvs"):
                    if isinstance(dist, (str, bytes)) or not hasattr(dist, "__len__") \
                            or len(dist) == 0:
                        raise ValueError(
                            f"the values of {name!r} must be a non-empty list or a "
                            f"distribution with rvs(), got {dist!r}")
        return float(eps), float(self.delta), float(m), float(v), bound, est_params

    # -- one trial's released score ----------------------------------------------------

    def _noisy_score(self, model, X_val, y_val, w_val, budget, bound, rng):
        """Score of a fixed ``model`` on the validation rows (weighted by ``w_val`` in
        [0, 1] unless it is None): ``budget.epsilon``-DP (discrete Laplace) or, in a
        Renyi search, ``budget.rho``-zCDP (discrete Gaussian)."""
        predicted = model.predict(X_val) if len(y_val) else np.zeros(0)
        if self.scoring == "accuracy":
            correct = predicted == y_val
            # Sensitivity 1: one validation record adds or removes at most one correct
            # prediction of the fixed model, or its weight in [0, 1].
            values = correct if w_val is None else w_val * correct
            return _noisy_total(values, 1.0, w_val is None, budget, rng)
        # Sensitivity error_bound: one record's error, clipped to [0, error_bound] (and
        # times its weight in [0, 1]), is added or removed.
        errors = np.minimum(np.abs(np.asarray(y_val, dtype=float) - predicted), bound)
        values = errors if w_val is None else w_val * errors
        return -_noisy_total(values, bound, False, budget, rng)

    # -- fit ---------------------------------------------------------------------------

    def _trial_budget(self, epsilon, delta, mean_trials, est_params):
        """Each trial's budget, from the public parameters only (docs/proofs/search.rst)."""
        if delta == 0:
            return _TrialBudget(trial_epsilon(epsilon), 0.0, None)
        if "delta" not in est_params:
            raise ValueError(
                f"delta={delta!r} > 0 asks for a Renyi search, whose trials are zCDP "
                f"with a delta; {type(self.estimator).__name__} has no delta parameter. "
                "Search pure-DP estimators with delta=0")
        return _renyi_trial_budget(epsilon, delta, mean_trials)

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Run the search on ``(X, y)``; spends ``(epsilon, delta)`` once.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The records, split into the trials' fit and validation parts.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Each record's weight in [0, 1], for an estimator whose ``fit`` takes one:
            passed to the trials' fits (fit part) and weighing the validation scores.
            The total cost is unchanged.

        Returns
        -------
        self
        """
        epsilon, delta, mean_trials, v_frac, bound, est_params = self._check_params()
        # The estimator validates values itself (e.g. NaN handling); here only shapes.
        X, y = check_X_y(X, y, dtype=None, **{_FINITE_KEYWORD: False})
        weights = check_sample_weight(sample_weight, X.shape[0])
        if weights is not None and not has_fit_parameter(self.estimator, "sample_weight"):
            raise ValueError(f"{type(self.estimator).__name__}.fit takes no sample_weight; "
                             "fit the search without weights")
        budget = self._trial_budget(epsilon, delta, mean_trials, est_params)
        accountant = self._resolve_accountant()
        if budget.rho is None:
            label = (f"{type(self).__name__}: {budget.epsilon:g}-DP trials, geometric "
                     "random stopping (x3)")
        else:
            label = (f"{type(self).__name__}: {budget.rho:.4g}-zCDP trials, best of a "
                     f"logarithmic number (mean {mean_trials:g}), Renyi DP")
        accountant.spend(epsilon, delta, label=label)
        rng = check_random_state(self.random_state)
        split_rng, param_rng, stop_rng, noise_rng, est_rng = rng.spawn(5)
        # A trial's generator is released with nothing: with a user-given seed, trials
        # are seeded from it (reproducible, as asked); without one, each trial draws
        # fresh OS entropy, so no generator spawned from this search's root exists
        # outside this fit. Either way the winner gets the user's random_state back.
        seeded = self.random_state is not None
        # One independent coin per record, public probability (see the proof).
        in_val = split_rng.random(X.shape[0]) < v_frac
        X_fit, y_fit, X_val, y_val = X[~in_val], y[~in_val], X[in_val], y[in_val]
        w_val = None if weights is None else weights[in_val]
        fit_params = {} if weights is None else {"sample_weight": weights[~in_val]}
        has_random_state = "random_state" in est_params
        # Renyi search: the number of trials is drawn first (logarithmic); pure search: a
        # stopping coin after each trial (geometric). Neither reads the data.
        n_planned = (None if budget.rho is None
                     else _logarithmic_trials(_logarithmic_gamma(mean_trials), stop_rng))

        best = None
        n_trials = 0
        leaks = []
        while True:
            params = _sample_params(self.param_distributions, param_rng)
            model = clone(self.estimator)
            trial_acc = BudgetAccountant()
            model.set_params(**params, **budget.estimator_params(), accountant=trial_acc)
            if has_random_state:
                model.set_params(random_state=self._trial_random_state(est_rng, seeded))
            model.fit(X_fit, y_fit, **fit_params)
            for leak in getattr(model, "privacy_leaks_", ()):
                if leak not in leaks:
                    leaks.append(leak)
            if budget.rho is None:
                self._check_trial_spend(model, trial_acc, budget.epsilon)
            else:
                self._check_zcdp_trial(model, trial_acc, budget)
            score = self._noisy_score(model, X_val, y_val, w_val, budget, bound, noise_rng)
            key = (score, float(param_rng.random()))  # tie-break drawn without the data
            n_trials += 1
            if best is None or key > best[0]:
                best = (key, params, model)
            if n_planned is None:
                if stop_rng.random() < 1.0 / mean_trials:  # geometric, mean mean_trials
                    break
            elif n_trials >= n_planned:
                break

        (self.best_score_, _), self.best_params_, self.best_estimator_ = best
        self._release(self.best_estimator_, est_params)
        self._n_trials = n_trials
        self.privacy_leaks_ = leaks
        self.privacy_ledger_ = self._ledger(budget, bound, mean_trials)
        self.trial_epsilon_ = budget.epsilon
        self.trial_rho_ = budget.rho
        self.epsilon_spent_ = epsilon
        self.delta_spent_ = delta
        if hasattr(self.best_estimator_, "classes_"):
            self.classes_ = self.best_estimator_.classes_
        if hasattr(self.best_estimator_, "n_features_in_"):
            self.n_features_in_ = self.best_estimator_.n_features_in_
        return self

    @staticmethod
    def _trial_random_state(est_rng, seeded):
        """A trial's ``random_state``: spawned from the user's seed, or None (fresh OS
        entropy in the trial's fit: nothing derived from the search's root)."""
        return est_rng.spawn(1)[0] if seeded else None

    def _release(self, model, est_params):
        """Make the winner a model of the user's: the user's ``accountant`` (a refit or a
        ``clone`` spends from it, never from the trial's unlimited one) and the user's
        ``random_state`` (None unless given: the trial's generator is not released)."""
        released = {"accountant": self.accountant}
        if "random_state" in est_params:
            released["random_state"] = est_params["random_state"]
        model.set_params(**released)

    def _ledger(self, budget, bound, mean_trials):
        """``privacy_ledger_``: each trial's fit and noisy score, and the selection."""
        sensitivity = 1.0 if self.scoring == "accuracy" else float(bound)
        score = {"sensitivity": sensitivity, "count": 1}
        if budget.rho is None:
            score.update(mechanism="discrete Laplace", norm="L1", epsilon=budget.epsilon)
            fit = {"epsilon": budget.epsilon}
            number, mechanism, theorem = ("geometric", "random stopping",
                                          "Liu & Talwar 2019: the best of a geometric "
                                          "number of epsilon_t-DP trials is 3 epsilon_t-DP")
        else:
            score.update(mechanism="discrete Gaussian", norm="L2", rho=budget.rho)
            fit = {"rho": budget.rho}
            number, mechanism, theorem = ("logarithmic", "Renyi DP selection",
                                          "Papernot & Steinke 2022, theorem 2: the best of "
                                          "a logarithmic number of rho_t-zCDP trials, "
                                          "accounted in Renyi DP")
        selection = ledger_entry(
            f"the best trial ({number} number of trials)", mechanism, sensitivity,
            norm="utility", epsilon=self.epsilon, mean_trials=mean_trials,
            note=f"{theorem}; the trials below are not released")
        name = type(self.estimator).__name__
        return [
            selection,
            ledger_entry("each trial's model, fit on the fit part", f"{name}.fit", None,
                         norm="see note",
                         note="see best_estimator_.privacy_report() for its releases; a "
                              "record is in the fit part or the validation part, not both",
                         **fit),
            ledger_entry(f"each trial's {self.scoring}, on the validation part",
                         **score),
        ]

    @staticmethod
    def _check_trial_spend(model, trial_acc, epsilon_t):
        reported = getattr(model, "epsilon_spent_", None)
        if reported is None:
            raise TypeError(f"{type(model).__name__} does not report epsilon_spent_; the "
                            "search cannot check what a trial cost")
        tol = _EPS_RTOL * epsilon_t
        spent_eps, spent_delta = trial_acc.spent
        if abs(float(reported) - epsilon_t) > tol or spent_eps > epsilon_t + tol:
            raise RuntimeError(
                f"a trial of {type(model).__name__} was assigned epsilon={epsilon_t!r} but "
                f"reports epsilon_spent_={reported!r} (its accountant: {spent_eps!r}); the "
                "search's proof needs every trial to be exactly epsilon_t-DP")
        delta = float(getattr(model, "delta_spent_", 0.0) or 0.0)
        if delta > 0 or spent_delta > 0:
            raise ValueError(
                f"a trial of {type(model).__name__} spent delta={max(delta, spent_delta)!r}"
                " > 0: the random-stopping theorem of a search with delta=0 needs pure-DP "
                "trials (for gradient boosting set noise='laplace'), or give the search a "
                "delta > 0 for Gaussian trials")

    @staticmethod
    def _check_zcdp_trial(model, trial_acc, budget):
        """A Renyi search's trial must be ``budget.rho``-zCDP at every order of the
        search's accounting: its own Renyi accountant says so, or the search refuses."""
        name = type(model).__name__
        rdp_accountant = getattr(model, "rdp_accountant_", None)
        if rdp_accountant is None:
            raise ValueError(
                f"a trial of {name} reports no Renyi accountant (rdp_accountant_): a search "
                "with delta > 0 needs trials accounted in Renyi DP (Gaussian noise, "
                "accounting='rdp'); search pure-DP estimators with delta=0")
        curve = dict(zip(rdp_accountant.orders.tolist(), rdp_accountant.rdp.tolist()))
        orders = RDPAccountant().orders.tolist()
        over = [a for a in orders if curve.get(a, math.inf) > budget.rho * a]
        if over:
            raise ValueError(
                f"a trial of {name} is not {budget.rho:.4g}-zCDP at the Renyi orders of "
                f"the search (first failing order: {over[0]!r}; subsampled fits are "
                "accounted at other orders): the theorem of a search with delta > 0 "
                "needs zCDP trials")
        spent_eps, spent_delta = trial_acc.spent
        tol = _EPS_RTOL * budget.epsilon
        if spent_eps > budget.epsilon + tol or spent_delta > budget.delta * (1 + _EPS_RTOL):
            raise RuntimeError(
                f"a trial of {name} was assigned ({budget.epsilon!r}, {budget.delta!r}) but "
                f"spent ({spent_eps!r}, {spent_delta!r})")

    # -- delegation --------------------------------------------------------------------

    def predict(self, X: ArrayLike) -> np.ndarray:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    predict_proba = _delegate("predict_proba")
    predict_log_proba = _delegate("predict_log_proba")
    decision_function = _delegate("decision_function")

    def score(self, X: ArrayLike, y: ArrayLike) -> float:
        """The best estimator's ``score`` (on data you may evaluate non-privately)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.score(X, y)

