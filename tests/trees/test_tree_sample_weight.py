"""Sample weights in the compiled tree builder: what a weighted record may move, audited.

The builder counts weighted records in units of ``2**-20`` and releases every count as
the whole number of records ``round(units / 2**20)`` (module docstring of
:mod:`dptrees._core._builder`, "Sample weights"). The claims checked here:

* the rounding keeps sensitivity 1: a record of weight ``c`` in [0, 1] raises a rounded
  count by 0 or 1, wherever the other records' weights put the sum;
* the weighted releases of a tree, audited on neighbouring datasets where the added
  record (weight 1, among records of weight 1/2) moves the root count and the leaf by
  their whole sensitivities, stay within the claimed epsilon, and a record that counts
  twice (what an unchecked weight of 2 would do) is flagged;
* a weight above 1 is refused by the compiled builder too, if the Python check is
  bypassed.

The property tests shared with the other weighted estimators (weights of one, weight 0,
steering, threads, budget) are in ``test_sample_weight.py``.
"""

import functools

import numpy as np
import pytest

from dptrees import BudgetAccountant, DPDecisionTreeClassifier, DPDecisionTreeRegressor
from dptrees import tree as tree_module
from dptrees._sources import _array as array_source
from dptrees.validation import WEIGHT_BITS

import support

UNIT = 1 << WEIGHT_BITS


def rounded_records(units):
    """What the builder releases for a sum of ``units`` (its ``_records``)."""
    return (units + UNIT // 2) >> WEIGHT_BITS


def test_rounded_weight_sums_have_sensitivity_one():
    rng = np.random.default_rng(0)
    others = rng.integers(0, UNIT + 1, size=(2000, 50)).sum(axis=1)
    for record in (0, 1, UNIT // 2 - 1, UNIT // 2, UNIT // 2 + 1, UNIT - 1, UNIT):
        step = rounded_records(others + record) - rounded_records(others)
        assert step.min() >= 0 and step.max() <= 1
    # a weight of one adds exactly one record; sums of whole records are exact
    assert np.array_equal(rounded_records(others // UNIT * UNIT), others // UNIT)


def test_weights_above_one_are_refused_by_the_builder_too(monkeypatch):
    # Defence in depth: with the Python check removed, the compiled builder still refuses
    # a record that would count more than one record.
    monkeypatch.setattr(array_source, "check_sample_weight",
                        lambda w, n: None if w is None else np.asarray(w, dtype=float))
    X = np.random.default_rng(1).random((50, 2))
    y = (X[:, 0] > 0.5).astype(int)
    w = np.ones(50)
    w[0] = 2.0
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match=r"weights out of range \[0, 2\*\*20\]"):
        DPDecisionTreeClassifier(bounds=(0, 1), classes=[0, 1], accountant=acc,
                                 random_state=0).fit(X, y, sample_weight=w)
    # the builder checks when it builds, after the fit's spend: charged, never undercounted
    assert acc.spent == (1.0, 0.0)


# -- audits ------------------------------------------------------------------------------
#
# Depth-0 trees: the root's noisy count and its leaf. D0: 30 records of weight 1/2 at
# x = 0.5; D1 adds one record of weight 1. Its weight moves the rounded root count from
# 15 to 16, and its target or class moves the leaf release by its whole sensitivity, so
# the joint event "both high" has probability ratio exp(eps_count + eps_leaf) = exp(eps).


def _neighbours(y0, y_record, copies=1):
    X0 = np.full((30, 1), 0.5)
    X1 = np.vstack([X0] + [[[1.0]]] * copies)
    y1 = np.append(np.full(30, y0), [y_record] * copies)
    return (X0, np.full(30, y0), np.full(30, 0.5)), (X1, y1, np.append(np.full(30, 0.5),
                                                                        [1.0] * copies))


def _run(est, prepared, d0, d1, summarise, n_calibration, n_test):
    def harness(d):
        X, y, w = d
        return support.release_sampler(
            est, X, y, summarise, fresh_streams=True,
            prepare=lambda e, X, y: prepared(e, X, y, w))
    return support.audit_samplers(harness(d0), harness(d1), n_calibration, n_test)


def regressor():
    return DPDecisionTreeRegressor(epsilon=1.0, max_depth=0, n_bins=4, bounds=(0, 1), y_bounds=(0,
                                                                                                1),
                                   accountant=BudgetAccountant())


def classifier():
    return DPDecisionTreeClassifier(epsilon=1.0, max_depth=0, n_bins=4, bounds=(0, 1), classes=[0,
                                                                                                1],
                                    accountant=BudgetAccountant())


def count_and_mean_high(nodes, count=16, centred=-7.0):
    # D0's centred leaf sum is 30 x 1/2 x (0 - 1/2) = -7.5; D1's is -7 (the record:
    # 1 x (1 - 1/2)): "the noisy centred sum is at least D1's"
    c, value = nodes["noisy_count"][0], nodes["value"][0]
    return float(c >= count and (value - 0.5) * max(c, 1.0) >= centred - 1e-9)


def count_and_class_high(nodes, count=16, in_class=1):
    # D1's record adds one (rounded) record to class 1, which D0 does not have
    return float(nodes["noisy_count"][0] >= count and nodes["value"][0][1] >= in_class)


# name: (estimator, its prepared data, statistic, D0's target, the record's target, the
# statistic's thresholds when the record enters twice)
AUDITS = {
    "mean leaf": (regressor, support.tree_data, count_and_mean_high, 0.0, 1.0,
                  {"count": 17, "centred": -6.5}),
    "class counts": (classifier, support.tree_data, count_and_class_high, 0, 1,
                     {"count": 17, "in_class": 2}),
}


@pytest.mark.parametrize("name", AUDITS)
def test_audit_weighted_root_count_and_leaf(record_audit, name):
    make, prepared, statistic, y0, y_record, _ = AUDITS[name]
    d0, d1 = _neighbours(y0, y_record)
    res = _run(make(), prepared, d0, d1, statistic, 3_000, 12_000)
    record_audit(res, 1.0).assert_within(1.0)
    assert res.epsilon_lower_bound > 0.5, res.summary()  # the event is tight


@pytest.mark.parametrize("name", AUDITS)
def test_control_record_counted_twice_is_flagged(record_audit, name):
    # The record enters twice (a weight of 2, had it not been refused): the count and the
    # leaf move by twice their sensitivities, true epsilon 2.
    make, prepared, statistic, y0, y_record, doubled = AUDITS[name]
    d0, d1 = _neighbours(y0, y_record, copies=2)
    res = _run(make(), prepared, d0, d1, functools.partial(statistic, **doubled),
               2_000, 8_000)
    record_audit(res, 1.0)
    assert res.epsilon_lower_bound > 1.0, res.summary()


# -- the builder's own checks ------------------------------------------------------------


def _builder(**kw):
    params = dict(n_bins=4, n_labels=2, max_depth=1, criterion="mse", leaf="mean",
                  selection="exponential", max_features=0, min_samples_split=0.0,
                  min_samples_leaf=0.0, fixed_scale=2.0**31, count_t=1, count_s=1,
                  split_q=1e-3, split_eps_num=1, split_den=1)
    params.update(kw)
    return tree_module.TreeBuilder(**params)


def test_builder_refuses_weights_it_was_not_made_for():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 4, size=(10, 2), dtype=np.uint8)
    y = np.zeros(10, dtype=np.int64)
    labels = np.zeros(10, dtype=np.uint8)
    args = (np.random.default_rng(1), np.random.default_rng(2), codes, y, labels)
    with pytest.raises(ValueError, match="if and only if weight_shift > 0"):
        _builder().build(*args, weights=np.ones(10, dtype=np.int64))
    with pytest.raises(ValueError, match="if and only if weight_shift > 0"):
        _builder(weight_shift=WEIGHT_BITS).build(*args)
    with pytest.raises(ValueError, match="one entry per row"):
        _builder(weight_shift=WEIGHT_BITS).build(*args, weights=np.ones(9, dtype=np.int64))
    with pytest.raises(ValueError, match="out of range"):
        _builder(weight_shift=WEIGHT_BITS).build(*args, weights=np.full(10, -1))
    with pytest.raises(ValueError, match="weight_shift must be in"):
        _builder(weight_shift=31)
    with pytest.raises(ValueError, match="fixed_scale / 2 a multiple"):
        _builder(weight_shift=WEIGHT_BITS, fixed_scale=2.0**10)


def test_weighted_targets_never_exceed_the_unweighted():
    # What the mean leaf's sensitivity rests on: a row's weighted target is
    # floor(u y / 2**20), in [0, c y] for a weight c = u / 2**20.
    rng = np.random.default_rng(3)
    n = 400
    X = rng.random((n, 1))
    y = rng.random(n)
    w = rng.random(n)
    est = DPDecisionTreeRegressor(epsilon=1.0, max_depth=0, bounds=(0, 1), y_bounds=(0, 1),
                                  accountant=BudgetAccountant())
    data = support.tree_data(est, X, y, w)
    builder = est._builder(est._tree_budget(1.0), data)
    leaf = builder.build(np.random.default_rng(4), np.random.default_rng(5), data.codes,
                         data.y_fixed, data.labels, weights=data.weights)
    assert leaf["left"][0] == -1  # a single leaf whose value is the noisy weighted mean
    weighted = (data.y_fixed * data.weights) >> WEIGHT_BITS
    assert np.all(weighted >= 0)
    assert np.all(weighted * 2**WEIGHT_BITS <= data.y_fixed * data.weights)
    # the noisy mean estimates the weighted mean of the targets
    assert leaf["value"][0] == pytest.approx(np.average(y, weights=data.weights), abs=0.05)
