"""Label leaves (``leaf="label"``): the majority class by permute-and-flip.

A depth-0 tree releases a noisy root count and its leaf's label. The label is chosen by
permute-and-flip over the class counts (sensitivity 1, monotonic), so the release of the
label alone is ``budget["leaf"]``-DP; the audits below put almost all of epsilon on it.
"""

import numpy as np
import pytest

from dptrees import (
    BudgetAccountant,
    DPDecisionTreeClassifier,
    DPExtraTreesClassifier,
    DPPartitionForestClassifier,
)
from support import run_audit


def make(epsilon, **kwargs):
    params = dict(max_depth=0, n_bins=4, bounds=(0.0, 1.0), classes=[0, 1], leaf="label",
                  budget_weights=(1e-3, 1.0, 1.0), accountant=BudgetAccountant())
    params.update(kwargs)
    return DPDecisionTreeClassifier(epsilon=epsilon, **params)


def released_label(nodes):
    """Statistic: the class a depth-0 tree's leaf releases."""
    return float(np.argmax(nodes["value"][0]))


def audit_label(est):
    return run_audit(est, (X0, Y0), (X1, Y1), released_label, 3_000, 12_000,
                     fresh_streams=True)


# D0: 3 records of class 0 and 3 of class 1; D1 adds one record of class 1.
X0 = np.full((6, 1), 0.5)
Y0 = np.array([0, 0, 0, 1, 1, 1])
X1, Y1 = np.vstack([X0, [[0.5]]]), np.append(Y0, 1)


def test_label_leaves_learn_the_majority_class():
    rng = np.random.default_rng(0)
    X = rng.random((4000, 2))
    y = np.where(X[:, 0] > 0.5, "yes", "no")
    # random thresholds (ExtraTrees) cut x0 near, not at, 0.5
    for est, floor in ((DPDecisionTreeClassifier(epsilon=20.0, max_depth=2, leaf="label"), 0.9),
                       (DPPartitionForestClassifier(n_estimators=3, epsilon=20.0, max_depth=2,
                                                    leaf="label"), 0.9),
                       (DPExtraTreesClassifier(n_estimators=3, epsilon=20.0, max_depth=3,
                                               leaf="label",
                                               partition=True, max_features=None), 0.75)):
        est.set_params(bounds=(0, 1), classes=["no", "yes"], accountant=BudgetAccountant(),
                       random_state=0).fit(X, y)
        assert (est.predict(X) == y).mean() > floor
        proba = est.predict_proba(X)
        assert np.allclose(proba.sum(axis=1), 1.0)


def test_label_leaf_values_are_one_hot():
    est = make(2.0).fit(X0, Y0)
    leaf_values = est.tree_.value[est.tree_.left == -1]
    assert set(np.unique(leaf_values)) <= {0.0, 1.0}
    assert np.all(leaf_values.sum(axis=1) == 1.0)


def test_unknown_leaf_is_refused():
    with pytest.raises(ValueError, match="leaf"):
        make(1.0, leaf="mean").fit(X0, Y0)


def test_audit_label_leaf_within_epsilon(record_audit):
    epsilon = 2.0
    res = record_audit(audit_label(make(epsilon)), epsilon)
    res.assert_within(epsilon)
    assert res.epsilon_lower_bound > 0.4  # the audit sees the label move


def test_control_label_leaf_with_four_times_the_epsilon_is_flagged(inject, record_audit):
    inject(lambda kw: kw.update(leaf_eps_num=4 * kw["leaf_eps_num"]))
    epsilon = 1.0
    res = record_audit(audit_label(make(epsilon)), epsilon)
    assert res.epsilon_lower_bound > epsilon, res.summary()
