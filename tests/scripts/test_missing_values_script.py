"""Smoke test of ``experiments/missing_values.py``: California Housing with values removed,
fitted with a missing bin, with a public-midpoint imputation and complete.

Runs the module's ``--quick`` mode (2,000 training rows, eps 1, 1 seed; the data ship with
dptrees) and checks the table's shape and sanity: every MAE in (0, 1), the complete-data
reference the same for every kind of missingness (same rows, same seed), and the two
ways of handling missing values giving different models.
"""

import pytest

from support import import_experiment

# A script's quick mode (a reproduction or a benchmark): run by .ci/run after the
# default suite, with the other slow tests.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def quick():
    return import_experiment("missing_values").main(["--quick"])


def test_the_quick_run_compares_the_three_ways(quick):
    module = import_experiment("missing_values")
    assert set(quick["dp"]) == set(module.KINDS)
    for kind, by_model in quick["dp"].items():
        assert set(by_model) == set(module.MODELS)
        for name, by_eps in by_model.items():
            assert set(by_eps) == {1.0}
            cell = by_eps[1.0]
            assert set(cell) == set(module.WAYS)
            assert all(0.0 < cell[way] < 1.0 for way in module.WAYS)
            assert cell["complete"] == quick["dp"]["random"][name][1.0]["complete"]
            assert cell["missing bin"] != cell["midpoint"]
