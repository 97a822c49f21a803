"""Private bin edges (``bin_edges="private"``, :mod:`dptrees.data.private_edges`).

* Sensitivity: adding one record changes at most one fine cell per feature, by 1, and so
  exactly one node per dyadic level; the release's noise is audited (quick settings),
  and a deliberately broken variant (the flat histogram's sensitivity stated for the
  dyadic release) is flagged.
* The edges lie on fine-cell boundaries, increase, stay within the bounds; binning
  through the lookup table agrees with the printed thresholds on every value, on an
  edge too; the missing bin stays last, categorical columns keep their categories.
* The fit (gradient boosting, the EBM, trees, forests, AdaBoost): one ledger entry,
  budget never exceeded (an explicit accountant too), the same model from an array,
  from blocks, a memmap, Parquet row groups and Dask (two worker processes, slow), bad
  parameters and an unrealisable share refused before anything is spent; no release
  without a numeric column; ``bin_edges="uniform"`` (the default) reserves nothing.
"""

import math

import numpy as np
import pytest

import dptrees as dp
from dptrees._sources import _rows
from dptrees.boosting import _cyclic, _gradient
from dptrees.audit import audit_epsilon
from dptrees.data import private_edges as PE
from dptrees.data.private_edges import EDGES_MAX_FEATURES
from dptrees.data.binning import Binner
from dptrees.privacy.release_plan import ReleasePlan

N, P = 3001, 3
LOWER, UPPER = np.array([0.0, -5.0, 0.0]), np.array([1000.0, 5.0, 4.0])


def make_data(n=N, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.exponential(1.0, n) ** 3, rng.normal(0, 1, n),
                         rng.integers(0, 5, n).astype(float)])
    y = ((X[:, 0] > 0.5) ^ (rng.random(n) < 0.1)).astype(int)
    return X, y


def counts_of(X, missing=None):
    missing = np.zeros(X.shape[1], np.uint8) if missing is None else missing
    return _rows.fine_counts(np.ascontiguousarray(X), LOWER, UPPER, PE.FINE_CELLS, missing)


# -- sensitivity -----------------------------------------------------------------------


@pytest.mark.parametrize("row", [[0.0, -5.0, 0.0], [999.99, 4.9, 4.0], [5e6, -1e9, 2.5],
                                 [0.97656, 0.0, 1.0]])
def test_adding_one_record_moves_one_cell_per_feature_by_one(row):
    X, _ = make_data()
    before = counts_of(X)
    after = counts_of(np.vstack([X, row]))
    diff = after - before
    assert diff.min() == 0 and np.all(diff.sum(axis=1) == 1)  # one cell of each, by 1
    levels = PE.dyadic_levels(after) - PE.dyadic_levels(before)
    for level in range(PE.N_LEVELS):  # exactly one node of each level, by 1
        nodes = levels[:, 2**level - 1:2**(level + 1) - 1]
        assert np.all((nodes != 0).sum(axis=1) == 1) and nodes.max() == 1


def test_a_missing_value_is_in_no_cell():
    X, _ = make_data()
    missing = np.array([1, 0, 0], np.uint8)
    before = counts_of(X, missing)
    after = counts_of(np.vstack([X, [2000.0, 0.0, 1.0]]), missing)  # above upper: missing
    assert (after - before)[0].sum() == 0 and (after - before)[1:].sum() == 2


def test_counts_of_any_split_into_blocks_add_up():
    X, _ = make_data()
    whole = counts_of(X)
    parts = sum(counts_of(X[a:a + 700]) for a in range(0, N, 700))
    np.testing.assert_array_equal(parts, whole)
    assert whole.sum() == N * P


# -- audit of the release --------------------------------------------------------------

EPSILON = 1.0
AUDIT = dict(n_calibration=2_000, n_test=6_000, alpha=1e-3)
RECORD = np.array([[3.0]])  # one feature: the added record's cell and nodes
D0 = np.zeros((0, 1))
D1 = RECORD


def _levels_mechanism(stated_cells=None):
    """Laplace release of the dyadic levels of one feature (``D0``: no record, ``D1``:
    one), as :func:`~dptrees.data.private_edges.noisy_levels` makes it; with
    ``stated_cells`` the broken variant that states that many changed values instead."""
    lower, upper = np.array([0.0]), np.array([1024.0])

    def release(X, rng):
        counts = _rows.fine_counts(np.ascontiguousarray(X, dtype=float), lower, upper,
                                   PE.FINE_CELLS, np.zeros(1, np.uint8))
        plan = ReleasePlan("laplace", EPSILON, 0.0)
        if stated_cells is None:
            return PE.noisy_levels(plan, EPSILON, counts, rng)[0]
        levels = PE.dyadic_levels(counts).astype(float).ravel()
        return plan.release(levels, 1.0, EPSILON, rng, cells=stated_cells)

    return release


def _changed_nodes():
    changed = PE.dyadic_levels(counts_one()).ravel() != 0
    return np.flatnonzero(changed)


def counts_one():
    return _rows.fine_counts(np.ascontiguousarray(RECORD), np.array([0.0]),
                             np.array([1024.0]), PE.FINE_CELLS, np.zeros(1, np.uint8))


def _statistic(outputs):
    """The sum over the record's nodes of each noisy node's move towards 1, clipped to
    [0, 1]: the Laplace privacy loss of the pair, up to scale."""
    nodes = np.asarray(outputs)[:, _changed_nodes()]
    return np.clip(nodes, 0.0, 1.0).sum(axis=1)


def test_noisy_levels_audit_within_the_claim(record_audit):
    res = audit_epsilon(_levels_mechanism(), D0, D1, statistic=_statistic, batch=False,
                        random_state=36, **AUDIT)
    record_audit(res, EPSILON).assert_within(EPSILON)


@pytest.mark.slow  # 6 s: run by .ci/run after the default suite
def test_control_flat_sensitivity_for_the_dyadic_release_is_flagged(record_audit):
    # The fine histogram alone moves by 1 in one cell; its levels move by 1 in N_LEVELS
    # nodes. Stating the former for the latter: true epsilon N_LEVELS times the claim.
    res = audit_epsilon(_levels_mechanism(stated_cells=1), D0, D1, statistic=_statistic,
                        batch=False, random_state=37, **AUDIT)
    record_audit(res, EPSILON)
    assert res.epsilon_lower_bound > 2.0
    with pytest.raises(AssertionError, match="privacy claim refuted"):
        res.assert_within(EPSILON)


# -- edges and binning -----------------------------------------------------------------


def test_consistency_of_exact_levels_gives_the_cells_back():
    X, _ = make_data()
    counts = counts_of(X)
    np.testing.assert_allclose(PE.consistent_cells(PE.dyadic_levels(counts)), counts,
                               atol=1e-6)


def test_edges_are_increasing_boundaries_and_fewer_where_mass_is_concentrated():
    cells = np.zeros((3, PE.FINE_CELLS))
    cells[0, 0] = 1000  # all in one cell: one edge after it, the other bins empty
    cells[1] = 1.0  # uniform: equal shares
    cells[2, :4] = 500  # four cells: an edge after each
    found = PE.edges_from_cells(cells, 32)
    assert found[0][0] == 1 and np.all(found[0][1:] == PE.FINE_CELLS)
    np.testing.assert_array_equal(found[1], np.arange(1, 32) * 32)
    assert list(found[2][:4]) == [1, 2, 3, 4] and np.all(found[2][4:] == PE.FINE_CELLS)
    noisy = np.random.default_rng(0).normal(0, 50, (4, PE.FINE_CELLS)) + cells[[0, 1, 2, 2]]
    for row in PE.edges_from_cells(noisy, 16):
        inner = row[row < PE.FINE_CELLS]
        assert np.all(np.diff(inner) > 0) and np.all((inner >= 1) & (inner < PE.FINE_CELLS))
    # a non-positive total keeps equal shares of the cells
    np.testing.assert_array_equal(PE.edges_from_cells(-np.ones((1, PE.FINE_CELLS)), 4)[0],
                                  [256, 512, 768])


def test_a_quantile_share_adds_an_equal_width_grid():
    """quantile_share=0.5 of 32 bins: 16 bins at the noisy quantiles and the 16
    boundaries of 17 equal-width bins, each kept once (at most 31 in all)."""
    cells = np.zeros((3, PE.FINE_CELLS))
    cells[0, 0] = 1000  # a spike: one quantile edge, and the grid over the tail
    cells[1] = 1.0  # uniform: the two grids
    cells[2, 900:] = 1.0  # the mass in the upper tail
    found = PE.edges_from_cells(cells, 32, quantile_share=0.5)
    grid = np.arange(1, 17) * PE.FINE_CELLS // 17
    inner = [row[row < PE.FINE_CELLS] for row in found]
    np.testing.assert_array_equal(inner[0], np.concatenate([[1], grid]))
    np.testing.assert_array_equal(inner[1], np.union1d(np.arange(1, 16) * 64, grid))
    assert np.all(np.isin(grid, inner[2])) and np.sum(inner[2] > 900) >= 15
    for row in inner:
        assert row.size <= 31 and np.all(np.diff(row) > 0)
    # the whole share at the quantiles is the plain rule
    np.testing.assert_array_equal(PE.edges_from_cells(cells, 32, quantile_share=1.0),
                                  PE.edges_from_cells(cells, 32))


def private_binner(missing=()):
    rng = np.random.default_rng(3)
    boundaries = np.full((P, 15), PE.FINE_CELLS, np.int64)
    boundaries[0, :6] = np.sort(rng.choice(np.arange(1, PE.FINE_CELLS), 6, replace=False))
    boundaries[1, :14] = np.sort(rng.choice(np.arange(1, PE.FINE_CELLS), 14, replace=False))
    tabled = np.array([1, 1, 0], np.uint8)
    return Binner(LOWER, UPPER, 16, missing, cells=(PE.FINE_CELLS, tabled, boundaries))


@pytest.mark.parametrize("missing", [(), (1,)])
def test_table_binning_agrees_with_printed_thresholds_on_every_value(missing):
    binner = private_binner(missing)
    X, _ = make_data()
    n_bins = binner.n_bins
    thresholds = np.array([binner.thresholds(np.full(n_bins - 1, j), np.arange(n_bins - 1))
                           for j in range(P)])
    # probe the edges themselves, one ulp below them, and the data
    for j in (0, 1):
        finite = thresholds[j][np.isfinite(thresholds[j])]
        assert np.all(np.diff(finite) > 0)
        assert np.all((finite > LOWER[j]) & (finite < UPPER[j]))
        probe = np.concatenate([finite, np.nextafter(finite, -np.inf), X[:, j],
                                [LOWER[j] - 1, UPPER[j]]])
        rows = np.repeat(LOWER[None, :], probe.size, axis=0)
        rows[:, j] = probe
        codes = binner.transform(np.ascontiguousarray(rows))[:, j]
        expected = (probe[:, None] >= thresholds[j][None, :]).sum(axis=1)
        np.testing.assert_array_equal(codes, expected)
        edges = binner.edges(j)
        assert edges[0] == LOWER[j] and edges[-1] == UPPER[j]
        assert np.all(np.diff(edges) >= 0)
    if missing:  # the missing bin stays last, its edge infinite
        rows = np.repeat(LOWER[None, :], 2, axis=0)
        rows[:, 1] = [UPPER[1] + 1, UPPER[1]]
        assert list(binner.transform(rows)[:, 1]) == [n_bins - 1, thresholds[1, :-1].size
                                                      - np.isinf(thresholds[1, :-1]).sum()]
        assert np.isinf(thresholds[1, -1])
    # the untabled feature keeps equal-width bins
    uniform = Binner(LOWER, UPPER, 16, missing)
    np.testing.assert_array_equal(binner.transform(X)[:, 2], uniform.transform(X)[:, 2])


def test_threaded_table_binning_is_the_same():
    binner = private_binner()
    X = np.ascontiguousarray(np.tile(make_data()[0], (20, 1)))
    np.testing.assert_array_equal(binner.transform(X, n_threads=2), binner.transform(X))


# -- the fit ---------------------------------------------------------------------------


SMALL = dict(n_estimators=5, max_depth=3)
ESTIMATORS = [
    lambda **k: dp.DPGradientBoostingClassifier(**SMALL, classes=[0, 1], **k),
    lambda **k: dp.DPGradientBoostingRegressor(**SMALL, y_bounds=(0, 1), **k),
    lambda **k: dp.DPExplainableBoostingClassifier(classes=[0, 1], **k),
    lambda **k: dp.DPExplainableBoostingRegressor(y_bounds=(0, 1), **k),
    lambda **k: dp.DPDecisionTreeClassifier(max_depth=3, classes=[0, 1], **k),
    lambda **k: dp.DPDecisionTreeRegressor(max_depth=3, y_bounds=(0, 1), **k),
    lambda **k: dp.DPExtraTreesClassifier(n_estimators=3, max_depth=3, classes=[0, 1], **k),
    lambda **k: dp.DPPartitionForestRegressor(n_estimators=3, max_depth=3, y_bounds=(0, 1),
                                              **k),
    lambda **k: dp.DPAdaBoostClassifier(n_estimators=4, classes=[0, 1], **k),
]
#: Those whose plan is a zCDP budget (the others are pure epsilon-DP, Laplace noise).
GAUSSIAN = ESTIMATORS[:4]


def _cost(entry):
    return entry["rho"] if entry.get("rho") is not None else entry["epsilon"]


@pytest.mark.parametrize("make", ESTIMATORS)
def test_one_ledger_entry_and_the_budget_is_never_exceeded(make):
    X, y = make_data()
    accountant = dp.BudgetAccountant(1.0, 1e-6)
    est = make(epsilon=1.0, bounds=(LOWER, UPPER), bin_edges="private", edges_budget=0.2,
               accountant=accountant, random_state=0).fit(X, y)
    entries = [e for e in est.privacy_ledger_ if e["release"].startswith("bin edges")]
    assert len(entries) == 1 and entries[0]["count"] == 1
    gaussian = entries[0]["norm"] == "L2"
    assert gaussian == (make in GAUSSIAN)
    assert entries[0]["sensitivity"] == pytest.approx(
        math.sqrt(P * PE.N_LEVELS) if gaussian else P * PE.N_LEVELS)
    assert est.epsilon_spent_ <= 1.0 and accountant.spent[0] <= 1.0
    assert est.binner_.table is not None and est.binner_.tabled.sum() == P
    # the others share what is left: the edges took 0.2 of the total (zCDP rho, or
    # epsilon: a pure-DP ledger adds up to epsilon along a record's path)
    total = sum(_cost(e) * e["count"] for e in est.privacy_ledger_)
    assert _cost(entries[0]) == pytest.approx(0.2 * total, rel=0.05)


def test_laplace_fit_spends_the_edges_epsilon_out_of_its_own():
    X, y = make_data()
    est = dp.DPGradientBoostingClassifier(n_estimators=5, noise="laplace", epsilon=1.0,
                                          delta=0.0, bounds=(LOWER, UPPER), classes=[0, 1],
                                          bin_edges="private", random_state=0).fit(X, y)
    entry = [e for e in est.privacy_ledger_ if e["release"].startswith("bin edges")][0]
    assert entry["epsilon"] == pytest.approx(0.1, rel=1e-9)
    assert entry["sensitivity"] == P * PE.N_LEVELS
    assert est.epsilon_spent_ <= 1.0


@pytest.mark.parametrize("make", ESTIMATORS[:3] + ESTIMATORS[6:])
def test_the_same_model_from_an_array_blocks_and_a_memmap(make, tmp_path):
    X, y = make_data()
    est = make(epsilon=1.0, bounds=(LOWER, UPPER), bin_edges="private", random_state=5)
    out = (lambda e: e.predict_proba(X)) if hasattr(est, "predict_proba") else (
        lambda e: e.predict(X))
    expected = out(est.fit(X, y))
    boundaries = est.binner_.boundaries.copy()
    mm = np.memmap(tmp_path / "X.f64", dtype=np.float64, mode="w+", shape=X.shape)
    mm[:] = X
    mm.flush()
    for data, n_jobs in ((dp.Blocks(X, block_rows=700), 1),
                         (dp.Blocks(X, block_rows=512), 2), (mm, 1)):
        got = est.set_params(n_jobs=n_jobs).fit(data, y)
        np.testing.assert_array_equal(got.binner_.boundaries, boundaries)
        np.testing.assert_array_equal(out(got), expected)


def test_the_same_model_from_parquet_row_groups(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    X, y = make_data()
    path = tmp_path / "X.parquet"
    pq.write_table(pa.table({f"x{j}": X[:, j] for j in range(P)}), path, row_group_size=600)
    est = ESTIMATORS[0](epsilon=1.0, bounds=(LOWER, UPPER), bin_edges="private",
                        random_state=5)
    expected = est.fit(X, y).predict_proba(X)
    got = est.fit(dp.Parquet(str(path), [f"x{j}" for j in range(P)]), y)
    np.testing.assert_array_equal(got.predict_proba(X), expected)


@pytest.mark.slow
def test_the_same_model_from_dask_on_two_worker_processes(dask_client):
    from support import dask_inputs

    X, y = make_data()
    for make in (ESTIMATORS[0], ESTIMATORS[2]):
        est = make(epsilon=1.0, bounds=(LOWER, UPPER), bin_edges="private", random_state=5)
        expected = est.fit(X, y).predict_proba(X)
        for data, labels in dask_inputs(X, y, 701):
            np.testing.assert_array_equal(est.fit(data, labels).predict_proba(X), expected)


def test_uniform_default_reserves_nothing_and_bins_as_before():
    X, y = make_data()
    est = dp.DPDecisionTreeClassifier(bounds=(LOWER, UPPER), classes=[0, 1],
                                      random_state=0).fit(X, y)
    assert est.bin_edges == "uniform" and est.binner_.table is None
    assert not any(e["release"].startswith("bin edges") for e in est.privacy_ledger_)


def _gradient_boosting(**k):
    return dp.DPGradientBoostingClassifier(n_estimators=3, classes=[0, 1], **k)


def _explainable_boosting(**k):
    return dp.DPExplainableBoostingRegressor(n_cycles=2, y_bounds=(0, 1), **k)


@pytest.mark.parametrize("make, window", [
    (_gradient_boosting, (_gradient.EDGES_EPS_ROWS, math.inf)),
    (_explainable_boosting, _cyclic.EDGES_EPS_ROWS)], ids=["gb", "ebm"])
def test_boosting_auto_edges_follow_the_noisy_count(make, window):
    """The boosting estimators' bin_edges="auto": outside their window of ``epsilon x
    noisy n`` the fit is the equal-width one bit for bit (the reserved share back to the
    model, nothing spawned); inside it, the "private" fit; the count it decides on is
    released before the edges."""
    X, y = make_data()
    n = X.shape[0]
    low, high = window

    def fit(eps, bin_edges, X=X):
        p = X.shape[1] // LOWER.size  # copies of the three columns
        return make(epsilon=eps, bounds=(np.tile(LOWER, p), np.tile(UPPER, p)),
                    bin_edges=bin_edges, random_state=0).fit(X, y)

    outside = [0.5 * low / n] + ([2.0 * high / n] if high < math.inf else [])
    for eps in outside:
        auto, uniform = fit(eps, "auto"), fit(eps, "uniform")
        assert not auto.private_edges_ and auto.binner_.table is None
        np.testing.assert_array_equal(auto._raw(X), uniform._raw(X))
        assert auto.epsilon_spent_ == uniform.epsilon_spent_
        assert auto.privacy_ledger_ == uniform.privacy_ledger_
    inside = 2.0 * low / n
    auto, private = fit(inside, "auto"), fit(inside, "private")
    assert auto.private_edges_ and private.private_edges_
    np.testing.assert_array_equal(auto._raw(X), private._raw(X))
    releases = [e["release"] for e in auto.privacy_ledger_]
    assert releases.index(next(r for r in releases if r.startswith("initial score"))) < \
        releases.index(next(r for r in releases if r.startswith("bin edges")))
    assert auto.epsilon_spent_ <= inside
    # more numeric features than EDGES_MAX_FEATURES: equal-width bins at any budget
    wide = np.tile(X, (1, EDGES_MAX_FEATURES // X.shape[1] + 1))
    assert wide.shape[1] > EDGES_MAX_FEATURES and not fit(inside, "auto", wide).private_edges_


def test_categorical_columns_keep_their_categories():
    pd = pytest.importorskip("pandas")
    X, y = make_data()
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1],
                          "c": pd.Categorical(np.array(list("xyz"))[X[:, 2].astype(int)
                                                                    % 3])})
    bounds = {"a": (0.0, 1000.0), "b": (-5.0, 5.0), "c": ["x", "y", "z"]}
    est = dp.DPExplainableBoostingClassifier(classes=[0, 1], bounds=bounds,
                                             bin_edges="private", random_state=0)
    est.fit(frame, y)
    assert list(est.binner_.tabled) == [1, 1, 0]
    assert est.bin_labels_[2][:1] and "x" in ",".join(est.bin_labels_[2])
    entry = [e for e in est.privacy_ledger_ if e["release"].startswith("bin edges")][0]
    assert entry["sensitivity"] == pytest.approx(math.sqrt(2 * PE.N_LEVELS))


def test_a_table_without_numeric_columns_releases_no_edges():
    pd = pytest.importorskip("pandas")
    X, y = make_data()
    codes = X[:, 2].astype(int) % 3
    frame = pd.DataFrame({"c": pd.Categorical(np.array(list("xyz"))[codes])})
    est = dp.DPExplainableBoostingClassifier(classes=[0, 1], bounds={"c": ["x", "y", "z"]},
                                             bin_edges="private", random_state=0)
    est.fit(frame, y)
    assert est.binner_.table is None
    assert not any(e["release"].startswith("bin edges") for e in est.privacy_ledger_)


def test_an_unrealisable_edges_budget_is_refused_before_anything_is_spent():
    X, y = make_data()
    accountant = dp.BudgetAccountant(1.0, 0.0)
    est = dp.DPDecisionTreeClassifier(epsilon=1e-9, bounds=(LOWER, UPPER), classes=[0, 1],
                                      bin_edges="private", accountant=accountant)
    with pytest.raises(ValueError, match="edges_budget"):
        est.fit(X, y)
    assert accountant.spent == (0.0, 0.0)


@pytest.mark.parametrize("params, message", [
    (dict(bin_edges="quantile"), "bin_edges"),
    (dict(bin_edges="private", edges_budget=1.0), "edges_budget"),
    (dict(bin_edges="private", edges_budget=0.0), "edges_budget"),
    (dict(bin_edges="private", edges_budget="half"), "edges_budget"),
])
@pytest.mark.parametrize("make", [ESTIMATORS[0], ESTIMATORS[2], ESTIMATORS[4],
                                  ESTIMATORS[8]])
def test_bad_parameters_are_refused_before_anything_is_spent(make, params, message):
    X, y = make_data()
    accountant = dp.BudgetAccountant(1.0, 1e-6)
    with pytest.raises(ValueError, match=message):
        make(bounds=(LOWER, UPPER), accountant=accountant, **params).fit(X, y)
    assert accountant.spent == (0.0, 0.0)
