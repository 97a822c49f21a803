"""Smoke test of ``experiments/etr_thresholds_sweep.py`` (the DP ExtraTrees regressor's
``n_thresholds`` default, on validation rows).

Runs its ``--quick`` mode once and checks the structure and sanity of the results, never
the figures that chose the default. Skipped where the module or the shared data is absent.
"""

import pytest

from support import run_quick_sweep

# A script's quick mode (a reproduction or a benchmark): run by .ci/run after the
# default suite, with the other slow tests.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def quick():
    return run_quick_sweep("etr_thresholds_sweep")


def test_quick_mode_compares_both_settings_on_validation_rows(quick):
    assert quick["quick"] is True and quick["n_folds"] == 1 and quick["n_seeds"] == 2
    assert set(quick["datasets"]) == {"california_housing", "wine_quality"}
    for result in quick["datasets"].values():
        assert result["mean_mae"] > 0
        assert len(result["cells"]) == 2 * len(quick["epsilons"])  # shared and partition
        for cell in result["cells"].values():
            assert set(cell["mae"]) == {"1", "auto"}
            assert cell["n"] == 2 and 0 <= cell["auto_wins"] <= 2
            assert cell["diff"] == pytest.approx(cell["mae"]["auto"] - cell["mae"]["1"])
            assert all(v > 0 for v in cell["mae_values"]["auto"] + cell["mae_values"]["1"])
