"""The compiled gradient-statistics kernels of DP boosting (``dptrees._core._histogram``).

Every kernel is compared with a plain numpy reference on random inputs (``np.add.at``,
stable ``argsort``, ``Tree.apply``), and every input check is exercised: a kernel must
raise on indices or shapes that would make it read or write out of bounds, never crash.
The fixed-point tests pin down what the DP sensitivities rely on: int64 sums are exact,
so the histogram of a node is identical whatever the order of its rows, and adding one
record moves it by exactly that record's integers.
"""

import numpy as np
import pytest

from dptrees._core import _histogram
from dptrees._tree_structure import Tree

INTP = np.intp


def random_inputs(seed, n_records=500, n_features=4, n_stats=2, n_rows=300, max_code=16,
                  stat_range=2**40):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, max_code, size=(n_features, n_records), dtype=np.uint8)
    rows = rng.choice(n_records, size=n_rows, replace=True).astype(INTP)
    stats = rng.integers(-stat_range, stat_range, size=(n_stats, n_records), dtype=np.int64)
    return codes, rows, stats


def by_row(codes):
    """``node_histogram`` reads row-major codes; the tests hold them feature-major."""
    return np.ascontiguousarray(codes.T)


def reference_histogram(codes, rows, stats, n_bins, feature_start=0, feature_stop=None):
    n_features = codes.shape[0]
    feature_stop = n_features if feature_stop is None else feature_stop
    out = np.zeros((n_features, n_bins, stats.shape[0]), dtype=np.int64)
    for f in range(feature_start, feature_stop):
        bins = np.minimum(codes[f, rows].astype(INTP), n_bins - 1)
        for k in range(stats.shape[0]):
            np.add.at(out[f, :, k], bins, stats[k, rows])
    return out


# ======================================================================================
# node_histogram
# ======================================================================================


@pytest.mark.parametrize("n_stats", [1, 2, 3])
@pytest.mark.parametrize("seed", [0, 1])
def test_node_histogram_matches_numpy(n_stats, seed):
    codes, rows, stats = random_inputs(seed, n_stats=n_stats)
    out = np.zeros((codes.shape[0], 16, n_stats), dtype=np.int64)
    _histogram.node_histogram(by_row(codes), rows, stats, out)
    np.testing.assert_array_equal(out, reference_histogram(codes, rows, stats, 16))
    assert out.any()


def test_node_histogram_accumulates_into_out():
    codes, rows, stats = random_inputs(2)
    out = np.zeros((codes.shape[0], 16, 2), dtype=np.int64)
    _histogram.node_histogram(by_row(codes), rows, stats, out)
    _histogram.node_histogram(by_row(codes), rows, stats, out)
    np.testing.assert_array_equal(out, 2 * reference_histogram(codes, rows, stats, 16))


@pytest.mark.parametrize("n_stats", [1, 2, 3])
@pytest.mark.parametrize("start, stop", [(0, 2), (1, 3), (2, -1), (3, 4), (0, 4), (2, 2)])
def test_node_histogram_feature_range(n_stats, start, stop):
    codes, rows, stats = random_inputs(3, n_stats=n_stats)
    sentinel = 7
    out = np.full((codes.shape[0], 16, n_stats), sentinel, dtype=np.int64)
    _histogram.node_histogram(by_row(codes), rows, stats, out, start, stop)
    stop_ = codes.shape[0] if stop == -1 else stop
    expected = reference_histogram(codes, rows, stats, 16, start, stop_) + sentinel
    np.testing.assert_array_equal(out, expected)
    # features outside the range are untouched
    outside = [f for f in range(codes.shape[0]) if not start <= f < stop_]
    assert (out[outside] == sentinel).all()


def test_node_histogram_threads_split_by_features_equal_one_call():
    codes, rows, stats = random_inputs(4, n_features=7)
    whole = np.zeros((7, 16, 2), dtype=np.int64)
    _histogram.node_histogram(by_row(codes), rows, stats, whole)
    parts = np.zeros_like(whole)
    for a, b in [(0, 3), (3, 5), (5, 7)]:
        _histogram.node_histogram(by_row(codes), rows, stats, parts, a, b)
    np.testing.assert_array_equal(parts, whole)


@pytest.mark.parametrize("n_stats", [1, 2, 3])
def test_node_histogram_clamps_codes_into_the_last_bin(n_stats):
    # codes up to 255 into 5 bins: everything >= 4 counts in bin 4, nothing out of bounds
    codes, rows, stats = random_inputs(5, n_stats=n_stats, max_code=256)
    codes[0, rows[:10]] = 255
    out = np.zeros((codes.shape[0], 5, n_stats), dtype=np.int64)
    _histogram.node_histogram(by_row(codes), rows, stats, out)
    np.testing.assert_array_equal(out, reference_histogram(codes, rows, stats, 5))
    # one bin: everything in it
    one = np.zeros((codes.shape[0], 1, n_stats), dtype=np.int64)
    _histogram.node_histogram(by_row(codes), rows, stats, one)
    np.testing.assert_array_equal(one[:, 0, :], np.tile(stats[:, rows].sum(axis=1), (4, 1)))


def test_node_histogram_empty_rows_is_a_no_op():
    codes, _, stats = random_inputs(6)
    out = np.zeros((codes.shape[0], 16, 2), dtype=np.int64)
    _histogram.node_histogram(by_row(codes), np.empty(0, dtype=INTP), stats, out)
    assert not out.any()


@pytest.mark.parametrize("bad", [-1, 500, 10**9, -(10**9)])
def test_node_histogram_out_of_range_rows_raise(bad):
    codes, rows, stats = random_inputs(7)
    rows[-1] = bad
    out = np.zeros((codes.shape[0], 16, 2), dtype=np.int64)
    with pytest.raises(IndexError, match="row index"):
        _histogram.node_histogram(by_row(codes), rows, stats, out)
    assert not out.any()  # checked before anything is written


def test_node_histogram_wrong_shapes_raise():
    codes, rows, stats = random_inputs(8)
    p = codes.shape[0]
    codes = by_row(codes)
    ok = np.zeros((p, 16, 2), dtype=np.int64)
    bad_calls = [
        (codes, rows, stats, np.zeros((p + 1, 16, 2), dtype=np.int64)),  # n_features
        (codes, rows, stats, np.zeros((p, 16, 3), dtype=np.int64)),  # n_stats
        (codes, rows, stats, np.zeros((p, 0, 2), dtype=np.int64)),  # no bins
        (codes, rows, stats[:, :-1].copy(), ok),  # stats not one column per record
        (codes, rows, stats, ok, 0, p + 1),  # feature range
        (codes, rows, stats, ok, 3, 2),
        (codes, rows, stats, ok, -2, 2),
        (codes.astype(np.int64), rows, stats, ok),  # dtypes
        (codes, rows.astype(np.int32), stats, ok),
        (codes, rows, stats.astype(np.float64), ok),
        (codes, rows, stats, ok.astype(np.int32)),
        (codes[0], rows, stats, ok),  # dimensions
        (codes, rows, stats[0], ok),
        (codes, rows, stats, ok[0]),
    ]
    for args in bad_calls:
        with pytest.raises(ValueError):
            _histogram.node_histogram(*args)


def test_node_histogram_refuses_out_overlapping_stats():
    # the kernel reads the statistics through a restrict pointer: out must be elsewhere
    codes, rows, _ = random_inputs(9, n_records=16, n_features=2, n_stats=2, max_code=4)
    buf = np.zeros(40, dtype=np.int64)
    out, stats = buf[:16].reshape(2, 4, 2), buf[8:].reshape(2, 16)
    with pytest.raises(ValueError, match="share memory"):
        _histogram.node_histogram(by_row(codes), rows % 16, stats, out)


# ======================================================================================
# partition
# ======================================================================================


@pytest.mark.parametrize("threshold", [-1, 0, 5, 7, 15, 255])
@pytest.mark.parametrize("feature", [0, 3])
def test_partition_is_stable_and_matches_numpy(feature, threshold):
    codes, rows, _ = random_inputs(9)
    before = rows.copy()
    n_left = _histogram.partition(codes, rows, feature, threshold)
    goes_left = codes[feature, before] <= threshold
    expected = np.concatenate([before[goes_left], before[~goes_left]])  # stable
    assert n_left == goes_left.sum()
    np.testing.assert_array_equal(rows, expected)


def test_partition_of_a_slice_leaves_the_rest_untouched():
    codes, rows, _ = random_inputs(10)
    before = rows.copy()
    n_left = _histogram.partition(codes, rows[100:200], 1, 6)
    np.testing.assert_array_equal(rows[:100], before[:100])
    np.testing.assert_array_equal(rows[200:], before[200:])
    seg = before[100:200]
    goes_left = codes[1, seg] <= 6
    assert n_left == goes_left.sum()
    np.testing.assert_array_equal(rows[100:200],
                                  np.concatenate([seg[goes_left], seg[~goes_left]]))


def test_partition_empty_rows():
    codes, _, _ = random_inputs(11)
    assert _histogram.partition(codes, np.empty(0, dtype=INTP), 0, 3) == 0


@pytest.mark.parametrize("feature", [-1, 4, 100])
def test_partition_bad_feature_raises(feature):
    codes, rows, _ = random_inputs(12)
    before = rows.copy()
    with pytest.raises(ValueError, match="feature"):
        _histogram.partition(codes, rows, feature, 3)
    np.testing.assert_array_equal(rows, before)


@pytest.mark.parametrize("bad", [-1, 500])
def test_partition_out_of_range_rows_raise(bad):
    codes, rows, _ = random_inputs(13)
    rows[5] = bad
    before = rows.copy()
    with pytest.raises(IndexError, match="row index"):
        _histogram.partition(codes, rows, 0, 3)
    np.testing.assert_array_equal(rows, before)


def test_partition_rejects_read_only_and_wrong_dtype_rows():
    codes, rows, _ = random_inputs(14)
    rows.setflags(write=False)
    with pytest.raises(ValueError):
        _histogram.partition(codes, rows, 0, 3)
    with pytest.raises(ValueError):
        _histogram.partition(codes, rows.astype(np.int32), 0, 3)


# ======================================================================================
# segment_sums
# ======================================================================================


@pytest.mark.parametrize("n_stats", [1, 2, 3])
def test_segment_sums_match_numpy(n_stats):
    codes, rows, stats = random_inputs(15, n_stats=n_stats)
    starts = np.array([0, 0, 17, 17, 150, 299, 300], dtype=INTP)  # empty segments too
    out = np.full((len(starts) - 1, n_stats), 99, dtype=np.int64)
    _histogram.segment_sums(rows, stats, starts, out)
    for j in range(len(starts) - 1):
        seg = rows[starts[j]:starts[j + 1]]
        np.testing.assert_array_equal(out[j], stats[:, seg].sum(axis=1))
    assert (out[[0, 2]] == 0).all()  # empty segments are overwritten with 0


def test_segment_sums_no_segments():
    _, rows, stats = random_inputs(16)
    out = np.empty((0, 2), dtype=np.int64)
    _histogram.segment_sums(rows, stats, np.zeros(1, dtype=INTP), out)


@pytest.mark.parametrize("starts", [
    [1, 100, 300],  # does not start at 0
    [0, 100, 299],  # does not end at len(rows)
    [0, 100, 301],  # past the end
    [0, 200, 100, 300],  # decreasing
    [0, -5, 300],  # negative
    [0, 300],  # wrong number of entries for out
])
def test_segment_sums_bad_starts_raise(starts):
    _, rows, stats = random_inputs(17)
    n_segments = 3 if len(starts) == 4 else 2
    out = np.zeros((n_segments, 2), dtype=np.int64)
    with pytest.raises(ValueError, match="starts"):
        _histogram.segment_sums(rows, stats, np.array(starts, dtype=INTP), out)


def test_segment_sums_bad_rows_and_shapes_raise():
    _, rows, stats = random_inputs(18)
    starts = np.array([0, 100, 300], dtype=INTP)
    with pytest.raises(ValueError, match="n_stats"):  # out has the wrong number of stats
        _histogram.segment_sums(rows, stats, starts, np.zeros((2, 3), dtype=np.int64))
    rows[3] = 500
    with pytest.raises(IndexError, match="row index"):
        _histogram.segment_sums(rows, stats, starts, np.zeros((2, 2), dtype=np.int64))


# ======================================================================================
# add_leaf_values
# ======================================================================================


def random_tree(seed, depth, n_features, n_bins=16):
    """A full tree in heap order (children of i: 2i+1, 2i+2), as boosting builds them."""
    rng = np.random.default_rng(seed)
    n_internal = 2**depth - 1
    n_nodes = 2 * n_internal + 1
    feature = np.full(n_nodes, -1, dtype=np.int32)
    bin_threshold = np.full(n_nodes, -1, dtype=np.int32)
    feature[:n_internal] = rng.integers(n_features, size=n_internal)
    bin_threshold[:n_internal] = rng.integers(n_bins - 1, size=n_internal)
    left = np.full(n_nodes, -1, dtype=np.int32)
    right = np.full(n_nodes, -1, dtype=np.int32)
    internal = np.arange(n_internal)
    left[internal], right[internal] = 2 * internal + 1, 2 * internal + 2
    value = np.zeros(n_nodes)
    value[n_internal:] = rng.normal(size=n_internal + 1)
    depth_arr = np.floor(np.log2(np.arange(n_nodes) + 1)).astype(np.int32)
    return Tree(feature=feature, bin_threshold=bin_threshold,
                threshold=np.full(n_nodes, np.nan), left=left, right=right, depth=depth_arr,
                value=value, noisy_count=np.full(n_nodes, np.nan))


def add_leaf_values(codes, tree, scale, raw):
    _histogram.add_leaf_values(codes, tree.feature, tree.bin_threshold, tree.left,
                               tree.right, tree.value, scale, raw)


@pytest.mark.parametrize("depth", [1, 3, 6])
def test_add_leaf_values_matches_tree_predict(depth):
    rng = np.random.default_rng(depth)
    codes = rng.integers(0, 16, size=(400, 5), dtype=np.uint8)
    tree = random_tree(depth, depth, 5)
    raw = rng.normal(size=400)
    expected = raw + 0.3 * tree.predict(codes)
    add_leaf_values(codes, tree, 0.3, raw)
    np.testing.assert_array_equal(raw, expected)


def test_add_leaf_values_single_leaf_tree():
    codes = np.zeros((3, 2), dtype=np.uint8)
    m1 = np.array([-1], dtype=np.int32)
    raw = np.zeros(3)
    _histogram.add_leaf_values(codes, m1, m1, m1, m1, np.array([2.0]), 0.5, raw)
    np.testing.assert_array_equal(raw, [1.0, 1.0, 1.0])


def corrupt(tree, **changes):
    arrays = {k: getattr(tree, k).copy() for k in
              ("feature", "bin_threshold", "left", "right", "value")}
    for key, (index, value) in changes.items():
        arrays[key][index] = value
    return arrays


@pytest.mark.parametrize("changes", [
    dict(left=(0, 0)),  # self loop
    dict(right=(1, 0)),  # back edge (cycle)
    dict(left=(2, 1)),  # child id before its parent
    dict(left=(0, 99)),  # past the end
    dict(right=(0, -1)),  # internal node without a right child
    dict(left=(0, -5)),
    dict(feature=(0, 5)),  # feature that does not exist
    dict(feature=(1, -1)),
])
def test_add_leaf_values_corrupt_tree_raises(changes):
    codes = np.zeros((4, 5), dtype=np.uint8)
    arrays = corrupt(random_tree(0, 2, 5), **changes)
    raw = np.zeros(4)
    with pytest.raises(ValueError, match="corrupt"):
        _histogram.add_leaf_values(codes, arrays["feature"], arrays["bin_threshold"],
                                   arrays["left"], arrays["right"], arrays["value"], 1.0, raw)
    assert not raw.any()


def test_add_leaf_values_inconsistent_arrays_raise():
    codes = np.zeros((4, 5), dtype=np.uint8)
    tree = random_tree(0, 2, 5)
    a = dict(feature=tree.feature, bin_threshold=tree.bin_threshold, left=tree.left,
             right=tree.right, value=tree.value)
    order = ["feature", "bin_threshold", "left", "right", "value"]
    for key in order:
        bad = dict(a, **{key: a[key][:-1].copy()})
        with pytest.raises(ValueError, match="inconsistent"):
            _histogram.add_leaf_values(codes, *[bad[k] for k in order], 1.0, np.zeros(4))
    empty = {k: a[k][:0].copy() for k in order}
    with pytest.raises(ValueError, match="inconsistent"):
        _histogram.add_leaf_values(codes, *[empty[k] for k in order], 1.0, np.zeros(4))
    with pytest.raises(ValueError, match="raw"):
        _histogram.add_leaf_values(codes, *[a[k] for k in order], 1.0, np.zeros(3))


# ======================================================================================
# Fixed-point exactness
# ======================================================================================


def test_histograms_and_sums_do_not_depend_on_row_order():
    # Large int64 statistics (as the fixed-point gradients are): any float accumulation
    # would round differently for different orders; int64 sums are exact.
    codes, rows, stats = random_inputs(19, n_records=5000, n_rows=5000, stat_range=2**50)
    rows = np.arange(5000, dtype=INTP)
    out = np.zeros((codes.shape[0], 16, 2), dtype=np.int64)
    _histogram.node_histogram(by_row(codes), rows, stats, out)
    sums = np.zeros((1, 2), dtype=np.int64)
    _histogram.segment_sums(rows, stats, np.array([0, 5000], dtype=INTP), sums)
    rng = np.random.default_rng(0)
    for _ in range(3):
        perm = rng.permutation(rows)
        out_p = np.zeros_like(out)
        _histogram.node_histogram(by_row(codes), perm, stats, out_p)
        np.testing.assert_array_equal(out_p, out)
        sums_p = np.zeros_like(sums)
        _histogram.segment_sums(perm, stats, np.array([0, 5000], dtype=INTP), sums_p)
        np.testing.assert_array_equal(sums_p, sums)
    # exact: equal to Python's arbitrary-precision integer sums
    assert sums[0, 0] == sum(int(v) for v in stats[0])
    assert out[2, 3, 1] == sum(int(stats[1, i]) for i in range(5000) if codes[2, i] == 3)


def test_adding_one_record_moves_the_histogram_by_exactly_its_statistics():
    codes, _, stats = random_inputs(20, n_records=1000, stat_range=2**50)
    rows = np.arange(999, dtype=INTP)
    base = np.zeros((codes.shape[0], 16, 2), dtype=np.int64)
    _histogram.node_histogram(by_row(codes), rows, stats, base)
    more = np.zeros_like(base)
    _histogram.node_histogram(by_row(codes), np.arange(1000, dtype=INTP), stats, more)
    diff = more - base
    for f in range(codes.shape[0]):
        expected = np.zeros((16, 2), dtype=np.int64)
        expected[codes[f, 999]] = stats[:, 999]
        np.testing.assert_array_equal(diff[f], expected)
