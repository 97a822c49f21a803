"""DP AdaBoost, DP cyclic boosting (DP-EBM) and DP federated boosting from every source
of rows: the same model.

Both keep per-record state with the blocks of the source (AdaBoost: each record's
weight; cyclic boosting: each record's scores and individual Renyi filter) and release
exact integer sums of the blocks' statistics, so the fitted model is the same bit for
bit from an array (on 1 or 2 threads), from a memmap read in blocks smaller than the
data (1 and 2 threads, blocks of one row), and from Dask arrays and dataframes on a
``LocalCluster`` of two worker processes. The federated clients compute their per-leaf
sums with the same kernels (checked here against a direct computation); the simulation
gathers every record's one-byte bin codes from the source, binned block by block, so a
federation read from a memmap, in blocks or from Dask fits the model it fits in memory.
"""

import numpy as np
import pytest

from dptrees import (
    Blocks,
    BudgetAccountant,
    DPAdaBoostClassifier,
    DPExplainableBoostingClassifier,
    DPExplainableBoostingRegressor,
)
from dptrees.data.binning import Binner
from dptrees.boosting._losses import MultinomialLogistic
from dptrees.boosting._trees import draw_random_structure
from dptrees.federated import _boosting as fb
from dptrees.federated import (
    DPFederatedGradientBoostingClassifier,
    DPFederatedGradientBoostingRegressor,
)
from dptrees.federated._client_rows import ClientRows

from support import dask_inputs

N, P = 3001, 5


def make_data(n=N, p=P, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, p))
    X[:, 3] = X[:, 3] > 0.7  # a sparse feature: most records in bin 0
    y_cls = np.minimum((X[:, 0] + X[:, 1]) * 1.6, 2).astype(int)
    y_reg = 3 * X[:, 0] - 2 * X[:, 2] + 0.3 * rng.normal(size=n)
    return X, {"cls": y_cls, "bin": (y_cls > 0).astype(int), "reg": y_reg}


def estimators():
    """(name, estimator, target) for each family; small budgets make the filters stop
    records and the weight schedules release noisy ranges."""
    cls = dict(bounds=(0.0, 1.0), random_state=7)
    yield ("ada-stumps", DPAdaBoostClassifier(n_estimators=6, schedule="every",
                                              classes=[0, 1, 2], **cls), "cls")
    yield ("ada-depth-3", DPAdaBoostClassifier(n_estimators=4, max_depth=3,
                                               classes=[0, 1], **cls), "bin")
    yield ("ebm-binary", DPExplainableBoostingClassifier(n_cycles=3, max_active=1,
                                                         classes=[0, 1], **cls), "bin")
    yield ("ebm-multi", DPExplainableBoostingClassifier(n_cycles=2, classes=[0, 1, 2],
                                                        **cls), "cls")
    yield ("ebm-reg", DPExplainableBoostingRegressor(n_cycles=3, y_bounds=(-3.0, 4.0),
                                                     **cls), "reg")


ESTIMATORS = list(estimators())


FEDERATED = [
    ("fed-binary-clients", DPFederatedGradientBoostingClassifier(
        n_estimators=6, classes=[0, 1], n_clients=40, bounds=(0.0, 1.0), random_state=3),
     "bin", True),
    ("fed-multi-records", DPFederatedGradientBoostingClassifier(
        n_estimators=4, max_depth=2, classes=[0, 1, 2], n_clients=N, bounds=(0.0, 1.0),
        random_state=4),
     "cls", False),
    ("fed-reg-clients", DPFederatedGradientBoostingRegressor(
        n_estimators=5, y_bounds=(-3.0, 4.0), n_clients=40, bounds=(0.0, 1.0),
        random_state=5), "reg", True),
]


def fit_federated(est, X, y, with_clients):
    clients = np.arange(len(y)) % 40 if with_clients else None
    return est.set_params(accountant=BudgetAccountant(1e9, 0.5)).fit(X, y, clients)


def fitted_model(est):
    """Every released number of the fitted model."""
    if isinstance(est, (DPFederatedGradientBoostingClassifier,
                        DPFederatedGradientBoostingRegressor)):
        return ([est.init_score_, est.n_rounds_, est.clip_norm_]
                + [(t.feature, t.threshold, t.value) for trees in est.estimators_
                   for t in trees])
    if isinstance(est, DPAdaBoostClassifier):
        return ([(t.feature, t.bin_threshold, t.noisy_totals) for t in est.learners_]
                + [est.estimator_weights_, est.weight_ranges_])
    return [est.intercept_, est.term_scores_, est.max_active_]


def assert_same_model(a, b):
    for x, y in zip(fitted_model(a), fitted_model(b), strict=True):
        if isinstance(x, tuple):
            for u, v in zip(x, y, strict=True):
                np.testing.assert_array_equal(u, v)
        else:
            np.testing.assert_array_equal(x, y)


def fit(est, X, y, epsilon, n_jobs=None):
    return est.set_params(epsilon=epsilon, n_jobs=n_jobs,
                          accountant=BudgetAccountant(1e9, 0.5)).fit(X, y)


@pytest.fixture(scope="module")
def memmap_data(tmp_path_factory):
    X, targets = make_data()
    path = tmp_path_factory.mktemp("boosted") / "X.f32"
    mm = np.memmap(path, dtype=np.float32, mode="w+", shape=X.shape)
    mm[:] = X
    mm.flush()
    return np.memmap(path, dtype=np.float32, mode="r", shape=X.shape), targets


@pytest.mark.parametrize("epsilon", [0.3, 4.0])
@pytest.mark.parametrize("name, est, target", ESTIMATORS, ids=[e[0] for e in ESTIMATORS])
def test_every_source_gives_the_bit_identical_model(memmap_data, name, est, target, epsilon):
    mm, targets = memmap_data
    X, y = np.asarray(mm, dtype=np.float64), targets[target]
    expected = fit(est, X, y, epsilon)
    assert_same_model(fit(est, X, y, epsilon, n_jobs=2), expected)  # threads in memory
    assert_same_model(fit(est, Blocks(mm, block_rows=700), y, epsilon), expected)
    assert_same_model(fit(est, mm, y, epsilon, n_jobs=2), expected)
    small = fit(est, X[:200], y[:200], epsilon)  # one row per block: a smaller problem
    assert_same_model(fit(est, Blocks(mm[:200], block_rows=1), y[:200], epsilon), small)


@pytest.mark.parametrize("name, est, target, with_clients", FEDERATED,
                         ids=[e[0] for e in FEDERATED])
def test_federated_from_every_source_gives_the_bit_identical_model(memmap_data, name, est,
                                                                   target, with_clients):
    mm, targets = memmap_data
    X, y = np.asarray(mm, dtype=np.float64), targets[target]
    expected = fit_federated(est, X, y, with_clients)
    assert_same_model(fit_federated(est, Blocks(mm, block_rows=700), y, with_clients),
                      expected)
    assert_same_model(fit_federated(est, mm, y, with_clients), expected)
    small = fit_federated(est, X[:200], y[:200], with_clients)
    assert_same_model(fit_federated(est, Blocks(mm[:200], block_rows=1), y[:200],
                                    with_clients), small)


def test_federated_from_a_memmap_never_holds_the_features_as_float64(tmp_path):
    # 100,000 x 20 float32 on disk: as float64 in memory it would take 16 MB; the fit
    # reads blocks of 10,000 rows and keeps one byte per value (twice: as read, and
    # sorted by client) and a few float64 per record: its peak stays well below the
    # features as float64
    import tracemalloc

    n, p = 100_000, 20
    mm = np.lib.format.open_memmap(tmp_path / "X.npy", mode="w+", dtype=np.float32,
                                   shape=(n, p))
    rng = np.random.default_rng(0)
    for a in range(0, n, 25_000):
        mm[a:a + 25_000] = rng.random((25_000, p), dtype=np.float32)
    y = (mm[:, 0] > 0.5).astype(int)
    est = DPFederatedGradientBoostingClassifier(
        n_estimators=2, classes=[0, 1], n_clients=1000, bounds=(0.0, 1.0), random_state=0,
        accountant=BudgetAccountant(1e9, 0.5))
    clients = np.arange(n) % 1000
    est.fit(Blocks(mm[:2000], block_rows=500), y[:2000], clients[:2000])  # imports done
    tracemalloc.start()
    try:
        est.fit(Blocks(mm, block_rows=10_000), y, clients)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.75 * n * p * 8, peak  # measured: about 0.53
    assert est.n_iter_ == 2


def test_federated_from_blocks_refuses_sample_weights_before_spending(memmap_data):
    mm, targets = memmap_data
    acc = BudgetAccountant(10.0, 1e-3)
    est = DPFederatedGradientBoostingClassifier(n_estimators=2, classes=[0, 1],
                                                bounds=(0.0, 1.0), accountant=acc)
    with pytest.raises(ValueError, match="sample_weight is supported for data in memory"):
        est.fit(mm, targets["bin"], sample_weight=np.ones(mm.shape[0]))
    assert acc.spent == (0.0, 0.0)


def test_threads_in_memory_split_the_rows_into_blocks():
    from dptrees._sources import ArraySource

    X = np.random.default_rng(0).random((200_000, 2))
    source = ArraySource(X, None, n_jobs=3)
    assert source.lengths == [66666, 66667, 66667]
    assert ArraySource(X[:1000], None, n_jobs=3).lengths == [1000]  # too few rows to split


@pytest.mark.slow
def test_dask_on_two_worker_processes_gives_the_bit_identical_model(dask_client):
    X, targets = make_data(1500)
    for name, est, target in ESTIMATORS:
        y = targets[target]
        expected = fit(est, X, y, 1.0)
        for data, labels in dask_inputs(X, y, 401):
            assert_same_model(fit(est, data, labels, 1.0), expected)
    for name, est, target, with_clients in FEDERATED:
        y = targets[target]
        expected = fit_federated(est, X, y, with_clients)
        for data, labels in dask_inputs(X, y, 401):
            assert_same_model(fit_federated(est, data, labels, with_clients), expected)


@pytest.mark.parametrize("est", [DPAdaBoostClassifier(bounds=(0, 1), classes=[0, 1, 2]),
                                 DPExplainableBoostingClassifier(bounds=(0, 1),
                                                                 classes=[0, 1, 2])],
                         ids=["ada", "ebm"])
def test_bad_blocks_raise_before_anything_is_spent(tmp_path, est):
    X, targets = make_data(500)
    X[437, 2] = np.nan
    mm = np.memmap(tmp_path / "X.f64", dtype=np.float64, mode="w+", shape=X.shape)
    mm[:] = X
    acc = BudgetAccountant(10.0, 1e-3)
    with pytest.raises(ValueError, match="NaN.*starting at row 400"):
        est.set_params(accountant=acc).fit(Blocks(mm, block_rows=100), targets["cls"])
    assert acc.spent == (0.0, 0.0)


def test_federated_client_leaf_sums_are_the_clipped_gradients_summed_by_leaf():
    # the client's vector from the engine's kernels equals a direct numpy computation
    # (up to the fixed-point grid of the per-record values)
    rng = np.random.default_rng(4)
    X, y = rng.random((300, 3)), rng.integers(0, 3, 300)
    depth, n_bins = 2, 8
    binner = Binner(np.zeros(3), np.ones(3), n_bins)
    codes = binner.transform(X)
    loss = MultinomialLogistic(3)
    est = fb.DPFederatedGradientBoostingClassifier(gradient_clip=0.4)
    fixed = est._fixed_point(loss)
    model = fb._PublicModel(3, 0.3)
    model.init_score = np.array([0.2, -0.1, 0.0])
    structures = [draw_random_structure(rng, 3, n_bins, depth) for _ in range(3)]
    # the 300 records as 3 clients (ids interleaved): each client's vector alone
    ids = np.arange(300) % 3
    rows = ClientRows(codes, y, ids, 3)
    rows.sync(model)
    every = rows.tree_updates(np.array([2, 0, 1]), structures, loss, fixed, 0.5)
    alone = [ClientRows(codes[ids == c], y[ids == c], np.zeros(100, dtype=np.intp), 1)
             for c in (2, 0, 1)]
    for i, one in enumerate(alone):
        one.sync(model)
        np.testing.assert_array_equal(one.tree_updates(np.array([0]), structures, loss,
                                                       fixed, 0.5)[0], every[i])
    one = ClientRows(codes, y, np.zeros(300, dtype=np.intp), 1)
    one.sync(model)
    got = one.tree_updates(np.array([0]), structures, loss, fixed, 0.5)[0]
    np.testing.assert_allclose(every.sum(axis=0), got, atol=1e-9)
    p = loss.proba(np.tile(model.init_score, (300, 1)))
    n_leaves = 2**depth
    for k, (feature, threshold) in enumerate(structures):
        node = np.zeros(300, dtype=int)
        for _ in range(depth):
            node = 2 * node + 1 + (codes[np.arange(300), feature[node]] > threshold[node])
        leaf = node - (n_leaves - 1)
        g = np.clip(p[:, k] - (y == k), -0.4, 0.4)
        h = np.clip(p[:, k] * (1 - p[:, k]), 0, loss.hessian_bound)
        np.testing.assert_allclose(got[k * n_leaves:(k + 1) * n_leaves],
                                   np.bincount(leaf, g, n_leaves), atol=1e-6)
        j = (3 + k) * n_leaves
        np.testing.assert_allclose(got[j:j + n_leaves], 0.5 * np.bincount(leaf, h, n_leaves),
                                   atol=1e-6)
