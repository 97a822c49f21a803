"""Guided random splits of DP gradient boosting (``split="guided"`` / ``"auto"``).

* ``split_prior`` (post-processing of one released histogram): a distribution, uniform
  when nothing gains, at least ``UNIFORM_SHARE`` spread evenly, most of the rest on the
  split that gains, blind to cells it counts as empty;
* ``draw_random_structure`` draws from the prior (a chi-squared test of the frequencies);
* the fit: what ``"auto"`` resolves to (guided splits only where nothing is selected:
  Laplace noise, PLD accounting), the budget (spent once, exactly; the prior's releases
  in the ledger), the prior found on data with one informative feature, and guided
  beating uniform splits there.

Guided fits are also in ``tests/test_gradient_boosting.py``'s ``n_jobs`` and budget
tests and in ``tests/test_sources.py``'s every-source-gives-the-same-model tests.

The release itself is audited beside the other histogram releases in
``tests/test_gradient_boosting.py`` (``test_audit_split_prior_release`` and its control).
"""

import math

import numpy as np
import pytest
from scipy import stats as sps

from dptrees import BudgetAccountant
from dptrees.boosting import DPGradientBoostingRegressor
from dptrees.boosting import _gradient
from dptrees._sources._rows import clip_active
from dptrees.boosting._split_prior import (
    EMPTY_CELL_SIGMAS,
    MAX_ACTIVE,
    UNIFORM_SHARE,
    release_shape,
    split_prior,
    with_first_bins,
)
from dptrees.boosting._trees import draw_random_structure
from dptrees.privacy.release_plan import ReleasePlan
from support import (boosting_classifier, boosting_makers, one_hot_columns,
                     one_informative_feature)

# -- the prior ------------------------------------------------------------------------


def _hist(n_features=5, n_bins=8):
    return np.zeros((n_features, n_bins, 2))


def test_prior_is_uniform_when_no_split_gains():
    hist = _hist()
    hist[:, :, 1] = 10.0  # mass everywhere, no gradient: no gain
    prior = split_prior(hist, sigma_h=1.0, reg_lambda=1.0)
    assert prior.shape == (5, 7)
    np.testing.assert_allclose(prior, 1.0 / prior.size)


def test_prior_puts_its_mass_on_the_split_that_gains():
    hist = _hist()
    hist[:, :, 1] = 100.0
    hist[2, :4, 0], hist[2, 4:, 0] = -50.0, 50.0  # feature 2 splits between bins 3 and 4
    prior = split_prior(hist, sigma_h=1.0, reg_lambda=1.0)
    assert math.isclose(prior.sum(), 1.0)
    assert prior.min() >= UNIFORM_SHARE / prior.size * (1 - 1e-12)
    assert np.unravel_index(np.argmax(prior), prior.shape) == (2, 3)
    assert prior[2].sum() == pytest.approx(1 - UNIFORM_SHARE + UNIFORM_SHARE / 5)


def test_prior_treats_cells_below_the_noise_as_empty():
    # Noise-sized gradient sums in cells whose Hessian sum is within EMPTY_CELL_SIGMAS of
    # zero must not move the prior: the same prior as without them.
    sigma_h = 10.0
    hist = _hist()
    hist[:, [0, -1], 1] = 1000.0
    hist[1, 0, 0], hist[1, -1, 0] = -300.0, 300.0
    clean = split_prior(hist, sigma_h, reg_lambda=1.0)
    noisy = hist.copy()
    rng = np.random.default_rng(0)
    noisy[:, 1:-1, 0] = rng.normal(0, 200.0, size=noisy[:, 1:-1, 0].shape)
    noisy[:, 1:-1, 1] = EMPTY_CELL_SIGMAS * sigma_h * rng.random(noisy[:, 1:-1, 1].shape)
    np.testing.assert_allclose(split_prior(noisy, sigma_h, reg_lambda=1.0), clean)


def test_draws_follow_the_prior():
    rng = np.random.default_rng(3)
    n_features, n_bins, depth = 3, 5, 6
    prior = rng.random((n_features, n_bins - 1)) + 0.05
    prior /= prior.sum()
    counts = np.zeros(prior.size)
    for _ in range(200):
        feature, bin_threshold = draw_random_structure(rng, n_features, n_bins, depth, prior)
        n_internal = 2**depth - 1
        assert (feature[n_internal:] == -1).all() and (bin_threshold[n_internal:] == -1).all()
        np.add.at(counts, feature[:n_internal] * (n_bins - 1) + bin_threshold[:n_internal], 1)
    expected = prior.ravel() * counts.sum()
    assert sps.chisquare(counts, expected).pvalue > 1e-3
    # power: the uniform distribution is rejected
    assert sps.chisquare(counts, np.full(prior.size, counts.sum() / prior.size)).pvalue < 1e-3


# -- the fit ----------------------------------------------------------------------------


@pytest.mark.parametrize("params", [{"noise": "laplace"}, {"accounting": "pld"}])
@pytest.mark.parametrize("epsilon, expected", [(1.0, "random"), (8.0, "guided")])
def test_auto_guides_where_nothing_is_selected_from_epsilon_times_the_noisy_count(
        params, epsilon, expected):
    # Laplace noise or PLD accounting: no selected roots, so split="auto" draws guided
    # splits from eps x n >= 10,000 (here 4,000 or 32,000), bit for bit as asked for.
    X, y = one_informative_feature()
    auto = boosting_classifier(epsilon=epsilon, **params).fit(X, y)
    assert auto.split_ == expected and auto.select_depth_ == 0
    explicit = boosting_classifier(epsilon=epsilon, split=expected, **params).fit(X, y)
    np.testing.assert_array_equal(auto.predict_proba(X), explicit.predict_proba(X))


def test_auto_with_gaussian_rdp_or_subsample_draws_random_splits():
    # (their roots selected where select_depth="auto" says so: test_selected_splits.py)
    X, y = one_informative_feature()
    for params in ({}, {"subsample": 0.5}):
        est = boosting_classifier(epsilon=8.0, **params).fit(X, y)
        assert est.split_ == "random" and est.split_priors_ is None


def test_auto_falls_back_to_random_splits_where_guided_ones_cannot_be_released(
        monkeypatch):
    # A budget the guided releases cannot realise (here: any) must not make "auto"
    # refuse a fit that random splits can make.
    real = _gradient._BaseDPGradientBoosting._check_releases

    def check(self, plan, init, prior, *args):
        if prior:
            raise ValueError("out of range")
        return real(self, plan, init, prior, *args)

    monkeypatch.setattr(_gradient._BaseDPGradientBoosting, "_check_releases", check)
    X, y = one_informative_feature()
    assert boosting_classifier(epsilon=8.0, noise="laplace").fit(X, y).split_ == "random"
    with pytest.raises(ValueError, match="out of range"):
        boosting_classifier(epsilon=8.0, split="guided").fit(X, y)


@pytest.mark.parametrize("make, n_outputs", boosting_makers())
@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_guided_spends_its_budget_once_and_records_the_prior(make, n_outputs, noise):
    X, y = one_informative_feature()
    if n_outputs == 3:
        y = np.digitize(X[:, 3], [0.4, 0.7])
    acc = BudgetAccountant(10.0, 1e-3)
    est = make(epsilon=2.0, split="guided", noise=noise, accountant=acc).fit(X, y)
    assert len(acc.ledger) == 1 and acc.ledger[0].epsilon == 2.0
    assert 2.0 * (1 - 1e-6) <= est.epsilon_spent_ <= 2.0 * (1 + 1e-12)
    n_init = 2 if isinstance(est, DPGradientBoostingRegressor) else 1
    assert est.n_releases_ == n_init + 2 * n_outputs + 2 * 10 * n_outputs
    prior_entries = [e for e in est.privacy_ledger_ if e["release"].startswith("split prior")]
    assert sorted(e["release"] for e in prior_entries) == [
        "split prior: Hessian sums", "split prior: gradient sums"]
    assert all(e["count"] == n_outputs for e in prior_entries)
    assert len(est.split_priors_) == n_outputs


def test_prior_budget_is_the_split_fraction_of_what_the_initial_score_leaves():
    plan = ReleasePlan("laplace", 2.0, 0.0)
    est = boosting_classifier(split="guided", split_fraction=0.25, init_fraction=0.1)
    init, prior, leaf, level = est._tree_budgets(plan, 10, "guided")
    assert math.isclose(init, 0.1 * plan.total)
    assert math.isclose(prior, 0.25 * 0.9 * plan.total)
    assert math.isclose(init + prior + 10 * leaf, plan.total) and level == 0.0


def test_guided_finds_the_informative_feature_and_beats_uniform_splits():
    X, y = one_informative_feature(n=6000, p=20)
    Xt, yt = one_informative_feature(n=4000, p=20, seed=1)
    guided = boosting_classifier(epsilon=4.0, split="guided", n_estimators=20).fit(X, y)
    random = boosting_classifier(epsilon=4.0, split="random", n_estimators=20).fit(X, y)
    prior = guided.split_priors_[0]
    assert prior[3].sum() > 0.5  # uniform would give it 1/20
    assert np.argmax(prior[3]) in (20, 21, 22)  # the edge near 0.7 of 32 bins (22.4)
    assert guided.score(Xt, yt) > random.score(Xt, yt) + 0.02



# -- the sparse release (more than MAX_ACTIVE features) ---------------------------------


@pytest.mark.parametrize("norm", ["l2", "l1"])
def test_clipped_rows_stay_within_the_release_sensitivity(norm):
    # Every row's change to the release (its totals and its cells outside the first
    # bins) has a norm of at most sqrt(K + 1) (L2) or K + 1 (L1) times its bound.
    rng = np.random.default_rng(5)
    n, p, bound = 2000, 40, 1000
    codes = np.where(rng.random((n, p)) < rng.random((n, 1)), rng.integers(1, 8, (n, p)), 0)
    stats = rng.integers(-bound, bound + 1, size=(2, n))
    stats[:, :20] = bound  # rows at the bound
    clipped = clip_active(stats.copy(), codes, (MAX_ACTIVE, norm, 1))
    assert (np.abs(clipped) <= np.abs(stats)).all()
    active = np.count_nonzero(codes, axis=1)
    assert (active > MAX_ACTIVE).any() and (active < MAX_ACTIVE).any()
    for s in range(2):
        if norm == "l2":
            change = np.abs(clipped[s]) * np.sqrt(1 + active)
            limit = np.sqrt(MAX_ACTIVE + 1) * bound
        else:
            change = np.abs(clipped[s]) * (1 + active)
            limit = (MAX_ACTIVE + 1) * bound
        assert (change <= limit * (1 + 1e-12)).all()
    untouched = active <= MAX_ACTIVE
    np.testing.assert_array_equal(clipped[:, untouched], stats[:, untouched])


def test_whole_number_hessians_get_a_finer_grid_before_clipping():
    # Squared error's Hessians are counts (1 per row): scaled by a fraction on their own
    # grid they would truncate to 0. With h_unit they keep the fraction (to 2**-20).
    codes = np.ones((3, 64), dtype=np.uint8)  # 64 active features: scale sqrt(16 / 64)
    stats = np.ones((2, 3), dtype=np.int64)
    clipped = clip_active(stats.copy(), codes, (MAX_ACTIVE, "l2", 2**20))
    np.testing.assert_array_equal(clipped[1], [2**19] * 3)  # half of a count
    np.testing.assert_array_equal(clipped[0], [0] * 3)  # g's own grid: truncated


def test_release_shape_and_first_bins():
    assert release_shape(MAX_ACTIVE) == (True, MAX_ACTIVE)
    assert release_shape(70) == (False, MAX_ACTIVE + 1)
    assert all(isinstance(release_shape(p)[1], int) for p in (3, 70))
    cells = np.arange(2 * 3 * 2, dtype=float).reshape(2, 3, 2)
    hist = with_first_bins(cells, np.array([100.0, 50.0]))
    np.testing.assert_allclose(hist[:, 1:], cells)
    np.testing.assert_allclose(hist.sum(axis=1), [[100.0, 50.0], [100.0, 50.0]])


def test_sparse_release_finds_the_informative_column():
    # 6 one-hot encoded columns of 5 levels: 30 > MAX_ACTIVE features, one active per
    # group; the label follows level 0 of group 2
    X, cats = one_hot_columns(3000, 6, 5, seed=0)
    y = (cats[:, 2] == 0).astype(int)
    assert X.shape[1] > MAX_ACTIVE
    est = boosting_classifier(epsilon=4.0, split="guided").fit(X, y)
    prior = est.split_priors_[0]
    assert int(np.argmax(prior.sum(axis=1))) == 2 * 5
    assert est.split_priors_[0][10].sum() > 0.3
    ledger = {e["release"]: e for e in est.privacy_ledger_}
    assert ledger["split prior: gradient sums"]["sensitivity"] == pytest.approx(
        np.sqrt(MAX_ACTIVE + 1) * est.gradient_clip_)
    # the report tells an auditor why the sensitivity is not sqrt(n_features)
    assert f"at most {MAX_ACTIVE} features outside their first bins" in str(
        est.privacy_report())
