"""Smoke test of ``experiments/boosting_rounds_sweep.py`` (gradient boosting's ensemble
size and learning rate at small ``epsilon x n``).

Runs the ``--quick`` mode once (Mushroom's first 2,000 rows, eps 0.1, 1 seed) and checks
the structure of its results, never their figures. Skipped where the shared UCI data is
absent.
"""

import math

import pytest

from support import import_uci_experiment

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def script():
    return import_uci_experiment("boosting_rounds_sweep")


def test_quick_mode(script, tmp_path, capsys):
    out = tmp_path / "rounds.json"
    results = script.main(["--quick", "--json", str(out)])
    assert out.exists()
    assert results["quick"] is True and results["dataset"] == "mushroom"
    assert results["n_fit"] == 2000 and results["metric"] == "AUC"
    assert results["epsilons"] == list(script.QUICK_EPSILONS)
    assert set(results["cells"]) == set(script.CONFIGS)
    for name, by_eps in results["cells"].items():
        cell = by_eps[script.QUICK_EPSILONS[0]]
        assert 0 <= cell["value"] <= 1 and len(cell["values"]) == 1
        assert math.isfinite(cell["seconds"])
        if name != "auto":
            assert cell["resolved"] == [tuple(script.CONFIGS[name].values())]
    printed = capsys.readouterr().out
    assert "[" in printed and "eps x n" in printed


def test_unknown_data_set_is_refused(script):
    with pytest.raises(SystemExit):
        script.main(["--quick", "--data", "no such data"])
