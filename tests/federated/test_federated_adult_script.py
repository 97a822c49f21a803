"""Smoke test of ``experiments/federated_adult.py`` (federated DP boosting on Adult).

Runs the ``--quick`` mode (one epsilon, one seed) and checks the structure of its
results, never the figures' values beyond sanity. Skips where the module or the shared
Adult data are absent.
"""

import pytest

from support import import_uci_experiment

# A script's quick mode (a reproduction or a benchmark): run by .ci/run after the
# default suite, with the other slow tests.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def script():
    return import_uci_experiment("federated_adult")


def test_quick_mode_reports_every_model_and_the_target(script, capsys):
    results = script.main(["--quick"])
    models = {(r["model"], r["n_clients"]) for r in results["rows"]}
    assert ("HistGradientBoosting (non-private)", None) in models
    assert ("DPGradientBoosting (centralised)", None) in models
    for k in script.CLIENT_COUNTS:
        assert ("DPFederatedGradientBoosting", k) in models
    for row in results["rows"]:
        assert 0.5 < row["accuracy"] <= 1.0 and 0.5 < row["auc"] <= 1.0
    assert results["target"]["verdict"] in ("PASS", "FAIL")
    out = capsys.readouterr().out
    assert "target: 1,000 clients at epsilon 1" in out
