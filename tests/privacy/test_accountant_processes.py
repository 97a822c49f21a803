"""Accountants and estimators in other processes: copies cannot spend the original budget.

An audit found that a ``BudgetAccountant`` reaching another process spent a budget of its
own. joblib sends estimators to the worker processes of ``cross_val_score(...,
n_jobs=2)`` and ``GridSearchCV(..., n_jobs=2)`` by pickling them, and an unpickled
accountant was an independent copy: five fits at epsilon 1 ran against an accountant of
epsilon 1, which recorded nothing. With ``accountant=None`` inside a ``with accountant:``
block the workers, which have no active block, spent from their own unlimited defaults.

What is checked
---------------
* A pickled accountant is detached: it refuses to spend (and ``check`` says no) but keeps
  its totals and ledger readable; ``copy``/``deepcopy``/``clone`` still give the
  accountant itself; ``independent_copy`` is the explicit way to a new budget. A forked
  child's copy refuses too.
* ``cross_val_score`` and ``GridSearchCV`` with ``n_jobs=2`` fail loudly, with an
  explicit accountant and with ``accountant=None`` in a ``with`` block, and the original
  accountant records nothing. With ``n_jobs=1`` (or the threading backend) the one
  accountant is shared: the total spent stays within its budget, and the refused fits
  show as a ``FitFailedWarning`` naming ``BudgetExceededError``.
* Every centralised estimator resolves ``accountant=None`` through ``AccountantMixin``,
  and a fitted model pickled for saving still predicts identically.
"""

import copy
import multiprocessing
import pickle

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning
from sklearn.model_selection import GridSearchCV, cross_val_score

from dptrees import (
    BudgetAccountant,
    BudgetExceededError,
    DetachedAccountantError,
    DPAdaBoostClassifier,
    DPDecisionTreeClassifier,
    DPDecisionTreeRegressor,
    DPExtraTreesClassifier,
    DPExtraTreesRegressor,
    DPGradientBoostingClassifier,
    DPGradientBoostingRegressor,
    DPPartitionForestClassifier,
    DPPartitionForestRegressor,
)
from dptrees.accounting import AccountantMixin


def data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2))
    return X, (X[:, 0] > 0.5).astype(int)


def tree(**params):
    """A cheap classifier spending epsilon 1 per fit."""
    return DPDecisionTreeClassifier(epsilon=1.0, max_depth=2, bounds=(0, 1), classes=[0, 1],
                                    random_state=0, **params)


def _state(acc):
    return (acc.spent, acc.remaining(), acc.ledger, len(acc))


# ======================================================================================
# The accountant
# ======================================================================================


def test_pickled_accountant_is_detached_and_refuses_to_spend():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    acc.spend(0.25, 1e-7, label="a")
    restored = pickle.loads(pickle.dumps(acc))
    assert restored.detached and not acc.detached
    assert _state(restored) == _state(acc)
    assert (restored.epsilon, restored.delta) == (1.0, 1e-6)
    assert "detached=True" in repr(restored) and "detached" not in repr(acc)
    assert restored.check(0.1) is False and acc.check(0.1) is True
    for cost in (0.1, 0.0):
        with pytest.raises(DetachedAccountantError, match="made by pickling.*n_jobs=1"):
            restored.spend(cost, label="in a worker")
    assert issubclass(DetachedAccountantError, BudgetExceededError)
    assert _state(restored) == _state(acc)
    assert pickle.loads(pickle.dumps(restored)).detached
    with restored, pytest.raises(DetachedAccountantError):
        tree().fit(*data())
    assert acc.spent == (0.25, 1e-7) and len(acc) == 1


def test_copies_in_the_same_process_are_the_accountant_itself():
    acc = BudgetAccountant(epsilon=1.0)
    assert copy.copy(acc) is acc and copy.deepcopy(acc) is acc
    assert clone(tree(accountant=acc)).accountant is acc


def test_independent_copy_is_a_new_budget():
    acc = BudgetAccountant(epsilon=1.0)
    acc.spend(0.25, label="a")
    for source in (acc, pickle.loads(pickle.dumps(acc))):
        own = source.independent_copy()
        assert own is not acc and not own.detached
        assert _state(own) == _state(acc)
        own.spend(0.75)
        with pytest.raises(BudgetExceededError) as info:
            own.spend(0.1)
        assert not isinstance(info.value, DetachedAccountantError)
    assert acc.spent == (0.25, 0.0)


def _spend_in_child(acc, conn):
    outcome = []
    for spend in (lambda: acc.spend(0.5), lambda: BudgetAccountant.default().spend(0.5)):
        try:
            spend()
            outcome.append("spent")
        except BudgetExceededError as exc:
            outcome.append(type(exc).__name__)
    conn.send(outcome)


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                    reason="needs the fork start method")
def test_forked_copies_refuse_to_spend():
    """A forked child inherits the accountant and the ``with`` block without pickling."""
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    with BudgetAccountant(epsilon=1.0) as acc:
        child = ctx.Process(target=_spend_in_child, args=(acc, send))
        child.start()
        outcome = receive.recv()
        child.join(timeout=60)
    assert outcome == ["DetachedAccountantError", "DetachedAccountantError"]
    assert acc.spent == (0.0, 0.0) and len(acc) == 0


# ======================================================================================
# Searches in worker processes (loky): they fail loudly, nothing is spent
# ======================================================================================


def test_cross_val_score_in_processes_fails_loudly():
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(ValueError, match="All the 5 fits failed") as info:
        cross_val_score(tree(accountant=acc), *data(), cv=5, n_jobs=2)
    assert "DetachedAccountantError" in str(info.value)
    assert "detached copy" in str(info.value)
    assert acc.spent == (0.0, 0.0) and len(acc) == 0


def test_grid_search_in_processes_fails_loudly():
    acc = BudgetAccountant(epsilon=3.0)
    search = GridSearchCV(tree(accountant=acc), {"max_depth": [1, 2]}, cv=3, n_jobs=2)
    with pytest.raises(ValueError, match="All the 6 fits failed") as info:
        search.fit(*data())
    assert "DetachedAccountantError" in str(info.value)
    assert acc.spent == (0.0, 0.0) and len(acc) == 0


def test_with_block_and_accountant_none_in_processes_fails_loudly():
    """The workers have no active block: they must refuse, not use their own default."""
    with BudgetAccountant(epsilon=1.0) as acc:
        with pytest.raises(ValueError, match="All the 5 fits failed") as info:
            cross_val_score(tree(), *data(), cv=5, n_jobs=2)
    assert "pickled inside a `with accountant:` block" in str(info.value)
    assert "DetachedAccountantError" in str(info.value)
    assert acc.spent == (0.0, 0.0) and len(acc) == 0


# ======================================================================================
# One process (or threads): one shared budget, refusals visible
# ======================================================================================


def test_sequential_search_stays_within_budget_and_shows_refusals():
    """scikit-learn turns a refused fit into a NaN score with a FitFailedWarning."""
    X, y = data()
    acc = BudgetAccountant(epsilon=2.5)
    with pytest.warns(FitFailedWarning, match="3 fits failed(.|\n)*BudgetExceededError"):
        scores = cross_val_score(tree(accountant=acc), X, y, cv=5, n_jobs=1)
    assert np.isnan(scores).sum() == 3
    assert acc.spent == (2.0, 0.0) and len(acc) == 2

    acc = BudgetAccountant(epsilon=1.5)
    with pytest.raises(BudgetExceededError):
        cross_val_score(tree(accountant=acc), X, y, cv=5, n_jobs=1, error_score="raise")
    assert acc.spent == (1.0, 0.0)

    acc = BudgetAccountant(epsilon=2.5)
    with joblib.parallel_backend("threading"), pytest.warns(FitFailedWarning):
        scores = cross_val_score(tree(accountant=acc), X, y, cv=5, n_jobs=2)
    assert np.isnan(scores).sum() == 3
    assert acc.spent == (2.0, 0.0) and len(acc) == 2


# ======================================================================================
# AccountantMixin on the estimators
# ======================================================================================

X01 = np.random.default_rng(1).random((200, 2))
Y_CLASS = (X01[:, 0] > 0.5).astype(int)
Y_REG = X01[:, 0] + X01[:, 1]

ESTIMATORS = [
    (DPDecisionTreeClassifier(bounds=(0, 1), classes=[0, 1], max_depth=2), Y_CLASS),
    (DPDecisionTreeRegressor(bounds=(0, 1), y_bounds=(0, 2), max_depth=2), Y_REG),
    (DPPartitionForestClassifier(bounds=(0, 1), classes=[0, 1], n_estimators=2), Y_CLASS),
    (DPPartitionForestRegressor(bounds=(0, 1), y_bounds=(0, 2), n_estimators=2), Y_REG),
    (DPExtraTreesClassifier(bounds=(0, 1), classes=[0, 1], n_estimators=2), Y_CLASS),
    (DPExtraTreesRegressor(bounds=(0, 1), y_bounds=(0, 2), n_estimators=2), Y_REG),
    (DPAdaBoostClassifier(n_estimators=2, bounds=(0, 1), classes=[0, 1]), Y_CLASS),
    (DPGradientBoostingClassifier(n_estimators=2, bounds=(0, 1), classes=[0, 1]), Y_CLASS),
    (DPGradientBoostingRegressor(n_estimators=2, bounds=(0, 1), y_bounds=(0, 2)), Y_REG),
]


@pytest.mark.parametrize("est, y", ESTIMATORS, ids=[type(e).__name__ for e, _ in ESTIMATORS])
def test_estimator_pickled_in_a_block_refuses_to_fit(est, y):
    assert isinstance(est, AccountantMixin) and est.accountant is None
    with BudgetAccountant() as acc:
        copied = pickle.loads(pickle.dumps(est))
    with BudgetAccountant() as other, pytest.raises(DetachedAccountantError,
                                                     match=type(est).__name__):
        copied.fit(X01, y)
    assert len(acc) == 0 and len(other) == 0


def test_saved_model_predicts_identically_and_is_not_refit_silently():
    X, y = data()
    with BudgetAccountant() as acc:
        model = tree().fit(X, y)
        saved = pickle.dumps(model)
        twin = copy.deepcopy(model)
    loaded = pickle.loads(saved)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    assert loaded.get_params() == model.get_params()
    assert len(acc) == 1

    with BudgetAccountant() as other:
        clone(loaded).fit(X, y)
        twin.fit(X, y)  # a deep copy in this process resolves None afresh
        with pytest.raises(DetachedAccountantError, match="set_params"):
            loaded.fit(X, y)
    assert len(other) == 2 and len(acc) == 1
    mine = BudgetAccountant(epsilon=1.0)
    loaded.set_params(accountant=mine).fit(X, y)
    assert mine.spent == (1.0, 0.0)
    resaved = pickle.loads(pickle.dumps(loaded))
    np.testing.assert_array_equal(resaved.predict(X), loaded.predict(X))
