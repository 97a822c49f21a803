"""Private hyperparameter search with a proven total cost.

:class:`DPRandomSearch` tunes any dptrees estimator (anything with ``epsilon`` and
``accountant`` parameters that reports ``epsilon_spent_``) on private data and releases
the best trial's parameters and fitted model. Its total cost is ``epsilon``-DP (pure DP,
``delta = 0``) for add/remove-one neighbouring datasets, whatever the number of trials.

Algorithm
---------
Given the total ``epsilon`` and a public ``mean_trials = 1 / gamma``:

1. Spend ``(epsilon, 0)`` from the accountant, once, before reading the data.
2. Split the rows: every record independently goes to the *validation* part with public
   probability ``validation_fraction`` and to the *fit* part otherwise (one coin per
   record, independent of the data and of every other coin). The split is drawn once.
3. Repeat *trials* until a stopping coin says stop. One trial ``Q``:

   a. draw candidate parameters ``theta`` from ``param_distributions`` with a generator
      that reads no data;
   b. fit a clone of the estimator with ``theta`` and ``epsilon_t = epsilon / 3`` on the
      fit part (its own unlimited ``BudgetAccountant``, so nothing is spent twice; a
      trial whose estimator reports another ``epsilon_spent_``, or any delta, raises);
   c. release a noisy validation score ``s`` of that model on the validation part,
      ``epsilon_t``-DP (see *Scores* below), and a tie-breaking key ``u ~ U(0, 1)``
      drawn without the data.

   After each trial, stop with probability ``gamma``; so the number of trials ``K`` is
   geometric on ``{1, 2, ...}``: ``P[K = k] = gamma (1 - gamma)**(k - 1)``, mean
   ``1 / gamma``. ``K`` is drawn independently of the data, but it is *not* part of the
   release: see "What is not covered" below.
4. Release only the trial with the largest ``(s, u)`` (lexicographic): its parameters,
   its fitted model and its noisy score. No other score is released.

Scores
------
Both scores are of a *fixed* model on the validation part, so a record of the validation
part changes them by its own contribution only:

``"accuracy"``
    the number of correct predictions plus exact discrete Laplace noise of scale
    ``1 / epsilon_t`` (:func:`dptrees.mechanisms.noisy_count`). Sensitivity 1: adding or
    removing one validation record changes the count of correct predictions by 0 or 1.
    All trials share the validation part, so ranking by counts is ranking by accuracy;
    ``best_score_`` is this noisy count (validation rows are not counted, which would cost
    budget).
``"neg_mean_absolute_error"``
    minus the sum of absolute errors clipped to the public ``[0, error_bound]``, with
    :func:`dptrees.mechanisms.noisy_sum` (fixed-point sum plus discrete Laplace noise).
    Sensitivity ``error_bound`` (rounded up to the fixed-point grid inside ``noisy_sum``):
    one record adds or removes one clipped error.

With ``fit(X, y, sample_weight=w)`` (weights in [0, 1], for estimators that take them) the
trials fit on the fit part's weights, and the scores weigh each validation record:
the weighted number of correct predictions (a fixed-point sum of values in [0, 1],
:func:`~dptrees.mechanisms.noisy_sum`, sensitivity 1) or the weighted sum of clipped
errors (each ``w * min(error, error_bound)`` in ``[0, error_bound]``, sensitivity
``error_bound``). A record still adds or removes at most what an unweighted one does, so
the proof below is unchanged.

Proof of the total cost
-----------------------
*One trial is* ``epsilon_t``*-DP.* Let ``D' = D + {r}``. Condition on the coins of all
records other than ``r`` (identically distributed under ``D`` and ``D'``) and on ``r``'s
coin. If ``r`` is in the fit part, the validation parts are equal; the fit is
``epsilon_t``-DP (the estimator's own guarantee, with its own accountant reporting
exactly ``epsilon_t``) and the score is a post-processing of the model with the same
validation data, so ``Q`` is ``epsilon_t``-DP. If ``r`` is in the validation part, the fit
parts are equal, the model has the same distribution, and given the model the score is
``epsilon_t``-DP (sensitivities above); so again ``Q`` is ``epsilon_t``-DP (parallel
composition: the fit and the score read disjoint records). ``theta`` and ``u`` are drawn
without the data. Since the mixture weights (``r``'s coin) are the same under ``D`` and
``D'``, the unconditional output is also ``epsilon_t``-DP; and given the split, trials
are independent and identically distributed.

*The best of a geometric number of trials is* ``3 epsilon_t``*-DP.* This is the
random-stopping result of Liu & Talwar 2019 ("Private selection from private candidates",
STOC 2019, arXiv:1811.07971, Section 3: the best of a geometric number of runs of an
``epsilon``-DP algorithm is ``3 epsilon``-DP); Papernot & Steinke 2022 ("Hyperparameter
tuning with Renyi differential privacy", ICLR 2022) extend it to other distributions of
the number of runs and to Renyi DP. We rely on neither paper's theorem numbering: the
proof is short, so here it is in full, for an output ``y`` of a trial (trials are
ordered by ``(s, u)``; ties have probability 0 through ``u``). With ``q = P[Q(D) = y]``
(a density if needed), ``B = P[Q(D) > y]``, ``B+ = P[Q(D) >= y]``, ``G = 1 - B+`` (so
``G + q = 1 - B``) and the generating function
``sum_k gamma (1 - gamma)**(k - 1) x**k = gamma x / (1 - (1 - gamma) x)``:

    P[A(D) = y] = sum_k gamma (1 - gamma)**(k - 1) ((G + q)**k - G**k)
                = gamma q / ((gamma + (1 - gamma) B) (gamma + (1 - gamma) B+)).

``Q`` is ``epsilon_t``-DP, so from ``D`` to ``D'`` the numerator ``q`` changes by a factor
in ``[e**-epsilon_t, e**epsilon_t]``, and each factor of the denominator, ``gamma + (1 -
gamma) P[event]`` with ``gamma`` fixed, also by such a factor (because ``e**epsilon_t >= 1``
multiplies the fixed ``gamma`` by at least 1). The ratio of output probabilities is hence
within ``e**(+-3 epsilon_t)``: the search is ``3 epsilon_t = epsilon``-DP, conditionally on
the split and therefore (same mixture argument as above) unconditionally. Releasing the
winning trial's model (instead of refitting on all the data) is part of ``y``, so it costs
nothing more. The bound does not depend
on ``mean_trials``: more trials explore more settings at the same cost, but take longer.

Hence the per-trial budget: ``epsilon_t = epsilon / 3`` for every ``mean_trials``.

*What is not covered:* the number of trials ``K`` (kept only in the private attribute
``_n_trials``, for tests and diagnostics, and visible in the running time).
``K`` alone is independent of the data, but together with the winner it is not covered by
the argument above (``P[A = y, K = k]`` contains ``G**(k - 1)``, whose ratio between
neighbours can reach ``e**((k - 1) epsilon_t)``: the best of many trials says more than
the best of one). Publish ``best_params_``, ``best_estimator_`` and ``best_score_`` only.

This requires *pure* DP trials (``delta = 0``): for an estimator with Gaussian noise
(e.g. ``DPGradientBoostingClassifier``'s default), set ``noise="laplace"``; a trial that
reports a positive ``delta_spent_`` raises. (Approximate-DP trials would need the Renyi-DP
version of Papernot & Steinke; not implemented.)

The search *is* data-dependent in one more way: an exception raised by a trial (e.g. an
empty fit part) is visible. Use enough rows.
"""

from __future__ import annotations

from typing import Any, Literal, Self

import inspect
import math

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.utils.validation import check_is_fitted, check_X_y, has_fit_parameter

from dptrees import mechanisms
from dptrees._constraints import (
    ACCOUNTANT,
    EPSILON,
    FRACTION,
    POSITIVE,
    RANDOM_STATE,
    HasMethods,
    options,
    reals,
    validate_params,
)
from dptrees._params import store_params
from dptrees._random import RandomStateLike, check_random_state
from dptrees.accounting import AccountantMixin, BudgetAccountant
from dptrees.validation import check_sample_weight

__all__ = ["DPRandomSearch", "trial_epsilon"]

#: Factor of the random-stopping theorem: the search is ``STOPPING_FACTOR * epsilon_t``-DP.
STOPPING_FACTOR = 3

_SCORINGS = ("accuracy", "neg_mean_absolute_error")
_RESERVED = ("epsilon", "accountant", "random_state")
# scikit-learn renamed force_all_finite to ensure_all_finite in 1.6 (we support >= 1.4).
_FINITE_KEYWORD = ("ensure_all_finite"
                   if "ensure_all_finite" in inspect.signature(check_X_y).parameters
                   else "force_all_finite")
# Relative tolerance when comparing an estimator's reported epsilon with its assignment.
_EPS_RTOL = 1e-9


def trial_epsilon(epsilon: float) -> float:
    """Per-trial epsilon of a search of total ``epsilon``: ``epsilon / 3`` (see module doc).

    Parameters
    ----------
    epsilon : float
        The search's total budget.

    Returns
    -------
    float
    """
    return float(epsilon) / STOPPING_FACTOR


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


class DPRandomSearch(AccountantMixin, MetaEstimatorMixin, BaseEstimator):
    """Differentially private random hyperparameter search (random stopping).

    Runs a geometric number of trials (mean ``mean_trials``), each fitting a clone of
    ``estimator`` with random parameters at ``epsilon / 3`` on a fit part of the rows and
    scoring it with noise on a disjoint validation part, and keeps the best trial's model.
    The whole search is ``epsilon``-DP (pure, ``delta = 0``) for add/remove-one
    neighbours; the proof is in the module docstring.

    Parameters
    ----------
    estimator : estimator
        A dptrees estimator (with ``epsilon`` and ``accountant`` parameters, reporting
        ``epsilon_spent_``), giving pure DP at its ``epsilon`` (e.g. gradient boosting with
        ``noise="laplace"``). Its public inputs (bounds, classes) are set by you.
    param_distributions : dict or list of dicts
        Parameter name -> list of values (uniform choice) or a distribution with
        ``rvs(random_state=...)`` (e.g. ``scipy.stats``). A list of dicts picks one dict
        uniformly per trial. ``epsilon``, ``accountant`` and ``random_state`` are set by
        the search and may not appear.
    epsilon : float, default=1.0
        Total epsilon of the search, > 0.
    mean_trials : float, default=10
        Mean of the geometric number of trials, ``>= 1`` (1 means exactly one trial).
    validation_fraction : float, default=0.2
        Probability that a record goes to the validation part, in (0, 1).
    scoring : {"accuracy", "neg_mean_absolute_error"}, default="accuracy"
    error_bound : float, optional
        Public bound on one record's absolute error, required for
        ``"neg_mean_absolute_error"`` (errors are clipped to it).
    accountant : BudgetAccountant or None
        Pays ``(epsilon, 0)`` once per fit; None for the default.
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
    epsilon_spent_, delta_spent_ : float
    classes_ : ndarray
        The best estimator's, if it has them.
    """

    def __init__(
        self,
        estimator: BaseEstimator,
        param_distributions: (dict[str, Any] | list[dict[str, Any]]
                              | tuple[dict[str, Any], ...]),
        *,
        epsilon: float = 1.0,
        mean_trials: float = 10,
        validation_fraction: float = 0.2,
        scoring: Literal["accuracy", "neg_mean_absolute_error"] = "accuracy",
        error_bound: float | None = None,
        accountant: BudgetAccountant | None = None,
        random_state: RandomStateLike = None,
    ) -> None:
        store_params(self, locals())

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "get_params"])],
        "param_distributions": [dict, list, tuple],
        "epsilon": EPSILON,
        "mean_trials": [reals(1, math.inf, "left")],
        "validation_fraction": [FRACTION],
        "scoring": [options(*_SCORINGS)],
        "error_bound": [None, POSITIVE],
        "accountant": ACCOUNTANT,
        "random_state": RANDOM_STATE,
    }

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
        return float(eps), 1.0 / float(m), float(v), bound, est_params

    # -- one trial's released score ----------------------------------------------------

    def _noisy_score(self, model, X_val, y_val, w_val, epsilon_t, bound, rng):
        """``epsilon_t``-DP score of a fixed ``model`` on the validation rows (weighted by
        ``w_val`` in [0, 1] unless it is None)."""
        predicted = model.predict(X_val) if len(y_val) else np.zeros(0)
        if self.scoring == "accuracy":
            correct = predicted == y_val
            if w_val is None:
                # Sensitivity 1: one validation record adds/removes at most one correct
                # prediction of the fixed model.
                return float(mechanisms.noisy_count(int(np.count_nonzero(correct)),
                                                    epsilon=epsilon_t, random_state=rng))
            # Each record adds its weight in [0, 1] if predicted correctly: sensitivity 1.
            values, bounds = w_val * correct, (0.0, 1.0)
        else:
            # Sensitivity error_bound: one record's error, clipped to [0, error_bound] (and
            # times its weight in [0, 1]), is added or removed (noisy_sum derives it from
            # the bounds).
            errors = np.minimum(np.abs(np.asarray(y_val, dtype=float) - predicted), bound)
            values, bounds = (errors if w_val is None else w_val * errors), (0.0, bound)
        total = float(mechanisms.noisy_sum(values, bounds=bounds, epsilon=epsilon_t,
                                           random_state=rng))
        return total if self.scoring == "accuracy" else -total

    # -- fit ---------------------------------------------------------------------------

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Run the search on ``(X, y)``; spends ``(epsilon, 0)`` once.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Each record's weight in [0, 1], for an estimator whose ``fit`` takes one:
            passed to the trials' fits (fit part) and weighing the validation scores.
            The total cost is unchanged.

        Returns
        -------
        self
        """
        epsilon, gamma, v_frac, bound, est_params = self._check_params()
        # The estimator validates values itself (e.g. NaN handling); here only shapes.
        X, y = check_X_y(X, y, dtype=None, **{_FINITE_KEYWORD: False})
        weights = check_sample_weight(sample_weight, X.shape[0])
        if weights is not None and not has_fit_parameter(self.estimator, "sample_weight"):
            raise ValueError(f"{type(self.estimator).__name__}.fit takes no sample_weight; "
                             "fit the search without weights")
        accountant = self._resolve_accountant()
        epsilon_t = trial_epsilon(epsilon)
        accountant.spend(epsilon, 0.0, label=f"{type(self).__name__}: {epsilon_t:g}-DP "
                         "trials, geometric random stopping (x3)")
        rng = check_random_state(self.random_state)
        split_rng, param_rng, stop_rng, noise_rng, est_rng = rng.spawn(5)
        # One independent coin per record, public probability (see the proof).
        in_val = split_rng.random(X.shape[0]) < v_frac
        X_fit, y_fit, X_val, y_val = X[~in_val], y[~in_val], X[in_val], y[in_val]
        w_val = None if weights is None else weights[in_val]
        fit_params = {} if weights is None else {"sample_weight": weights[~in_val]}
        has_random_state = "random_state" in est_params

        best = None
        n_trials = 0
        while True:
            params = _sample_params(self.param_distributions, param_rng)
            model = clone(self.estimator)
            trial_acc = BudgetAccountant()
            model.set_params(**params, epsilon=epsilon_t, accountant=trial_acc)
            if has_random_state:
                model.set_params(random_state=est_rng.spawn(1)[0])
            model.fit(X_fit, y_fit, **fit_params)
            self._check_trial_spend(model, trial_acc, epsilon_t)
            score = self._noisy_score(model, X_val, y_val, w_val, epsilon_t, bound,
                                      noise_rng)
            key = (score, float(param_rng.random()))  # tie-break drawn without the data
            n_trials += 1
            if best is None or key > best[0]:
                best = (key, params, model)
            if stop_rng.random() < gamma:  # geometric number of trials, mean 1 / gamma
                break

        (self.best_score_, _), self.best_params_, self.best_estimator_ = best
        self._n_trials = n_trials
        self.trial_epsilon_ = epsilon_t
        self.epsilon_spent_ = epsilon
        self.delta_spent_ = 0.0
        if hasattr(self.best_estimator_, "classes_"):
            self.classes_ = self.best_estimator_.classes_
        if hasattr(self.best_estimator_, "n_features_in_"):
            self.n_features_in_ = self.best_estimator_.n_features_in_
        return self

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
                " > 0: the random-stopping theorem used here needs pure-DP trials (for "
                "gradient boosting set noise='laplace')")

    # -- delegation --------------------------------------------------------------------

    def predict(self, X: ArrayLike) -> np.ndarray:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_proba(X)

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.decision_function(X)

    def score(self, X: ArrayLike, y: ArrayLike) -> float:
        """The best estimator's ``score`` (on data you may evaluate non-privately)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.score(X, y)

