"""Smoke tests of the UCI experiments: DiffPETs reproduction and Adult classification.

The modules live in the source tree (``experiments/``) and read the shared UCI files in
``../shared/data``; the tests skip where either is absent (e.g. tests run from a wheel's
test sources). They run the scripts' ``--quick`` modes once and check the structure of
the results and their sanity (valid accuracies and MSEs, the DP ExtraTrees above the
majority-class floor on Mushroom at eps = 1), never the paper's figures.
"""

import math
from pathlib import Path

import numpy as np
import pytest

from support import import_experiment

# A script's quick mode (a reproduction or a benchmark): run by .ci/run after the
# default suite, with the other slow tests.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def uci():
    module = import_experiment("uci_datasets")
    if not module.data_available():
        pytest.skip(f"shared UCI data not found at {module.DATA_DIR}")
    return module


@pytest.fixture(scope="module")
def diffpets(uci):
    return import_experiment("reproduce_diffpets")


@pytest.fixture(scope="module")
def adult(uci):
    return import_experiment("adult_classification")


@pytest.fixture(scope="module")
def diffpets_quick(diffpets, tmp_path_factory):
    out = tmp_path_factory.mktemp("diffpets")
    return diffpets.main(["--quick", "--json", str(out / "quick.json")]), out


@pytest.fixture(scope="module")
def adult_quick(adult):
    return adult.main(["--quick"])


def test_loaders_shapes_and_public_bounds(uci):
    expected = {"mushroom": (8124, 22, 2), "nursery": (12960, 8, 5),
                "congressional_voting": (435, 16, 2)}
    for name, (n, k, n_classes) in expected.items():
        ds = uci.load_dataset(name)
        assert ds.X.shape == (n, k) and ds.X.dtype == np.float64
        assert ds.n_original_features == k and len(ds.classes) == n_classes
        assert set(np.unique(ds.y)) <= set(ds.classes)
        lo, hi = ds.bounds
        assert np.all(ds.X >= lo) and np.all(ds.X <= hi)
        assert ds.max_categories <= 40  # n_bins=40 keeps ordinal categories apart
    for name, n in (("wine_quality", 1599), ("daily_demand_orders", 60)):
        ds = uci.load_dataset(name)
        assert ds.X.shape[0] == n and ds.y.shape == (n,)
        assert ds.y_bounds[0] <= ds.y.min() and ds.y.max() <= ds.y_bounds[1]


def test_voting_question_mark_is_a_category(uci):
    ds = uci.load_dataset("congressional_voting")
    assert all(spec == ["y", "n", "?"] for spec in ds.schema)
    onehot = uci.load_dataset("congressional_voting", encoding="onehot")
    assert onehot.X.shape == (435, 48)


def test_adult_preparation(uci):
    train, test = uci.load_adult()
    assert train.X.shape == (29170, 12) and test.X.shape == (14662, 12)
    assert "fnlwgt" not in train.feature_names and "native-country" not in train.feature_names
    assert list(train.classes) == ["<=50K", ">50K"] and set(np.unique(test.y)) == set(train.classes)
    assert ["?" in spec for spec in train.schema if isinstance(spec, list)] == [True] * 7
    assert dict(zip(train.feature_names, train.schema))["age"] == (17.0, 90.0)


def test_missing_data_is_a_clear_error(uci, tmp_path):
    with pytest.raises(FileNotFoundError, match="data_dir"):
        uci.load_dataset("mushroom", data_dir=tmp_path)


def test_diffpets_quick_structure_and_sanity(diffpets, diffpets_quick):
    results, out = diffpets_quick
    assert set(results["classification"]) == {"mushroom"}
    assert set(results["regression"]) == {"wine_quality"}
    mush = results["classification"]["mushroom"]
    assert (mush["t"], mush["h"]) == (10, 11)
    for model in diffpets.CLASS_MODELS:
        for summary in mush["results"][model].values():
            assert len(summary["values"]) == 2
            assert all(0.0 <= v <= 1.0 for v in summary["values"])
    floor = mush["results"]["majority class"]["np"]["mean"]
    assert mush["results"]["DiffPETs"][1.0]["mean"] >= floor - 0.05
    assert mush["results"]["DP-ET partition"][1.0]["mean"] >= floor - 0.05
    wine = results["regression"]["wine_quality"]
    for model in diffpets.REG_MODELS:
        for summary in wine["results"][model].values():
            assert all(math.isfinite(v) and v >= 0 for v in summary["values"])
    assert (out / "quick.json").is_file()
    text = diffpets.format_all(results)
    assert "mushroom" in text and "wine_quality" in text


def test_diffpets_plot(diffpets, diffpets_quick, tmp_path):
    pytest.importorskip("matplotlib")
    written = diffpets.plot_figures(diffpets_quick[0], tmp_path)
    assert [Path(p).name for p in written] == ["accuracy_vs_eps.png", "mse_vs_eps.png"]
    assert all(Path(p).stat().st_size > 0 for p in written)


def test_adult_quick_structure(adult, adult_quick):
    res = adult_quick
    assert res["epsilons"] == [1.0]
    assert set(res["dp"]) == set(adult.MODELS)
    for model, by_eps in res["dp"].items():
        r = by_eps[1.0]
        assert len(r["test"]["values"]) == 2
        assert all(0.0 <= v <= 1.0 for v in r["test"]["values"])
        assert 0.0 <= r["validation"] <= 1.0
    for b in res["baselines"].values():
        assert all(0.0 <= v <= 1.0 for v in b["test"]["values"])
    majority = res["baselines"]["majority class"]["test"]["mean"]
    assert abs(majority - 11139 / 14662) < 1e-12
    target = res["target"]
    assert target["epsilon"] == 1.0 and target["model"] in adult.MODELS
    assert target["test_accuracy"] >= majority - 0.02
