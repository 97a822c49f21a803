"""Tests for dptrees.accounting: budgets, composition, Renyi-DP and zCDP accounting."""

import copy
import math
import pickle
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest

import dp_accounting
from dptrees.privacy import rdp_curves
from dptrees.accounting import (
    BudgetAccountant,
    RDPAccountant,
    SpendRecord,
    check_accountant,
    gaussian_rho,
    parallel_composition,
    sequential_composition,
    zcdp_to_approx_dp,
)
from dptrees.exceptions import BudgetExceededError, CompositionWarning


def _state(acc):
    return (acc.spent, acc.remaining(), acc.ledger, len(acc))


# dp-accounting's exact (analytic) Gaussian epsilon, a lower bound for any sound accountant:
# from dp-accounting 0.6 (pyproject allows >= 0.5.1)
needs_exact_gaussian = pytest.mark.skipif(
    not hasattr(dp_accounting, "get_epsilon_gaussian"),
    reason="dp-accounting < 0.6 has no get_epsilon_gaussian")


def _dpa_rdp_accountant():
    return dp_accounting.rdp.RdpAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
    )


#: dp-accounting's own default orders, for comparisons with its accountant (ours also
#: tracks larger orders by default: rdp_curves.LARGE_ORDERS)
DPA_ORDERS = tuple(dp_accounting.rdp.rdp_privacy_accountant.DEFAULT_RDP_ORDERS)


# ======================================================================================
# BudgetAccountant
# ======================================================================================


class TestSpending:
    def test_spend_exactly_the_total_despite_rounding(self):
        acc = BudgetAccountant(epsilon=1.0, delta=3e-6)
        acc.spend(0.1, 1e-6)
        acc.spend(0.2, 1e-6)
        # 0.1 + 0.2 + 0.7 == 1.0000000000000002 in floats: must still be accepted.
        acc.spend(0.7, 1e-6)
        assert acc.spent[0] == pytest.approx(1.0, abs=1e-15)
        assert acc.spent[1] == pytest.approx(3e-6, rel=1e-12)
        assert acc.remaining() == (0.0, pytest.approx(0.0, abs=1e-18))
        assert len(acc) == 3

    def test_one_more_spend_raises_and_leaves_state_unchanged(self):
        acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
        for i in range(4):
            acc.spend(0.25, label=f"part {i}")
        before = _state(acc)
        with pytest.raises(BudgetExceededError, match="Nothing was spent"):
            acc.spend(1e-9, label="one too many")
        assert _state(acc) == before
        # Still refused on retry, and a zero-cost spend still fits.
        with pytest.raises(BudgetExceededError):
            acc.spend(1e-6)
        acc.spend(0.0)
        assert len(acc) == 5

    def test_delta_is_limited_separately(self):
        acc = BudgetAccountant(epsilon=10.0, delta=1e-6)
        acc.spend(0.1, 6e-7)
        before = _state(acc)
        with pytest.raises(BudgetExceededError):
            acc.spend(0.1, 6e-7)
        assert _state(acc) == before
        acc.spend(0.1, 4e-7)
        with pytest.raises(BudgetExceededError):
            acc.spend(0.0, 1e-12)

    def test_tolerance_is_only_for_rounding(self):
        acc = BudgetAccountant(epsilon=1.0)
        with pytest.raises(BudgetExceededError):
            acc.spend(1.0 + 1e-9)
        acc.spend(1.0 + 1e-13)  # within the 1e-12 relative tolerance

    def test_pure_dp_budget_refuses_any_delta(self):
        acc = BudgetAccountant(epsilon=1.0, delta=0.0)
        with pytest.raises(BudgetExceededError):
            acc.spend(0.1, 1e-30)
        acc.spend(1.0)
        assert acc.spent == (1.0, 0.0)

    def test_unlimited_epsilon(self):
        acc = BudgetAccountant()
        assert (acc.epsilon, acc.delta) == (math.inf, 1.0)
        acc.spend(1e6)
        acc.spend(1e6, 0.5)
        assert acc.remaining() == (math.inf, 0.5)
        assert acc.check(1e300)
        with pytest.raises(BudgetExceededError):  # deltas still sum to at most 1
            acc.spend(1.0, 0.6)

    def test_check_does_not_spend(self):
        acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
        acc.spend(0.6, 5e-6)
        before = _state(acc)
        assert acc.check(0.4)
        assert acc.check(0.4, 5e-6)
        assert not acc.check(0.41)
        assert not acc.check(0.1, 6e-6)
        assert _state(acc) == before

    def test_remaining_spent_and_ledger(self):
        acc = BudgetAccountant(epsilon=2.0, delta=1e-5)
        record = acc.spend(0.5, 1e-6, label="splits")
        assert record == SpendRecord("splits", 0.5, 1e-6)
        acc.spend(0.25)
        assert acc.spent == (0.75, 1e-6)
        assert acc.remaining() == (1.25, pytest.approx(9e-6))
        ledger = acc.ledger
        assert ledger == [SpendRecord("splits", 0.5, 1e-6), SpendRecord(None, 0.25, 0.0)]
        assert ledger[0].label == "splits" and ledger[1].epsilon == 0.25
        ledger.clear()  # a copy: the accountant's ledger is untouched
        assert len(acc) == 2 and len(acc.ledger) == 2

    def test_numpy_scalars_are_accepted_and_stored_as_floats(self):
        acc = BudgetAccountant(epsilon=np.float32(1.0), delta=np.float64(1e-6))
        acc.spend(np.float64(0.5), np.float32(0.0))
        acc.spend(np.int64(0))
        assert all(type(v) is float for v in acc.spent)
        assert all(type(r.epsilon) is float for r in acc.ledger)

    def test_repr(self):
        acc = BudgetAccountant(epsilon=2.0, delta=1e-5)
        acc.spend(0.5)
        text = repr(acc)
        assert text.startswith("BudgetAccountant(")
        for part in ("epsilon=2.0", "delta=1e-05", "spent_epsilon=0.5", "n_spends=1"):
            assert part in text
        assert "epsilon=inf" in repr(BudgetAccountant())


class TestValidation:
    @pytest.mark.parametrize(
        "epsilon, delta",
        [(-1.0, 0.0), (math.nan, 0.0), (1.0, math.nan), (1.0, 1.5), (1.0, -1e-9), (0.0, 0.0),
         (-math.inf, 0.5)],
    )
    def test_bad_totals(self, epsilon, delta):
        with pytest.raises(ValueError):
            BudgetAccountant(epsilon=epsilon, delta=delta)

    @pytest.mark.parametrize("epsilon", ["1", None, True, [1.0], 1 + 0j])
    def test_total_of_wrong_type(self, epsilon):
        with pytest.raises(TypeError):
            BudgetAccountant(epsilon=epsilon)

    def test_zero_epsilon_with_positive_delta_is_a_budget(self):
        acc = BudgetAccountant(epsilon=0.0, delta=1e-6)
        acc.spend(0.0, 1e-6)
        with pytest.raises(BudgetExceededError):
            acc.spend(1e-3)

    @pytest.mark.parametrize(
        "args, error",
        [((-0.1,), ValueError), ((math.nan,), ValueError), ((math.inf,), ValueError),
         ((0.1, 1.5), ValueError), ((0.1, -1e-9), ValueError), ((0.1, math.nan), ValueError),
         (("0.1",), TypeError), ((None,), TypeError), ((False,), TypeError),
         ((0.1, "0"), TypeError)],
    )
    def test_bad_spends_raise_and_spend_nothing(self, args, error):
        acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
        acc.spend(0.1)
        before = _state(acc)
        with pytest.raises(error):
            acc.spend(*args)
        with pytest.raises(error):
            acc.check(*args)
        assert _state(acc) == before

    def test_bad_label(self):
        acc = BudgetAccountant(epsilon=1.0)
        with pytest.raises(TypeError):
            acc.spend(0.1, label=3)
        assert len(acc) == 0

    def test_budget_exceeded_error_is_a_value_error(self):
        acc = BudgetAccountant(epsilon=1.0)
        with pytest.raises(ValueError):
            acc.spend(2.0)


class TestDefaultAccountant:
    def test_default_is_unlimited_and_stable(self):
        default = BudgetAccountant.default()
        assert default is BudgetAccountant.default()
        assert default.epsilon == math.inf and default.delta == math.inf
        assert check_accountant(None) is default

    def test_default_refuses_no_delta_the_user_did_not_ask_for(self):
        """Finding 6 of the third privacy review: the default's invented delta total of 1
        refused a fit after another with a large delta."""
        default = BudgetAccountant.default()
        with pytest.warns(CompositionWarning):
            default.spend(0.5, 0.6)
            default.spend(0.5, 0.5)
        assert default.spent == pytest.approx((1.0, 1.1))
        assert default.remaining() == (math.inf, math.inf)
        assert not default.detached and default.independent_copy().delta == math.inf

    def test_default_warns_once_with_the_total_when_fits_add_up(self):
        default = BudgetAccountant.default()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            default.spend(1.0, label="one fit")  # one fit: no warning
        with pytest.warns(CompositionWarning, match=r"2 spends .*epsilon=3.*DPRandomSearch"):
            default.spend(2.0, label="another fit")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            default.spend(1.0)  # once only
        explicit = BudgetAccountant(10.0)  # an explicit accountant never warns
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            explicit.spend(1.0)
            explicit.spend(1.0)

    def test_grid_search_on_the_default_accountant_warns_with_its_total(self):
        """Finding 6: a 2 x 2 grid with cv=3 ran 13 fits without a word."""
        from sklearn.model_selection import GridSearchCV

        from dptrees import DPDecisionTreeClassifier

        rng = np.random.default_rng(0)
        X = rng.random((300, 2))
        y = (X[:, 0] > 0.5).astype(int)
        grid = GridSearchCV(DPDecisionTreeClassifier(bounds=(0, 1), classes=[0, 1]),
                            {"max_depth": [1, 2], "epsilon": [0.5, 1.0]}, cv=3)
        with pytest.warns(CompositionWarning) as record:
            grid.fit(X, y)
        assert len([w for w in record if w.category is CompositionWarning]) == 1
        assert 9.5 <= BudgetAccountant.default().spent[0] <= 10.0  # 12 fits and the refit

    def test_context_manager_sets_and_restores_and_nests(self):
        outer_default = BudgetAccountant.default()
        a = BudgetAccountant(epsilon=2.0)
        b = BudgetAccountant(epsilon=1.0)
        with a as entered:
            assert entered is a
            assert BudgetAccountant.default() is a
            assert check_accountant(None) is a
            with b:
                assert BudgetAccountant.default() is b
                with a:  # re-entering the same accountant nests too
                    assert BudgetAccountant.default() is a
                assert BudgetAccountant.default() is b
            assert BudgetAccountant.default() is a
        assert BudgetAccountant.default() is outer_default

    def test_restored_after_exception(self):
        outer_default = BudgetAccountant.default()
        acc = BudgetAccountant(epsilon=1.0)
        with pytest.raises(BudgetExceededError):
            with acc:
                check_accountant(None).spend(0.75)
                check_accountant(None).spend(0.75)
        assert BudgetAccountant.default() is outer_default
        assert acc.spent == (0.75, 0.0)

    def test_default_is_process_wide_so_worker_threads_see_it(self):
        acc = BudgetAccountant(epsilon=1.0)
        seen = []
        with acc:
            worker = threading.Thread(target=lambda: seen.append(check_accountant(None)))
            worker.start()
            worker.join()
        assert seen == [acc]

    def test_check_accountant(self):
        acc = BudgetAccountant(epsilon=1.0)
        assert check_accountant(acc) is acc
        for bad in ("default", 1.0, RDPAccountant()):
            with pytest.raises(TypeError):
                check_accountant(bad)


class TestConcurrencyAndCopies:
    def test_concurrent_spends_never_exceed_total(self):
        # 2**-13 is exact in binary, so the sums are exact and exactly 5000 spends fit.
        unit = 2.0**-13
        n_fit, n_threads, per_thread = 5000, 8, 1000
        acc = BudgetAccountant(epsilon=n_fit * unit, delta=n_fit * 1e-9)
        barrier = threading.Barrier(n_threads)
        successes, failures = [0] * n_threads, [0] * n_threads

        def work(k):
            barrier.wait()
            for _ in range(per_thread):
                try:
                    acc.spend(unit, 1e-9 if k % 2 else 0.0)
                    successes[k] += 1
                except BudgetExceededError:
                    failures[k] += 1

        old_interval = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)  # switch threads often, to provoke races
        try:
            threads = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            sys.setswitchinterval(old_interval)

        assert sum(successes) == len(acc) == n_fit
        assert sum(failures) == n_threads * per_thread - n_fit
        assert acc.spent[0] == n_fit * unit  # exact: no lost or duplicated updates
        assert acc.spent[1] <= acc.delta * (1 + 1e-12)
        assert math.fsum(r.epsilon for r in acc.ledger) == acc.spent[0]

    def test_spend_is_atomic_even_when_the_budget_check_is_slow(self, monkeypatch):
        # Widen the window between checking the budget and recording the spend (yield the
        # GIL inside the check), so that a check-then-record without a lock overspends.
        original = BudgetAccountant._within

        def slow_within(spent, cost, total):
            fits = original(spent, cost, total)
            time.sleep(0)
            return fits

        monkeypatch.setattr(BudgetAccountant, "_within", staticmethod(slow_within))
        acc = BudgetAccountant(epsilon=100 * 0.25)
        barrier = threading.Barrier(8)

        def work():
            barrier.wait()
            for _ in range(50):
                try:
                    acc.spend(0.25)
                except BudgetExceededError:
                    pass

        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(acc) == 100
        assert acc.spent == (25.0, 0.0)

    def test_copies_share_the_budget(self):
        acc = BudgetAccountant(epsilon=1.0)
        assert copy.copy(acc) is acc
        assert copy.deepcopy(acc) is acc
        assert copy.deepcopy({"accountant": acc})["accountant"] is acc

    def test_sklearn_clone_keeps_the_same_accountant(self):
        from sklearn.base import BaseEstimator, clone

        class Estimator(BaseEstimator):
            def __init__(self, accountant=None):
                self.accountant = accountant

        acc = BudgetAccountant(epsilon=1.0)
        assert clone(Estimator(accountant=acc)).accountant is acc

    def test_pickle_gives_a_detached_snapshot(self):
        # More in tests/test_accountant_processes.py.
        acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
        acc.spend(0.5, label="a")
        restored = pickle.loads(pickle.dumps(acc))
        assert restored is not acc and restored.detached
        assert _state(restored) == _state(acc)
        with pytest.raises(BudgetExceededError, match="detached"):
            restored.spend(0.5)
        own = restored.independent_copy()
        own.spend(0.5)
        with pytest.raises(BudgetExceededError):
            own.spend(0.1)
        assert acc.spent == (0.5, 0.0)


# ======================================================================================
# Composition theorems
# ======================================================================================


class TestComposition:
    def test_sequential_sums(self):
        eps, delta = sequential_composition([(0.5, 1e-6), (0.25, 0.0), (0.25, 2e-6)])
        assert eps == 1.0
        assert delta == pytest.approx(3e-6, rel=1e-12)
        # fsum: ten 0.1s add up to exactly 1.0
        assert sequential_composition([(0.1, 0.0)] * 10) == (1.0, 0.0)
        assert sequential_composition(iter([(1, 0), (2, 0)])) == (3.0, 0.0)

    def test_parallel_takes_the_maximum_of_each(self):
        assert parallel_composition([(0.5, 0.0), (0.25, 2e-6), (0.1, 1e-6)]) == (0.5, 2e-6)

    def test_parallel_never_costs_more_than_sequential(self):
        rng = np.random.default_rng(0)
        for _ in range(20):
            budgets = list(zip(rng.exponential(size=5), rng.uniform(0, 1e-5, size=5)))
            par, seq = parallel_composition(budgets), sequential_composition(budgets)
            assert par[0] <= seq[0] and par[1] <= seq[1]
            assert par[0] >= seq[0] / 5 and par[1] >= seq[1] / 5

    def test_empty_and_capped(self):
        assert sequential_composition([]) == (0.0, 0.0)
        assert parallel_composition([]) == (0.0, 0.0)
        assert sequential_composition([(1.0, 0.6), (1.0, 0.6)]) == (2.0, 1.0)

    @pytest.mark.parametrize("func", [sequential_composition, parallel_composition])
    def test_validation(self, func):
        with pytest.raises(TypeError):
            func([0.5])
        with pytest.raises(TypeError):
            func([(0.5, 0.0, 1.0)])
        with pytest.raises(ValueError):
            func([(-0.5, 0.0)])
        with pytest.raises(ValueError):
            func([(0.5, 2.0)])
        with pytest.raises(ValueError):
            func([(math.nan, 0.0)])


# ======================================================================================
# Renyi DP
# ======================================================================================


class TestRDPPublishedAndReferenceValues:
    # Abadi et al. 2016, "Deep learning with differential privacy", Sec. 3.1: N = 60000,
    # lots of L = 600 (q = 0.01), sigma = 4, E = 100 epochs, i.e. T = E / q = 10000 steps;
    # the moments accountant gives epsilon ~ 1.26 at delta = 1e-5.
    N, L, EPOCHS, SIGMA, DELTA = 60000, 600, 100, 4.0, 1e-5
    PUBLISHED_EPSILON = 1.26

    def _accountant(self):
        q = self.L / self.N
        steps = self.EPOCHS * self.N // self.L
        assert steps == 10000
        acc = RDPAccountant(DPA_ORDERS).compose_subsampled_gaussian(q, self.SIGMA,
                                                                     count=steps)
        return acc, q, steps

    def test_abadi_matches_dp_accounting(self):
        acc, q, steps = self._accountant()
        assert acc.steps == steps
        ref = _dpa_rdp_accountant()
        ref.compose(
            dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(self.SIGMA)),
            steps,
        )
        assert acc.get_epsilon(self.DELTA) == pytest.approx(ref.get_epsilon(self.DELTA), abs=1e-3)
        np.testing.assert_allclose(acc.rdp, ref.rdp, rtol=1e-12)

    def test_abadi_reproduces_the_published_moments_accountant_value(self):
        acc, _, _ = self._accountant()
        # The moments accountant converts with the classical bound
        # epsilon = min over orders of rdp - log(delta) / (order - 1).
        classical = np.min(acc.rdp - math.log(self.DELTA) / (acc.orders - 1))
        assert classical == pytest.approx(self.PUBLISHED_EPSILON, abs=0.01)

    def test_abadi_improved_conversion_lies_between_pld_and_published(self):
        acc, q, steps = self._accountant()
        epsilon = acc.get_epsilon(self.DELTA)
        # The privacy-loss-distribution accountant is near-exact: a sound RDP bound cannot
        # be below it. The improved RDP conversion must beat the published 1.26.
        pld = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-3)
        pld.compose(
            dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(self.SIGMA)),
            steps,
        )
        assert pld.get_epsilon(self.DELTA) <= epsilon < self.PUBLISHED_EPSILON
        assert 0.95 < epsilon < 1.10

    @needs_exact_gaussian
    def test_single_gaussian_sigma_one(self):
        acc = RDPAccountant().compose_gaussian(1.0)
        epsilon = acc.get_epsilon(1e-5)
        ref = _dpa_rdp_accountant().compose(dp_accounting.GaussianDpEvent(1.0))
        assert epsilon == pytest.approx(ref.get_epsilon(1e-5), abs=1e-3)
        # The exact (analytic) Gaussian epsilon is a lower bound for any sound accountant;
        # the classical zCDP conversion (rho = 1/2) is an upper bound for this one.
        exact = dp_accounting.get_epsilon_gaussian(1.0, 1e-5)
        classical = 0.5 + 2 * math.sqrt(0.5 * math.log(1e5))
        assert exact == pytest.approx(4.377, abs=1e-3)
        assert exact < epsilon < classical
        assert epsilon == pytest.approx(4.7285, abs=1e-3)

    def test_mixed_composition_matches_dp_accounting(self):
        acc = (
            RDPAccountant(DPA_ORDERS)
            .compose_gaussian(3.0, count=2)
            .compose_subsampled_gaussian(0.05, 1.5, count=50)
            .compose_laplace(0.5, count=3)
            .compose_zcdp(0.01)
        )
        assert acc.steps == 2 + 50 + 3 + 1
        dpa = dp_accounting
        ref = _dpa_rdp_accountant()
        ref.compose(dpa.GaussianDpEvent(3.0), 2)
        ref.compose(dpa.PoissonSampledDpEvent(0.05, dpa.GaussianDpEvent(1.5)), 50)
        ref.compose(dpa.ZCDpEvent(0.01))
        # Laplace releases are discrete: the pure-DP (randomized response) curve, not
        # dp-accounting's continuous-Laplace one (tests/test_accounting_rdp.py).
        ref._rdp = ref._rdp + 3 * rdp_curves._pure_dp_rdp(0.5, tuple(acc.orders))
        np.testing.assert_allclose(acc.rdp, ref.rdp, rtol=1e-12)
        for delta in (1e-3, 1e-6, 1e-9):
            assert acc.get_epsilon(delta) == pytest.approx(ref.get_epsilon(delta), rel=1e-12)
        for epsilon in (0.5, 2.0, 5.0):
            assert acc.get_delta(epsilon) == pytest.approx(ref.get_delta(epsilon), rel=1e-12)

    def test_composing_one_at_a_time_equals_count(self):
        one_by_one = RDPAccountant()
        for _ in range(200):
            one_by_one.compose_subsampled_gaussian(0.02, 1.2)
        batched = RDPAccountant().compose_subsampled_gaussian(0.02, 1.2, count=200)
        assert one_by_one.steps == batched.steps == 200
        np.testing.assert_allclose(one_by_one.rdp, batched.rdp, rtol=1e-10)


class TestRDPBehaviour:
    def test_empty_accountant(self):
        acc = RDPAccountant()
        assert acc.steps == 0
        assert acc.get_epsilon(1e-5) == 0.0
        assert acc.get_epsilon(0.0) == 0.0
        assert acc.get_delta(0.0) == 0.0

    def test_epsilon_delta_roundtrip(self):
        acc = RDPAccountant().compose_subsampled_gaussian(0.01, 1.1, count=1000)
        acc.compose_gaussian(5.0)
        for delta in (1e-3, 1e-6, 1e-9):
            epsilon = acc.get_epsilon(delta)
            assert acc.get_delta(epsilon) == pytest.approx(delta, rel=1e-9)
            assert acc.get_delta(epsilon * 1.01) < delta
            assert acc.get_epsilon(delta / 2) > epsilon
        assert acc.get_delta(math.inf) == 0.0

    def test_more_noise_or_fewer_steps_is_more_private(self):
        def eps(q, sigma, steps):
            return RDPAccountant().compose_subsampled_gaussian(q, sigma, steps).get_epsilon(1e-5)

        assert eps(0.01, 2.0, 100) < eps(0.01, 1.0, 100)
        assert eps(0.01, 1.0, 100) < eps(0.01, 1.0, 1000)
        assert eps(0.01, 1.0, 100) < eps(0.1, 1.0, 100)
        assert eps(0.01, 1.0, 100) < RDPAccountant().compose_gaussian(1.0, 100).get_epsilon(1e-5)

    def test_rdp_cannot_certify_pure_dp(self):
        acc = RDPAccountant().compose_laplace(1.0)
        assert acc.get_epsilon(0.0) == math.inf
        # at delta > 0 no tighter than the mechanism's own epsilon, but for orders up to
        # 2**20 a hair below it (pure DP implies (epsilon - x, delta)-DP for tiny x)
        assert acc.get_epsilon(1e-5) > 1.0 - 1e-4
        assert RDPAccountant(DPA_ORDERS).compose_laplace(1.0).get_epsilon(1e-5) > 1.0

    def test_count_zero_and_integer_types(self):
        acc = RDPAccountant().compose_gaussian(1.0, count=0)
        assert acc.steps == 0 and acc.get_epsilon(1e-5) == 0.0
        acc.compose_gaussian(1.0, count=np.int64(3))
        assert acc.steps == 3

    def test_custom_orders(self):
        acc = RDPAccountant(orders=[2, 4, 8, 16, 32])
        np.testing.assert_array_equal(acc.orders, [2.0, 4.0, 8.0, 16.0, 32.0])
        acc.compose_gaussian(2.0)
        # Gaussian: rdp(alpha) = alpha / (2 sigma^2)
        np.testing.assert_allclose(acc.rdp, np.array([2, 4, 8, 16, 32]) / 8.0, rtol=1e-12)
        # fewer orders can only give a larger (or equal) epsilon than the default grid
        assert acc.get_epsilon(1e-5) >= RDPAccountant().compose_gaussian(2.0).get_epsilon(1e-5)

    @pytest.mark.parametrize("orders", [[], [1.0, 2.0], [0.5], [2.0, math.nan], [2.0, math.inf],
                                        [[2.0, 3.0]]])
    def test_bad_orders(self, orders):
        with pytest.raises(ValueError):
            RDPAccountant(orders=orders)

    def test_validation(self):
        acc = RDPAccountant()
        for sigma in (0.0, -1.0, math.nan, math.inf):
            with pytest.raises(ValueError):
                acc.compose_gaussian(sigma)
        for q in (-0.1, 1.5, math.nan):
            with pytest.raises(ValueError):
                acc.compose_subsampled_gaussian(q, 1.0)
        with pytest.raises(ValueError):
            acc.compose_gaussian(1.0, count=-1)
        with pytest.raises(TypeError):
            acc.compose_gaussian(1.0, count=1.5)
        with pytest.raises(TypeError):
            acc.compose_gaussian("1.0")
        with pytest.raises(ValueError):
            acc.compose_laplace(0.0)
        with pytest.raises(ValueError):
            acc.compose_zcdp(-0.1)
        with pytest.raises(ValueError):
            acc.get_epsilon(1.5)
        with pytest.raises(ValueError):
            acc.get_delta(-1.0)
        assert acc.steps == 0 and not acc.rdp.any()

    def test_copy_and_pickle_are_independent(self):
        acc = RDPAccountant().compose_gaussian(2.0)
        for other in (acc.copy(), pickle.loads(pickle.dumps(acc)), copy.deepcopy(acc)):
            other.compose_gaussian(2.0, count=5)
            assert other.steps == 6
            assert other.get_epsilon(1e-5) > acc.get_epsilon(1e-5)
        assert acc.steps == 1
        assert repr(acc) == f"RDPAccountant(n_orders={len(acc.orders)}, steps=1)"


class TestPeekAhead:
    EPSILON, MAX_DELTA, Q, SIGMA = 1.0, 1e-5, 0.1, 2.0

    def test_stops_exactly_before_the_round_that_passes_the_bound(self):
        acc = RDPAccountant()
        rounds = 0
        while not acc.would_exceed(
            self.EPSILON, self.MAX_DELTA, noise_multiplier=self.SIGMA, sampling_probability=self.Q
        ):
            acc.compose_subsampled_gaussian(self.Q, self.SIGMA)
            rounds += 1
            assert rounds < 1000
        assert rounds > 1
        assert acc.get_delta(self.EPSILON) <= self.MAX_DELTA

        # Independent check with dp_accounting: `rounds` fit, `rounds + 1` do not.
        event = dp_accounting.PoissonSampledDpEvent(
            self.Q, dp_accounting.GaussianDpEvent(self.SIGMA)
        )
        fits = _dpa_rdp_accountant().compose(event, rounds).get_delta(self.EPSILON)
        over = _dpa_rdp_accountant().compose(event, rounds + 1).get_delta(self.EPSILON)
        assert fits <= self.MAX_DELTA < over

    def test_peeking_changes_nothing_and_predicts_the_delta(self):
        acc = RDPAccountant().compose_subsampled_gaussian(self.Q, self.SIGMA, count=3)
        rdp, steps = acc.rdp, acc.steps
        predicted = acc.delta_after(
            self.EPSILON, noise_multiplier=self.SIGMA, sampling_probability=self.Q, count=4
        )
        acc.would_exceed(self.EPSILON, self.MAX_DELTA, noise_multiplier=self.SIGMA)
        assert acc.steps == steps
        np.testing.assert_array_equal(acc.rdp, rdp)
        actual = acc.copy().compose_subsampled_gaussian(self.Q, self.SIGMA, count=4)
        assert predicted == actual.get_delta(self.EPSILON)
        assert predicted > acc.get_delta(self.EPSILON)

    def test_would_exceed_boundaries(self):
        acc = RDPAccountant().compose_gaussian(4.0, count=3)
        next_delta = acc.delta_after(1.0, noise_multiplier=4.0)
        assert not acc.would_exceed(1.0, next_delta, noise_multiplier=4.0)
        assert acc.would_exceed(1.0, next_delta * (1 - 1e-9), noise_multiplier=4.0)
        # A full-data Gaussian round costs more than a subsampled one.
        assert acc.delta_after(1.0, noise_multiplier=4.0, sampling_probability=0.1) < next_delta
        with pytest.raises(ValueError):
            acc.would_exceed(1.0, 2.0, noise_multiplier=4.0)


# ======================================================================================
# zCDP
# ======================================================================================


def _brute_force_ckks(rho, delta):
    """Independent evaluation of CKS 2020 Cor. 13 on a very fine grid of orders.

    The corollary as printed: rho-zCDP implies (eps, delta)-DP with
    delta = exp((a - 1)(a rho - eps)) / (a - 1) * (1 - 1/a)**a for any a > 1; solved for eps.
    """
    alphas = 1 + np.geomspace(1e-5, 1e8, 400_000)
    eps = alphas * rho - (
        math.log(delta) + np.log(alphas - 1) - alphas * np.log1p(-1 / alphas)
    ) / (alphas - 1)
    return max(0.0, float(eps.min()))


class TestZCDP:
    def test_gaussian_rho(self):
        assert gaussian_rho(2.0, 4.0) == 4.0 / 32.0
        assert gaussian_rho(1.0, 1.0) == 0.5
        assert gaussian_rho(0.0, 1.0) == 0.0
        bad = ((-1.0, 1.0), (1.0, 0.0), (1.0, -1.0), (math.nan, 1.0), (1.0, math.inf))
        for sens, sigma in bad:
            with pytest.raises(ValueError):
                gaussian_rho(sens, sigma)

    @needs_exact_gaussian
    @pytest.mark.parametrize(
        "rho, delta", [(0.5, 1e-5), (1e-6, 1e-5), (0.01, 1e-8), (0.125, 1e-6), (10.0, 1e-5),
                       (1e3, 1e-10)]
    )
    def test_conversion_is_sound_and_tight(self, rho, delta):
        epsilon = zcdp_to_approx_dp(rho, delta)
        # Sound: at least the exact epsilon of the Gaussian mechanism with that rho.
        sigma = 1.0 / math.sqrt(2.0 * rho)
        assert epsilon >= dp_accounting.get_epsilon_gaussian(sigma, delta)
        # Never worse than the classical bound, nor than dp_accounting's grid of orders.
        assert epsilon < rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
        ref = _dpa_rdp_accountant().compose(dp_accounting.ZCDpEvent(rho)).get_epsilon(delta)
        assert epsilon <= ref + 1e-12
        # And the optimisation over orders finds the minimum.
        assert epsilon == pytest.approx(_brute_force_ckks(rho, delta), rel=1e-7)

    def test_matches_rdp_accountant_where_its_grid_is_fine(self):
        epsilon = zcdp_to_approx_dp(0.5, 1e-5)
        assert epsilon == pytest.approx(RDPAccountant().compose_zcdp(0.5).get_epsilon(1e-5),
                                        abs=1e-3)
        assert epsilon == pytest.approx(4.7284, abs=1e-3)

    def test_edge_cases_and_validation(self):
        assert zcdp_to_approx_dp(0.0, 1e-5) == 0.0
        assert zcdp_to_approx_dp(1.0, 1.0) == 0.0
        assert zcdp_to_approx_dp(1e-14, 1e-5) < 1e-5
        assert zcdp_to_approx_dp(0.1, 1e-6) < zcdp_to_approx_dp(0.1, 1e-9)
        assert zcdp_to_approx_dp(0.1, 1e-6) < zcdp_to_approx_dp(0.2, 1e-6)
        bad = ((0.1, 0.0), (-0.1, 1e-5), (0.1, 1.5), (math.nan, 1e-5), (math.inf, 1e-5))
        for rho, delta in bad:
            with pytest.raises(ValueError):
                zcdp_to_approx_dp(rho, delta)


def test_importing_the_module_does_not_import_dp_accounting():
    code = (
        "import sys, dptrees.accounting as a; "
        "a.BudgetAccountant(1.0).spend(0.5); a.zcdp_to_approx_dp(0.5, 1e-5); "
        "assert 'dp_accounting' not in sys.modules, 'imported eagerly'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd="/")
