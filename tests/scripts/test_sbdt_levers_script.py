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


def test_cyclic_trees_split_one_feature_each_in_turn(script):
    import numpy as np

    draw = script.cyclic_structure()
    rng = np.random.default_rng(0)
    for t in range(7):
        feature, threshold = draw(rng, 3, 32, 2)
        assert (feature[:3] == t % 3).all() and (feature[3:] == -1).all()
        assert ((0 <= threshold[:3]) & (threshold[:3] < 31)).all()


def test_paired_runs_give_every_config_the_same_seeds(script, monkeypatch):
    monkeypatch.setitem(script.CONFIGS, "defaults again", {})

    def aucs(paired):
        cells = script.run((0.1,), 1, ("defaults", "defaults again"), quick=True,
                           paired=paired, log=lambda *args: None)["cells"]
        return [cells[name][0.1]["aucs"] for name in ("defaults", "defaults again")]

    same, other = aucs(True), aucs(False)
    assert same[0] == same[1] and other[0] != other[1]
