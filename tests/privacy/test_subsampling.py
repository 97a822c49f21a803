"""Poisson subsampling with amplification in DP gradient boosting (``subsample=q``).

What is tested: the budget search returns the smallest multiplier that fits (and one a
hair smaller does not); the estimator spends what it claims and refuses settings the
proof does not cover; an audit of the sampled release (the library's sampler and
mechanism) stays within the amplified claim, and a broken sampler that always includes
the target record is flagged.
"""

import math

import numpy as np
import pytest

from dptrees import BudgetAccountant, DPGradientBoostingClassifier, DPGradientBoostingRegressor
from dptrees.accounting import INTEGER_ORDERS, RDPAccountant, zcdp_budget
from dptrees.audit import audit_epsilon
from dptrees._sources._rows import poisson_sample
from dptrees.privacy.release_plan import subsampled_gaussian_budget
from dptrees.mechanisms import gaussian_mechanism


def _epsilon(q, z, n, init_rho, delta):
    acc = RDPAccountant(INTEGER_ORDERS).compose_zcdp(init_rho)
    acc.compose_subsampled_discrete_gaussian(q, z, count=n)
    return acc.get_epsilon(delta)


@pytest.mark.parametrize("epsilon, q, n", [(0.1, 0.2, 100), (1.0, 0.05, 500), (4.0, 0.5, 50)])
def test_budget_search_is_sound_and_tight(epsilon, q, n):
    delta = 1e-6
    rho = zcdp_budget(epsilon, delta)
    init = 0.01 * rho
    budget = subsampled_gaussian_budget(epsilon, delta, q, n, init, rho - init)
    z = 1.0 / math.sqrt(2.0 * budget)
    assert _epsilon(q, z, n, init, delta) <= epsilon
    assert _epsilon(q, z / 1.002, n, init, delta) > epsilon  # tight to the bisection's 0.1 %


def test_amplification_lowers_the_noise():
    delta, epsilon, n = 1e-6, 0.5, 100
    rho = zcdp_budget(epsilon, delta)
    unamplified = (rho * 0.99) / n  # each of n releases' zCDP without sampling
    small = subsampled_gaussian_budget(epsilon, delta, 0.05, n, 0.01 * rho, 0.99 * rho)
    large = subsampled_gaussian_budget(epsilon, delta, 0.5, n, 0.01 * rho, 0.99 * rho)
    # budget = 1 / (2 z**2): a larger budget per release is less noise (relative to the
    # sample's sums, which shrink with q)
    assert small > large > unamplified


def test_poisson_sample_rate_and_independence_of_data():
    rng = np.random.default_rng(0)
    draws = [poisson_sample(10_000, 0.3, rng) for _ in range(20)]
    sizes = np.array([len(d) for d in draws])
    assert abs(sizes.mean() - 3000) < 3 * math.sqrt(10_000 * 0.3 * 0.7 / 20) * 3
    assert all(np.all(np.diff(d) > 0) for d in draws)  # sorted indices, no repeats


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 4))
    y = (X[:, 0] + 0.3 * rng.standard_normal(n) > 0.5).astype(int)
    return X, y


def test_subsampled_fit_spends_its_claim():
    X, y = _data()
    acc = BudgetAccountant()
    model = DPGradientBoostingClassifier(n_estimators=30, epsilon=0.5, subsample=0.2,
                                         bounds=(0, 1), classes=[0, 1], accountant=acc,
                                         random_state=0).fit(X, y)
    assert model.epsilon_spent_ <= 0.5
    assert model.epsilon_spent_ > 0.5 * 0.99
    assert np.array_equal(np.asarray(model.rdp_accountant_.orders, dtype=float),
                          np.asarray(INTEGER_ORDERS, dtype=float))
    assert acc.spent[0] == pytest.approx(0.5)
    assert model.n_releases_ == 1 + 2 * 30


def test_subsampled_fit_learns_and_is_reproducible():
    X, y = _data(5000)
    kwargs = dict(n_estimators=50, epsilon=5.0, subsample=0.3, bounds=(0, 1),
                  classes=[0, 1], random_state=3)
    a = DPGradientBoostingClassifier(accountant=BudgetAccountant(), **kwargs).fit(X, y)
    b = DPGradientBoostingClassifier(accountant=BudgetAccountant(), **kwargs).fit(X, y)
    assert np.array_equal(a.predict_proba(X), b.predict_proba(X))
    assert np.mean(a.predict(X) == y) > max(np.mean(y), 1 - np.mean(y)) + 0.05
    full = DPGradientBoostingClassifier(accountant=BudgetAccountant(),
                                        **{**kwargs, "subsample": None}).fit(X, y)
    assert not np.array_equal(a.predict_proba(X), full.predict_proba(X))


def test_subsampled_regressor():
    X, y = _data(4000)
    target = X[:, 0] * 2.0
    model = DPGradientBoostingRegressor(n_estimators=40, epsilon=5.0, subsample=0.25,
                                        bounds=(0, 1), y_bounds=(0, 2),
                                        accountant=BudgetAccountant(),
                                        random_state=0).fit(X, target)
    pred = model.predict(X)
    assert np.all((pred >= 0) & (pred <= 2))
    assert np.mean(np.abs(pred - target)) < np.mean(np.abs(target - target.mean()))


@pytest.mark.parametrize("kwargs, match", [
    (dict(subsample=0.0), "subsample"),
    (dict(subsample=1.0), "subsample"),
    (dict(subsample=1.5), "subsample"),
    (dict(subsample="half"), "subsample"),
    (dict(subsample=0.5, split="hybrid"), "split='random'"),
    (dict(subsample=0.5, noise="laplace", delta=0.0), "noise='gaussian'"),
    (dict(subsample=0.5, accounting="pld"), "accounting='rdp'"),
])
def test_subsample_errors(kwargs, match):
    X, y = _data(200)
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match=match):
        DPGradientBoostingClassifier(n_estimators=5, bounds=(0, 1), classes=[0, 1],
                                     accountant=acc, **kwargs).fit(X, y)
    assert acc.spent[0] == 0


# -- audit ----------------------------------------------------------------------------

Q, Z, DELTA = 0.1, 0.7, 1e-3


def _sampled_release(sampler):
    """One Poisson-subsampled discrete Gaussian release of a sum per run. ``data`` is
    the list of records' contributions (the target last, if present); records are
    sampled by ``sampler`` (each run its own sample). The noise is
    :func:`gaussian_mechanism` on all runs at once: one release of ``n`` values, whose
    rounding slack (``sqrt(n)`` grid units) only adds noise, so the claim stays valid."""
    def mechanism(data, n, rng):
        contributions = np.asarray(data, dtype=float)
        sums = np.zeros(n)
        for i, c in enumerate(contributions):
            included = sampler(n, i, len(contributions), rng)
            sums += c * included
        return gaussian_mechanism(sums, sensitivity=1.0, noise_multiplier=Z,
                                  random_state=rng)
    return mechanism


def _poisson(n, i, m, rng):
    # for each run, is record i in that run's sample? (the library's sampler over runs)
    mask = np.zeros(n, dtype=bool)
    mask[poisson_sample(n, Q, rng)] = True
    return mask


def _broken(n, i, m, rng):
    # the target (last record) is always sampled: no amplification for it
    return np.ones(n, dtype=bool) if i == m - 1 else _poisson(n, i, m, rng)


D0 = [0.0, 0.0]
D1 = [0.0, 0.0, 1.0]


def _claim():
    return RDPAccountant(INTEGER_ORDERS).compose_subsampled_discrete_gaussian(
        Q, Z).get_epsilon(DELTA)


def test_audit_subsampled_release_within_claim():
    claim = _claim()  # about 2.6 at delta 1e-3 (the audit: about 1.0; broken: 3.6)
    res = audit_epsilon(_sampled_release(_poisson), D0, D1, delta=DELTA,
                        n_calibration=20_000, n_test=50_000, random_state=1)
    assert res.check(claim), (res.epsilon_lower_bound, claim)
    assert res.epsilon_lower_bound > 0.3 * claim  # the audit has power


def test_audit_flags_a_sampler_that_always_takes_the_target():
    claim = _claim()
    res = audit_epsilon(_sampled_release(_broken), D0, D1, delta=DELTA,
                        n_calibration=20_000, n_test=50_000, random_state=1)
    assert not res.check(claim), (res.epsilon_lower_bound, claim)
