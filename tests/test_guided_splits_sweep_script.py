"""Smoke test of ``experiments/guided_splits_sweep.py`` (the rule of gradient boosting's
``split="auto"``, on validation rows).

Runs its ``--quick`` mode once and checks the structure and sanity of the results, never
the figures that chose the rule. Skipped where the module or the shared data is absent.
"""

import pytest

from support import run_quick_sweep


@pytest.fixture(scope="module")
def quick():
    return run_quick_sweep("guided_splits_sweep")


def test_quick_mode_compares_both_rules_on_validation_rows(quick):
    assert quick["quick"] is True and quick["test_folds"] is False
    assert set(quick["datasets"]) == {"adult", "california_housing"}
    for name, result in quick["datasets"].items():
        metric = result["metric"]
        assert metric == ("auc" if name == "adult" else "mae")
        assert len(result["n_fit"]) == 1 and result["n_seeds"] == 1
        assert set(result["cells"]) == {f"{e:g}" for e in quick["epsilons"]}
        for eps, cell in result["cells"].items():
            random, guided = cell["random"][metric], cell["guided"][metric]
            assert cell["diff"] == pytest.approx(guided - random)
            assert cell["eps_rows"] == pytest.approx(float(eps) * result["n_fit"][0])
            for value in (random, guided):
                assert (0.3 < value <= 1.0) if metric == "auc" else (0 < value < 1)
