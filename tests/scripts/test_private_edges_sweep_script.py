"""Smoke test of ``experiments/private_edges_sweep.py`` (private bin edges against
equal-width bins, issue 36): its ``--quick`` mode once, the structure and sanity of the
results, never the figures. Skipped where the module or the shared data is absent."""

import pytest

from support import run_quick_sweep

# A script's quick mode: run by .ci/run after the default suite, with the slow tests.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def quick():
    return run_quick_sweep("private_edges_sweep")


def test_quick_mode_scores_every_setting_on_validation_rows(quick):
    assert quick["quick"] is True and quick["test"] is False and quick["n_seeds"] == 1
    assert quick["settings"] == ["uniform", "default", "private 0.05", "private 0.1",
                                 "private 0.2"]
    assert set(quick["cells"]) == {"adult", "california_housing"}
    for name, res in quick["cells"].items():
        models = ("gb", "ebm") if name == "adult" else ("gb",)
        assert res["metric"] == ("auc" if name == "adult" else "mae")
        assert len(res["n_fit"]) == 1 and res["n_fit"][0] <= 2000
        for model in models:
            assert set(res[model]) == {"0.1", "1"}
            for cell in res[model].values():
                assert cell["uniform"]["diff"] == 0.0
                # at most 2,000 rows at eps <= 1: below gradient boosting's edges
                # threshold, so its default is the equal-width model
                assert cell["default"]["diff"] == 0.0
                for setting in quick["settings"]:
                    value = cell[setting]["mean"]
                    assert 0.0 <= value <= 1.0 if name == "adult" else 0.0 < value < 0.5
                    assert cell[setting]["diff"] == pytest.approx(
                        value - cell["uniform"]["mean"])
