"""DP cyclic boosting (DP-EBM style): ``DPExplainableBoostingClassifier`` and
``DPExplainableBoostingRegressor`` (``dptrees.boosting._cyclic``).

* Fits learn (beat the majority class / the DP mean at a generous epsilon) for binary,
  3-class and regression targets; probabilities, decision functions, staged predictions
  and the additive structure (``intercept_ + sum_f term_scores_[:, f, bin_f(x)]``, bin 0
  never released, so its score is exactly 0) behave as documented.
* ``n_cycles="auto"`` follows ``min(10, max(2, round(5 sqrt(epsilon))))``.
* Accounting: one spend of exactly ``(epsilon, delta)``, ``epsilon_spent_`` just below
  epsilon, refusal by an exhausted accountant with the previous fit kept.
* Individual accounting: a recorder wraps ``IndividualFilter.admit`` (the class the
  module uses) and sees every per-record cost. A record at the lower bounds (bin 0 in
  every feature) pays nothing for the feature releases and only for the intercept; the
  feature releases charge exactly the records outside that feature's bin 0 and sum
  exactly the admitted ones; no record's per-cycle total exceeds the cycle budget. A
  spy on the module's ``gaussian_mechanism`` replays whole fits (regression, binary):
  every record's cost from its own clipped gradient, the released sums, the noise set by
  ``max_active`` and the Newton steps, cycle by cycle.
  POSITIVE CONTROL: a filter that never stops anyone (same costs recorded) lets records
  exceed the cycle budget several times over at ``max_active=1``.
* Bad inputs raise (and spend nothing); inferred public inputs warn and are recorded;
  seeds reproduce.
"""

import math
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.metrics import accuracy_score, r2_score

from dptrees import (
    BudgetAccountant,
    BudgetExceededError,
    DPExplainableBoostingClassifier,
    DPExplainableBoostingRegressor,
    PrivacyLeakWarning,
)
from dptrees.accounting import zcdp_budget
from dptrees.privacy.individual_filter import individual_cost
from dptrees.boosting import _cyclic, _cyclic_rows

from support import BAD_CLASSES, check_bad_classes

BOUNDS = (0.0, 1.0)
Y_BOUNDS = (-1.5, 2.5)
N_FEATURES = 3


def regression_data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, N_FEATURES))
    y = np.sin(6 * X[:, 0]) + X[:, 1] + 0.1 * rng.standard_normal(n)
    return X, y


def binary_data(n=3000, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.random((n, N_FEATURES))
    return X, (X[:, 0] + 0.3 * X[:, 1] > 0.65).astype(int)


def multiclass_data(n=3000, seed=2):
    rng = np.random.default_rng(seed)
    X = rng.random((n, N_FEATURES))
    return X, np.digitize(X[:, 0], [0.33, 0.66]) + 10  # labels 10, 11, 12


def regressor(**params):
    base = dict(epsilon=10.0, bounds=BOUNDS, y_bounds=Y_BOUNDS, accountant=BudgetAccountant(),
                random_state=0)
    base.update(params)
    return DPExplainableBoostingRegressor(**base)


def classifier(**params):
    base = dict(epsilon=10.0, bounds=BOUNDS, classes=[0, 1], accountant=BudgetAccountant(),
                random_state=0)
    base.update(params)
    return DPExplainableBoostingClassifier(**base)


def multiclassifier(**params):
    return classifier(**{"classes": [10, 11, 12], **params})


def auto_cycles(epsilon):
    return min(10, max(2, round(5 * math.sqrt(epsilon))))


# ======================================================================================
# Fits
# ======================================================================================


def test_binary_classification_beats_majority():
    X, y = binary_data()
    est = classifier().fit(X, y)
    majority = max(y.mean(), 1 - y.mean())
    acc = accuracy_score(y, est.predict(X))
    assert acc > majority + 0.15, (acc, majority)
    proba = est.predict_proba(X)
    assert proba.shape == (len(y), 2)
    assert np.all(proba >= 0) and np.all(proba <= 1)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert est.decision_function(X).shape == (len(y),)
    np.testing.assert_array_equal(est.classes_, [0, 1])
    assert est.intercept_.shape == (1,)
    assert est.term_scores_.shape == (1, N_FEATURES, 32)
    # the decision function is the log-odds of predict_proba's positive class
    raw = est.decision_function(X)
    np.testing.assert_allclose(proba[:, 1], 1 / (1 + np.exp(-raw)), rtol=1e-9, atol=1e-12)


def test_multiclass_classification_beats_majority():
    X, y = multiclass_data()
    est = multiclassifier(n_bins=16).fit(X, y)
    pred = est.predict(X)
    acc = accuracy_score(y, pred)
    assert acc > 0.34 + 0.3, acc
    assert set(np.unique(pred)) <= {10, 11, 12}
    assert est.decision_function(X).shape == (len(y), 3)
    proba = est.predict_proba(X)
    assert proba.shape == (len(y), 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(est.classes_[np.argmax(proba, axis=1)], pred)
    assert est.intercept_.shape == (3,)
    assert est.term_scores_.shape == (3, N_FEATURES, 16)


def test_regression_beats_the_mean_and_stays_in_y_bounds():
    X, y = regression_data()
    est = regressor().fit(X, y)
    r2 = r2_score(y, est.predict(X))
    assert r2 > 0.5, r2
    assert r2_score(y, np.full_like(y, y.mean())) == pytest.approx(0.0, abs=1e-12)
    assert est.intercept_.shape == (1,)
    assert est.term_scores_.shape == (1, N_FEATURES, 32)
    assert est.y_bounds_ == Y_BOUNDS
    # narrow y_bounds and test points far outside the feature bounds
    narrow = regressor(y_bounds=(0.2, 0.8), learning_rate=1.0, reg_lambda=1e-3).fit(X, y)
    X_far = np.random.default_rng(3).uniform(-3, 4, size=(2000, N_FEATURES))
    for pred in (narrow.predict(X), narrow.predict(X_far), *narrow.staged_predict(X_far)):
        assert pred.min() >= 0.2 and pred.max() <= 0.8


def test_staged_predict_has_one_stage_per_cycle_and_ends_at_predict():
    X, y = regression_data(1500)
    est = regressor(n_cycles=4).fit(X, y)
    stages = list(est.staged_predict(X))
    assert len(stages) == est.n_iter_ == 4
    np.testing.assert_array_equal(stages[-1], est.predict(X))
    assert not np.array_equal(stages[0], stages[-1])

    Xc, yc = multiclass_data(1500)
    clf = multiclassifier(n_cycles=3).fit(Xc, yc)
    probas = list(clf.staged_predict_proba(Xc))
    labels = list(clf.staged_predict(Xc))
    assert len(probas) == len(labels) == clf.n_iter_ == 3
    np.testing.assert_array_equal(probas[-1], clf.predict_proba(Xc))
    np.testing.assert_array_equal(labels[-1], clf.predict(Xc))


@pytest.mark.parametrize("make, data", [(regressor, regression_data),
                                        (classifier, binary_data),
                                        (multiclassifier, multiclass_data)],
                         ids=["regression", "binary", "multiclass"])
def test_bin_zero_is_never_released_and_the_model_is_additive(make, data):
    X, y = data(1500)
    est = make(n_bins=8).fit(X, y)
    n_out = 3 if make is multiclassifier else 1
    assert est.term_scores_.shape == (n_out, N_FEATURES, 8)
    assert est.intercept_.shape == (n_out,)
    for f in range(N_FEATURES):
        assert np.all(est.term_scores_[:, f, 0] == 0.0), f
    for _, scores in est._history:  # every stage too
        assert np.all(scores[:, :, 0] == 0.0)
    assert np.count_nonzero(est.term_scores_[:, :, 1:]) > 0  # the other bins were fitted
    # raw scores = intercept_ + sum over features of the term scores of each row's bins
    codes = est.binner_.transform(X)
    expected = np.tile(est.intercept_, (len(X), 1))
    for f in range(N_FEATURES):
        expected += est.term_scores_[:, f, codes[:, f]].T
    np.testing.assert_allclose(est._raw(X), expected, rtol=0, atol=1e-12)
    # a row at the lower bounds is in bin 0 everywhere: its raw score is the intercept
    corner = np.array([BOUNDS[0]] * N_FEATURES)[None, :]
    assert np.all(est.binner_.transform(corner) == 0)
    np.testing.assert_array_equal(est._raw(corner)[0], est.intercept_)


# ======================================================================================
# n_cycles
# ======================================================================================


@pytest.mark.usefixtures("no_fallback")
@pytest.mark.parametrize("epsilon", [0.05, 0.2, 0.5, 1.0, 2.0, 3.0, 10.0, 100.0])
def test_auto_n_cycles(epsilon):
    X, y = regression_data(500)
    est = regressor(epsilon=epsilon, delta=1e-5).fit(X, y)
    assert est.n_iter_ == auto_cycles(epsilon)
    assert len(est._history) == est.n_iter_
    assert len(list(est.staged_predict(X[:5]))) == est.n_iter_


def test_auto_n_cycles_values():
    # the formula itself, at a few points (including the clamps at 2 and 10)
    assert [auto_cycles(e) for e in (0.05, 0.2, 0.5, 1.0, 2.0, 3.0, 10.0, 100.0)] == \
        [2, 2, 4, 5, 7, 9, 10, 10]


# ======================================================================================
# n_bins
# ======================================================================================


def test_auto_n_bins_values():
    # round(24 epsilon**(1/5)) in [16, 32]: wide bins where the noise is large
    est = regressor()
    got = [est.set_params(epsilon=e)._n_bins() for e in (0.01, 0.1, 0.24, 0.5, 1.0, 2.0, 4.0,
                                                          100.0)]
    assert got == [16, 16, 18, 21, 24, 28, 32, 32]


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0])
def test_auto_n_bins_is_fitted_and_reads_no_data(epsilon):
    X, y = regression_data(800)
    est = regressor(epsilon=epsilon, delta=1e-5).fit(X, y)
    expected = round(min(32, max(16, 24 * epsilon**0.2)))
    assert est.n_bins_ == expected == est.binner_.n_bins
    assert est.term_scores_.shape == (1, N_FEATURES, expected)
    # other data, other size: the same bins (the rule reads the public epsilon only)
    X2, y2 = regression_data(300, seed=5)
    assert regressor(epsilon=epsilon, delta=1e-5).fit(X2, y2).n_bins_ == expected


def test_explicit_n_bins_is_respected_and_checked():
    X, y = binary_data(600)
    est = classifier(n_bins=7).fit(X, y)
    assert est.n_bins_ == 7 and est.term_scores_.shape[2] == 7
    for bad in ("many", 1, 300, 2.5):
        with pytest.raises((ValueError, TypeError)):
            classifier(n_bins=bad).fit(X, y)


@pytest.mark.parametrize("n_cycles", [1, 3, 12])
def test_explicit_n_cycles_is_respected(n_cycles, monkeypatch):
    filters = []
    real_init = _cyclic_rows.IndividualFilter.__init__

    def init(self, n, budget):
        filters.append(budget)
        real_init(self, n, budget)

    monkeypatch.setattr(_cyclic_rows.IndividualFilter, "__init__", init)
    X, y = binary_data(500)
    est = classifier(n_cycles=n_cycles, epsilon=1.0).fit(X, y)
    assert est.n_iter_ == n_cycles
    assert len(list(est.staged_predict(X))) == n_cycles
    # one filter per cycle, each with 1 / n_cycles of the filtered budget (all but the
    # initial score's 1 % and, with max_active="auto", the density release's share)
    assert len(filters) == n_cycles
    rho = zcdp_budget(1.0, 1e-6) * (1 - 0.01 - _cyclic._DENSITY_SHARE)
    for budget in filters:
        assert budget == pytest.approx(rho / n_cycles, rel=1e-9)


def test_verbose_reports_one_line_per_cycle(capsys, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "tqdm", None)  # plain lines
    X, y = regression_data(300)
    regressor(n_cycles=3, verbose=1).fit(X, y)
    lines = capsys.readouterr().err.strip().splitlines()
    assert [line.split(",")[0] for line in lines] == [
        f"[DPExplainableBoostingRegressor] cycle {i}/3" for i in (1, 2, 3)]


# ======================================================================================
# Accounting
# ======================================================================================


@pytest.mark.parametrize("epsilon, delta", [(0.3, 1e-5), (1.0, 1e-6), (4.0, 1e-8),
                                            (20.0, 1e-6)])
@pytest.mark.parametrize("make, data, label", [
    (regressor, regression_data, "DPExplainableBoostingRegressor"),
    (classifier, binary_data, "DPExplainableBoostingClassifier"),
    (multiclassifier, multiclass_data, "DPExplainableBoostingClassifier"),
], ids=["regression", "binary", "multiclass"])
def test_spends_epsilon_once_and_reports_it(make, data, label, epsilon, delta):
    acc = BudgetAccountant(50.0, 1e-3)
    X, y = data(800)
    est = make(epsilon=epsilon, delta=delta, accountant=acc).fit(X, y)
    assert len(acc.ledger) == 1
    record = acc.ledger[0]
    assert (record.epsilon, record.delta) == (epsilon, delta)
    assert record.label == label
    assert acc.spent == (epsilon, delta)
    assert est.epsilon_spent_ <= epsilon
    assert est.epsilon_spent_ >= epsilon * (1 - 1e-6)
    assert est.delta_spent_ == delta
    assert est.rdp_accountant_.get_epsilon(delta) == est.epsilon_spent_


def test_exhausted_accountant_refuses_before_anything_changes(monkeypatch):
    X, y = regression_data(500)
    acc = BudgetAccountant(1.5, 1e-5)
    first = regressor(epsilon=1.0, accountant=acc).fit(X, y)
    scores, intercept, before = first.term_scores_.copy(), first.intercept_.copy(), \
        first.predict(X)
    made = []
    real_init = _cyclic_rows.IndividualFilter.__init__
    monkeypatch.setattr(_cyclic_rows.IndividualFilter, "__init__",
                        lambda self, *a: made.append(a) or real_init(self, *a))
    with pytest.raises(BudgetExceededError):
        first.fit(X, y)  # needs 1.0, 0.5 left
    assert not made  # refused before the first filtered release
    assert acc.spent == (1.0, 1e-6) and len(acc.ledger) == 1
    np.testing.assert_array_equal(first.term_scores_, scores)
    np.testing.assert_array_equal(first.intercept_, intercept)
    np.testing.assert_array_equal(first.predict(X), before)
    with pytest.raises(BudgetExceededError):  # delta exhausted
        regressor(epsilon=0.1, delta=1e-4, accountant=acc).fit(X, y)
    assert len(acc.ledger) == 1
    regressor(epsilon=0.5, accountant=acc).fit(X, y)  # exactly what is left
    assert acc.spent == (1.5, 2e-6)


# ======================================================================================
# Individual accounting
# ======================================================================================


@pytest.fixture
def recorded(monkeypatch):
    """Wrap ``IndividualFilter.admit`` (the class ``_cyclic_rows`` uses): every call appends
    ``(filter, costs, returned mask)``. ``recorded.never_stop()`` replaces it by a broken
    filter that records the same costs but admits everyone."""
    cls = _cyclic_rows.IndividualFilter
    real = cls.admit

    class Recorder(list):
        def never_stop(self):
            monkeypatch.setattr(cls, "admit", never_stop)

    calls = Recorder()

    def admit(self, costs):
        mask = real(self, costs)
        calls.append((self, np.array(costs, dtype=float), mask.copy()))
        return mask

    def never_stop(self, costs):
        costs = np.array(costs, dtype=float)
        mask = np.ones(costs.shape, dtype=bool)
        calls.append((self, costs, mask.copy()))
        return mask

    monkeypatch.setattr(cls, "admit", admit)
    return calls


def by_cycle(calls):
    """``[(filter, [(costs, mask), ...]), ...]``, one entry per cycle (per filter)."""
    out = []
    for filt, costs, mask in calls:
        if not out or out[-1][0] is not filt:
            out.append((filt, []))
        out[-1][1].append((costs, mask))
    return out


def participation_totals(releases):
    """Each record's total cost over the releases it took part in (cost > 0 and
    admitted), as the filter's guarantee counts it, and the unfiltered total."""
    taken = sum(np.where(mask & (costs > 0), costs, 0.0) for costs, mask in releases)
    offered = sum(costs for costs, _ in releases)
    return taken, offered


@pytest.mark.parametrize("make, data, n_out", [(regressor, regression_data, 1),
                                               (multiclassifier, multiclass_data, 3)],
                         ids=["regression", "multiclass"])
def test_record_at_the_lower_bounds_pays_only_for_the_intercept(recorded, make, data, n_out):
    X, y = data(1000)
    X[0] = BOUNDS[0]  # row 0: every feature at its lower bound (bin 0)
    est = make(epsilon=1.0, n_cycles=3, n_bins=8).fit(X, y)
    assert np.all(est.binner_.transform(X[:1]) == 0)
    cycles = by_cycle(recorded)
    assert len(cycles) == 3
    for filt, releases in cycles:
        # per cycle: one release per (feature, output), then one intercept per output
        assert len(releases) == N_FEATURES * n_out + n_out
        features, intercepts = releases[:-n_out], releases[-n_out:]
        for costs, _ in features:
            assert costs[0] == 0.0
            assert np.count_nonzero(costs) > 0.5 * len(costs)  # others do pay
        for costs, mask in intercepts:
            assert costs[0] > 0.0
            assert mask[0]  # never stopped: it paid for nothing else in the cycle
        taken, _ = participation_totals(releases)
        assert taken[0] == pytest.approx(sum(c[0] for c, _ in intercepts), rel=1e-12)
        assert taken[0] <= filt.budget


def test_feature_releases_charge_and_sum_exactly_the_records_outside_bin_zero(
        recorded, monkeypatch):
    # squared error: every Hessian is 1, so every record outside bin 0 has a cost > 0
    # and the zero-cost records of a feature release are exactly that feature's bin 0
    histograms = []
    real_hist = _cyclic_rows._histogram.node_histogram

    def spy(codes, rows, stats, out):
        histograms.append((np.array(codes), np.array(rows)))
        return real_hist(codes, rows, stats, out)

    monkeypatch.setattr(_cyclic_rows._histogram, "node_histogram", spy)
    X, y = regression_data(1500)
    est = regressor(epsilon=1.0, n_cycles=3, n_bins=4, max_active=1).fit(X, y)
    codes = est.binner_.transform(X)
    cycles = by_cycle(recorded)
    assert len(histograms) == 3 * N_FEATURES
    spied = iter(histograms)
    n_stopped = 0
    for _, releases in cycles:
        seen = []
        for costs, mask in releases[:-1]:
            column, rows = next(spied)
            assert column.shape == (len(y), 1)  # one feature's codes
            (f,) = [f for f in range(N_FEATURES) if np.array_equal(codes[:, f], column[:, 0])]
            np.testing.assert_array_equal(costs > 0, codes[:, f] != 0)
            # the histogram sums exactly the admitted records outside bin 0
            np.testing.assert_array_equal(rows, np.flatnonzero(mask & (codes[:, f] != 0)))
            n_stopped += np.count_nonzero(~mask & (codes[:, f] != 0))
            seen.append(f)
        assert sorted(seen) == list(range(N_FEATURES))  # each feature once per cycle
        costs, _ = releases[-1]
        assert np.all(costs > 0)  # the intercept: everyone is charged
    assert n_stopped > 0  # max_active=1: the filter did stop records


@pytest.mark.parametrize("noise_reg", [0.0, 3.0])
@pytest.mark.parametrize("kind", ["regression", "binary"])
def test_releases_replayed_costs_sums_and_steps(recorded, monkeypatch, kind, noise_reg):
    # Replays a fit from the outside. A spy on the module's gaussian_mechanism sees every
    # filtered release (the initial score goes through _gradient's own binding). The
    # gradients are ``raw - y01`` (squared error; Hessians 1, so the Hessian sums count
    # the admitted records) or ``expit(raw) - y`` (log-loss; Hessians p (1 - p)), clipped
    # to gradient_clip, computed from the released model so far (recomputed before every
    # release, the intercept's included): so we know every record's contribution, hence
    # its individual cost, and what each released sum holds. Each step must be
    # ``-learning_rate G / (max(H, 0) + reg_lambda + noise_reg sigma_G)`` of the noisy
    # sums, ``sigma_G = noise_multiplier * sensitivity`` of the G release.
    released = []
    real_mechanism = _cyclic.gaussian_mechanism

    def spy(values, **kwargs):
        out = real_mechanism(values, **kwargs)
        released.append((np.array(values, dtype=float), kwargs, np.array(out, dtype=float)))
        return out

    monkeypatch.setattr(_cyclic, "gaussian_mechanism", spy)
    n_bins, lr, lam, n_cycles = 4, 0.7, 2.0, 3
    params = dict(epsilon=1.0, n_cycles=n_cycles, n_bins=n_bins, max_active=1,
                  learning_rate=lr, reg_lambda=lam, noise_reg=noise_reg)
    if kind == "regression":
        X, y = regression_data(1500)
        clip, h_sens = 0.3, 1.0
        est = regressor(gradient_clip=clip, **params).fit(X, y)
        target = (np.clip(y, *Y_BOUNDS) - Y_BOUNDS[0]) / (Y_BOUNDS[1] - Y_BOUNDS[0])
    else:
        X, y = binary_data(1500)
        clip, h_sens = 0.8, 0.25
        est = classifier(gradient_clip=clip, **params).fit(X, y)
        target = y.astype(float)
    codes = est.binner_.transform(X)
    cycles = by_cycle(recorded)
    assert len(released) == 2 * len(recorded) == 2 * n_cycles * (N_FEATURES + 1)

    def step_of(g, h):
        (_, g_kw, g_out), (_, _, h_out) = g, h
        sigma = g_kw["noise_multiplier"] * g_kw["sensitivity"]
        return -lr * g_out / (np.maximum(h_out, 0.0) + lam + noise_reg * sigma)

    # the initial score: the first cycle's intercept minus that cycle's intercept step
    k = 2 * N_FEATURES
    intercept_now = est._history[0][0][0] - float(step_of(released[k], released[k + 1]))
    scores_now = np.zeros((N_FEATURES, n_bins))
    pairs = iter(zip(released[::2], released[1::2]))  # (G, H) of each release
    n_refused = 0
    for c, (filt, releases) in enumerate(cycles):
        for costs, mask in releases:
            g_rel, h_rel = next(pairs)
            (g_in, g_kw, _), (h_in, h_kw, _) = g_rel, h_rel
            # the noise of a worst-case record costs the filter's per-release share
            worst = 1 / (2 * g_kw["noise_multiplier"] ** 2) + \
                1 / (2 * h_kw["noise_multiplier"] ** 2)
            assert worst == pytest.approx(filt.budget, rel=1e-9)  # max_active=1
            assert g_kw["sensitivity"] == pytest.approx(clip, rel=1e-6)
            assert h_kw["sensitivity"] == pytest.approx(h_sens, rel=1e-6)
            raw = intercept_now + sum(scores_now[f, codes[:, f]] for f in range(N_FEATURES))
            if kind == "regression":
                g, h = np.clip(raw - target, -clip, clip), np.ones(len(y))
            else:
                p = 1 / (1 + np.exp(-raw))
                g, h = np.clip(p - target, -clip, clip), p * (1 - p)
            step = step_of(g_rel, h_rel)
            if g_in.shape == ():  # the intercept: everyone is charged, admitted ones summed
                f, outside, n_values = None, np.ones(len(y), dtype=bool), 1
            else:
                assert g_in.shape == h_in.shape == (n_bins - 1,)
                f = int(np.flatnonzero([np.array_equal(costs > 0, codes[:, j] != 0)
                                        for j in range(N_FEATURES)])[0])
                outside, n_values = codes[:, f] != 0, n_bins - 1
            expected_cost = np.where(outside, individual_cost(
                np.abs(g), g_kw["sensitivity"], g_kw["noise_multiplier"], n_values)
                + individual_cost(h, h_kw["sensitivity"], h_kw["noise_multiplier"], n_values),
                0.0)
            np.testing.assert_allclose(costs, expected_cost, rtol=1e-6, atol=0)
            admitted = mask & outside
            if f is None:
                assert float(h_in) == pytest.approx(h[admitted].sum(), abs=1e-6)
                assert float(g_in) == pytest.approx(g[admitted].sum(), abs=1e-6)
                n_refused += np.count_nonzero(~admitted)
                intercept_now += float(step)
            else:
                np.testing.assert_allclose(
                    h_in, np.bincount(codes[admitted, f], weights=h[admitted],
                                      minlength=n_bins)[1:], rtol=0, atol=1e-6)
                np.testing.assert_allclose(
                    g_in, np.bincount(codes[admitted, f], weights=g[admitted],
                                      minlength=n_bins)[1:], rtol=0, atol=1e-6)
                scores_now[f, 1:] += step
        intercept, scores = est._history[c]
        assert intercept[0] == pytest.approx(intercept_now, abs=1e-12)
        np.testing.assert_allclose(scores[0], scores_now, rtol=1e-12, atol=1e-15)
    assert n_refused > 0  # max_active=1: some records sat out the intercept
    np.testing.assert_array_equal(est.term_scores_, est._history[-1][1])
    np.testing.assert_array_equal(est.intercept_, est._history[-1][0])


@pytest.mark.parametrize("make, data, n_out", [(regressor, regression_data, 1),
                                               (classifier, binary_data, 1),
                                               (multiclassifier, multiclass_data, 3)],
                         ids=["regression", "binary", "multiclass"])
@pytest.mark.parametrize("max_active", [1, 2, "auto"])
def test_no_record_exceeds_the_cycle_budget(recorded, make, data, n_out, max_active):
    X, y = data(1000)
    epsilon, n_cycles = 1.0, 4
    est = make(epsilon=epsilon, n_cycles=n_cycles, max_active=max_active).fit(X, y)
    cycles = by_cycle(recorded)
    assert len(cycles) == n_cycles
    density = _cyclic._DENSITY_SHARE if max_active == "auto" else 0.0
    rho = zcdp_budget(epsilon, 1e-6) * (1 - 0.01 - density)  # init_fraction=0.01
    n_active = est.max_active_
    assert max_active == "auto" or n_active == max_active
    for filt, releases in cycles:
        assert filt.budget == pytest.approx(rho / n_cycles, rel=1e-9)
        worst = filt.budget / (n_active * n_out)
        for costs, _ in releases:
            # no release costs anyone more than a worst-case record (the noise's scale)
            assert costs.max() <= worst * (1 + 1e-9)
        taken, _ = participation_totals(releases)
        assert taken.max() <= filt.budget, (taken.max(), filt.budget)


@pytest.mark.parametrize("n_features", [1, 4, 9])
@pytest.mark.parametrize("max_active", ["auto", 1, 3])
@pytest.mark.parametrize("multiclass", [False, True], ids=["binary", "3-class"])
def test_max_active_sets_the_noise(recorded, monkeypatch, n_features, max_active, multiclass):
    # the per-release noise is such that a worst-case (G, H) release costs
    # cycle budget / (max_active * n_outputs); "auto" is read from the density release
    multipliers = []
    real_mechanism = _cyclic.gaussian_mechanism

    def spy(values, **kwargs):
        multipliers.append(kwargs["noise_multiplier"])
        return real_mechanism(values, **kwargs)

    monkeypatch.setattr(_cyclic, "gaussian_mechanism", spy)
    rng = np.random.default_rng(n_features)
    X = rng.random((400, n_features))
    y = np.digitize(X[:, 0], [0.33, 0.66]) if multiclass else (X[:, 0] > 0.5).astype(int)
    classes = [0, 1, 2] if multiclass else [0, 1]
    est = classifier(epsilon=1.0, n_cycles=2, max_active=max_active, classes=classes).fit(X, y)
    n_active = est.max_active_
    assert max_active == "auto" or n_active == max_active
    n_out = 3 if multiclass else 1
    budget = recorded[0][0].budget
    assert len(multipliers) == 2 * len(recorded) == 2 * 2 * (n_features + 1) * n_out
    nm_g, nm_h = set(multipliers[::2]), set(multipliers[1::2])
    assert len(nm_g) == len(nm_h) == 1  # one noise for every release
    worst = 1 / (2 * nm_g.pop() ** 2) + 1 / (2 * nm_h.pop() ** 2)
    assert worst == pytest.approx(budget / (n_active * n_out), rel=1e-9)


def test_a_filter_that_never_stops_anyone_breaks_the_budget(recorded):
    # POSITIVE CONTROL for the test above: the same releases with a broken filter that
    # admits everyone. At max_active=1 the noise pays for one worst-case release per
    # cycle, but records outside bin 0 are offered N_FEATURES + 1 releases each.
    X, y = regression_data(1000)
    regressor(epsilon=1.0, n_cycles=3, max_active=1).fit(X, y)
    good = by_cycle(recorded)
    for filt, releases in good:
        taken, offered = participation_totals(releases)
        assert taken.max() <= filt.budget
        assert offered.max() > 2 * filt.budget  # what the filter had to refuse
    recorded.clear()
    recorded.never_stop()
    regressor(epsilon=1.0, n_cycles=3, max_active=1).fit(X, y)
    broken = by_cycle(recorded)
    assert len(broken) == 3
    for filt, releases in broken:
        taken, _ = participation_totals(releases)
        assert taken.max() > 2 * filt.budget, (taken.max(), filt.budget)
        assert np.count_nonzero(taken > filt.budget) > 0.5 * len(taken)


# ======================================================================================
# Bad input
# ======================================================================================

BAD_PARAMS = [
    (dict(epsilon=0), ValueError, "epsilon"), (dict(epsilon=-1.0), ValueError, "epsilon"),
    (dict(epsilon=np.inf), ValueError, "epsilon"), (dict(epsilon="1"), TypeError, "epsilon"),
    (dict(delta=0.0), ValueError, "delta"), (dict(delta=1.0), ValueError, "delta"),
    (dict(delta=-0.1), ValueError, "delta"), (dict(delta=1.5), ValueError, "delta"),
    (dict(n_cycles=0), ValueError, "n_cycles"), (dict(n_cycles=10_001), ValueError, "n_cycles"),
    # wrong types raise TypeError, the library's convention (as n_estimators=2.5 does
    # in gradient boosting), not ValueError
    (dict(n_cycles="foo"), TypeError, "n_cycles"), (dict(n_cycles=2.5), TypeError, "n_cycles"),
    (dict(max_active=0), ValueError, "max_active"),
    (dict(max_active="foo"), TypeError, "max_active"),
    (dict(n_bins=1), ValueError, "n_bins"), (dict(n_bins=257), ValueError, "n_bins"),
    (dict(learning_rate=0.0), ValueError, "learning_rate"),
    (dict(learning_rate=-0.1), ValueError, "learning_rate"),
    (dict(learning_rate=np.nan), ValueError, "learning_rate"),
    (dict(reg_lambda=0.0), ValueError, "reg_lambda"),
    (dict(noise_reg=-1.0), ValueError, "noise_reg"),
    (dict(gradient_clip=0.0), ValueError, "gradient_clip"),
    (dict(gradient_clip=np.nan), ValueError, "gradient_clip"),
    (dict(init_fraction=0.0), ValueError, "init_fraction"),
    (dict(init_fraction=1.0), ValueError, "init_fraction"),
    (dict(verbose="loud"), ValueError, "verbose"),
    (dict(accountant="acc"), TypeError, "accountant"),
    (dict(bounds=(1.0, 0.0)), ValueError, "bounds"),
    (dict(epsilon=1e-9), ValueError, "out of the exact samplers' range"),
]


@pytest.mark.parametrize("params, error, match", BAD_PARAMS,
                         ids=[f"{next(iter(p))}={p[next(iter(p))]!r}" for p, _, _ in BAD_PARAMS])
@pytest.mark.parametrize("make", [regressor, classifier], ids=["reg", "clf"])
def test_bad_parameters_raise_and_spend_nothing(make, params, error, match):
    acc = BudgetAccountant()
    X, y = binary_data(200)
    params = {"accountant": acc, **params}
    with pytest.raises(error, match=match):
        make(**params).fit(X, y)
    assert acc.spent == (0.0, 0.0) and not acc.ledger


def test_unknown_parameter_is_rejected():
    for est in (regressor(), classifier()):
        with pytest.raises(ValueError, match="foo"):
            est.set_params(foo=1)
        with pytest.raises(TypeError):
            type(est)(foo=1)


def test_get_set_params_and_clone():
    est = classifier(n_cycles=3, max_active=2)
    params = est.get_params()
    assert params["n_cycles"] == 3 and params["max_active"] == 2
    twin = clone(est).set_params(n_cycles="auto", n_bins=8)
    assert twin.n_cycles == "auto" and est.n_cycles == 3
    assert twin.get_params()["accountant"] is est.get_params()["accountant"]
    X, y = binary_data(500)
    assert twin.fit(X, y).term_scores_.shape == (1, N_FEATURES, 8)


@pytest.mark.parametrize("make", [regressor, classifier], ids=["reg", "clf"])
def test_bad_data_raise_and_spend_nothing(make):
    X, y = binary_data(200)
    nan_x = X.copy()
    nan_x[3, 1] = np.nan
    inf_x = X.copy()
    inf_x[0, 0] = np.inf
    for bad_X, bad_y in ((nan_x, y), (inf_x, y), (X, y[:-1]), (X[:0], y[:0]), (X[:, 0], y)):
        acc = BudgetAccountant()
        with pytest.raises(ValueError):
            make(accountant=acc).fit(bad_X, bad_y)
        assert acc.spent == (0.0, 0.0) and not acc.ledger
    with pytest.raises(ValueError, match="NaN"):
        make().fit(nan_x, y)
    with pytest.raises(ValueError):
        make().fit(X, None)


@pytest.mark.parametrize("classes, y_change, match", BAD_CLASSES)
def test_bad_classes_raise_and_spend_nothing(classes, y_change, match):
    check_bad_classes(classifier, *binary_data(200), classes, y_change, match)


def test_predict_checks_its_input():
    X, y = binary_data(300)
    for est in (regressor(n_cycles=2).fit(X, y.astype(float)),
                classifier(n_cycles=2).fit(X, y)):
        with pytest.raises(ValueError, match="features"):
            est.predict(X[:, :2])
        with pytest.raises(ValueError):
            next(est.staged_predict(np.c_[X, X]))
        with pytest.raises(ValueError):
            est.predict(np.where(X > 0.5, np.nan, X))
    with pytest.raises(NotFittedError):
        regressor().predict(X)
    with pytest.raises(NotFittedError):
        next(regressor().staged_predict(X))
    for method in ("predict", "predict_proba", "decision_function"):
        with pytest.raises(NotFittedError):
            getattr(classifier(), method)(X)
    with pytest.raises(NotFittedError):
        next(classifier().staged_predict_proba(X))


# ======================================================================================
# Public inputs read from the data
# ======================================================================================


@pytest.mark.parametrize("make, missing, word", [
    (regressor, "bounds", "bounds"), (regressor, "y_bounds", "y_bounds"),
    (classifier, "bounds", "bounds"), (classifier, "classes", "classes"),
])
def test_missing_public_inputs_warn_and_are_recorded(make, missing, word):
    X, y = binary_data(300)
    est = make(n_cycles=2, **{missing: None})
    with pytest.warns(PrivacyLeakWarning, match=word):
        est.fit(X, y)
    assert len(est.privacy_leaks_) == 1 and word in est.privacy_leaks_[0]


def test_no_warning_and_no_leak_with_all_public_inputs():
    X, y = binary_data(300)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        reg = regressor(n_cycles=2).fit(X, y.astype(float))
        clf = classifier(n_cycles=2).fit(X, y)
    assert reg.privacy_leaks_ == [] and clf.privacy_leaks_ == []


def test_both_regressor_leaks_recorded():
    X, y = regression_data(300)
    with pytest.warns(PrivacyLeakWarning):
        est = DPExplainableBoostingRegressor(n_cycles=2, accountant=BudgetAccountant()).fit(X, y)
    assert len(est.privacy_leaks_) == 2


# ======================================================================================
# Reproducibility
# ======================================================================================


@pytest.mark.parametrize("make, data", [(regressor, regression_data),
                                        (multiclassifier, multiclass_data)],
                         ids=["regression", "multiclass"])
def test_seeded_fits_reproduce_and_seeds_differ(make, data):
    X, y = data(1000)
    a = make(epsilon=1.0, random_state=5).fit(X, y)
    b = make(epsilon=1.0, random_state=5).fit(X, y)
    c = make(epsilon=1.0, random_state=6).fit(X, y)
    np.testing.assert_array_equal(a.term_scores_, b.term_scores_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    assert not np.array_equal(a.term_scores_, c.term_scores_)
    assert not np.array_equal(a.intercept_, c.intercept_)


def test_auto_max_active_follows_the_noisy_density():
    # At a huge budget the density release is nearly exact: max_active_ is
    # ceil(0.75 (d + 1)) for d the mean number of features outside bin 0 (each record's
    # number capped at density_clip(p)), whatever the number of features.
    rng = np.random.default_rng(0)
    for n_features, share in ((6, 0.2), (30, 0.9), (30, 0.1)):
        X = rng.random((2000, n_features))
        X[rng.random(X.shape) > share] = 0.0  # at the lower bound: bin 0
        y = (X[:, 0] > 0.3).astype(int)
        est = classifier(epsilon=1e4, n_cycles=1).fit(X, y)
        outside = X >= 1.0 / 32  # bin 0 of 32 equal-width bins over (0, 1)
        capped = np.minimum(outside.sum(axis=1),
                            _cyclic._BaseDPExplainableBoosting.density_clip(n_features))
        assert est.max_active_ == min(n_features + 1, math.ceil(0.75 * (capped.mean() + 1)))
    # sparse data get less noise than dense data of the same width
    dense = classifier(epsilon=1e4, n_cycles=1).fit(rng.random((2000, 30)), y)
    sparse = np.where(rng.random((2000, 30)) < 0.1, rng.random((2000, 30)), 0.0)
    assert classifier(epsilon=1e4, n_cycles=1).fit(sparse, y).max_active_ < dense.max_active_


def test_density_release_sensitivity():
    # one record moves the released pair by at most sqrt(2) T: (min(k, T), T)
    p = 50
    cap = _cyclic._BaseDPExplainableBoosting.density_clip(p)
    assert cap == min(p, math.ceil(3 * math.sqrt(p + 1)))
    calls = []

    class Plan:
        def release(self, values, sensitivity, budget, rng, label=None):
            calls.append((np.array(values), sensitivity))
            return np.array(values)

    class Rows:  # the per-block count, on one block of three records
        def capped_active_features(self, cap):
            return int(_cyclic_rows._capped_active_features(codes, cap))

    codes = np.zeros((3, p), dtype=np.uint8)
    codes[0] = 1  # a record outside bin 0 everywhere
    codes[1, :2] = 5
    d = _cyclic._BaseDPExplainableBoosting._noisy_density(Plan(), Rows(), 3, p, 0.1, None)
    (values, sensitivity), = calls
    assert values.tolist() == [cap + 2, 3 * cap] and sensitivity == math.sqrt(2) * cap
    assert d == pytest.approx((cap + 2) / 3)
