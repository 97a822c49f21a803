"""Sources of rows: the same model from memory, from a memmap in blocks, from Dask.

* The routing kernel (``routed_histogram``, and the node sums from it) gives the exact sums of the
  in-memory kernels (``node_histogram``, ``segment_sums``) for any split into blocks, and
  refuse inputs that would index out of bounds.
* In memory, a node's histogram taken as its parent's minus its sibling's, or in one
  routed pass over all rows, and the leaf sums and score updates spread over threads,
  are the exact sums a brute-force count gives.
* DP gradient boosting, every family (binary, multiclass, regression) and every split
  mode, with subsampling and batches: bit-identical models from an array, from a memmap
  read in blocks smaller than the data (1 and 2 threads), and from Dask arrays and
  dataframes on a ``LocalCluster`` of two worker processes, with any partitioning.
* Bad data in a block (NaN, a label outside the public classes) raises before anything
  is spent; a memmap's blocks are binned to a file, never held as float64 as a whole.
"""

from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import numpy as np
import pytest

from dptrees import (
    Blocks,
    BudgetAccountant,
    DPGradientBoostingClassifier,
    DPGradientBoostingRegressor,
)
from dptrees._core import _histogram
from dptrees._sources import BlockSource, _array, _rows
from dptrees.boosting._losses import SquaredError
from dptrees.boosting._split_prior import MAX_ACTIVE

from support import dask_inputs, one_hot_columns

N, P = 3001, 5


def make_data(n=N, p=P, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, p))
    y_binary = (X[:, 0] + X[:, 1] + 0.3 * rng.normal(size=n) > 1).astype(int)
    y_multi = np.minimum((X[:, 0] * 3 + 0.3 * rng.normal(size=n)).astype(int), 2).clip(0)
    y_reg = 3 * X[:, 0] - 2 * X[:, 2] + rng.normal(size=n)
    return X, y_binary, y_multi, y_reg


@pytest.fixture(scope="module")
def memmap_data(tmp_path_factory):
    """The features as a float32 memmap on disk, and the same values as float64."""
    X, *targets = make_data()
    path = tmp_path_factory.mktemp("memmap") / "X.f32"
    mm = np.memmap(path, dtype=np.float32, mode="w+", shape=X.shape)
    mm[:] = X
    mm.flush()
    return np.memmap(path, dtype=np.float32, mode="r", shape=X.shape), targets


def estimators():
    common = dict(bounds=(0.0, 1.0), max_depth=3, random_state=11)
    yield "binary", DPGradientBoostingClassifier(n_estimators=4, classes=[0, 1], **common)
    yield "multi", DPGradientBoostingClassifier(n_estimators=2, classes=[0, 1, 2], **common)
    yield "reg", DPGradientBoostingRegressor(n_estimators=4, y_bounds=(-3.0, 4.0),
                                             batch_size=2, **common)


SETTINGS = [dict(split="random"), dict(split="private"), dict(split="hybrid"),
            dict(split="guided"), dict(split="random", subsample=0.3),
            dict(split="random", select_depth=2), dict(split="guided", select_depth=1)]


def pick(kind, targets):
    return dict(zip(["binary", "multi", "reg"], targets))[kind]


# -- kernels ---------------------------------------------------------------------------------


def test_routed_kernels_equal_the_in_memory_kernels_for_any_blocks():
    rng = np.random.default_rng(1)
    n, p, n_bins = 1000, 4, 8
    codes = rng.integers(0, n_bins, size=(n, p)).astype(np.uint8)
    stats = rng.integers(-1000, 1000, size=(2, n)).astype(np.int64)
    feature = np.array([2, 0, 3, -1, -1, -1, -1], dtype=np.int32)
    bin_threshold = np.array([3, 5, 1, -1, -1, -1, -1], dtype=np.int32)
    wanted = [3, 4, 5, 6]
    routing = _rows.heap_routing(feature, bin_threshold, 2, wanted)
    # in memory: partition the rows node by node, histogram each leaf's slice
    rows = np.arange(n, dtype=np.intp)
    cut = _histogram.partition(codes.T.copy(), rows, 2, 3)
    segments = [(0, cut), (cut, n)]
    leaves = []
    for (a, b), f, t in zip(segments, (0, 3), (5, 1)):
        m = _histogram.partition(codes.T.copy(), rows[a:b], f, t)
        leaves += [(a, a + m), (a + m, b)]
    expected = np.zeros((4, p, n_bins, 2), dtype=np.int64)
    for j, (a, b) in enumerate(leaves):
        _histogram.node_histogram(codes, rows[a:b], stats, expected[j])
    for block in (n, 333, 1):
        got = sum(_rows.block_histogram(codes[a:a + block], np.ascontiguousarray(
            stats[:, a:a + block]), routing, n_bins) for a in range(0, n, block))
        np.testing.assert_array_equal(got, expected)
        sums = sum(_rows.block_sums(codes[a:a + block], np.ascontiguousarray(
            stats[:, a:a + block]), routing) for a in range(0, n, block))
        np.testing.assert_array_equal(sums, expected[:, 0].sum(axis=1))


def node_at_level(codes, feature, bin_threshold, level):
    """Brute force: the heap id of the node each row reaches at ``level``."""
    node = np.zeros(codes.shape[0], dtype=np.intp)
    for _ in range(level):
        goes_left = codes[np.arange(codes.shape[0]), feature[node]] <= bin_threshold[node]
        node = np.where(goes_left, 2 * node + 1, 2 * node + 2)
    return node


@pytest.mark.parametrize("threads", [1, 2])
def test_in_memory_histograms_sums_and_updates_are_exact(monkeypatch, threads):
    # Small thresholds so that 2,000 rows take every path: threads, node by node, routed.
    monkeypatch.setattr(_array, "_THREAD_MIN_ROWS", 50)
    rng = np.random.default_rng(5)
    n, p, n_bins, depth = 2000, 4, 8, 3
    codes = rng.integers(0, n_bins, size=(n, p)).astype(np.uint8)
    # the row blocks ArraySource makes for `threads` threads at this _THREAD_MIN_ROWS
    source = SimpleNamespace(codes=codes, labels=rng.random(n), weights=None,
                             n_samples=n, n_features=p,
                             row_blocks=[(0, n)] if threads == 1 else [(0, n // 2), (n // 2, n)])
    loss = SquaredError()
    fixed = DPGradientBoostingRegressor()._fixed_point(loss)
    feature = np.full(2 ** (depth + 1) - 1, -1, dtype=np.int32)
    bin_threshold = np.full_like(feature, -1)
    feature[:7] = rng.integers(0, p, size=7)
    bin_threshold[:7] = rng.integers(0, n_bins - 1, size=7)
    # a tiny node (most rows go right at node 2): it is read node by node
    bin_threshold[2] = 0
    with ThreadPoolExecutor(threads) as executor:
        rows = _array.ArrayBoostingRows(source, loss, fixed, [0.5], n_bins, threads,
                                        executor if threads > 1 else None)
        rows.start_batch()
        rows.start_tree(0, feature, bin_threshold)
        rows.stats[:] = rng.integers(-1000, 1000, size=(2, n))

        def expected(level, nodes):
            at = node_at_level(codes, feature, bin_threshold, level)
            out = np.zeros((len(nodes), p, n_bins, 2), dtype=np.int64)
            for j, v in enumerate(nodes):
                for f in range(p):
                    for k in range(2):
                        out[j, f, :, k] = np.bincount(codes[at == v, f], rows.stats[k, at == v],
                                                      minlength=n_bins)
            return out

        # level 1: only the child with more rows (its sibling is read, it is the parent's
        # minus the sibling's); level 2: the tiny node alone (read node by node), then
        # every node, some with a known parent, some not (one routed pass)
        counts = np.bincount(node_at_level(codes, feature, bin_threshold, 1), minlength=3)
        assert np.sum(node_at_level(codes, feature, bin_threshold, 2) == 5) < n / 8
        requests = [(0, [0]), (1, [1 + int(np.argmax(counts[1:]))]), (2, [5]),
                    (2, [3, 4, 5, 6])]
        for level, nodes in requests:
            np.testing.assert_array_equal(rows.histograms(level, nodes),
                                          expected(level, nodes))
            if level < 2 or len(nodes) == 4:
                rows.split(level)
        leaf = node_at_level(codes, feature, bin_threshold, depth) - 7
        sums = rows.leaf_sums()
        for k in range(2):
            np.testing.assert_array_equal(sums[:, k], np.bincount(leaf, rows.stats[k],
                                                                  minlength=8))
        values = rng.normal(size=8)
        rows.add_tree(0, None, values, 0.5)
        np.testing.assert_array_equal(rows.pending[0], 0.5 * values[leaf])


def test_routed_kernels_refuse_what_would_index_out_of_bounds():
    codes = np.zeros((10, 2), dtype=np.uint8)
    stats = np.ones((2, 10), dtype=np.int64)
    feature = np.array([5, -1, -1], dtype=np.int32)  # feature 5 of 2
    thr = np.array([0, -1, -1], dtype=np.int32)
    left, right = np.array([1, -1, -1], np.int32), np.array([2, -1, -1], np.int32)
    slots = np.array([-1, 0, 1], dtype=np.intp)
    out = np.zeros((2, 2, 4, 2), dtype=np.int64)
    with pytest.raises(ValueError, match="corrupt tree"):
        _histogram.routed_histogram(codes, stats, feature, thr, left, right, slots, out)
    feature[0] = 1
    with pytest.raises(ValueError, match="slot"):
        _histogram.routed_histogram(codes, stats, feature, thr, left, right,
                                    np.array([-1, 0, 2], dtype=np.intp), out)
    with pytest.raises(ValueError, match="one column per row"):
        _histogram.routed_histogram(codes, stats[:, :5].copy(), feature, thr, left, right,
                                    slots, out)
    with pytest.raises(ValueError, match="out must have shape"):
        _histogram.routed_histogram(codes, stats, feature, thr, left, right, slots,
                                    np.zeros((2, 3, 4, 2), dtype=np.int64))
    shared = np.zeros(out.size + 1, dtype=np.int64)  # out overlapping stats
    with pytest.raises(ValueError, match="share memory"):
        _histogram.routed_histogram(codes, shared[-stats.size:].reshape(stats.shape), feature,
                                    thr, left, right, slots, shared[:out.size].reshape(out.shape))
    codes[:, 1] = 200  # codes above n_bins count in the last bin
    _histogram.routed_histogram(codes, stats, feature, thr, left, right, slots, out)
    assert out[1, 1, 3, 0] == 10 and out.sum() == 2 * 2 * 10


# -- the same model from every source -------------------------------------------------------


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: "-".join(map(str, s.values())))
@pytest.mark.parametrize("kind", ["binary", "multi", "reg"])
def test_memmap_in_blocks_gives_the_bit_identical_model(memmap_data, kind, setting):
    mm, targets = memmap_data
    X = np.asarray(mm, dtype=np.float64)
    y = pick(kind, targets)
    est = dict(estimators())[kind].set_params(**setting)
    expected = est.fit(X, y)._raw(X)
    for data, n_jobs in ((Blocks(mm, block_rows=700), 1), (Blocks(mm, block_rows=512), 2),
                         (mm, 1)):
        got = est.set_params(n_jobs=n_jobs).fit(data, y)._raw(X)
        np.testing.assert_array_equal(got, expected)


def test_blocks_are_binned_to_disk_not_held_as_float64(memmap_data, monkeypatch):
    mm, (y, *_) = memmap_data
    seen = []
    real = BlockSource._memmap

    def spy(self, dtype, shape):
        seen.append((np.dtype(dtype), shape))
        return real(self, dtype, shape)

    monkeypatch.setattr(BlockSource, "_memmap", spy)
    read = []
    real_bin = _rows.bin_block

    def bin_spy(X_block, start, binner, n_features):
        read.append(X_block.shape[0])
        return real_bin(X_block, start, binner, n_features)

    monkeypatch.setattr(_rows, "bin_block", bin_spy)
    DPGradientBoostingClassifier(n_estimators=2, bounds=(0, 1), classes=[0, 1],
                                 random_state=0).fit(Blocks(mm, block_rows=1000), y)
    assert read == [1000, 1000, 1000, 1]  # one block at a time
    assert (np.dtype(np.uint8), mm.shape) in seen  # the codes, on disk


def test_bounds_and_classes_read_from_blocks_warn_and_match_memory(memmap_data):
    mm, (y, *_) = memmap_data
    X = np.asarray(mm, dtype=np.float64)
    est = DPGradientBoostingClassifier(n_estimators=2, random_state=0,
                                       accountant=BudgetAccountant())
    with pytest.warns(Warning) as memory:
        expected = est.fit(X, y)._raw(X)
    with pytest.warns(Warning) as blocks:
        got = est.fit(Blocks(mm, block_rows=400), y)._raw(X)
    np.testing.assert_array_equal(got, expected)
    assert est.privacy_leaks_ and len(blocks) == len(memory)


@pytest.mark.parametrize("bad", ["nan", "class", "shape"])
def test_bad_blocks_raise_before_anything_is_spent(tmp_path, bad):
    X, y, *_ = make_data(500)
    if bad == "nan":
        X[437, 2] = np.nan
    if bad == "class":
        y = y.copy()
        y[451] = 7
    mm = np.memmap(tmp_path / "X.f64", dtype=np.float64, mode="w+", shape=X.shape)
    mm[:] = X
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    est = DPGradientBoostingClassifier(n_estimators=2, bounds=(0, 1), classes=[0, 1],
                                       accountant=acc)
    match = {"nan": "NaN", "class": "not in classes", "shape": "inconsistent"}[bad]
    with pytest.raises(ValueError, match=match):
        est.fit(Blocks(mm, block_rows=100), y[:-1] if bad == "shape" else y)
    assert acc.spent == (0.0, 0.0)


# -- Dask ----------------------------------------------------------------------------------


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: "-".join(map(str, s.values())))
@pytest.mark.slow
def test_dask_on_two_worker_processes_gives_the_bit_identical_model(dask_client, setting):
    X, *targets = make_data()
    for kind, est in estimators():
        y = pick(kind, targets)
        est.set_params(**setting)
        expected = est.fit(X, y)._raw(X)
        for data, labels in dask_inputs(X, y, 701):
            np.testing.assert_array_equal(est.fit(data, labels)._raw(X), expected)


def test_sparse_split_prior_is_the_same_from_every_source(tmp_path, dask_client):
    # More one-hot columns than MAX_ACTIVE: guided splits take the sparse release, whose
    # rows are clipped by their number of active features
    X, cats = one_hot_columns(2001, 6, 5, seed=3)
    X[:, 0] = np.random.default_rng(4).random(len(X))  # a dense column too
    y_binary, y_multi = (cats[:, 1] == 0).astype(int), np.minimum(cats[:, 2], 2)
    assert X.shape[1] > MAX_ACTIVE
    mm = np.memmap(tmp_path / "X.f64", dtype=np.float64, mode="w+", shape=X.shape)
    mm[:] = X
    for y, classes in ((y_binary, [0, 1]), (y_multi, [0, 1, 2])):
        est = DPGradientBoostingClassifier(n_estimators=3, max_depth=3, split="guided",
                                           epsilon=4.0, bounds=(0.0, 1.0), classes=classes,
                                           random_state=4)
        expected = est.fit(X, y)._raw(X)
        priors = est.split_priors_
        inputs = [(Blocks(mm, block_rows=300), y, 1), (Blocks(mm, block_rows=700), y, 2)]
        inputs += [(data, labels, 1) for data, labels in dask_inputs(X, y, 501)]
        for data, labels, n_jobs in inputs:
            got = est.set_params(n_jobs=n_jobs).fit(data, labels)
            np.testing.assert_array_equal(got._raw(X), expected)
            for a, b in zip(got.split_priors_, priors):
                np.testing.assert_array_equal(a, b)


def test_dask_bad_partition_raises_before_anything_is_spent(dask_client):
    import dask.array as da

    X, y, *_ = make_data(600)
    X[555, 1] = np.inf
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    est = DPGradientBoostingClassifier(n_estimators=2, bounds=(0, 1), classes=[0, 1],
                                       accountant=acc)
    with pytest.raises(ValueError, match="infinity.*block of rows starting at row 500"):
        est.fit(da.from_array(X, chunks=(100, P)), y)
    assert acc.spent == (0.0, 0.0)


def test_every_source_keeps_the_row_source_protocol(tmp_path):
    # the methods estimators call on their rows are the protocol's, with public names
    from dptrees._sources import BlockwiseRowSource, RowSource, open_source

    X = np.random.default_rng(0).random((40, 3))
    y = (X[:, 0] > 0.5).astype(int)
    disk = np.lib.format.open_memmap(tmp_path / "X.npy", mode="w+", dtype=float,
                                     shape=X.shape)
    disk[:] = X
    in_memory, blocks = open_source(X, y), open_source(disk, y)
    for source in (in_memory, blocks):
        assert isinstance(source, RowSource), type(source)
        source.close()
    assert not isinstance(in_memory, BlockwiseRowSource)
    assert isinstance(blocks, BlockwiseRowSource)
    pytest.importorskip("dask")
    from dptrees._sources._dask import DaskSource  # needs a cluster to open: its class

    protocol = {name for name in dir(BlockwiseRowSource) if not name.startswith("_")}
    assert {"keep_blocks", "gather_blocks", "sum_blocks"} <= protocol
    assert all(hasattr(DaskSource, name) for name in protocol - {
        "n_samples", "n_features", "weights"})  # set by the constructor
