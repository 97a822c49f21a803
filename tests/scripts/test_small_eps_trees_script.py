"""Smoke test of ``experiments/small_eps_trees.py`` (library defaults on Adult, small eps).

Runs the module's ``--quick`` mode once (a subsample of Adult, 2 epsilons, 1 seed) and
checks the structure and sanity of its results, never the issue's figures. Skipped where
the module or the shared UCI data is absent.
"""

import math

import pytest

from support import import_uci_experiment

# A script's quick mode (a reproduction or a benchmark): run by .ci/run after the
# default suite, with the other slow tests.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def script():
    return import_uci_experiment("small_eps_trees")


@pytest.fixture(scope="module")
def quick(script, tmp_path_factory):
    out = tmp_path_factory.mktemp("small_eps") / "quick.json"
    return script.main(["--quick", "--json", str(out)]), out


def test_quick_mode_structure(script, quick):
    results, out = quick
    assert out.exists()
    assert results["quick"] is True and results["validation"] is False
    assert results["n_train"] == script.QUICK_ROWS
    assert results["epsilons"] == list(script.QUICK_EPSILONS)
    assert set(results["dp"]) == set(script.MODELS)
    assert 0.5 < results["majority"] < 1
    for model, by_eps in results["dp"].items():
        assert set(by_eps) == set(script.QUICK_EPSILONS)
        for r in by_eps.values():
            assert 0 <= r["accuracy"] <= 1 and 0 <= r["auc"] <= 1
            assert len(r["accuracies"]) == 1 and math.isfinite(r["seconds"])
    assert results["elapsed_seconds"] < 60
    assert isinstance(results["checks"]["above_majority"], bool)


def test_quick_results_are_sane(quick):
    # The floor (never below the majority class) is checked by the full run on
    # all of adult.data with 3 seeds; on the 4,000-row subsample with one seed a fit at
    # eps 0.05 can still fall a few points below it (the depth rule reads epsilon only,
    # not the number of rows). Here: nothing collapses, and eps 1 clearly learns: a
    # ranking well above chance for every model, and above-majority accuracy for all but
    # DP AdaBoost (its 20 stumps of 4,000 rows at eps 1 stay near the majority class).
    results, _ = quick
    for model, by_eps in results["dp"].items():
        for eps, r in by_eps.items():
            assert r["accuracy"] >= results["majority"] - 0.1, (model, eps)
        assert by_eps[1.0]["auc"] > 0.7, model
        if model != "DP AdaBoost":
            assert by_eps[1.0]["accuracy"] > results["majority"] + 0.02, model


def test_format_results_prints_the_table(script, quick):
    text = script.format_results(quick[0])
    assert "Majority class" in text and "DP ExtraTrees partition" in text
    assert "Issue's figures" in text
