"""One privacy report on every estimator: its totals are the accountant's and its ledger
lists what was released.

* Pure-DP families (trees, forests, AdaBoost, Laplace boosting): the ledger's
  ``sum(epsilon x count)`` is ``epsilon_spent_``, the epsilon charged to the accountant.
* zCDP families (Gaussian boosting, the EBM): ``sum(rho x count)`` is the budget the
  fit's RDP accountant composed, and it converts to ``epsilon_spent_`` at ``delta``.
* Counts match the releases the fitted model shows (tree depths, trees, rounds).
* The report serialises to JSON, prints, and survives pickling with the model.
"""

import json
import pickle

import numpy as np
import pytest

from dptrees import (
    BudgetAccountant,
    DPAdaBoostClassifier,
    DPDecisionTreeClassifier,
    DPDecisionTreeRegressor,
    DPExplainableBoostingClassifier,
    DPExplainableBoostingRegressor,
    DPExtraTreesRegressor,
    DPGradientBoostingClassifier,
    DPGradientBoostingRegressor,
    DPPartitionForestClassifier,
)
from dptrees.federated import DPFederatedGradientBoostingClassifier

N = 1500


def data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((N, 4))
    return X, (X[:, 0] + X[:, 1] > 1).astype(int), X[:, 0] + 0.5 * X[:, 2]


def fit(est, target="cls", **fit_kw):
    X, y_cls, y_reg = data()
    acc = BudgetAccountant(100.0, 0.5)
    est.set_params(accountant=acc, random_state=3)
    est.fit(X, y_cls if target == "cls" else y_reg, **fit_kw)
    return est, acc


PURE = [
    ("tree-counts", DPDecisionTreeClassifier(classes=[0, 1], bounds=(0, 1), max_depth=4), "cls"),
    ("tree-median", DPDecisionTreeRegressor(bounds=(0, 1), y_bounds=(0, 2), leaf="median"),
     "reg"),
    ("partition-forest", DPPartitionForestClassifier(n_estimators=4, classes=[0, 1],
                                                     bounds=(0, 1)), "cls"),
    ("extra-trees", DPExtraTreesRegressor(n_estimators=4, bounds=(0, 1), y_bounds=(0, 2)),
     "reg"),
    ("adaboost", DPAdaBoostClassifier(classes=[0, 1], bounds=(0, 1), max_depth=2,
                                      schedule="every"), "cls"),
    ("boosting-laplace", DPGradientBoostingRegressor(bounds=(0, 1), y_bounds=(0, 2),
                                                     noise="laplace", n_estimators=6,
                                                     split="hybrid"), "reg"),
    ("boosting-laplace-selected", DPGradientBoostingRegressor(
        bounds=(0, 1), y_bounds=(0, 2), noise="laplace", n_estimators=6, max_depth=3,
        select_depth=2), "reg"),
]

ZCDP = [
    ("boosting-private", DPGradientBoostingClassifier(classes=[0, 1], bounds=(0, 1),
                                                      n_estimators=6, split="private",
                                                      max_depth=3), "cls"),
    ("boosting-random", DPGradientBoostingRegressor(bounds=(0, 1), y_bounds=(0, 2),
                                                    n_estimators=6), "reg"),
    ("boosting-selected", DPGradientBoostingClassifier(classes=[0, 1], bounds=(0, 1),
                                                       n_estimators=6, split="guided",
                                                       select_depth=1), "cls"),
    ("ebm-cls", DPExplainableBoostingClassifier(classes=[0, 1], bounds=(0, 1)), "cls"),
    ("ebm-reg", DPExplainableBoostingRegressor(bounds=(0, 1), y_bounds=(0, 2)), "reg"),
]


@pytest.mark.parametrize("name, est, target", PURE, ids=[p[0] for p in PURE])
def test_pure_dp_ledgers_add_up_to_the_epsilon_charged(name, est, target):
    est, acc = fit(est, target)
    total = sum(e["epsilon"] * e["count"] for e in est.privacy_ledger_)
    assert total == pytest.approx(est.epsilon_spent_, rel=1e-9)
    assert acc.spent[0] == pytest.approx(est.epsilon_spent_, rel=1e-12)
    assert est.delta_spent_ == 0.0
    report = est.privacy_report()
    assert report["epsilon_spent"] == est.epsilon_spent_ and report["delta_spent"] == 0.0
    assert all(e["neighbours"] == "add/remove one record" for e in report["ledger"])


def test_tree_and_forest_counts_are_the_releases_on_a_records_path():
    est, _ = fit(DPDecisionTreeClassifier(classes=[0, 1], bounds=(0, 1), max_depth=4))
    counts = {e["release"].split(" (")[0]: e["count"] for e in est.privacy_ledger_}
    assert counts == {"node counts": est.max_depth_ + 1, "split choices": est.max_depth_,
                      "leaf class counts": 1}
    forest, _ = fit(DPExtraTreesRegressor(n_estimators=4, bounds=(0, 1), y_bounds=(0, 2)),
                    "reg")
    per_tree = {e["release"]: e["count"] for e in
                fit(DPExtraTreesRegressor(n_estimators=1, bounds=(0, 1), y_bounds=(0, 2),
                                          max_depth=forest.max_depth_), "reg")[0]
                .privacy_ledger_}
    fallback_count, *trees = forest.privacy_ledger_
    # the small-budget fallback rule's record count: once per fit, whatever the trees
    assert fallback_count["release"].startswith("record count") and fallback_count["count"] == 1
    for e in trees:  # every record is in each of the 4 trees
        assert e["count"] == 4 * per_tree[e["release"]]
        assert e["epsilon"] == pytest.approx(forest.budget_[
            {"node counts": "count"}.get(e["release"], "split" if "split" in e["release"]
                                         else "leaf")])
    partition, _ = fit(DPPartitionForestClassifier(n_estimators=4, classes=[0, 1],
                                                   bounds=(0, 1)))
    assert partition.privacy_ledger_[0]["count"] == partition.max_depth_ + 1  # one tree


@pytest.mark.parametrize("name, est, target", ZCDP, ids=[z[0] for z in ZCDP])
def test_zcdp_ledgers_add_up_to_what_the_accountant_composed(name, est, target):
    est, acc = fit(est, target)
    rho = sum(e["rho"] * e["count"] for e in est.privacy_ledger_)
    # the RDP accountant's composition of that rho converts to the fit's epsilon
    from dptrees.accounting import RDPAccountant

    check = RDPAccountant()
    check.compose_zcdp(rho)
    assert check.get_epsilon(est.delta_spent_) == pytest.approx(est.epsilon_spent_,
                                                                rel=1e-9)
    assert acc.spent[0] == pytest.approx(est.epsilon, rel=1e-12)
    assert est.epsilon_spent_ <= est.epsilon


def test_gradient_boosting_ledger_counts_every_release():
    est, _ = fit(DPGradientBoostingClassifier(classes=[0, 1], bounds=(0, 1),
                                              n_estimators=6, split="private", max_depth=3))
    counts = {e["release"]: e["count"] for e in est.privacy_ledger_}
    assert counts["leaf gradient sums"] == counts["leaf Hessian sums"] == 6
    # one release per private level's fresh nodes: 3 levels per tree
    assert counts["split histograms: gradient sums"] == 6 * 3
    assert counts["initial score: class counts"] == 1


@pytest.mark.slow  # 5 s: run by .ci/run after the default suite
def test_subsampled_boosting_lists_its_sampling_rate_and_noise():
    est, _ = fit(DPGradientBoostingRegressor(bounds=(0, 1), y_bounds=(0, 2), n_estimators=5,
                                             subsample=0.2), "reg")
    sampled = [e for e in est.privacy_ledger_ if e["mechanism"].startswith("subsampled")]
    assert len(sampled) == 1 and sampled[0]["count"] == 5
    assert sampled[0]["sampling_rate"] == 0.2
    assert sampled[0]["noise_multiplier"] == pytest.approx(1 / np.sqrt(2 * sampled[0]["rho"]))


def test_federated_report_is_client_level_and_counts_the_rounds():
    X, y, _ = data()
    est = DPFederatedGradientBoostingClassifier(classes=[0, 1], bounds=(0, 1), n_clients=150,
                                                n_estimators=5, epsilon=5.0,
                                                random_state=0)
    est.fit(X, y, np.arange(N) % 150)
    report = est.privacy_report()
    assert report["neighbours"].startswith("add/remove one client")
    assert sum(e["count"] for e in report["ledger"]) == est.n_rounds_
    assert report["epsilon_spent"] == est.epsilon_spent_
    assert report["delta_spent"] == est.delta_spent_ <= est.delta


def test_report_serialises_prints_and_survives_pickling():
    est, _ = fit(DPGradientBoostingRegressor(bounds=(0, 1), y_bounds=(0, 2), n_estimators=3),
                 "reg")
    report = est.privacy_report()
    again = json.loads(json.dumps(report))
    assert again["ledger"] == report["ledger"]
    assert json.loads(report.to_json()) == again
    text = str(report)
    assert "DPGradientBoostingRegressor" in text and "leaf gradient sums" in text
    assert "Read from the data (NOT private): nothing" in text
    clone = pickle.loads(pickle.dumps(est))
    assert clone.privacy_report() == report


def test_leaks_are_in_the_report():
    X, y, _ = data()
    with pytest.warns(Warning):
        est = DPDecisionTreeClassifier(accountant=BudgetAccountant(10)).fit(X, y)
    report = est.privacy_report()
    assert len(report["privacy_leaks"]) == 2
    assert "NOT private" in str(report) and "nothing" not in str(report).splitlines()[-1]
    # the guarantee line itself says there is none
    assert str(report).splitlines()[1].startswith("Guarantee: NONE")
    private = DPDecisionTreeClassifier(accountant=BudgetAccountant(10), bounds=(0, 1),
                                       classes=[0, 1]).fit(X, y).privacy_report()
    assert str(private).splitlines()[1].startswith("Guarantee: (")


def test_unfitted_estimators_have_no_report():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        DPDecisionTreeClassifier().privacy_report()
