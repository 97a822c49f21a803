"""Smoke test of ``experiments/small_eps_regression.py`` (regressors and multiclass
classifiers at small epsilon beside the noisy mean and the majority class).

Runs the module's ``--quick`` mode (a subsample of the red wine, 2 epsilons, 1 seed) and
checks the structure and sanity of its results, not the issue's figures. Skipped where
the shared UCI data is absent.
"""

import math

import pytest

from support import import_experiment

# A script's quick mode: run by .ci/run after the default suite, with the other slow tests.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def script():
    uci = import_experiment("uci_datasets")
    if not uci.data_available():
        pytest.skip(f"shared UCI data not found at {uci.DATA_DIR}")
    return import_experiment("small_eps_regression")


@pytest.fixture(scope="module")
def quick(script, tmp_path_factory):
    out = tmp_path_factory.mktemp("small_eps_regression") / "quick.json"
    return script.main(["--quick", "--json", str(out)]), out


def test_quick_mode_structure(script, quick):
    results, out = quick
    assert out.exists() and results["quick"] is True and results["fallback"] is True
    assert set(results["data"]) == {"wine", "wine-classes"}
    wine, classes = results["data"]["wine"], results["data"]["wine-classes"]
    assert wine["regression"] and not classes["regression"]
    assert wine["epsilons"] == list(script.QUICK_EPSILONS)
    assert set(wine["dp"]) == {m for m in script.REGRESSORS if "federated" not in m}
    for by_eps in wine["dp"].values():
        for r in by_eps.values():
            assert math.isfinite(r["score"]) and len(r["per_seed"]) == 1
    assert 0.2 < classes["anchors"]["majority"] < 0.7
    assert results["elapsed_seconds"] < 120


def test_quick_results_fall_back_at_eps_001(quick):
    # At eps 0.01 on the wine (epsilon x n = 13) every regressor falls back to its noisy
    # mean and every multiclass boosting model to the noisy class frequencies. With one
    # seed a noisy mean can be far off (the anchor, its *expected* MAE, is about 2 on the
    # 0-10 scale here), so: within twice the anchor; the boosting classifiers within 0.1
    # of the majority class. A regressor following noise instead (targets clipped to
    # 0-10) would be well above.
    results, _ = quick
    wine, classes = results["data"]["wine"], results["data"]["wine-classes"]
    for model, by_eps in wine["dp"].items():
        assert by_eps[0.01]["score"] < 2 * wine["anchors"][0.01], model
    for model in ("DP GB", "DP EBM"):
        assert classes["dp"][model][0.01]["score"] > classes["anchors"]["majority"] - 0.1


def test_format_results_prints_the_anchors(script, quick):
    text = script.format_results(quick[0]["data"]["wine"])
    assert "noisy mean" in text and "exact training mean" in text
    assert "majority class" in script.format_results(quick[0]["data"]["wine-classes"])
