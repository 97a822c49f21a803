"""Selected splits of DP gradient boosting (``select_depth``;
``dptrees/boosting/_split_selection.py``).

* the utility: ``|G_left| + |G_right|`` of every threshold, exactly; one record moves every
  utility by at most its clipped gradient (the stated sensitivity), on random sums;
* the selection: :meth:`ReleasePlan.select` draws in proportion to ``prior * exp(epsilon u /
  (2 S))`` (a chi-squared test of the frequencies, with a power check);
* the fit: what ``select_depth="auto"`` resolves to (the threshold, an explicit split,
  subsampling, PLD accounting, releases it cannot realise), bit for bit the explicit
  depth; the budget (ledger, counts, the structure share); refused combinations spend
  nothing; selected roots find the informative feature and beat blind splits;
* the audit: one selection replayed on neighbouring data sets, within its claim; a control
  whose utilities are scaled up 4x (the sensitivity understated) is flagged.

The every-source, ``n_jobs`` and ledger tests of ``tests/test_sources.py``,
``tests/test_gradient_boosting.py`` and ``tests/test_privacy_report.py`` include selected
levels too.
"""

import math

import numpy as np
import pytest
from scipy import stats as sps

from dptrees import BudgetAccountant
from dptrees.boosting import DPGradientBoostingClassifier, DPGradientBoostingRegressor
from dptrees.boosting import _common, _gradient, _split_selection
from dptrees.boosting._split_selection import split_utilities
from dptrees.mechanisms import exponential_mechanism
from dptrees.privacy import release_plan
from dptrees.privacy.release_plan import ReleasePlan, base_measure_shift
from support import ALPHA, boosting_classifier, boosting_makers, one_informative_feature

# -- the utility ------------------------------------------------------------------------


def test_utilities_are_the_absolute_gradient_sums_of_both_children():
    rng = np.random.default_rng(0)
    g = rng.integers(-1000, 1000, size=(3, 6)).astype(np.int64)
    u = split_utilities(g, 4.0)
    assert u.shape == (3, 5)
    for f in range(3):
        for b in range(5):
            expected = (abs(g[f, :b + 1].sum()) + abs(g[f, b + 1:].sum())) / 4.0
            assert u[f, b] == expected


def test_one_record_moves_every_utility_by_at_most_its_gradient():
    # The stated sensitivity: a record is in one bin of every feature, so it moves one
    # child's sum of every candidate by its (clipped) gradient.
    rng = np.random.default_rng(1)
    scale, clip = 2.0**20, 0.3
    for _ in range(500):
        g = rng.integers(-3 * 2**20, 3 * 2**20, size=(4, 8)).astype(np.int64)
        record = int(rng.integers(-math.ceil(clip * scale), math.ceil(clip * scale) + 1))
        bins = rng.integers(0, 8, size=4)
        moved = g.copy()
        moved[np.arange(4), bins] += record
        change = np.abs(split_utilities(moved, scale) - split_utilities(g, scale))
        assert change.max() <= abs(record) / scale * (1 + 1e-12)
        # and it is reached: the candidates whose record side has the record's sign
        assert np.isclose(change.max(), abs(record) / scale) or record == 0


def test_base_measure_shift_is_public_and_excludes_zero_mass():
    shift = base_measure_shift(np.array([0.5, 0.25, 0.0]), 1.0, 0.5)
    np.testing.assert_allclose(shift[:2], [4 * math.log(0.5), 4 * math.log(0.25)])
    assert shift[2] == -np.inf


# -- the selection ------------------------------------------------------------------------


def selection_frequencies(plan, utilities, budget, prior, n, seed):
    rng = np.random.default_rng(seed)
    picks = [plan.select(utilities, 1.0, budget, rng, prior, compose=False)
             for _ in range(n)]
    return np.bincount(picks, minlength=utilities.size)


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_selection_draws_in_proportion_to_prior_times_the_exponential_weight(noise):
    plan = ReleasePlan(noise, 1.0, 1e-6)
    utilities = np.array([0.0, 1.0, 2.0, 3.0, 0.5, 2.5])
    prior = np.array([0.3, 0.1, 0.2, 0.05, 0.25, 0.1])
    budget = 0.5 if noise == "gaussian" else 2.0  # a selection epsilon of 2
    epsilon = plan.selection_epsilon(budget)
    assert epsilon == pytest.approx(2.0)
    counts = selection_frequencies(plan, utilities, budget, prior, 20_000, 3)
    weights = prior * np.exp(epsilon * utilities / 2.0)
    expected = weights / weights.sum() * counts.sum()
    assert sps.chisquare(counts, expected).pvalue > 1e-3
    # power: the same draws are far from the distribution without the prior
    blind = np.exp(epsilon * utilities / 2.0)
    assert sps.chisquare(counts, blind / blind.sum() * counts.sum()).pvalue < 1e-6


def test_selection_is_composed_once_per_level():
    plan = ReleasePlan("gaussian", 1.0, 1e-6)
    u = np.zeros(4)
    rng = np.random.default_rng(0)
    plan.select(u, 1.0, 0.01, rng, label="one level")
    plan.select(u, 1.0, 0.01, rng, compose=False, label="one level")  # a sibling node
    (entry,) = plan.ledger()
    assert entry["count"] == 1 and entry["rho"] == 0.01 and entry["norm"] == "utility"
    assert entry["selection_epsilon"] == pytest.approx(math.sqrt(0.08))
    assert plan.n_releases == 1


# -- the fit --------------------------------------------------------------------------------


def selections(est):
    return [e for e in est.privacy_ledger_ if e["mechanism"] == "exponential mechanism"]


@pytest.mark.parametrize("epsilon, expected", [(0.2, 0), (0.5, 1), (2.0, 1), (3.0, 2),
                                               (3.5, 2), (4.0, 3), (8.0, 3)])
def test_auto_resolves_from_epsilon_times_the_noisy_count(epsilon, expected):
    # 4,000 records: eps x n is 800 (below SELECT_LEVEL_EPS_ROWS), 2,000 or 8,000 (the
    # root), 12,000 or 14,000 (two levels), 16,000 or 32,000 (three: the trees have 3)
    assert _gradient.SELECT_LEVEL_EPS_ROWS == (1_000, 10_000, 15_000)
    X, y = one_informative_feature()
    auto = boosting_classifier(epsilon=epsilon).fit(X, y)
    assert auto.split_ == "random" and auto.select_depth_ == expected
    explicit = boosting_classifier(epsilon=epsilon, split="random", select_depth=expected).fit(X, y)
    np.testing.assert_array_equal(auto.predict_proba(X), explicit.predict_proba(X))
    assert sum(e["count"] for e in selections(auto)) == expected * auto.n_estimators


def test_auto_selects_no_deeper_than_the_trees():
    X, y = one_informative_feature()
    stump = boosting_classifier(epsilon=8.0, max_depth=1).fit(X, y)
    assert stump.select_depth_ == 1


@pytest.mark.parametrize("params", [dict(split="random"), dict(split="guided"),
                                    dict(subsample=0.5), dict(accounting="pld"),
                                    dict(noise="laplace")])
def test_auto_selects_only_for_split_auto_with_gaussian_rdp_accounting(params):
    X, y = one_informative_feature()
    est = boosting_classifier(epsilon=8.0, **params).fit(X, y)
    assert est.select_depth_ == 0 and not selections(est)


def test_auto_falls_back_to_blind_splits_where_selection_cannot_be_realised(monkeypatch):
    real = _gradient._BaseDPGradientBoosting._check_releases

    def check(self, plan, *args):
        if args[4]:  # select_depth
            raise ValueError("out of range")
        return real(self, plan, *args)

    monkeypatch.setattr(_gradient._BaseDPGradientBoosting, "_check_releases", check)
    X, y = one_informative_feature()
    assert boosting_classifier(epsilon=8.0).fit(X, y).select_depth_ == 0
    acc = BudgetAccountant(10.0, 1e-3)
    with pytest.raises(ValueError, match="out of range"):
        boosting_classifier(epsilon=8.0, select_depth=1, accountant=acc).fit(X, y)
    assert not acc.ledger


@pytest.mark.parametrize("params, match", [
    (dict(select_depth=4), "select_depth must be <= max_depth=3"),
    (dict(select_depth=1, split="private"), "random or guided splits"),
    (dict(select_depth=1, split="hybrid"), "random or guided splits"),
    (dict(select_depth=1, subsample=0.5), "no subsample"),
    (dict(select_depth=1, accounting="pld"), "accounting='rdp'"),
])
def test_impossible_combinations_are_refused_before_anything_is_spent(params, match):
    X, y = one_informative_feature(200)
    acc = BudgetAccountant(10.0, 1e-3)
    with pytest.raises(ValueError, match=match):
        boosting_classifier(accountant=acc, **params).fit(X, y)
    assert not acc.ledger


@pytest.mark.parametrize("split", ["random", "guided"])
@pytest.mark.parametrize("depth", [1, 2])
def test_structure_budget_is_the_split_fraction_of_each_tree(split, depth):
    plan = ReleasePlan("gaussian", 2.0, 1e-6)
    est = boosting_classifier(split_fraction=0.25, init_fraction=0.1)
    init, prior, leaf, level = est._tree_budgets(plan, 10, split, depth)
    per_tree = (plan.total - init - prior) / 10
    assert math.isclose(level * depth, 0.25 * per_tree)
    assert math.isclose(leaf, 0.75 * per_tree)
    assert math.isclose(init + prior + 10 * (leaf + depth * level), plan.total)
    assert (prior > 0) == (split == "guided")


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
@pytest.mark.parametrize("make, n_outputs", boosting_makers())
def test_selected_levels_spend_their_budget_exactly(make, n_outputs, noise):
    X, y = one_informative_feature()
    if n_outputs == 3:
        y = np.digitize(X[:, 3], [0.4, 0.7])
    acc = BudgetAccountant(10.0, 1e-3)
    est = make(epsilon=2.0, select_depth=2, noise=noise, accountant=acc).fit(X, y)
    assert len(acc.ledger) == 1 and acc.ledger[0].epsilon == 2.0
    assert 2.0 * (1 - 1e-6) <= est.epsilon_spent_ <= 2.0 * (1 + 1e-12)
    (entry,) = selections(est)
    # one selection per level of each tree (its nodes are disjoint), whatever the nodes
    assert entry["count"] == 2 * 10 * n_outputs
    assert entry["sensitivity"] == pytest.approx(est.gradient_clip_, rel=1e-6)
    leaf = [e for e in est.privacy_ledger_ if e["release"] == "leaf gradient sums"][0]
    key = "rho" if noise == "gaussian" else "epsilon"
    # split_fraction (0.3) of each tree's budget, over 2 levels; leaves the rest (G: 80 %)
    assert entry[key] * 2 == pytest.approx(0.3 / 0.7 * leaf[key] / 0.8)
    n_init = 2 if isinstance(est, DPGradientBoostingRegressor) else 1
    assert est.n_releases_ == n_init + 10 * n_outputs * (2 + 2)


def test_privacy_report_explains_the_selections():
    X, y = one_informative_feature()
    selected = boosting_classifier(epsilon=2.0, select_depth=1).fit(X, y).privacy_report()
    assert "epsilon**2 / 8" in selected["composition"]
    (entry,) = [e for e in selected["ledger"] if e["mechanism"] == "exponential mechanism"]
    assert "bounded range" in entry["note"] and entry["norm"] == "utility"
    blind = boosting_classifier(epsilon=2.0, select_depth=0).fit(X, y).privacy_report()
    assert "exponential" not in blind["composition"]


def test_selected_roots_find_the_informative_feature_and_beat_blind_splits():
    X, y = one_informative_feature(n=6000, p=20)
    Xt, yt = one_informative_feature(n=4000, p=20, seed=1)
    selected = boosting_classifier(epsilon=4.0, select_depth=1, n_estimators=20).fit(X, y)
    blind = boosting_classifier(epsilon=4.0, split="random", n_estimators=20).fit(X, y)
    roots = np.array([t[0].feature[0] for t in selected.estimators_])
    assert np.mean(roots == 3) > 0.5  # blind splits would give it 1/20
    assert selected.score(Xt, yt) > blind.score(Xt, yt) + 0.02


def test_guided_trees_select_with_their_prior_as_base_measure(monkeypatch):
    seen = []
    real = ReleasePlan.select

    def select(self, utilities, sensitivity, budget, rng, base_measure=None, **kw):
        seen.append(base_measure)
        return real(self, utilities, sensitivity, budget, rng, base_measure, **kw)

    monkeypatch.setattr(ReleasePlan, "select", select)
    X, y = one_informative_feature()
    est = boosting_classifier(epsilon=4.0, split="guided", select_depth=1).fit(X, y)
    assert len(seen) == 10 and all(b is est.split_priors_[0] for b in seen)
    seen.clear()
    boosting_classifier(epsilon=4.0, select_depth=1).fit(X, y)
    assert len(seen) == 10 and all(b is None for b in seen)


# -- the audit ------------------------------------------------------------------------------

N_CAL, N_TEST = 5_000, 20_000
N_BINS = 16


def recorded_selection(monkeypatch, n_records):
    """The root selection's final utilities, sensitivity and epsilon in a depth-1, one-tree
    fit on the first ``n_records`` of the audit's data (initial score fixed at 0.5)."""
    calls = []
    real = release_plan.exponential_mechanism

    def spy(utilities, *, sensitivity, epsilon, random_state):
        calls.append((np.array(utilities, copy=True), sensitivity, epsilon))
        return real(utilities, sensitivity=sensitivity, epsilon=epsilon,
                    random_state=random_state)

    monkeypatch.setattr(release_plan, "exponential_mechanism", spy)
    monkeypatch.setattr(_common._BoostingFitMixin, "_initial_score",
                        staticmethod(lambda *args: (np.array([0.0]), 1e6)))
    # D1's last record: label 1 in bin 0 (gradient -0.5 at score 0). D0: one label-1
    # record in bin 0, then 3 label-0 records in bin 1 (gradient +0.5 each): every
    # threshold but the first has a left sum >= +1, which the new record lowers, while
    # the first's left sum (-0.5) it raises. Its utility gains 0.5, every other's loses 0.5.
    X = np.array([[0.0], [1.5], [1.5], [1.5], [0.0]]) / N_BINS
    y = np.array([1, 0, 0, 0, 1])
    est = DPGradientBoostingClassifier(
        n_estimators=1, max_depth=1, select_depth=1, epsilon=4.0, split_fraction=0.5,
        gradient_clip=0.5, n_bins=N_BINS, bounds=(0.0, 1.0), classes=[0, 1],
        bin_edges="uniform", accountant=BudgetAccountant(), random_state=0)
    est.fit(X[:n_records], y[:n_records])
    (call,) = calls
    return call


def selection_audit(monkeypatch, n_cal, n_test, seed):
    u0, sens, epsilon = recorded_selection(monkeypatch, 4)
    u1, sens1, epsilon1 = recorded_selection(monkeypatch, 5)
    assert (sens, epsilon) == (sens1, epsilon1)

    def sampler(u):
        def draw(n, rng):
            return (exponential_mechanism(u, sensitivity=sens, epsilon=epsilon, size=n,
                                          random_state=rng) == 0).astype(float)
        return draw

    from dptrees.audit import audit_pair
    res = audit_pair(sampler(u0), sampler(u1), n_calibration=n_cal, n_test=n_test,
                     alpha=ALPHA, random_state=seed)
    return res, epsilon, u1 - u0


@pytest.mark.usefixtures("no_fallback")
def test_audit_root_selection(record_audit, monkeypatch):
    res, claim, shift = selection_audit(monkeypatch, N_CAL, N_TEST, 31)
    # the neighbour moves the first candidate up and every other down by the sensitivity
    np.testing.assert_allclose(shift, [0.5] + [-0.5] * (N_BINS - 2), atol=1e-9)
    assert 0.5 < claim < 1.5
    record_audit(res, claim).assert_within(claim)
    assert res.epsilon_lower_bound > 0.4 * claim  # the audit has power


@pytest.mark.usefixtures("no_fallback")
def test_control_understated_utility_sensitivity_is_flagged(record_audit, monkeypatch):
    # POSITIVE CONTROL: utilities 4x larger than stated (as if the sensitivity were a
    # quarter of one record's clipped gradient).
    real = _split_selection.split_utilities
    monkeypatch.setattr(_gradient, "split_utilities",
                        lambda g_sums, g_scale: 4.0 * real(g_sums, g_scale))
    res, claim, _ = selection_audit(monkeypatch, 2_000, 10_000, 32)
    record_audit(res, claim)
    assert not res.check(claim), res.summary()
