"""The smallest budgets: every estimator fits at epsilon down to 0.001 (delta 1e-6) and
spends at most its epsilon. zCDP budgets are converted at orders up to 2**20
(rdp_curves.zcdp_orders), where the best order of these budgets lies; the extra orders
can only lower a conversion."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone

from dptrees import BudgetAccountant
from dptrees.privacy.rdp import RDPAccountant
from dptrees.privacy.rdp_curves import LARGE_ORDERS, zcdp_orders
from dptrees.privacy.zcdp import zcdp_budget
from support import ESTIMATORS, IDS, small_table

FITTED = [(e, i) for e, i in zip(ESTIMATORS, IDS) if not i.startswith("DPRandomSearch")]


@pytest.mark.parametrize("epsilon", [0.005, 0.001])
@pytest.mark.parametrize("est", [e for e, _ in FITTED], ids=[i for _, i in FITTED])
def test_every_estimator_fits_at_the_smallest_budgets(est, epsilon):
    X, y = small_table()
    target = y.astype(float) if "y_bounds" in est.get_params() else y
    accountant = BudgetAccountant(epsilon=1.0, delta=1e-3)
    est = clone(est).set_params(epsilon=epsilon, accountant=accountant, random_state=0)
    if "noise_multiplier" in est.get_params():  # the given one cannot run a round here
        est.set_params(noise_multiplier="auto")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # weak-delta and early-stop warnings
        est.fit(X, target)
    assert 0 < est.epsilon_spent_ <= epsilon
    assert accountant.spent[0] == pytest.approx(epsilon)
    assert np.all(np.isfinite(est.predict(X)))


def test_the_zcdp_orders_reach_a_budget_dp_accountings_orders_do_not():
    import dp_accounting

    dp_orders = dp_accounting.rdp.rdp_privacy_accountant.DEFAULT_RDP_ORDERS
    with pytest.raises(ValueError, match="out of reach"):
        zcdp_budget(0.001, 1e-6, orders=dp_orders)
    rho = zcdp_budget(0.001, 1e-6)
    acc = RDPAccountant(zcdp_orders()).compose_zcdp(rho)
    assert acc.get_epsilon(1e-6) <= 0.001
    assert acc.get_epsilon(1e-6) > 0.001 * (1 - 1e-3)  # the largest rho, not a safe guess


@pytest.mark.parametrize("rho", [1e-9, 1e-6, 1e-3, 0.1, 2.0])
def test_more_orders_only_lower_the_conversion(rho):
    import dp_accounting

    dp_orders = dp_accounting.rdp.rdp_privacy_accountant.DEFAULT_RDP_ORDERS
    assert zcdp_orders()[-len(LARGE_ORDERS):] == LARGE_ORDERS
    wide = RDPAccountant(zcdp_orders()).compose_zcdp(rho).get_epsilon(1e-6)
    narrow = RDPAccountant(dp_orders).compose_zcdp(rho).get_epsilon(1e-6)
    assert wide <= narrow
    if rho >= 1e-3:  # the best order is below 1,024: the same conversion
        assert wide == narrow


# 0.4702... and 3.8191...: epsilon minus the sum so far, added back, was 1 ulp past epsilon
@pytest.mark.parametrize("epsilon", [0.1, 1 / 3, 1.0, 1e-3, 0.4702040742844002,
                                     3.819109320264093])
@pytest.mark.parametrize("reserve", [None, 0.1])
def test_the_laplace_rest_never_takes_the_sum_past_epsilon(epsilon, reserve):
    """``ReleasePlan.release_rest`` with Laplace noise: the releases' epsilons sum to at
    most the plan's epsilon, exactly (a floating-point sum, not within a tolerance),
    a reserved release first or not."""
    import math

    import numpy as np

    from dptrees.privacy.release_plan import ReleasePlan

    plan = ReleasePlan("laplace", epsilon, 0.0)
    rng = np.random.default_rng(0)
    if reserve is not None:
        plan.release(np.zeros(3), 1.0, plan.reserve(reserve), rng, label="reserved")
    plan.release(np.zeros(2), 1.0, 0.3 * plan.total, rng, label="own")
    plan.release_rest(np.zeros(2), 1.0, 0.3 * plan.total, rng, label="rest")
    total = math.fsum(plan.epsilons)
    assert total <= epsilon and plan.spent()[0] <= epsilon
    assert total > epsilon * (1 - 1e-9)  # and nothing is left unspent
