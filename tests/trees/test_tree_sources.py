"""DP trees and forests from every source of rows: the same trees, bit for bit.

* The builder draws each node's noise from its depth's own stream and its exact
  statistics only, so a tree grown level by level from statistics summed over blocks
  (``grow_from_statistics`` driving ``TreeBuilder.decide_level``) equals the tree built
  depth first from rows in memory (``TreeBuilder.build``): every node's feature,
  threshold, children, noisy count and released value. Tested for every tree and
  forest family (greedy and random splitters, mean / median / count / label leaves,
  partition forests), at small and large epsilon, from a memmap in blocks (1 and 2
  threads), from ``Blocks`` of any size and from Dask arrays and dataframes on two worker
  processes.
* What only changes speed does not change the tree: the number of passes per level of
  the blockwise growth (``MAX_HISTOGRAM_BYTES``).
* The routing kernel's label histograms equal a direct count; ``decide_level`` and
  ``renumber_depth_first`` refuse inputs that do not fit; bad data in a block raises
  before anything is spent.
"""

import numpy as np
import pytest

from dptrees import (
    Blocks,
    BudgetAccountant,
    DPDecisionTreeClassifier,
    DPDecisionTreeRegressor,
    DPExtraTreesClassifier,
    DPExtraTreesRegressor,
    DPGradientBoostingRegressor,
    DPPartitionForestClassifier,
    DPPartitionForestRegressor,
)
from dptrees import _tree_growth
from dptrees._core import _histogram
from dptrees._core._builder import TreeBuilder, renumber_depth_first
from dptrees._sources import _rows
from dptrees.exceptions import PrivacyLeakWarning

from support import dask_inputs, tree_data

N, P = 4001, 6
ARRAYS = ("feature", "bin_threshold", "left", "right", "depth", "noisy_count", "value")


def make_data(n=N, p=P, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, p))
    y_reg = 3 * X[:, 0] - 2 * X[:, 2] + 0.3 * rng.normal(size=n)
    y_cls = np.minimum((X[:, 0] + X[:, 1]) * 1.6, 2).astype(int)
    return X, y_reg, y_cls


def estimators():
    """(name, estimator, which target) for every tree and forest family."""
    reg = dict(bounds=(0.0, 1.0), y_bounds=(-3.0, 4.0), random_state=5)
    cls = dict(bounds=(0.0, 1.0), classes=[0, 1, 2], random_state=5)
    yield "tree-mean", DPDecisionTreeRegressor(max_depth=6, **reg), "reg"
    yield "tree-median", DPDecisionTreeRegressor(max_depth=5, leaf="median", **reg), "reg"
    yield "tree-counts", DPDecisionTreeClassifier(max_depth=6, **cls), "cls"
    yield "tree-label", DPDecisionTreeClassifier(max_depth=6, leaf="label", **cls), "cls"
    yield "partition-reg", DPPartitionForestRegressor(n_estimators=3, **reg), "reg"
    yield "partition-cls", DPPartitionForestClassifier(n_estimators=3, **cls), "cls"
    yield "extra-reg", DPExtraTreesRegressor(n_estimators=3, **reg), "reg"
    # several edges per feature: histograms in memory, the same sums from blocks
    yield "extra-reg-edges", DPExtraTreesRegressor(n_estimators=2, n_thresholds=7,
                                                   **reg), "reg"
    yield "extra-cls-partition", DPExtraTreesClassifier(n_estimators=3, partition=True,
                                                        max_features=2, **cls), "cls"


ESTIMATORS = list(estimators())


def trees_of(est):
    return est.estimators_ if hasattr(est, "estimators_") else [est.tree_]


def assert_same_trees(a, b):
    ta, tb = trees_of(a), trees_of(b)
    assert len(ta) == len(tb)
    for x, y in zip(ta, tb):
        for name in ARRAYS + ("threshold",):
            np.testing.assert_array_equal(getattr(x, name), getattr(y, name), err_msg=name)
        np.testing.assert_array_equal(x.noisy_value, y.noisy_value)


def fit(est, X, y, epsilon):
    return est.set_params(epsilon=epsilon, accountant=BudgetAccountant(1e9)).fit(X, y)


@pytest.fixture(scope="module")
def memmap_data(tmp_path_factory):
    X, y_reg, y_cls = make_data()
    path = tmp_path_factory.mktemp("trees") / "X.f64"
    mm = np.memmap(path, dtype=np.float64, mode="w+", shape=X.shape)
    mm[:] = X
    mm.flush()
    return np.memmap(path, dtype=np.float64, mode="r", shape=X.shape), {"reg": y_reg,
                                                                       "cls": y_cls}


# -- the same trees from every source --------------------------------------------------------


@pytest.mark.usefixtures("no_tree_fallback")
@pytest.mark.parametrize("epsilon", [0.2, 5.0])
@pytest.mark.parametrize("name, est, target", ESTIMATORS, ids=[e[0] for e in ESTIMATORS])
def test_memmap_in_blocks_grows_the_bit_identical_trees(memmap_data, name, est, target,
                                                        epsilon):
    mm, targets = memmap_data
    X, y = np.asarray(mm), targets[target]
    expected = fit(est, X, y, epsilon)
    assert sum(t.node_count for t in trees_of(expected)) > 3 * len(trees_of(expected))
    for data, n_jobs in ((Blocks(mm, block_rows=700), 1), (mm, 2),
                         (Blocks(mm, block_rows=1), 1)):
        if hasattr(est, "n_jobs"):
            est.set_params(n_jobs=n_jobs)
        if isinstance(data, Blocks) and data.block_rows == 1:
            data = Blocks(mm[:300], block_rows=1)  # one row per block: a smaller problem
            expected = fit(est, X[:300], y[:300], epsilon)
        assert_same_trees(fit(est, data, y[:data.shape[0]], epsilon), expected)


@pytest.mark.parametrize("name, est, target", ESTIMATORS, ids=[e[0] for e in ESTIMATORS])
def test_threads_in_memory_grow_the_bit_identical_trees(memmap_data, name, est, target):
    # nodes of over 1024 rows share their statistics among the builder's threads
    X, y = np.asarray(memmap_data[0]), memmap_data[1][target]
    expected = fit(est.set_params(n_jobs=1), X, y, 3.0)
    for n_jobs in (2, 3, -1):
        assert_same_trees(fit(est.set_params(n_jobs=n_jobs), X, y, 3.0), expected)


@pytest.mark.parametrize("n_jobs, error", [(0, ValueError), (1.5, TypeError), (True, TypeError)])
def test_bad_n_jobs_on_a_tree_raise_before_anything_is_spent(n_jobs, error):
    X, y_reg, _ = make_data(50)
    acc = BudgetAccountant(10.0)
    est = DPDecisionTreeRegressor(bounds=(0, 1), y_bounds=(-3, 4), accountant=acc,
                                  n_jobs=n_jobs)
    with pytest.raises(error, match="n_jobs"):
        est.fit(X, y_reg)
    assert acc.spent == (0.0, 0.0)


def test_builder_threads_give_the_same_nodes_on_a_large_node():
    X, y_reg, y_cls = make_data(30_000, 9, seed=3)
    for est, y in ((DPDecisionTreeRegressor(bounds=(0, 1), y_bounds=(-3, 4), max_depth=8), y_reg),
                   (DPDecisionTreeClassifier(bounds=(0, 1), classes=[0, 1, 2], max_depth=8),
                    y_cls),
                   (DPExtraTreesClassifier(n_estimators=1, bounds=(0, 1), classes=[0, 1, 2],
                                           max_depth=8, max_features=5), y_cls)):
        est.set_params(epsilon=4.0, random_state=11)
        builder_kw = est._check_params()
        data = tree_data(est, X, y)
        max_features = None if getattr(est, "_greedy", True) else 5
        builder = est._builder(est._tree_budget(builder_kw), data, max_features)
        runs = [builder.build(np.random.default_rng(1), np.random.default_rng(2), data.codes,
                              data.y_fixed, data.labels, n_threads=t) for t in (1, 2, 4)]
        assert len(runs[0]["left"]) > 50
        for other in runs[1:]:
            for key in runs[0]:
                np.testing.assert_array_equal(runs[0][key], other[key], err_msg=key)
    with pytest.raises(ValueError, match="n_threads"):
        builder.build(np.random.default_rng(1), np.random.default_rng(2), data.codes,
                      data.y_fixed, data.labels, n_threads=0)


def test_passes_per_level_do_not_change_the_tree(memmap_data, monkeypatch):
    # one pass per histogram, no parents kept for subtraction: the same integers
    mm, targets = memmap_data
    monkeypatch.setattr(_tree_growth, "MAX_HISTOGRAM_BYTES", 1)
    for name, est, target in ESTIMATORS[:4]:
        y = targets[target]
        expected = fit(est, np.asarray(mm), y, 3.0)
        assert_same_trees(fit(est, Blocks(mm, block_rows=999), y, 3.0), expected)


@pytest.mark.slow  # 9 s: run by .ci/run after the default suite
def test_dask_on_two_worker_processes_grows_the_bit_identical_trees(dask_client):
    X, y_reg, y_cls = make_data(2000)
    targets = {"reg": y_reg, "cls": y_cls}
    for name, est, target in ESTIMATORS:
        y = targets[target]
        expected = fit(est, X, y, 2.0)
        for data, labels in dask_inputs(X, y, 701):
            assert_same_trees(fit(est, data, labels, 2.0), expected)


def test_bounds_read_from_blocks_warn_and_match_memory(memmap_data):
    mm, targets = memmap_data
    est = DPDecisionTreeRegressor(max_depth=4, random_state=0)
    with pytest.warns(Warning) as memory:
        expected = fit(est, np.asarray(mm), targets["reg"], 1.0)
    with pytest.warns(Warning) as blocks:
        got = fit(est, Blocks(mm, block_rows=500), targets["reg"], 1.0)
    assert_same_trees(got, expected)
    assert len(got.privacy_leaks_) == 2 and len(blocks) == len(memory)


@pytest.mark.parametrize("bad", ["nan", "class", "target"])
def test_bad_blocks_raise_before_anything_is_spent(tmp_path, bad):
    X, y_reg, y_cls = make_data(500)
    y = y_cls.copy() if bad == "class" else y_reg.copy()
    if bad == "nan":
        X[437, 2] = np.nan
    elif bad == "class":
        y[451] = 7
    else:
        y[300] = np.inf
    mm = np.memmap(tmp_path / "X.f64", dtype=np.float64, mode="w+", shape=X.shape)
    mm[:] = X
    acc = BudgetAccountant(epsilon=10.0)
    if bad == "class":
        est = DPDecisionTreeClassifier(bounds=(0, 1), classes=[0, 1, 2], accountant=acc)
    else:
        est = DPDecisionTreeRegressor(bounds=(0, 1), y_bounds=(-3, 4), accountant=acc)
    with pytest.raises(ValueError, match={"nan": "NaN", "class": "not in classes",
                                          "target": "infinity"}[bad]):
        est.fit(Blocks(mm, block_rows=100), y)
    assert acc.spent == (0.0, 0.0)


# -- the pieces ----------------------------------------------------------------------------


def test_routed_label_histograms_count_each_row_once_by_label_and_weight():
    rng = np.random.default_rng(3)
    n, p, n_bins, n_labels = 900, 3, 5, 4
    codes = rng.integers(0, n_bins, size=(n, p)).astype(np.uint8)
    labels = rng.integers(0, n_labels, size=n).astype(np.uint8)
    weight = rng.integers(0, 2, size=n).astype(np.int64)
    feature = np.array([1, -1, -1], dtype=np.int32)
    bin_threshold = np.array([2, -1, -1], dtype=np.int32)
    routing = _rows.heap_routing(feature, bin_threshold, 1, [1, 2])
    out = np.zeros((2, p, n_bins, 1 + n_labels), dtype=np.int64)
    _histogram.routed_histogram(codes, weight[None, :], *routing, out, labels)
    expected = np.zeros_like(out)
    slot = (codes[:, 1] > 2).astype(int)
    for f in range(p):
        np.add.at(expected, (slot, f, codes[:, f], 0), weight)
        np.add.at(expected, (slot, f, codes[:, f], 1 + labels), weight)
    np.testing.assert_array_equal(out, expected)
    with pytest.raises(ValueError, match="labels out of range"):
        _histogram.routed_histogram(codes, weight[None, :], *routing,
                                    np.zeros((2, p, n_bins, 3), dtype=np.int64), labels)
    with pytest.raises(ValueError, match="one entry per row"):
        _histogram.routed_histogram(codes, weight[None, :], *routing, out, labels[:-1])


def builder(max_features=0, criterion="mse", leaf="mean", n_labels=4):
    return TreeBuilder(n_bins=8, n_labels=n_labels, max_depth=3, criterion=criterion,
                       leaf=leaf, selection="exponential", max_features=max_features,
                       min_samples_split=2.0, min_samples_leaf=1.0, fixed_scale=2.0**31,
                       count_t=1, count_s=1, split_q=1e-6, split_eps_num=2**20,
                       split_den=2**32)


def test_decide_level_refuses_statistics_that_do_not_fit():
    b = builder()
    rng = np.random.default_rng(0)
    counts = np.array([50.0, 1.0])  # the first node may split, the second not
    totals = np.zeros((2, 2), dtype=np.int64)
    hist = np.zeros((1, 3, 8, 2), dtype=np.int64)
    b.decide_level(rng, 1, counts, totals, hist)
    with pytest.raises(ValueError, match="one per splittable node"):
        b.decide_level(rng, 1, counts, totals, np.zeros((2, 3, 8, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="totals"):
        b.decide_level(rng, 1, counts, totals[:1], hist)
    with pytest.raises(ValueError, match="one per splittable"):
        b.decide_level(rng, 1, counts, totals, np.zeros((1, 3, 7, 2), dtype=np.int64))
    random = builder(max_features=2)
    feature, bin_ = random.draw_candidates(np.random.default_rng(1), 1, 3)
    random.decide_level(rng, 1, counts, totals, hist, feature, bin_)
    with pytest.raises(ValueError, match="out of range"):
        random.decide_level(rng, 1, counts, totals, hist, feature + 3, bin_)
    with pytest.raises(ValueError, match="candidates must have shape"):
        random.decide_level(rng, 1, counts, totals, hist, feature[:, :1], bin_[:, :1])


def test_the_node_cap_is_a_rule_on_released_counts_in_level_order():
    b = TreeBuilder(n_bins=8, n_labels=2, max_depth=2, criterion="mse", leaf="mean",
                    selection="exponential", max_features=0, min_samples_split=10.0,
                    min_samples_leaf=1.0, fixed_scale=2.0**31, count_t=1, count_s=1,
                    split_q=1e-6, split_eps_num=2**20, split_den=2**32, max_nodes=9)
    # (9 - 1) // (2 * 2) = 2 split attempts per depth; the node of count 5 may not split
    np.testing.assert_array_equal(b.plan_level(1, np.array([20.0, 5.0, 30.0, 40.0])),
                                  [True, False, True, False])
    assert not b.plan_level(2, np.array([1e6])).any()  # max_depth
    # depth 3, 9 nodes: one split per depth, 7 nodes where a full tree would have 15
    deep = TreeBuilder(n_bins=8, n_labels=2, max_depth=3, criterion="mse", leaf="mean",
                       selection="exponential", max_features=0, min_samples_split=10.0,
                       min_samples_leaf=1.0, fixed_scale=2.0**31, count_t=1, count_s=1,
                       split_q=1e-6, split_eps_num=2**20, split_den=2**32, max_nodes=9)
    X = np.random.default_rng(0).integers(0, 8, size=(5000, 3)).astype(np.uint8)
    nodes = deep.build(*np.random.default_rng(1).spawn(2), X, np.zeros(5000, np.int64),
                       np.zeros(5000, np.uint8))
    assert len(nodes["left"]) == 7
    assert np.bincount(nodes["depth"][nodes["left"] != -1]).tolist() == [1, 1, 1]


def test_renumber_depth_first_orders_like_scikit_learn_and_refuses_non_trees():
    # level order: 0 -> (1, 2), 1 -> (3, 4)
    nodes = {"feature": np.array([0, 1, -1, -1, -1]), "bin_threshold": np.array([3, 4, -1, -1, -1]),
             "left": np.array([1, 3, -1, -1, -1]), "right": np.array([2, 4, -1, -1, -1]),
             "depth": np.array([0, 1, 1, 2, 2]), "noisy_count": np.arange(5.0),
             "value": np.arange(5.0)}
    out = renumber_depth_first(nodes)
    np.testing.assert_array_equal(out["left"], [1, 2, -1, -1, -1])
    np.testing.assert_array_equal(out["right"], [4, 3, -1, -1, -1])
    np.testing.assert_array_equal(out["noisy_count"], [0, 1, 3, 4, 2])
    np.testing.assert_array_equal(out["depth"], [0, 1, 2, 2, 1])
    cyclic = dict(nodes, left=np.array([1, 0, -1, -1, -1]))
    with pytest.raises(ValueError, match="not a tree"):
        renumber_depth_first(cyclic)
    orphan = dict(nodes, left=np.array([1, -1, -1, -1, -1]), right=np.array([2, -1, -1, -1, -1]))
    with pytest.raises(ValueError, match="not a tree"):
        renumber_depth_first(orphan)


@pytest.mark.parametrize("make", [
    lambda b: DPDecisionTreeRegressor(bounds=b, y_bounds=(0, 1), random_state=0),
    lambda b: DPGradientBoostingRegressor(n_estimators=3, bounds=b, y_bounds=(0, 1),
                                          random_state=0),
])
def test_a_bounds_dict_that_leaves_a_feature_out_reads_it_from_blocks_too(tmp_path, make):
    # the feature left out is read from the data (a leak, warned) in memory and in blocks
    X = np.random.default_rng(0).random((300, 2)) * [1, 10]
    y = X[:, 0]
    disk = np.lib.format.open_memmap(tmp_path / "X.npy", mode="w+", dtype=float,
                                     shape=X.shape)
    disk[:] = X
    fitted = []
    for data in (X, disk):
        with pytest.warns(PrivacyLeakWarning, match=r"bounds of \['feature 1'\]"):
            fitted.append(make({0: (0, 1), 1: None}).fit(data, y))
    assert fitted[1].bounds_[1][1] == X[:, 1].max()
    assert np.array_equal(fitted[0].predict(X), fitted[1].predict(X))
