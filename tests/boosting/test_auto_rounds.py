"""``n_estimators="auto"`` / ``learning_rate="auto"`` of gradient boosting.

The rule: 400 trees at learning rate 0.1 below ``ROUNDS_EPS_ROWS`` of ``epsilon x noisy
record count`` (the count the initial score releases), 100 at 0.3 from it; the per-tree
budget is split over the chosen number of trees, every candidate's releases checked
before anything is spent.
"""

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from dptrees import BudgetAccountant
from dptrees.boosting import DPGradientBoostingRegressor, _gradient
from support import boosting_classifier, one_informative_feature

AUTO = dict(n_estimators="auto", learning_rate="auto", max_depth=2)


def ledger_entry(est, release):
    (entry,) = [e for e in est.privacy_ledger_ if e["release"] == release]
    return entry


def leaf_releases(est):
    return ledger_entry(est, "leaf gradient sums")["count"]


@pytest.mark.parametrize("epsilon, expected", [(0.1, (400, 0.1)), (0.2, (400, 0.1)),
                                               (0.3, (100, 0.3)), (1.0, (100, 0.3))])
def test_auto_resolves_from_epsilon_times_the_noisy_count(epsilon, expected):
    # 4,000 records: eps x n is 400 or 800 (below ROUNDS_EPS_ROWS), 1,200 or 4,000
    assert _gradient.ROUNDS_EPS_ROWS == 1_000
    assert (_gradient.SMALL_BUDGET_ROUNDS, _gradient.DEFAULT_ROUNDS) == ((400, 0.1),
                                                                         (100, 0.3))
    X, y = one_informative_feature()
    auto = boosting_classifier(epsilon=epsilon, **AUTO).fit(X, y)
    assert (auto.n_estimators_, auto.learning_rate_) == expected
    assert auto.n_iter_ == len(auto.estimators_) == expected[0] == leaf_releases(auto)
    # the whole budget, over the chosen number of trees
    assert auto.epsilon_spent_ == pytest.approx(epsilon, rel=1e-9)
    assert auto.epsilon_spent_ <= epsilon
    explicit = boosting_classifier(epsilon=epsilon, n_estimators=expected[0],
                                   learning_rate=expected[1], max_depth=2).fit(X, y)
    np.testing.assert_array_equal(auto.predict_proba(X), explicit.predict_proba(X))


def test_the_defaults_are_auto():
    for est in (boosting_classifier(), DPGradientBoostingRegressor()):
        defaults = type(est)().get_params()
        assert defaults["n_estimators"] == defaults["learning_rate"] == "auto"


def test_the_released_count_decides(monkeypatch):
    """The same noisy count gives the same choice whatever the true count."""
    real = _gradient._BaseDPGradientBoosting._initial_score
    released = {}

    def initial_score(*args):
        init, _ = real(*args)
        return init, released["count"]

    monkeypatch.setattr(_gradient._BaseDPGradientBoosting, "_initial_score",
                        staticmethod(initial_score))
    X, y = one_informative_feature()
    for n_rows in (1_000, 4_000):
        for count, expected in ((4_999.0, 400), (5_000.0, 100)):  # eps x count vs 1,000
            released["count"] = count
            est = boosting_classifier(epsilon=0.2, **AUTO).fit(X[:n_rows], y[:n_rows])
            assert est.n_estimators_ == expected


def test_resolution_is_post_processing_of_the_count():
    est = boosting_classifier(**AUTO)
    small, default = _gradient.SMALL_BUDGET_ROUNDS, _gradient.DEFAULT_ROUNDS
    realisable = [("random", 0, default), ("random", 1, default), ("random", 0, small),
                  ("random", 1, small)]
    assert est._resolve_structure(0.1, 9_999.0, realisable) == ("random", 0, small)
    assert est._resolve_structure(0.1, 10_000.0, realisable) == ("random", 1, default)
    # the small ensemble is not realisable: the fallback
    assert est._resolve_structure(0.1, 10.0, realisable[:2]) == ("random", 0, default)


def test_explicit_values_still_work():
    X, y = one_informative_feature()
    est = boosting_classifier(epsilon=0.2, n_estimators=7, learning_rate=0.2).fit(X, y)
    assert (est.n_estimators_, est.learning_rate_, est.n_iter_) == (7, 0.2, 7)
    # a number of rounds given: "auto" is the default rate, whatever the budget
    for epsilon in (0.2, 1.0):
        est = boosting_classifier(epsilon=epsilon, n_estimators=20,
                                  learning_rate="auto").fit(X, y)
        assert (est.n_estimators_, est.learning_rate_) == (20, 0.3)
    # a rate given: "auto" rounds follow the rule, the rate is kept
    for epsilon, expected in ((0.2, 400), (1.0, 100)):
        est = boosting_classifier(epsilon=epsilon, n_estimators="auto", learning_rate=0.5,
                                  max_depth=2).fit(X, y)
        assert (est.n_estimators_, est.learning_rate_) == (expected, 0.5)


def test_the_regressor_follows_the_rule():
    X, y = one_informative_feature()
    for epsilon, expected in ((0.2, (400, 0.1)), (0.5, (100, 0.3))):
        est = DPGradientBoostingRegressor(epsilon=epsilon, max_depth=2, bounds=(0.0, 1.0),
                                          y_bounds=(0.0, 1.0), random_state=0,
                                          accountant=BudgetAccountant()).fit(X, y)
        assert (est.n_estimators_, est.learning_rate_) == expected
        assert est.epsilon_spent_ == pytest.approx(epsilon, rel=1e-9)


def test_falls_back_where_the_small_budget_ensemble_cannot_be_realised(monkeypatch):
    real = _gradient._BaseDPGradientBoosting._check_releases

    def check(self, plan, init, prior, leaf, *args):
        if leaf < plan.total / 200:  # the per-tree budget of 400 trees, not of 100
            raise ValueError("out of range")
        return real(self, plan, init, prior, leaf, *args)

    monkeypatch.setattr(_gradient._BaseDPGradientBoosting, "_check_releases", check)
    X, y = one_informative_feature()
    est = boosting_classifier(epsilon=0.1, **AUTO).fit(X, y)
    assert (est.n_estimators_, est.learning_rate_) == (100, 0.3)
    with pytest.raises(ValueError, match="out of range"):
        boosting_classifier(epsilon=0.1, n_estimators=400, learning_rate=0.1,
                            accountant=BudgetAccountant(1.0, 1e-3)).fit(X, y)


@pytest.mark.parametrize("params", [dict(n_estimators="many"), dict(n_estimators=0),
                                    dict(n_estimators=2.5), dict(learning_rate="fast"),
                                    dict(learning_rate=0.0), dict(learning_rate=-0.1)])
def test_invalid_values_are_refused(params):
    X, y = one_informative_feature(n=200)
    with pytest.raises(InvalidParameterError):
        boosting_classifier(**params).fit(X, y)


def test_batch_size_is_checked_against_the_smaller_ensemble():
    X, y = one_informative_feature(n=200)
    with pytest.raises(ValueError, match="batch_size must be <= n_estimators=100"):
        boosting_classifier(batch_size=101, **AUTO).fit(X, y)


@pytest.mark.parametrize("epsilon, n_estimators, share", [
    (0.1, "auto", 0.05), (0.2, 30, 0.05), (0.3, "auto", 0.2), (1.0, 30, 0.2)])
def test_hessian_share_follows_epsilon_times_the_noisy_count(epsilon, n_estimators, share):
    # 4,000 records: eps x n 400 and 800 (below ROUNDS_EPS_ROWS), 1,200 and 4,000; the
    # share follows the budget, not the number of trees
    assert _gradient.hessian_share(999.9) == _gradient.SMALL_BUDGET_HESSIAN_SHARE == 0.05
    assert _gradient.hessian_share(1_000.0) == 0.2
    X, y = one_informative_feature()
    est = boosting_classifier(epsilon=epsilon, n_estimators=n_estimators, max_depth=2,
                              learning_rate=0.1).fit(X, y)
    g, h = (ledger_entry(est, f"leaf {sums} sums")["rho"]
            for sums in ("gradient", "Hessian"))
    assert h / (g + h) == pytest.approx(share, rel=1e-9)
    assert est.epsilon_spent_ <= epsilon


def test_both_hessian_shares_are_checked_before_anything_is_spent():
    """The share is chosen after the initial score, so the plan checks both."""
    checked = []

    class Plan:
        def check(self, sensitivity, budget, n_values, cells=1):
            checked.append((sensitivity, budget))

    est = boosting_classifier(max_depth=2)
    est._check_releases(Plan(), 0.01, 0.0, 1.0, 0.0, 0, 0.5, 0.25, 3, 1)
    leaves = checked[1:]  # after the initial score's
    assert sorted(b for s, b in leaves if s == 0.25) == pytest.approx([0.05, 0.2])
    assert sorted(b for s, b in leaves if s == 0.5) == pytest.approx([0.8, 0.95])
