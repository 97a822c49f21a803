"""The scalar contracts of :mod:`dptrees._checks`: one per concept, used everywhere."""

import math

import numpy as np
import pytest

from dptrees import BudgetAccountant, DPExplainableBoostingClassifier, \
    DPGradientBoostingRegressor
from dptrees._checks import (
    check_delta,
    check_epsilon,
    check_positive_int,
    check_positive_number,
    check_probability,
)
from dptrees.privacy.zcdp import zcdp_budget


@pytest.mark.parametrize("value, kwargs, ok", [
    (0.5, {}, True), (0.0, {}, False), (0.0, {"zero": True}, True),
    (math.inf, {}, False), (math.inf, {"infinite": True}, True),
    (math.nan, {"zero": True, "infinite": True}, False), (-1.0, {"zero": True}, False),
    (1e-320, {}, False),
])
def test_epsilon_contract(value, kwargs, ok):
    if ok:
        assert check_epsilon(value, **kwargs) == value
    else:
        with pytest.raises(ValueError, match="epsilon"):
            check_epsilon(value, **kwargs)


@pytest.mark.parametrize("value, kwargs, interval", [
    (1.0, {}, r"\[0, 1\)"), (0.0, {"positive": True}, r"\(0, 1\)"),
    (1.5, {"one": True}, r"\[0, 1\]"), (math.nan, {}, r"\[0, 1\)"),
    (-0.1, {"positive": True, "one": True}, r"\(0, 1\]"),
])
def test_delta_contract_names_its_interval(value, kwargs, interval):
    with pytest.raises(ValueError, match=f"delta must be in {interval}"):
        check_delta(value, **kwargs)


def test_delta_contract_accepts_its_interval():
    assert check_delta(0.0) == 0.0
    assert check_delta(1.0, one=True) == 1.0
    assert check_delta(np.float32(0.25), positive=True) == 0.25


@pytest.mark.parametrize("check", [
    check_epsilon, check_delta,
    lambda v: check_positive_number(v, "x"), lambda v: check_probability(v, "p"),
])
@pytest.mark.parametrize("value", [True, "0.5", None, 1j])
def test_non_numbers_are_type_errors(check, value):
    with pytest.raises(TypeError, match="real number"):
        check(value)


def test_counts_and_probabilities():
    assert check_positive_int(0, "count", minimum=0) == 0
    with pytest.raises(ValueError, match="count must be >= 0"):
        check_positive_int(-1, "count", minimum=0)
    with pytest.raises(TypeError, match="must be an integer"):
        check_positive_int(2.0, "count", minimum=0)
    assert check_probability(1.0, "q") == 1.0
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        check_probability(1.0, "alpha", open_interval=True)


@pytest.mark.parametrize("call", [
    lambda: DPGradientBoostingRegressor(delta=0.0).fit([[0.0]] * 4, [0.0] * 4),
    lambda: DPExplainableBoostingClassifier(delta=0.0).fit([[0.0]] * 4, [0, 1] * 2),
    lambda: zcdp_budget(1.0, 0.0),
])
def test_gaussian_users_need_positive_delta(call):
    with pytest.raises(ValueError, match=r"delta must be in \(0, 1\)"):
        call()


def test_accountants_take_the_wider_delta_contract():
    acc = BudgetAccountant(1.0, 1.0)  # delta 1 limits nothing: allowed for a total
    acc.spend(0.0, 1.0)
    with pytest.raises(ValueError, match=r"delta must be in \[0, 1\]"):
        BudgetAccountant(1.0, 1.5)
    with pytest.raises(ValueError, match="epsilon must be finite"):
        acc.spend(math.nan, 0.0)
