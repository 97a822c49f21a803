"""Smoke test of ``experiments/reproduce_dpada.py`` (DP AdaBoost on Adult, Zhang et al.).

Runs the module's ``--quick`` mode once and checks the structure of its results and
printed report, never the paper's figures. Skips where the module or the shared Adult
data are absent (e.g. tests run from a wheel's test sources).
"""

import dataclasses

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
    try:
        module.load_adult()
    except FileNotFoundError as exc:  # pragma: no cover - depends on the data folder
        pytest.skip(f"Adult data not found: {exc}")
    return module


@pytest.fixture(scope="module")
def dpada(uci):
    return import_experiment("reproduce_dpada")


@pytest.fixture(scope="module")
def quick(dpada, tmp_path_factory):
    out = tmp_path_factory.mktemp("dpada")
    return dpada.main(["--quick", "--json", str(out / "quick.json"), "--plot", str(out)]), out


def test_quick_results_structure(dpada, quick):
    results, out = quick
    assert results["repeats"] == 1 and results["budgets"] == [1.0] and results["rounds"] == [5]
    assert set(results["schedules"]) == set(dpada.SCHEDULES)
    for s in dpada.SCHEDULES:
        acc = results["dp"][s][5][1.0]
        assert 0.0 <= acc <= 1.0
        assert 0 <= results["noisy_rounds"][s][5] <= 4  # rounds 2..5 at most
    assert results["noisy_rounds"]["every"][5] == 4 and results["noisy_rounds"]["swing"][5] == 2
    assert results["noisy_rounds"]["improved"][5] <= 2
    assert 0.8 < results["non_private"][5] <= 1.0  # scikit-learn AdaBoost, stumps
    assert 0.7 < results["majority_test"] < 0.8
    assert (out / "quick.json").is_file()


def test_quick_report_text(dpada, quick):
    results, _ = quick
    text = dpada.format_results(results)
    assert "only graphically" in text and "the paper used 50" in text
    assert "accuracy at B = 1, m = 5: DPAda " in text and "DPAda_Improved" in text
    assert "noisy rounds (mean)" in text


def test_quick_figures(quick):
    results, out = quick
    figures = results.get("figures", [])
    if not figures:
        pytest.skip("matplotlib not installed")
    assert all((out / name).is_file() for name in ("dpada_improved.png", "dpada_m5.png"))


def test_validate_mode_reads_only_the_training_file(dpada, monkeypatch):
    # --validate re-runs the choice of max_weight; it must never touch adult.test.
    train, test = dpada._cached_data(None)
    poisoned = dataclasses.replace(test, X=np.full_like(test.X, np.nan))
    monkeypatch.setitem(dpada._CACHE, "None", (train, poisoned))
    out = dpada.main(["--validate", "--quick"])
    scores = out["validation"]
    assert len(scores) == 2 and all(0.5 < v <= 1.0 for v in scores.values())
