"""The public binning (dptrees.data.binning): a split's printed threshold and the bin
codes agree on every value, those exactly on an edge included."""

import pickle

import numpy as np
import pytest

from dptrees import DPDecisionTreeClassifier
from dptrees.plot import export_text
from dptrees.data.binning import Binner


def bounds_cases(n_cases=200, seed=1):
    rng = np.random.default_rng(seed)
    for _ in range(n_cases):
        lower = rng.normal() * 10.0 ** rng.integers(-3, 6)
        upper = lower + abs(rng.normal()) * 10.0 ** rng.integers(-3, 6) + 1e-9
        yield lower, upper, int(rng.integers(2, 257)), bool(rng.random() < 0.3)
    yield -1e300, 1e300, 256, False
    yield -1.0, 1.0, 10, False  # the nominal first edge is binned left


@pytest.mark.parametrize("lower, upper, n_bins, missing", list(bounds_cases()))
def test_the_threshold_is_the_first_value_binned_right(lower, upper, n_bins, missing):
    binner = Binner([lower], [upper], n_bins, [0] if missing else [])
    bins = np.arange(n_bins - 1 - missing)
    t = binner.thresholds(np.zeros_like(bins), bins)
    on_edge = binner.transform(np.ascontiguousarray(t[:, None]))[:, 0]
    below = binner.transform(np.ascontiguousarray(np.nextafter(t, -np.inf)[:, None]))[:, 0]
    np.testing.assert_array_equal(on_edge, bins + 1)  # x < t is false: right
    np.testing.assert_array_equal(below, bins)  # the double below t: left
    if missing:
        assert binner.thresholds(0, n_bins - 2) == np.inf


def test_the_nominal_edges_are_not_the_thresholds_where_rounding_moves_them():
    # on [-1, 1] in 10 bins the first edge, -1 + 0.2 = -0.8, is binned by
    # (-0.8 + 1) * 5 = 0.999..., so into bin 0: the printed threshold is above it
    binner = Binner([-1.0], [1.0], 10)
    nominal = -1.0 + 2.0 / 10
    assert binner.transform(np.array([[nominal]]))[0, 0] == 0
    t = binner.thresholds(0, 0)
    assert t > nominal and binner.transform(np.array([[t]]))[0, 0] == 1


def test_thresholds_are_not_saved_with_the_binner():
    binner = Binner([0.0, -1.0], [1.0, 1.0], 32)
    before = binner.thresholds(np.array([0, 1]), np.array([3, 30]))
    copy = pickle.loads(pickle.dumps(binner))
    assert "_threshold_table" not in copy.__dict__
    np.testing.assert_array_equal(copy.thresholds(np.array([0, 1]), np.array([3, 30])),
                                  before)


def test_a_row_on_a_printed_threshold_goes_where_the_text_says():
    rng = np.random.default_rng(0)
    X = rng.random((4000, 1))
    y = (X[:, 0] > 0.3).astype(int)
    clf = DPDecisionTreeClassifier(max_depth=1, epsilon=50.0, n_bins=10, bounds=(0.0, 1.0),
                                   classes=[0, 1], random_state=0).fit(X, y)
    tree = clf.tree_
    t = tree.threshold[0]
    assert f"x[0] < {t:.17g}" in export_text(clf, decimals=17)
    leaf_left, leaf_right = tree.left[0], tree.right[0]
    np.testing.assert_array_equal(clf.apply(np.array([[t], [np.nextafter(t, 0.0)]])),
                                  [leaf_right, leaf_left])
