"""Smoke tests of ``experiments/guided_splits_sweep.py``,
``experiments/selected_splits_sweep.py`` (the rules of gradient boosting's ``split="auto"``
and ``select_depth="auto"``, on validation rows; the second also on UCI Mushroom and
Nursery, and with ``--deeper`` on the levels below the root) and
``experiments/boosting_defaults_sweep.py`` (the regressor's ``noise_reg``, the gradient
clips of the classifier and the regressors, the regressor's ``n_bins``).

Runs each one's ``--quick`` mode once and checks the structure and sanity of the results,
never the figures that chose the rules. Skipped where the module or the shared data is
absent.
"""

import pytest

from support import run_quick_sweep

# A script's quick mode (a reproduction or a benchmark): run by .ci/run after the
# default suite, with the other slow tests.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def quick():
    return run_quick_sweep("guided_splits_sweep")


METRICS = {"adult": "auc", "california_housing": "mae", "mushroom": "accuracy",
           "nursery": "accuracy", "adult_age": "mae"}


def check_sweep(quick, settings, compared, datasets=("adult", "california_housing")):
    """The quick run's structure: every setting scored on every data set, per epsilon,
    with the paired difference ``compared[1] - compared[0]`` and ``eps x n``."""
    assert quick["quick"] is True and quick["test_folds"] is False
    assert quick["settings"] == settings and quick["compared"] == compared
    assert set(quick["datasets"]) == set(datasets)
    base, challenger = compared
    for name, result in quick["datasets"].items():
        metric = result["metric"]
        assert metric == METRICS[name]
        assert len(result["n_fit"]) == 1 and result["n_seeds"] == 1
        assert set(result["cells"]) == {f"{e:g}" for e in quick["epsilons"]}
        for eps, cell in result["cells"].items():
            assert cell["diff"] == pytest.approx(cell[challenger][metric]
                                                 - cell[base][metric])
            assert cell["eps_rows"] == pytest.approx(float(eps) * result["n_fit"][0])
            for setting in settings:
                value = cell[setting][metric]
                assert (0 < value < 1) if metric == "mae" else (0 < value <= 1.0)


def test_guided_quick_mode_compares_both_rules_on_validation_rows(quick):
    check_sweep(quick, ["random", "guided"], ["random", "guided"])


@pytest.fixture(scope="module")
def quick_selected():
    return run_quick_sweep("selected_splits_sweep")


def test_selected_quick_mode_compares_every_setting_on_validation_rows(quick_selected):
    check_sweep(quick_selected, ["none", "root", "guided", "guided+root"], ["none", "root"],
                ("adult", "california_housing", "mushroom", "nursery"))


@pytest.mark.parametrize("param, settings, compared, datasets", [
    ("noise_reg", ["noise_reg 3", "noise_reg 8"], ["noise_reg 3", "noise_reg 8"],
     ("california_housing", "adult_age")),
    ("gradient_clip", ["clip 1", "clip 0.5"], ["clip 1", "clip 0.5"],
     ("adult", "mushroom", "nursery")),
    ("regressor_bins", ["32 bins", "64 bins"], ["32 bins", "64 bins"],
     ("california_housing", "adult_age")),
    ("classifier_clip", ["clip 0.25", "clip 0.35", "clip 0.5"], ["clip 0.5", "clip 0.35"],
     ("adult", "mushroom", "nursery")),
    ("ebm_regressor_clip", ["EBM clip 0.15", "EBM clip 0.3"],
     ["EBM clip 0.3", "EBM clip 0.15"], ("california_housing", "adult_age")),
])
def test_boosting_defaults_quick_mode(param, settings, compared, datasets):
    # The sweeps behind the boosting defaults (noise_reg, the gradient clips, n_bins)
    quick = run_quick_sweep("boosting_defaults_sweep", ["--quick", "--param", param])
    check_sweep(quick, settings, compared, datasets)


def test_regressor_clip_quick_mode_prints_rmse_beside_mae():
    # The sweep behind the regressor's gradient_clip: five clips, two compared
    quick = run_quick_sweep("boosting_defaults_sweep", ["--quick", "--param",
                                                        "regressor_clip"])
    settings = ["clip 0.1", "clip 0.15", "clip 0.2", "clip 0.3", "clip 0.5"]
    check_sweep(quick, settings, ["clip 0.3", "clip 0.2"],
                ("california_housing", "adult_age"))
    for res in quick["datasets"].values():
        for cell in res["cells"].values():
            for setting in settings:
                assert cell[setting]["rmse"] >= cell[setting]["mae"] > 0


def test_selected_deeper_quick_mode_compares_the_levels_below_the_root():
    # The sweep behind select_depth="auto"'s second threshold, and its stop at two levels
    quick = run_quick_sweep("selected_splits_sweep", ["--quick", "--deeper", "--models",
                                                      "california_housing", "adult_age"])
    check_sweep(quick, ["root", "two levels", "three levels"], ["root", "two levels"],
                ("california_housing", "adult_age"))
