"""One fit lifecycle (dptrees._lifecycle): every estimator's ``fit`` is ``run_fit`` over
its hooks, the budget is charged once between the plan and the first release, and a
fit that cannot be paid for or planned leaves nothing spent and nothing fitted.
"""

import inspect
import warnings

import numpy as np
import pytest
from sklearn.base import clone

import dptrees
from dptrees import BudgetAccountant
from dptrees._lifecycle import Fit, run_fit
from dptrees.exceptions import BudgetExceededError
from support import ESTIMATORS, IDS, fit_quietly, small_table

FITTED = [e for e in ESTIMATORS if not type(e).__name__.endswith("Search")]
FITTED_IDS = [i for e, i in zip(ESTIMATORS, IDS) if not i.startswith("DPRandomSearch")]
HOOKS = ("_check_params", "_open_fit_data", "_plan_fit", "_release", "_record")


def test_every_estimator_is_tested():
    names = {type(e).__name__ for e in FITTED}
    public = {name for module in (dptrees, dptrees.federated) for name in module.__all__
              if name.startswith("DP") and hasattr(getattr(module, name), "predict")}
    assert public - {"DPRandomSearch"} <= names, public - names


@pytest.mark.parametrize("est", FITTED, ids=FITTED_IDS)
def test_fit_is_the_one_lifecycle(est):
    source = inspect.getsource(inspect.unwrap(type(est).fit))
    assert "return run_fit(self, X, y, sample_weight" in source
    for hook in HOOKS:
        assert callable(getattr(est, hook)), hook


@pytest.mark.parametrize("est", FITTED, ids=FITTED_IDS)
def test_a_fit_the_accountant_cannot_pay_for_spends_and_fits_nothing(est):
    X, y = small_table()
    accountant = BudgetAccountant(epsilon=0.5, delta=1e-3)
    est = clone(est).set_params(accountant=accountant, epsilon=1.0)
    with pytest.raises(BudgetExceededError):
        fit_quietly(est, X, y)
    assert accountant.spent == (0.0, 0.0)
    assert not hasattr(est, "privacy_ledger_")


@pytest.mark.parametrize("est", FITTED, ids=FITTED_IDS)
def test_the_budget_is_charged_once_after_the_plan_before_the_first_release(est,
                                                                            monkeypatch):
    """The order of the hooks, seen from the estimator: the plan is made from the open
    rows, the charge comes after it, and every release (``_release``) after the charge."""
    X, y = small_table()
    accountant = BudgetAccountant(epsilon=100.0, delta=0.5)
    est = clone(est).set_params(accountant=accountant, epsilon=1.0)
    seen = []
    cls = type(est)
    for hook in ("_plan_fit", "_release", "_record"):
        original = getattr(cls, hook)

        def spy(self, fit_, _original=original, _hook=hook):
            assert isinstance(fit_, Fit)
            seen.append((_hook, accountant.spent[0]))
            return _original(self, fit_)

        monkeypatch.setattr(cls, hook, spy)
    fit_quietly(est, X, y)
    assert [hook for hook, _ in seen] == ["_plan_fit", "_release", "_record"]
    assert seen[0][1] == 0.0  # planned before anything is spent
    assert seen[1][1] == pytest.approx(1.0)  # charged once, before the first release
    assert accountant.spent[0] == pytest.approx(1.0)
    assert len(accountant) == 1


def test_run_fit_keeps_no_fit_record_and_no_generator():
    X, y = small_table()
    est = dptrees.DPDecisionTreeClassifier(max_depth=2, bounds=(0.0, 1.0), classes=[0, 1],
                                           random_state=np.random.default_rng(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_fit(est, X, y)
    assert not any(isinstance(v, Fit) for v in vars(est).values())
