"""Smoke test of ``benchmarks/bench_boosting.py`` (one boosting round beside scikit-learn's).

Only the structure of the results is checked, never timings: the target is reported by
the script itself on large data. Skipped where the source tree's scripts are absent.
"""

import math

import pytest

from support import BENCHMARKS, load_script

# A script's quick mode (a reproduction or a benchmark): run by .ci/run after the
# default suite, with the other slow tests.
pytestmark = pytest.mark.slow

SCRIPT = BENCHMARKS / "bench_boosting.py"


@pytest.fixture(scope="module")
def bench_boosting():
    return load_script(SCRIPT, "_dptrees_bench_boosting")


def test_run_reports_every_mode(bench_boosting):
    results = bench_boosting.run(n=3_000, p=5, depth=3, n_bins=16, rounds=2, repeat=1,
                                 n_jobs=1)
    assert set(results) == {"sklearn", *bench_boosting.MODES}
    for name, r in results.items():
        assert r["round"] >= 0 and math.isfinite(r["round"])
        assert r["first_fit"] > 0
        if name != "sklearn":
            assert r["ratio"] >= 0
    text = bench_boosting.report(results, 3_000, 5, 3, 16, 1)
    assert "HistGradientBoostingRegressor" in text and "split='private'" in text


def test_make_data_is_friedman_with_public_bounds(bench_boosting):
    X, y = bench_boosting.make_data(2_000, 6, seed=1)
    assert X.shape == (2_000, 6) and X.min() >= 0 and X.max() <= 1
    assert y.min() >= -3 and y.max() <= 33


def test_main_quick_exits_zero(bench_boosting, capsys):
    assert bench_boosting.main(["--quick", "--rounds", "1", "--p", "5", "--depth", "2"]) == 0
    assert "indicative: small data" in capsys.readouterr().out
