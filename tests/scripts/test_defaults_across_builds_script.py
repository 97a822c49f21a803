"""Smoke test of ``experiments/defaults_across_builds.py`` (the default boosting
estimators of two builds, paired on the sweep data sets).

Runs its ``--quick`` mode with this interpreter as both builds: every paired difference
must then be exactly 0 (the same library, the same seeds), which checks the pairing and
the children, not the issue's figures. Skipped where the shared UCI data is absent.
"""

import sys

import pytest

from support import import_experiment

pytestmark = pytest.mark.slow


def test_one_build_against_itself_differs_by_nothing(tmp_path):
    uci = import_experiment("uci_datasets")
    if not uci.data_available():
        pytest.skip(f"shared UCI data not found at {uci.DATA_DIR}")
    script = import_experiment("defaults_across_builds")
    out = tmp_path / "quick.json"
    results = script.main(["--quick", "--quiet", "--datasets", "nursery",
                           "--python", f"a={sys.executable}",
                           "--python", f"b={sys.executable}", "--json", str(out)])
    assert out.exists()
    text = out.read_text()
    assert "nursery" in text
    cells = [c for c in _cells(results)]
    assert cells and all(c == 0.0 for c in cells)


def _cells(results):
    """Every paired difference in the results, wherever the script keeps them."""
    if isinstance(results, dict):
        for key, value in results.items():
            if key in ("diff", "gain", "difference") and isinstance(value, (int, float)):
                yield float(value)
            else:
                yield from _cells(value)
    elif isinstance(results, list):
        for value in results:
            yield from _cells(value)
