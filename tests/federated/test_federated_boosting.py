"""Client-level DP federated gradient boosting (``dptrees.federated._boosting``).

* Fits beat the majority class / the constant model on synthetic non-IID federations.
* Training stops *before* the delta bound; the accounting attributes are the
  aggregator's (same RDP curve as composing the rounds by hand).
* Bad input (client ids, parameters) raises; inferred public inputs warn and are recorded.
* Privacy: one whole client (with many extreme records) moves a round's pre-noise sum by
  at most the sensitivity ``S`` (+ rounding); the released average's noise has the
  standard deviation ``z S / (q K)`` (KS test with a power check); and a client-level
  audit (``dptrees.audit``, q = 1 so a round is a plain Gaussian) on neighbouring
  federations that differ by that client stays within the claimed (epsilon, delta),
  while a positive control (the client's vector left unclipped) is flagged.
"""

import math
import warnings

import numpy as np
import pytest
from scipy import stats as sps
from sklearn.base import clone
from support import ALPHA, audit_samplers

from dptrees import EarlyStopWarning, PrivacyLeakWarning
from dptrees.data.binning import Binner
from dptrees.accounting import RDPAccountant
from dptrees.boosting._trees import draw_random_structure
from dptrees.boosting._losses import BinaryLogistic
from dptrees.federated import AdaptiveClip, DPAggregator, FixedClip, _protocol
from dptrees.federated import _boosting as fb
from dptrees.federated._client_rows import ClientRows
from dptrees.federated._boosting import (
    DPFederatedGradientBoostingClassifier,
    DPFederatedGradientBoostingRegressor,
)
from dptrees.federated._protocol import FRAC_BITS, INTEGER_ORDERS
from dptrees.mechanisms import gaussian_mechanism

BOUNDS = (0.0, 1.0)


def federation(n=6000, p=3, n_clients=60, seed=0, task="binary"):
    """Non-IID, unbalanced: a client's rows come from one slice of x0, sizes Dirichlet."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, p))
    sizes = rng.dirichlet(np.full(n_clients, 0.7))
    # clients ordered by x0: client c holds rows of the c-th quantile band (non-IID)
    order = np.argsort(X[:, 0])
    clients = np.empty(n, dtype=np.intp)
    clients[order] = np.repeat(np.arange(n_clients), rng.multinomial(n, sizes))
    if task == "binary":
        y = (X[:, 0] + 0.5 * X[:, 1] > 0.8).astype(int)
    elif task == "multiclass":
        y = np.digitize(X[:, 0] + 0.3 * X[:, 1], [0.45, 0.85])
    else:
        y = np.sin(6 * X[:, 0]) + X[:, 1]
    return X, y, clients


def classifier(**params):
    base = dict(n_estimators=40, epsilon=2.0, delta=1e-5, sampling_probability=0.5,
                noise_multiplier=4.0, bounds=BOUNDS, classes=[0, 1], n_clients=60,
                random_state=0)
    base.update(params)
    return DPFederatedGradientBoostingClassifier(**base)


def regressor(**params):
    base = dict(n_estimators=40, epsilon=2.0, delta=1e-5, sampling_probability=0.5,
                noise_multiplier=4.0, bounds=BOUNDS, y_bounds=(-1.0, 2.0), n_clients=60,
                random_state=0)
    base.update(params)
    return DPFederatedGradientBoostingRegressor(**base)


# ======================================================================================
# Utility
# ======================================================================================


def test_classifier_beats_majority():
    X, y, clients = federation(n_clients=200)
    Xt, yt, _ = federation(seed=1)
    est = classifier(n_estimators=60, n_clients=200).fit(X, y, clients)
    majority = max(yt.mean(), 1 - yt.mean())
    assert est.score(Xt, yt) > majority + 0.1
    assert est.n_iter_ >= 10
    proba = est.predict_proba(Xt)
    assert proba.shape == (Xt.shape[0], 2) and np.allclose(proba.sum(axis=1), 1)
    assert set(np.unique(est.predict(Xt))) <= {0, 1}


def test_multiclass_beats_majority():
    X, y, clients = federation(n_clients=200, task="multiclass")
    Xt, yt, _ = federation(seed=1, task="multiclass")
    est = classifier(n_estimators=60, classes=[0, 1, 2], n_clients=200).fit(X, y, clients)
    assert est.predict_proba(Xt).shape == (Xt.shape[0], 3)
    assert all(len(r) == 3 for r in est.estimators_)  # one tree per class and round
    assert est.score(Xt, yt) > np.bincount(yt).max() / yt.shape[0] + 0.1


def test_regressor_beats_constant():
    X, y, clients = federation(n_clients=200, task="regression")
    Xt, yt, _ = federation(seed=1, task="regression")
    est = regressor(n_estimators=60, n_clients=200).fit(X, y, clients)
    assert est.score(Xt, yt) > 0.3  # the constant model has R^2 <= 0
    pred = est.predict(Xt)
    assert pred.min() >= -1.0 and pred.max() <= 2.0


def test_reproducible_and_clone():
    X, y, clients = federation()
    a = classifier(n_estimators=5).fit(X, y, clients)
    b = clone(a).fit(X, y, clients)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    assert [h["n_sampled"] for h in a.history_] == [h["n_sampled"] for h in b.history_]


# ======================================================================================
# Accounting
# ======================================================================================


def test_stops_before_the_delta_bound():
    X, y, clients = federation()
    est = classifier(n_estimators=500, epsilon=1.0, delta=1e-5, noise_multiplier=4.0,
                     sampling_probability=0.2)
    with pytest.warns(EarlyStopWarning, match=r"stopped after \d+ of 500 boosting rounds"):
        est.fit(X, y, clients)
    assert 1 <= est.n_iter_ < 500
    assert est.delta_spent_ <= 1e-5
    # one more round would have passed the bound
    assert est.rdp_accountant_.would_exceed(1.0, 1e-5, noise_multiplier=4.0,
                                            sampling_probability=0.2)


def test_accounting_matches_the_aggregator():
    X, y, clients = federation()
    est = classifier(n_estimators=7).fit(X, y, clients)
    assert est.n_iter_ == 7 and est.n_rounds_ == 8  # the initial score is a round
    assert len(est.history_) == 8 and est.history_[0]["kind"] == "init"
    ref = RDPAccountant(INTEGER_ORDERS)
    ref.compose_subsampled_gaussian(0.5, 4.0, count=8)
    assert est.epsilon_spent_ == 2.0
    assert math.isclose(est.delta_spent_, ref.get_delta(2.0), rel_tol=1e-9)
    assert math.isclose(est.delta_spent_, est.rdp_accountant_.get_delta(2.0), rel_tol=1e-12)
    assert est.history_[-1]["delta"] == pytest.approx(est.delta_spent_)
    assert est.n_clients_ == 60 and est.sampling_probability_ == 0.5


def test_budget_too_small_for_any_round():
    X, y, clients = federation()
    with pytest.raises(ValueError, match="initial-score"):
        classifier(epsilon=0.01, noise_multiplier=0.5, sampling_probability=1.0).fit(
            X, y, clients)


def test_expected_clients_and_adaptive_clip():
    X, y, clients = federation(n_clients=200)
    est = classifier(sampling_probability=None, expected_clients=50, n_clients=200,
                     clip_norm="adaptive", n_estimators=10).fit(X, y, clients)
    assert est.sampling_probability_ == 0.25
    assert est.clip_norm_ != 1.0  # the bound moved
    assert est.privacy_leaks_ == []
    with pytest.warns(PrivacyLeakWarning, match="number of clients"):
        est = classifier(sampling_probability=None, expected_clients=50, n_clients=None,
                         n_estimators=2).fit(X, y, clients)
    assert est.privacy_leaks_


def test_adaptive_clip_instance_is_copied_whole():
    """A user's AdaptiveClip keeps every setting (floor included) and is not moved."""
    X, y, clients = federation(n_clients=200)
    # a low target quantile pulls the bound down (to ~0.46 here without the floor)
    user_clip = AdaptiveClip(0.8, target_quantile=0.05, learning_rate=0.5,
                             bit_noise_multiplier=4.0, floor=0.6)
    est = classifier(sampling_probability=0.25, n_clients=200, clip_norm=user_clip,
                     n_estimators=10).fit(X, y, clients)
    assert user_clip.clip_norm == 0.8  # the estimator moved its own copy
    assert est.clip_norm_ == 0.6  # the floor held
    fresh = est._make_clip()
    assert fresh is not user_clip
    assert vars(fresh) == vars(user_clip)


# ======================================================================================
# Bad input
# ======================================================================================


@pytest.mark.parametrize("bad, match", [
    (lambda c: c[:-1], "one client id per row"),
    (lambda c: np.where(np.arange(c.size) == 3, -1, c), ">= 0"),
    (lambda c: c + 0.5, "integer"),
    (lambda c: np.where(np.arange(c.size) == 3, np.nan, c), "integer"),
    (lambda c: None, "every row is a client of its own, but X has 6000 rows"),
    (lambda c: c.reshape(-1, 2), "1D"),
])
def test_bad_clients(bad, match):
    X, y, clients = federation()
    with pytest.raises(ValueError, match=match):
        classifier().fit(X, y, bad(clients))


def test_without_clients_every_record_is_a_client():
    X, y, _ = federation(n=600)
    est = classifier(n_clients=600, n_estimators=5)
    fitted = clone(est).fit(X, y)
    twin = clone(est).fit(X, y, clients=np.arange(600))
    np.testing.assert_array_equal(fitted.predict_proba(X), twin.predict_proba(X))
    assert fitted.privacy_report()["neighbours"].startswith("add/remove one record")
    assert twin.privacy_report()["neighbours"].startswith("add/remove one client")
    assert all(e["neighbours"] == fitted.privacy_report()["neighbours"]
               for e in fitted.privacy_ledger_)


def test_clients_are_routed_as_metadata():
    from sklearn import config_context
    from sklearn.model_selection import cross_val_score

    X, y, clients = federation(n=1200)
    with config_context(enable_metadata_routing=True):
        est = classifier(n_estimators=5).set_fit_request(clients=True)
        scores = cross_val_score(est, X, y, cv=2, params={"clients": clients})
        unrouted = cross_val_score(classifier(n_estimators=5, n_clients=1200), X, y, cv=2)
    assert scores.shape == unrouted.shape == (2,)
    assert (scores > 0.5).all()


def test_bad_clients_type_and_range():
    X, y, clients = federation()
    with pytest.raises(TypeError, match="integer"):
        classifier().fit(X, y, clients.astype(str))
    with pytest.raises(ValueError, match="out of range"):
        classifier(n_clients=10).fit(X, y, clients)


@pytest.mark.parametrize("params, error", [
    (dict(epsilon=0.0), ValueError),
    (dict(delta=0.0), ValueError),
    (dict(sampling_probability=0.0), ValueError),
    (dict(sampling_probability=1.5), ValueError),
    (dict(expected_clients=5), ValueError),  # together with sampling_probability
    (dict(noise_multiplier=-1.0), ValueError),
    (dict(clip_norm="median"), ValueError),
    (dict(clip_norm=0.0), ValueError),
    (dict(reg_lambda=0.0), ValueError),
    (dict(max_depth=0), ValueError),
    (dict(n_estimators=2.5), TypeError),
    (dict(n_clients=0), ValueError),
])
def test_bad_params(params, error):
    X, y, clients = federation()
    with pytest.raises(error):
        classifier(**params).fit(X, y, clients)


def test_bad_labels_and_shapes():
    X, y, clients = federation()
    with pytest.raises(ValueError):
        classifier(classes=[0, 2]).fit(X, y, clients)  # label 1 not in the public list
    with pytest.raises(ValueError):
        classifier().fit(X[:, :0], y, clients)
    est = classifier(n_estimators=2).fit(X, y, clients)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :2])


def test_missing_public_inputs_warn_and_are_recorded():
    X, y, clients = federation()
    with pytest.warns(PrivacyLeakWarning):
        est = classifier(bounds=None, n_estimators=2).fit(X, y, clients)
    assert any("bounds" in s for s in est.privacy_leaks_)
    with pytest.warns(PrivacyLeakWarning):
        est = classifier(classes=None, n_estimators=2).fit(X, y, clients)
    assert any("classes" in s for s in est.privacy_leaks_)
    Xr, yr, cr = federation(task="regression")
    with pytest.warns(PrivacyLeakWarning):
        est = regressor(y_bounds=None, n_estimators=2).fit(Xr, yr, cr)
    assert any("y_bounds" in s for s in est.privacy_leaks_)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        assert classifier(n_estimators=2).fit(X, y, clients).privacy_leaks_ == []


# ======================================================================================
# Privacy: sensitivity, noise, audit
# ======================================================================================

Z, S, K, DEPTH = 1.0, 1.0, 20, 2
AUDIT_DELTA = 1e-5


def neighbouring_round(n_records=500):
    """One tree round's client vectors on D0 (K small clients) and D1 = D0 plus one
    client holding ``n_records`` extreme records, computed by the library's clients from
    the same public model (initial score 0) and the same random structure."""
    rng = np.random.default_rng(3)
    X0 = rng.random((10 * K, 2))
    y0 = (X0[:, 0] > 0.5).astype(float)
    ids0 = np.repeat(np.arange(K), 10)
    # the extra client: all its records in leaf 0 (codes 0 go left at every node), label 1
    X1 = np.vstack([X0, np.zeros((n_records, 2))])
    y1 = np.concatenate([y0, np.ones(n_records)])
    ids1 = np.concatenate([ids0, np.full(n_records, K)])
    est = classifier(max_depth=DEPTH, clip_norm=S, noise_multiplier=Z, n_bins=8)
    binner = Binner(np.zeros(2), np.ones(2), 8)
    loss = BinaryLogistic()
    weight = fb._HESSIAN_FACTOR * 1.0 / loss.hessian_bound
    structure = draw_random_structure(np.random.default_rng(7), 2, 8, DEPTH)
    sums = []
    for X, y, ids in ((X0, y0, ids0), (X1, y1, ids1)):
        model = fb._PublicModel(1, 0.3)
        model.init_score = np.zeros(1)
        codes = binner.transform(np.ascontiguousarray(X))
        fixed = est._fixed_point(loss)
        rows = ClientRows(codes, y, ids, ids.max() + 1)
        rows.sync(model)
        clients = np.arange(ids.max() + 1)
        updates = rows.tree_updates(clients, [structure], loss, fixed, weight)
        vectors = rows.contributions(clients, updates, S, FRAC_BITS)
        sums.append((np.sum([v.vector for v in vectors], axis=0), vectors))
    return est, sums, weight


def test_one_client_moves_the_sum_by_at_most_the_sensitivity():
    est, ((sum0, v0), (sum1, v1)), _ = neighbouring_round()
    extreme = v1[-1]
    assert extreme.within_bound == 0  # unclipped, its vector was far outside the bound
    dim = sum0.shape[0]
    sens = DPAggregator(K, 1.0, Z, FixedClip(S), 1.0, 1e-5).sensitivity(dim)
    shift = np.linalg.norm(sum1 - sum0)
    assert shift <= sens
    assert shift >= S * 0.999  # the worst case is attained: the client is at the bound
    for v in v0 + v1:  # every contribution is on the grid and within the bound
        assert np.linalg.norm(v.vector) <= sens
        np.testing.assert_array_equal(v.vector * 2.0**FRAC_BITS,
                                      np.rint(v.vector * 2.0**FRAC_BITS))


def test_fit_contributions_are_clipped(monkeypatch):
    # In a real fit, every vector the aggregator receives is within S (+ rounding),
    # including a client holding a third of the data with extreme labels.
    X, y, clients = federation()
    clients = np.where(np.arange(clients.size) < 2000, 0, clients)
    seen = []
    real = DPAggregator.aggregate

    def spy(self, contributions, dimension):
        seen.append((self.sensitivity(dimension),
                     [c.vector for c in contributions if c is not None]))
        return real(self, contributions, dimension)

    monkeypatch.setattr(DPAggregator, "aggregate", spy)
    classifier(n_estimators=3, clip_norm=0.5).fit(X, y, clients)
    assert len(seen) == 4
    for sens, vectors in seen:
        assert vectors and all(np.linalg.norm(v) <= sens for v in vectors)


def released_noise(monkeypatch, n_fits=40):
    """Noise of the released averages of real fits (q = 1): output - exact sum / (q K)."""
    records = []
    real = _protocol.gaussian_mechanism

    def spy(values, **kwargs):
        out = real(values, **kwargs)
        records.append((np.array(values, dtype=float), np.array(out, dtype=float), kwargs))
        return out

    monkeypatch.setattr(_protocol, "gaussian_mechanism", spy)
    X, y, clients = federation(n=2000, n_clients=40)
    for seed in range(n_fits):
        classifier(n_estimators=3, sampling_probability=1.0, noise_multiplier=2.0,
                   clip_norm=0.7, epsilon=50.0, n_clients=40,
                   random_state=seed).fit(X, y, clients)
    noise = np.concatenate([(out - vals).ravel() for vals, out, kw in records
                            if vals.size > 2])  # the tree rounds
    return noise / 40  # divided by q K, as the aggregator does


def test_released_noise_has_std_z_s_over_qk(monkeypatch):
    noise = released_noise(monkeypatch)
    std = 2.0 * 0.7 / (1.0 * 40)  # z S / (q K)
    assert noise.size == 40 * 3 * 16
    assert sps.kstest(noise, "norm", args=(0.0, std)).pvalue > ALPHA
    assert abs(noise.std() / std - 1) < 0.06
    for wrong in (std / 2, 2 * std):  # power: a 2x wrong std is rejected
        assert sps.kstest(noise, "norm", args=(0.0, wrong)).pvalue < 1e-10


N_CAL, N_TEST = 4000, 20000


def leaf_sampler(total, dim, weight, reg_lambda=1.0, sensitivity=None):
    """Batched sampler of leaf 0's value of the first tree: the aggregator's noise on
    the exact sum (q = 1, so ``(sum + noise) / K * K``), then the estimator's leaf rule."""
    sens = (DPAggregator(K, 1.0, Z, FixedClip(S), 1.0, 1e-5).sensitivity(dim)
            if sensitivity is None else sensitivity)
    n_leaves = dim // 2
    reg = reg_lambda * Z * S / weight

    def sampler(n, rng):
        out = np.empty(n)
        for i in range(n):
            noisy = gaussian_mechanism(total, sensitivity=sens, noise_multiplier=Z,
                                       random_state=rng)
            g, h = noisy[0], noisy[n_leaves] / weight
            out[i] = -g / (max(h, 0.0) + reg)
        return out
    return sampler


def claimed_epsilon():
    acc = RDPAccountant(INTEGER_ORDERS)
    acc.compose_subsampled_gaussian(1.0, Z)
    return acc.get_epsilon(AUDIT_DELTA)


def test_client_level_audit(record_audit):
    est, ((sum0, _), (sum1, _)), weight = neighbouring_round()
    dim = sum0.shape[0]
    claim = claimed_epsilon()
    res = audit_samplers(leaf_sampler(sum0, dim, weight), leaf_sampler(sum1, dim, weight),
                         N_CAL, N_TEST, seed=5)
    record_audit(res, claim).assert_within(claim)
    assert res.epsilon_lower_bound > 0.5  # the audit has power: the client shows


def test_client_level_audit_flags_an_unclipped_client(record_audit):
    # Positive control: the extra client's vector added without clipping (the server
    # trusting a client), noise still calibrated to S: the audit refutes the claim.
    est, ((sum0, _), (sum1, v1)), weight = neighbouring_round(n_records=60)
    dim = sum0.shape[0]
    loss = BinaryLogistic()
    g = 0.5 - 1.0  # p = 1/2 at initial score 0, label 1
    unclipped = np.zeros(dim)
    unclipped[0], unclipped[dim // 2] = 60 * g, weight * 60 * loss.hessian_bound
    bad_sum = sum0 + unclipped
    claim = claimed_epsilon()
    res = audit_samplers(leaf_sampler(sum0, dim, weight), leaf_sampler(bad_sum, dim, weight),
                         N_CAL, N_TEST, seed=6)
    record_audit(res, claim)
    assert res.epsilon_lower_bound > claim


# -- small budgets: the initial score alone -----------------------------------------------

def test_too_few_clients_for_the_budget_fit_the_initial_score_alone():
    """Squared error with epsilon x n_clients below boosting's FALLBACK_EPS_ROWS: no tree
    round; the initial score is one Laplace round (pure DP, vectors clipped in L1 to
    sqrt(2) S) in which every client takes part (q = 1); with a given noise multiplier,
    one Gaussian round. (Binary log-loss never falls back:
    tests/test_small_budget_fallback.py.)"""
    from dptrees import BudgetAccountant
    from dptrees.boosting._common import FALLBACK_EPS_ROWS
    from dptrees.federated import DPFederatedGradientBoostingRegressor
    rng = np.random.default_rng(0)
    n = 2_000
    X = rng.random((n, 3))
    y = np.clip(0.3 + 0.4 * X[:, 0] + 0.05 * rng.standard_normal(n), 0, 1)
    epsilon = 0.5 * FALLBACK_EPS_ROWS / n
    reg = DPFederatedGradientBoostingRegressor(
        epsilon=epsilon, bounds=(0, 1), y_bounds=(0, 1), n_clients=n,
        accountant=BudgetAccountant(), random_state=0).fit(X, y)
    assert reg.n_iter_ == 0 and reg.n_rounds_ == 1 and reg.sampling_probability_ == 1.0
    assert reg.accounting_ == "pure" and reg.noise_multiplier_ == 1.0 / epsilon
    assert reg.clip_norm_ == math.sqrt(2.0)
    [entry] = reg.privacy_ledger_
    assert entry["mechanism"] == "subsampled discrete Laplace" and entry["norm"] == "L1"
    pred = reg.predict(X)
    assert np.ptp(pred) == 0.0 and abs(pred[0] - y.mean()) < 0.1
    assert reg.epsilon_spent_ <= epsilon and reg.delta_spent_ == 0.0
    gaussian = clone(reg).set_params(noise_multiplier=50.0).fit(X, y)
    assert gaussian.n_iter_ == 0 and gaussian.accounting_ in ("rdp", "pld")
    assert gaussian.privacy_ledger_[0]["norm"] == "L2" and gaussian.delta_spent_ > 0
    # a given sampling probability is kept; enough budget grows trees
    sampled = clone(reg).set_params(sampling_probability=1.0, n_estimators=3).fit(X, y)
    assert sampled.n_iter_ == 0 and sampled.n_rounds_ == 1
    grown = clone(reg).set_params(epsilon=1.0, n_estimators=3).fit(X, y)
    assert grown.n_iter_ == 3
