"""Tests of ``dptrees.model_selection.DPRandomSearch`` (private hyperparameter search).

The privacy tests: ``test_trial_budget_is_a_third_of_the_total`` (the per-trial budget of
the random-stopping theorem), ``test_number_of_trials_is_geometric`` (the stopping rule
the theorem assumes, with a power check), and the audits of the whole search,
``test_audit_search_within_claim``, ``test_audit_search_sees_the_record_and_stays_within_claim``
and ``test_audit_flags_unnoised_argmax`` (a broken variant releasing the argmax of
un-noised validation scores is refuted in the setting where the real search passes).
"""

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.tree import DecisionTreeClassifier

from dptrees import BudgetAccountant, BudgetExceededError
from dptrees.audit import audit_pair
from dptrees.boosting import DPGradientBoostingClassifier, DPGradientBoostingRegressor
from dptrees.model_selection import DPRandomSearch, trial_epsilon
from support import ALPHA, import_experiment


class _ConstantClassifier(ClassifierMixin, BaseEstimator):
    """Predicts the constant ``c``; its fit reads nothing, but claims ``epsilon``.

    Claiming more than it uses is a valid (loose) statement, so the search's guarantee
    holds; its validation score is as sensitive to one record as a score can be.
    """

    def __init__(self, c=0, epsilon=1.0, accountant=None, random_state=None,
                 misreport=1.0):
        self.c = c
        self.epsilon = epsilon
        self.accountant = accountant
        self.random_state = random_state
        self.misreport = misreport

    def fit(self, X, y):
        if self.accountant is not None:
            self.accountant.spend(self.epsilon)
        self.epsilon_spent_ = self.epsilon * self.misreport
        self.delta_spent_ = 0.0
        self.classes_ = np.array([0, 1])
        return self

    def predict(self, X):
        return np.full(len(X), self.c)


class _ConstantRegressor(RegressorMixin, _ConstantClassifier):
    def fit(self, X, y):
        super().fit(X, y)
        del self.classes_
        return self


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3))
    y = (X[:, 0] > 0.5).astype(int)
    return X, y


def _gb(**kw):
    return DPGradientBoostingClassifier(n_estimators=10, noise="laplace",
                                        bounds=(np.zeros(3), np.ones(3)), classes=[0, 1], **kw)


# -- scikit-learn conventions ---------------------------------------------------------

def test_fit_predict_and_attributes():
    X, y = _data(3000)
    acc = BudgetAccountant(epsilon=4.0, delta=0.0)
    search = DPRandomSearch(_gb(), {"learning_rate": [0.1, 0.3], "max_depth": [2, 3]},
                            epsilon=3.0, mean_trials=3, accountant=acc, random_state=0)
    assert search.fit(X, y) is search
    assert set(search.best_params_) == {"learning_rate", "max_depth"}
    assert search.best_estimator_.get_params()["max_depth"] == search.best_params_["max_depth"]
    assert search._n_trials >= 1
    assert search.trial_epsilon_ == pytest.approx(1.0)
    assert (search.epsilon_spent_, search.delta_spent_) == (3.0, 0.0)
    assert acc.spent == (3.0, 0.0) and len(acc) == 1       # one spend, before the trials
    np.testing.assert_array_equal(search.predict(X), search.best_estimator_.predict(X))
    np.testing.assert_array_equal(search.predict_proba(X),
                                  search.best_estimator_.predict_proba(X))
    np.testing.assert_array_equal(search.classes_, [0, 1])
    assert 0.0 <= search.score(X, y) <= 1.0
    assert search.score(X, y) > 0.7                          # learns the easy rule
    # The estimator passed in is untouched; get_params / clone round-trip.
    assert search.estimator.get_params()["epsilon"] == 1.0
    assert clone(search).get_params()["epsilon"] == 3.0


def test_same_seed_same_result_and_budget_refusal():
    X, y = _data()
    dists = {"learning_rate": [0.1, 0.2, 0.3], "reg_lambda": stats.uniform(10, 90)}
    a = DPRandomSearch(_gb(), dists, epsilon=1.0, mean_trials=3,
                       accountant=BudgetAccountant(), random_state=3).fit(X, y)
    b = DPRandomSearch(_gb(), dists, epsilon=1.0, mean_trials=3,
                       accountant=BudgetAccountant(), random_state=3).fit(X, y)
    assert a.best_params_ == b.best_params_ and a._n_trials == b._n_trials
    assert isinstance(a.best_params_["reg_lambda"], float)
    small = BudgetAccountant(epsilon=0.5, delta=0.0)
    with pytest.raises(BudgetExceededError):
        DPRandomSearch(_gb(), dists, epsilon=1.0, accountant=small).fit(X, y)
    assert small.spent == (0.0, 0.0)
    # accountant=None spends from the block's default accountant.
    block = BudgetAccountant(epsilon=1.0, delta=0.0)
    with block:
        DPRandomSearch(_gb(), dists, epsilon=0.75, mean_trials=1, random_state=0).fit(X, y)
    assert block.spent == (0.75, 0.0)


def test_regression_mae_scoring():
    rng = np.random.default_rng(1)
    X = rng.random((400, 2))
    y = 3 * X[:, 0]
    reg = DPGradientBoostingRegressor(n_estimators=10, noise="laplace",
                                      bounds=(np.zeros(2), np.ones(2)), y_bounds=(0, 3))
    search = DPRandomSearch(reg, {"max_depth": [2, 3]}, epsilon=1.0, mean_trials=2,
                            scoring="neg_mean_absolute_error", error_bound=3.0,
                            accountant=BudgetAccountant(), random_state=0).fit(X, y)
    assert search.best_score_ <= 3.0 * 400  # minus a clipped error sum, plus noise
    assert search.predict(X).shape == (400,)
    with pytest.raises(ValueError, match="error_bound"):
        DPRandomSearch(reg, {"max_depth": [2]}, scoring="neg_mean_absolute_error",
                       accountant=BudgetAccountant()).fit(X, y)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(epsilon=0.0), ValueError, "epsilon"),
    (dict(epsilon=-1.0), ValueError, "epsilon"),
    (dict(epsilon=math.inf), ValueError, "epsilon"),
    (dict(param_distributions={}), ValueError, "non-empty"),
    (dict(param_distributions=[]), ValueError, "empty"),
    (dict(param_distributions={"max_depth": []}), ValueError, "non-empty list"),
    (dict(param_distributions={"no_such_param": [1]}), ValueError, "not a parameter"),
    (dict(param_distributions={"epsilon": [1.0]}), ValueError, "set by the search"),
    (dict(mean_trials=0.5), ValueError, "mean_trials"),
    (dict(validation_fraction=1.0), ValueError, "validation_fraction"),
    (dict(scoring="roc_auc"), ValueError, "scoring"),
    (dict(estimator=DecisionTreeClassifier()), TypeError, "no epsilon"),
])
def test_bad_input(kwargs, error, match):
    X, y = _data(50)
    params = dict(estimator=_gb(), param_distributions={"max_depth": [2]},
                  accountant=BudgetAccountant())
    params.update(kwargs)
    acc = params["accountant"]
    with pytest.raises(error, match=match):
        DPRandomSearch(**params).fit(X, y)
    assert acc.spent == (0.0, 0.0)  # nothing spent on bad input


def test_trials_must_spend_exactly_their_pure_budget():
    X, y = _data(50)
    with pytest.raises(RuntimeError, match="reports epsilon_spent_"):
        DPRandomSearch(_ConstantClassifier(misreport=2.0), {"c": [0, 1]},
                       accountant=BudgetAccountant(), random_state=0).fit(X, y)
    gaussian = DPGradientBoostingClassifier(n_estimators=5, bounds=(np.zeros(3), np.ones(3)),
                                            classes=[0, 1])
    with pytest.raises(ValueError, match="pure-DP trials"):
        DPRandomSearch(gaussian, {"max_depth": [2]}, accountant=BudgetAccountant(),
                       random_state=0).fit(X, y)


# -- the theorem's budget and stopping rule -----------------------------------------------

class _Recorder(_ConstantClassifier):
    log = []

    def fit(self, X, y):
        type(self).log.append((self.epsilon, len(y), self.accountant))
        return super().fit(X, y)


@pytest.mark.parametrize("epsilon, mean_trials", [(1.0, 1), (1.0, 20), (0.3, 5), (6.0, 2.5)])
def test_trial_budget_is_a_third_of_the_total(epsilon, mean_trials):
    # Liu & Talwar 2019 / Papernot & Steinke 2022 (eta = 1): the best of a geometric
    # number of eps_t-DP trials is 3 eps_t-DP, whatever the mean number of trials.
    assert trial_epsilon(epsilon) == epsilon / 3
    X, y = _data(200)
    _Recorder.log = []
    acc = BudgetAccountant(epsilon=epsilon, delta=0.0)
    search = DPRandomSearch(_Recorder(), {"c": [0, 1]}, epsilon=epsilon,
                            mean_trials=mean_trials, accountant=acc, random_state=5).fit(X, y)
    assert len(_Recorder.log) == search._n_trials
    for eps_t, n_fit, trial_acc in _Recorder.log:
        assert eps_t == pytest.approx(epsilon / 3, rel=1e-15)
        assert trial_acc is not acc and trial_acc.spent == (eps_t, 0.0)
        assert 0 < n_fit < 200  # the fit part only
    assert acc.spent == (epsilon, 0.0)
    if mean_trials == 1:
        assert search._n_trials == 1


def _trial_counts(n_runs, mean_trials, seed):
    X, y = _data(20)
    rng = np.random.default_rng(seed)
    return np.array([
        DPRandomSearch(_ConstantClassifier(), {"c": [0, 1]}, mean_trials=mean_trials,
                       accountant=BudgetAccountant(), random_state=rng).fit(X, y)._n_trials
        for _ in range(n_runs)])


def _geometric_chi2_pvalue(counts, mean):
    gamma = 1.0 / mean
    edges = np.arange(1, 12)                 # cells 1..10 and ">= 11"
    probs = stats.geom.pmf(edges[:-1], gamma)
    probs = np.append(probs, stats.geom.sf(edges[-2], gamma))
    observed = np.append([np.sum(counts == k) for k in edges[:-1]], np.sum(counts > 10))
    return stats.chisquare(observed, probs * len(counts)).pvalue


def test_number_of_trials_is_geometric():
    counts = _trial_counts(1500, 3.0, seed=11)
    assert counts.min() >= 1
    assert _geometric_chi2_pvalue(counts, 3.0) > 1e-3
    # Power: the same test rejects a geometric of another mean and a fixed count.
    assert _geometric_chi2_pvalue(counts, 3.6) < 1e-3
    assert _geometric_chi2_pvalue(np.full(1500, 3), 3.0) < 1e-3


# -- audits of the whole search --------------------------------------------------------

# D0: three records no candidate predicts correctly (label 2); D1 adds one record of
# label 1, which only the candidate c = 1 predicts. With the record in the validation
# part the noisy count of c = 1 is one higher: the released choice of c shows it.
_X0 = np.zeros((3, 1))
_Y0 = np.array([2, 2, 2])
_X1 = np.zeros((4, 1))
_Y1 = np.array([2, 2, 2, 1])
_CLAIM = 0.6            # total epsilon: 0.2 per trial
_AUDIT = dict(n_calibration=2_000, n_test=8_000, batch=False, alpha=ALPHA)


class _UnNoisedSearch(DPRandomSearch):
    """Broken: releases the argmax of the exact validation scores."""

    def _noisy_score(self, model, X_val, y_val, w_val, epsilon_t, bound, rng):
        correct = model.predict(X_val) == y_val
        return float(correct.sum() if w_val is None else w_val @ correct)


class _WeightedConstantClassifier(_ConstantClassifier):
    """:class:`_ConstantClassifier` whose ``fit`` takes (and ignores) sample weights."""

    def fit(self, X, y, sample_weight=None):
        return super().fit(X, y)


def _sampler(cls, X, y, claim=_CLAIM, mean_trials=5, weights=None):
    estimator = _ConstantClassifier() if weights is None else _WeightedConstantClassifier()

    def sample(rng):
        search = cls(estimator, {"c": [0, 1]}, epsilon=claim,
                     mean_trials=mean_trials,
                     validation_fraction=0.95, accountant=BudgetAccountant(),
                     random_state=rng).fit(X, y, sample_weight=weights)
        return search.best_params_["c"]
    return sample


# With sample weights: D0's records weigh 0.5, D1's extra record 1 (the most it may).
_W0, _W1 = np.full(3, 0.5), np.array([0.5, 0.5, 0.5, 1.0])


def _audit(cls, seed, claim=_CLAIM, mean_trials=5, weighted=False, **kwargs):
    w0, w1 = (_W0, _W1) if weighted else (None, None)
    return audit_pair(_sampler(cls, _X0, _Y0, claim, mean_trials, w0),
                      _sampler(cls, _X1, _Y1, claim, mean_trials, w1),
                      random_state=seed, **{**_AUDIT, **kwargs})


@pytest.mark.slow
def test_audit_search_within_claim():
    # The setting in which the broken variant below is refuted.
    res = _audit(DPRandomSearch, seed=0)
    print(res.summary())
    res.assert_within(_CLAIM)


@pytest.mark.slow  # 8-9 s: run by .ci/run after the default suite
def test_audit_search_sees_the_record_and_stays_within_claim():
    # At a larger budget the audit detects the record (a positive lower bound: it has
    # power against this search), and the bound stays below the claim.
    claim = 9.0
    res = _audit(DPRandomSearch, seed=2, claim=claim, mean_trials=2,
                 n_calibration=1_000, n_test=4_000)
    print(res.summary())
    assert res.epsilon_lower_bound > 0.1, res.summary()
    res.assert_within(claim)


@pytest.mark.slow
def test_audit_flags_unnoised_argmax():
    res = _audit(_UnNoisedSearch, seed=1)
    print(res.summary())
    assert not res.check(_CLAIM), res.summary()


@pytest.mark.slow
def test_audit_weighted_search_within_claim():
    # The weighted scores: a validation record of weight 1 adds at most 1 to them.
    res = _audit(DPRandomSearch, seed=3, weighted=True)
    print(res.summary())
    res.assert_within(_CLAIM)


@pytest.mark.slow
def test_audit_flags_unnoised_weighted_argmax():
    res = _audit(_UnNoisedSearch, seed=4, weighted=True)
    print(res.summary())
    assert not res.check(_CLAIM), res.summary()


def test_sample_weight_goes_to_the_trials_and_their_estimator_must_take_it():
    X, y = _data()
    w = np.round(np.random.default_rng(5).random(len(y)) * 1024) / 1024  # on the grid
    seen = []

    class Spy(_WeightedConstantClassifier):
        def fit(self, X, y, sample_weight=None):
            seen.append(sample_weight)
            return super().fit(X, y)

    search = DPRandomSearch(Spy(), {"c": [0, 1]}, epsilon=0.6, accountant=BudgetAccountant(),
                            random_state=0).fit(X, y, sample_weight=w)
    assert seen and all(s is not None and len(s) < len(w) for s in seen)
    assert set(np.concatenate(seen)) <= set(w)
    assert search.epsilon_spent_ == 0.6
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match="takes no sample_weight"):
        DPRandomSearch(_ConstantClassifier(), {"c": [0, 1]}, epsilon=0.6,
                       accountant=acc).fit(X, y, sample_weight=w)
    with pytest.raises(ValueError, match=r"sample_weight must be in \[0, 1\]"):
        DPRandomSearch(Spy(), {"c": [0, 1]}, epsilon=0.6,
                       accountant=acc).fit(X, y, sample_weight=w + 1)
    assert acc.spent == (0.0, 0.0)


def test_weighted_search_with_a_boosted_model():
    X, y = _data(2000)
    w = np.where(X[:, 0] > 0, 1.0, 0.5)
    search = DPRandomSearch(_gb(), {"learning_rate": [0.1, 0.3]}, epsilon=3.0,
                            accountant=BudgetAccountant(), random_state=0)
    search.fit(X, y, sample_weight=w)
    assert search.best_params_["learning_rate"] in (0.1, 0.3)
    assert search.epsilon_spent_ == 3.0 and search.score(X, y) > 0.6


# -- the Adult benchmark script ----------------------------------------------------------

def test_benchmark_quick():
    script = import_experiment("private_search_adult")
    if not script.cb.adult.uci.data_available():
        pytest.skip(f"shared UCI data not found at {script.cb.adult.uci.DATA_DIR}")
    res = script.main(["--quick"])
    assert set(res["columns"]) == set(script.COLUMNS)
    for column in res["columns"].values():
        assert 0.5 <= column["accuracy"]["mean"] <= 1.0
        assert 0.0 <= column["auc"]["mean"] <= 1.0
    (search,) = res["searches"]
    assert (search["epsilon_spent"], search["delta_spent"]) == (1.0, 0.0)
    assert set(search["best_params"]) == set(script.SPACE)
