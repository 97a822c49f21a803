"""Smoke and protocol tests of ``experiments/reproduce_hoang2020.py`` (Hoang & Nguyen 2020).

The module lives in the source tree and reads the shared California Housing file; the
tests are skipped where either is absent (e.g. tests run from a wheel's test sources).
They check the structure of the results, that the DP columns are valid MAEs, and that the
non-private baselines land in the paper's ranges - the check that the protocol (unshuffled
KFold(10), min-max scaling over the whole file) is the paper's. They never assert our DP
results against the paper's: the estimator deliberately differs (soundness fixes).
"""

import math
from pathlib import Path

import numpy as np
import pytest

from support import SKLEARN_VERSION, import_experiment

# A script's quick mode (a reproduction or a benchmark): run by .ci/run after the
# default suite, with the other slow tests.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def repro():
    module = import_experiment("reproduce_hoang2020")
    if not Path(module.DEFAULT_DATA).is_file():
        pytest.skip(f"California Housing data not found at {module.DEFAULT_DATA}")
    return module


@pytest.fixture(scope="module")
def data(repro):
    return repro.load_data()


@pytest.fixture(scope="module")
def quick(repro, tmp_path_factory):
    """The script's --quick mode, run once through main()."""
    out_json = tmp_path_factory.mktemp("hoang") / "quick.json"
    return repro.main(["--quick", "--n-jobs", "2", "--json", str(out_json)]), out_json


def _valid_mae(x):
    return isinstance(x, float) and math.isfinite(x) and 0.0 <= x <= 1.0


def test_load_data_is_scaled(repro, data):
    X, y = data
    assert X.shape == (20_640, 8) and y.shape == (20_640,)
    full = np.column_stack([X, y])
    np.testing.assert_allclose(full.min(axis=0), 0.0)
    np.testing.assert_allclose(full.max(axis=0), 1.0)


def test_missing_data_is_a_clear_error(repro, tmp_path):
    with pytest.raises(FileNotFoundError, match="--data"):
        repro.load_data(tmp_path / "nope.data")
    with pytest.raises(SystemExit):
        repro.main(["--quick", "--data", str(tmp_path / "nope.data")])


def test_paper_folds_are_unshuffled(repro):
    folds = repro.paper_folds(20_640)
    assert len(folds) == 10
    train, test = folds[0]
    np.testing.assert_array_equal(test, np.arange(2_064))
    assert np.all(np.diff(np.concatenate([te for _, te in folds])) == 1)


def test_quick_structure(repro, quick):
    out, out_json = quick
    assert out["settings"]["folds"] == repro.QUICK_FOLDS
    assert out["settings"]["eps"] == list(repro.QUICK_EPSILONS)
    table = out["table3"]
    assert set(table) == set(repro.COLUMNS)
    for column in repro.COLUMNS:
        assert set(table[column]) == set(repro.QUICK_EPSILONS)
        for cell in table[column].values():
            assert len(cell["per_fold"]) == repro.QUICK_FOLDS
            assert _valid_mae(cell["mean"]) and math.isfinite(cell["std"]) and cell["std"] >= 0
            assert all(_valid_mae(v) for v in cell["per_fold"])
    for column in repro.NON_PRIVATE:  # computed once, the same in every row
        cells = list(table[column].values())
        assert all(c == cells[0] for c in cells)
    comparison = out["comparison"]
    assert len(comparison) == len(repro.COLUMNS) * len(repro.QUICK_EPSILONS)
    for row in comparison:
        assert row["paper"] == repro.PAPER_TABLE3[row["eps"]][repro.COLUMNS.index(row["column"])]
        assert math.isclose(row["diff"], row["ours"] - row["paper"])
    assert {c["column"] for c in out["baseline_checks"]} == set(repro.PAPER_BASELINE_RANGES)
    assert out_json.is_file() and out_json.stat().st_size > 0


def test_quick_baselines_near_paper_ranges(repro, quick):
    # Only the first 3 of the 10 folds: the baselines shift (the sklearn tree by about
    # +0.015, the DP mean by +0.006 on these folds), so the check is loose here; the
    # 10-fold check below is exact.
    table = quick[0]["table3"]
    for column, (low, high) in repro.PAPER_BASELINE_RANGES.items():
        for cell in table[column].values():
            assert low - 0.02 <= cell["mean"] <= high + 0.02, (column, cell["mean"])


def test_full_fold_baselines_in_paper_ranges(repro, data):
    """All 10 folds at one eps: the baselines must land in the paper's ranges."""
    X, y = data
    folds = repro.paper_folds(X.shape[0])
    results = repro.evaluate_table3(X, y, (1.0,), folds, seed=0, n_jobs=2)
    checks = {c["column"]: c for c in repro.baseline_checks(
        results, exact_mean=repro.exact_mean_mae(y, folds),
        n_train=min(tr.shape[0] for tr, _ in folds))}
    assert checks["sklearn tree"]["pass_strict"]
    assert checks["sklearn forest"]["pass_strict"]
    assert checks["DP mean"]["pass"]
    # the numbers seeds.md says reproduce exactly: tree 0.1373 (0.0259), DP mean at
    # eps = 1 0.1916 (0.0309), partition forest 0.1183 (0.0185) (we get 0.1182). The fully
    # grown sklearn tree gives 0.1373 (0.0247) before scikit-learn 1.9 (1.4 to 1.8 alike).
    tree, mean, forest = (results[c][1.0] for c in ("sklearn tree", "DP mean", "sklearn forest"))
    tree_std = 0.0259 if SKLEARN_VERSION >= (1, 9) else 0.0247
    assert abs(tree["mean"] - 0.1373) < 5e-4 and abs(tree["std"] - tree_std) < 5e-4
    assert abs(mean["mean"] - 0.1916) < 5e-4 and abs(mean["std"] - 0.0309) < 5e-4
    assert abs(forest["mean"] - 0.1183) < 1e-3 and abs(forest["std"] - 0.0185) < 1e-3
    for column in repro.DP_COLUMNS:
        assert _valid_mae(results[column][1.0]["mean"])


def test_dp_cells_do_not_depend_on_other_cells(repro, data):
    """A cell's seed depends on (seed, column, eps, fold) only, not on what else runs."""
    X, y = data
    folds = repro.paper_folds(X.shape[0])[:1]
    a = repro.evaluate_table3(X, y, (1.0,), folds, seed=3, n_jobs=1)
    b = repro.evaluate_table3(X, y, (8.0, 1.0), folds, seed=3, n_jobs=2)
    for column in repro.COLUMNS:
        assert a[column][1.0]["per_fold"] == b[column][1.0]["per_fold"]


def test_extra_and_figure2_small(repro, data, tmp_path):
    X, y = data
    folds = repro.paper_folds(X.shape[0])[:2]
    configs = repro.EXTRA_CONFIGS[:1] + repro.EXTRA_CONFIGS[-1:]
    extra = repro.evaluate_extra(X, y, folds, (1.0,), configs=configs, inner_folds=2,
                                 n_jobs=2)
    assert set(extra["configs"]) == {c[0] for c in configs}
    for cells in list(extra["configs"].values()) + [extra["nested"], extra["dp_mean"]]:
        assert _valid_mae(cells[1.0]["mean"]) and len(cells[1.0]["per_fold"]) == 2
    assert all(name in extra["configs"] for name in extra["nested"][1.0]["chosen"])
    assert "nested-CV choice" in repro.format_extra(extra, configs)

    curve = repro.evaluate_trees_curve(X, y, folds, n_trees=(1, 25), n_jobs=2)
    assert set(curve) == {"DPMean_Forest", "DPMedian_Forest"}
    assert all(_valid_mae(cell["mean"]) for cells in curve.values() for cell in cells.values())

    sim = repro.simulate_paper_leaves(X, y, folds[:1], (8.0,))
    assert set(sim) == set(repro.PAPER_DP_MODELS)
    assert all(_valid_mae(cells[8.0]["mean"]) for cells in sim.values())

    pytest.importorskip("matplotlib")
    results = repro.evaluate_table3(X, y, (1.0, 8.0), folds[:1], n_jobs=2)
    paths = repro.plot_figures(results, curve, tmp_path / "figs")
    assert [p.name for p in paths] == ["figure1_mae_vs_epsilon.png", "figure2_mae_vs_trees.png"]
    assert all(p.stat().st_size > 0 for p in paths)
