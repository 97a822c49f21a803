"""Smoke test of ``experiments/sbdt_levers.py`` (S-BDT's levers in dptrees' boosting).

Runs the ``--quick`` mode once (4,000 Adult rows, eps 0.1, 1 seed, two configs) and checks
the structure of its results, never their figures. Skipped where the shared UCI data is
absent.
"""

import math

import pytest

from support import import_uci_experiment

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def script():
    return import_uci_experiment("sbdt_levers")


def test_quick_mode(script, tmp_path, capsys):
    out = tmp_path / "levers.json"
    results = script.main(["--quick", "--models", "defaults", "shape", "--json", str(out)])
    assert out.exists()
    assert results["quick"] is True and results["n_fit"] == script.QUICK_ROWS
    assert results["epsilons"] == list(script.QUICK_EPSILONS)
    assert set(results["cells"]) == {"defaults", "shape"}
    for by_eps in results["cells"].values():
        cell = by_eps[script.QUICK_EPSILONS[0]]
        assert 0.5 <= cell["auc"] <= 1 and 0 <= cell["accuracy"] <= 1
        assert len(cell["aucs"]) == 1 and math.isfinite(cell["seconds"])
    printed = capsys.readouterr().out
    assert "S-BDT" in printed and "[" in printed  # the anchor and the differences


def test_unknown_config_is_refused(script):
    with pytest.raises(SystemExit):
        script.main(["--quick", "--models", "no such config"])
