"""Smoke test of ``experiments/boosting_rounds_sweep.py`` (gradient boosting's ensemble
size and learning rate at small ``epsilon x n``).

Runs the ``--quick`` mode once (Mushroom's first 2,000 rows, eps 0.1, 1 seed) and checks
the structure of its results, never their figures. Skipped where the shared UCI data is
absent.
"""

import math

import numpy as np
import pandas as pd
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
        config = script.CONFIGS[name]
        if name == script.REFERENCE:  # not a DP model: nothing resolved
            assert cell["resolved"] == []
        elif "n_estimators" in config:
            assert cell["resolved"] == [(config["n_estimators"], config["learning_rate"])]
    printed = capsys.readouterr().out
    assert "[" in printed and "eps x n" in printed
    # eps x n = 200: the library's Hessian share is 0.05, so its patch at 0.05 changes
    # nothing and the share before the rule (0.2) changes the model
    values = {name: results["cells"][name][script.QUICK_EPSILONS[0]]["values"]
              for name in ("auto", "Hessian 0.05", "Hessian 0.2")}
    assert values["Hessian 0.05"] == values["auto"] != values["Hessian 0.2"]


def test_gains_over_a_chosen_baseline(script, capsys):
    results = script.main(["--quick", "--models", "Hessian 0.2", "auto",
                           "--baseline", "Hessian 0.2"])
    assert results["baseline"] == "Hessian 0.2"
    printed = capsys.readouterr().out
    assert "gain over Hessian 0.2" in printed and "+-" in printed


def test_unknown_data_set_is_refused(script):
    with pytest.raises(SystemExit):
        script.main(["--quick", "--data", "no such data"])


def test_reference_reads_a_frame_through_its_public_categories(script):
    rng = np.random.default_rng(0)
    colour = rng.choice(["red", "blue", None], 400)
    X = pd.DataFrame({"x": rng.random(400), "colour": colour})
    y = np.where(colour == "red", "yes", "no")
    public = {"bounds": {"x": (0, 1), "colour": ["red", "blue", "green", None]},
              "classes": np.array(["no", "yes"])}
    model = script.non_private_reference(X, y, public, rng)
    assert list(model.classes_) == ["no", "yes"]
    # a category of the domain never seen in the fit is still read
    new = pd.DataFrame({"x": [0.5, 0.5, 0.5], "colour": ["red", "green", None]})
    assert model.predict(new)[0] == "yes"
    assert model.predict_proba(new).shape == (3, 2)


def test_the_explainable_boosting_machine_and_its_hessian_share(script):
    results = script.main(["--quick", "--estimator", "ebm", "--models", "auto",
                           "Hessian 0.2", "Hessian 0.1"])
    assert results["estimator"] == "ebm"
    values = {name: cell[script.QUICK_EPSILONS[0]]["values"]
              for name, cell in results["cells"].items()}
    # the library's share is 0.2: patching it to 0.2 changes nothing, to 0.1 the model
    assert values["Hessian 0.2"] == values["auto"] != values["Hessian 0.1"]
    with pytest.raises(ValueError, match="takes only the configs"):
        script.main(["--quick", "--estimator", "ebm", "--models", "400 trees at lr 0.1"])
