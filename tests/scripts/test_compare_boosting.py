"""Smoke tests of ``experiments/compare_boosting.py`` (DP gradient boosting comparison).

The module lives in the source tree (``experiments/``) and reads the shared Adult and
California Housing files; the tests skip where either is absent (e.g. tests run from a
wheel's test sources). They run the module's ``--quick`` mode once and check the
structure and sanity of the results (valid accuracies, AUCs and MAEs, one PASS/FAIL per
target), that the results do not depend on ``--jobs``, and that the California Housing
selection reads only the outer fold's training rows - never the targets' figures.
"""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from support import import_experiment


# A reproduction: its quick mode still runs every model (run by .ci/run after the suite).
pytestmark = pytest.mark.slow

@pytest.fixture(scope="module")
def compare():
    module = import_experiment("compare_boosting")
    if not Path(module.hoang.DEFAULT_DATA).is_file():
        pytest.skip(f"California Housing data not found at {module.hoang.DEFAULT_DATA}")
    if not module.adult.uci.data_available():
        pytest.skip(f"shared UCI data not found at {module.adult.uci.DATA_DIR}")
    return module


@pytest.fixture(scope="module")
def quick(compare, tmp_path_factory):
    """The script's --quick mode, run once through main()."""
    out_json = tmp_path_factory.mktemp("compare_boosting") / "quick.json"
    return compare.main(["--quick", "--jobs", "2", "--json", str(out_json)]), out_json


@pytest.fixture(scope="module")
def small_cal(compare):
    """Every 10th row of California Housing and the first two of its 10 folds."""
    X, y = compare.hoang.load_data()
    X, y = X[::10], y[::10]
    return X, y, compare.hoang.paper_folds(X.shape[0])[:2]


def _valid(x, low=0.0, high=1.0):
    return isinstance(x, float) and math.isfinite(x) and low <= x <= high


def test_quick_structure(compare, quick):
    res, _ = quick
    assert res["settings"]["eps"] == [1.0] and res["settings"]["repeats"] == 1
    assert res["settings"]["quick"] is True

    cal = res["cal"]
    assert tuple(cal["columns"]) == compare.CAL_COLUMNS
    assert cal["n_folds"] == compare.QUICK_CAL_FOLDS
    for column, cells in cal["columns"].items():
        assert list(cells) == [1.0], column
        cell = cells[1.0]
        assert _valid(cell["mean"]) and _valid(cell["std"]), column
        assert len(cell["per_fold"]) == cal["n_folds"]
    assert len(cal["chosen"][1.0]) == cal["n_folds"]
    assert set(cal["chosen"][1.0]) <= set(cal["grid"])

    ad = res["adult"]
    assert tuple(ad["columns"]) == compare.ADULT_COLUMNS
    assert ad["n_fit"] + ad["n_validation"] == ad["n_train"]
    for column, cells in ad["columns"].items():
        cell = cells[1.0]
        for metric in ("accuracy", "auc"):
            assert _valid(cell[metric]["mean"]), (column, metric)
            assert len(cell[metric]["values"]) == 1
        assert isinstance(cell["config"], str)
    assert ad["columns"]["HGB"][1.0]["config"] == "sklearn defaults"
    assert ad["columns"]["DP GB defaults"][1.0]["config"] == "defaults"
    assert ad["columns"]["DP GB selected"][1.0]["config"] in ad["grid"]
    assert ad["columns"]["DP GB searched"][1.0]["config"] == "private search of the grid"


def test_quick_targets_and_report(compare, quick, capsys):
    res, out_json = quick
    checks = res["targets"]
    # (MAE, accuracy, AUC) x (defaults, selected, searched)
    assert len(checks) == 3 * len(compare.GB_COLUMNS) == 9
    assert {(c["dataset"], c["metric"]) for c in checks} == {
        ("California Housing", "MAE"), ("Adult", "accuracy"), ("Adult", "auc")}
    for c in checks:
        assert isinstance(c["passed"], bool)
        better = c["value"] <= c["target"] if c["metric"] == "MAE" else c["value"] >= c["target"]
        assert c["passed"] == better
    assert res["timings"]["total"] > 0
    saved = json.loads(out_json.read_text())
    assert set(saved["cal"]["columns"]) == set(compare.CAL_COLUMNS)
    assert saved["targets"] == checks

    report = compare.format_targets(checks)
    assert report.startswith("Targets at epsilon = 1")
    assert sum(line.endswith(("PASS", "FAIL")) for line in report.splitlines()) == 9
    assert "0.2073" in compare.format_cal(res["cal"])


def test_results_do_not_depend_on_jobs(compare, small_cal):
    X, y, folds = small_cal
    kw = dict(epsilons=(1.0,), grid=compare.QUICK_GB_GRID, inner_folds=2, repeats=1, seed=3)
    one = compare.run_cal(X, y, folds, jobs=1, **kw)
    two = compare.run_cal(X, y, folds, jobs=2, **kw)
    assert one == two


def test_cal_selection_reads_only_the_training_rows(compare, small_cal):
    X, y, folds = small_cal
    train, test = folds[0]
    grid = compare.QUICK_GB_GRID
    best, scores = compare.select_gb_regressor(X, y, train, 1.0, grid, 2, fold=0)
    y_other = y.copy()
    y_other[test] = 1.0 - y_other[test]  # the held-out fold's targets change
    assert compare.select_gb_regressor(X, y_other, train, 1.0, grid, 2, fold=0) == (best,
                                                                                    scores)
    assert 0 <= best < len(grid) and all(np.isfinite(scores))
