"""Smoke test of the plain benchmark script ``benchmarks/bench_trees.py``.

Only the structure of the results is checked, never timings or memory figures: the
targets are reported by the script itself on large data, and asserting them in a test
would make it flaky. The script lives in the source tree, not in the installed package;
the test is skipped where it is absent (e.g. tests run from a wheel's test sources).
"""

import json
import math

import pytest

from support import BENCHMARKS, load_script

# A script's quick mode (a reproduction or a benchmark): run by .ci/run after the
# default suite, with the other slow tests.
pytestmark = pytest.mark.slow

SCRIPT = BENCHMARKS / "bench_trees.py"
KINDS = {"dp_tree", "dp_tree_threads", "sklearn_tree", "dp_forest", "sklearn_forest"}
TINY = dict(n_samples=3_000, n_features=6, repeat=1)
TINY_KW = dict(max_depth=4, n_estimators=3, n_jobs=1, n_test=500, seed=0)


@pytest.fixture(scope="module")
def bench_trees():
    return load_script(SCRIPT, "_dptrees_bench_trees")


@pytest.fixture(scope="module")
def results(bench_trees):
    return bench_trees.run(**TINY, **TINY_KW, subprocess_memory=False, profile=True)


def _positive_finite(x):
    return isinstance(x, float) and math.isfinite(x) and x > 0


def test_make_data_bounds(bench_trees):
    X, y = bench_trees.make_data(1_000, 7, seed=3)
    assert X.shape == (1_000, 7) and y.shape == (1_000,)
    lo, hi = bench_trees.FEATURE_BOUNDS
    assert X.min() >= lo and X.max() <= hi
    ylo, yhi = bench_trees.Y_BOUNDS
    assert y.min() >= ylo and y.max() <= yhi
    with pytest.raises(ValueError):
        bench_trees.make_data(10, 4)


def test_run_structure(results):
    s = results["settings"]
    assert s["n_samples"] == 3_000 and s["n_features"] == 6 and s["repeat"] == 1
    assert s["max_depth"] == 4 and s["n_estimators"] == 3 and s["n_jobs"] == 1
    assert s["x_nbytes"] == 3_000 * 6 * 8
    assert results["info"]["numpy"] and results["info"]["sklearn"]

    assert set(results["estimators"]) == KINDS
    for kind, e in results["estimators"].items():
        for key in ("fit_seconds", "predict_seconds"):
            assert _positive_finite(e[key]), (kind, key, e[key])
        assert e["fit_rows"] == 3_000 and e["extrapolated"] is False
        assert e["predict_rows"] == 500
        assert isinstance(e["r2"], float)
        assert isinstance(e["n_leaves"], int) and e["n_leaves"] >= 1
        # our fits: one warm-up + repeat; sklearn's: sklearn_repeat, no warm-up
        assert len(e["fit_times"]) == (2 if kind.startswith("dp_") else 1)

    for name in ("tree", "forest"):
        c = results["comparisons"][name]
        assert _positive_finite(c["fit_speedup"]) and _positive_finite(c["predict_speedup"])
    assert _positive_finite(results["comparisons"]["tree"]["fit_speedup_cold"])
    assert results["comparisons"]["forest"]["sklearn_extrapolated"] is False

    for kind in ("dp_tree", "dp_forest"):
        mem = results["memory"][kind]
        assert isinstance(mem["tracemalloc_peak"], int) and mem["tracemalloc_peak"] >= 0
        assert isinstance(mem["tracemalloc_x"], float)
        assert "rss_peak" not in mem  # no subprocess here

    t = results["targets"]
    assert t["large_data"] is False
    assert t["speedup"]["min"] == 20.0 and isinstance(t["speedup"]["passed"], bool)
    assert t["memory"]["max_x"] == 2.0 and isinstance(t["memory"]["passed"], bool)
    assert set(t["memory"]["values"]) == {"tracemalloc_x"}

    # The stage profile uses dptrees' private helpers: if they change it reports an
    # "error" entry instead of failing, but the total and the cProfile are always there.
    prof = results["profile"]
    assert all(_positive_finite(v) for v in prof["stages"].values())
    assert "fit (total)" in prof["stages"] and "cumulative" in prof["cprofile"]
    assert "error" in prof or "builder.build (compiled tree growth)" in prof["stages"]


def test_report(bench_trees, results):
    report = bench_trees.format_report(results)
    lines = report.splitlines()
    assert lines[-2].startswith(("PASS", "FAIL")) and lines[-1].startswith(("PASS", "FAIL"))
    assert "DecisionTreeRegressor" in report and "ExtraTreesRegressor" in report
    assert "EXTRAPOLATED" not in report
    json.dumps(results)  # JSON-serialisable


def test_subprocess_memory_and_extrapolation(bench_trees):
    res = bench_trees.run(**TINY, **TINY_KW, sklearn_forest_rows=1_000, memory=False,
                          subprocess_memory=True)
    for kind in ("dp_tree", "dp_forest"):
        mem = res["memory"][kind]
        for key in ("rss_at_start", "rss_before_fit", "rss_peak", "rss_delta", "ru_maxrss"):
            assert isinstance(mem[key], int) and mem[key] >= 0, (kind, key)
        assert mem["rss_peak_x"] > 0 and mem["rss_delta_x"] >= 0 and "rss_data_fit_x" in mem
        assert isinstance(mem["method"], str)
    assert set(res["targets"]["memory"]["values"]) == {"rss_delta_x"}
    sk = res["estimators"]["sklearn_forest"]
    assert sk["fit_rows"] == 1_000 and sk["extrapolated"] is True
    assert res["comparisons"]["forest"]["sklearn_extrapolated"] is True
    assert "EXTRAPOLATED" in bench_trees.format_report(res)


def test_main(bench_trees, capsys, tmp_path):
    out = tmp_path / "results.json"
    status = bench_trees.main([
        "--n", "2000", "--features", "5", "--repeat", "1", "--n-estimators", "2",
        "--max-depth", "3", "--n-jobs", "1", "--n-test", "200", "--no-subprocess",
        "--quiet", "--json", str(out),
    ])
    assert status == 0  # small data: verdicts are indicative, never a failing status
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[-1].startswith(("PASS", "FAIL"))
    saved = json.loads(out.read_text())
    assert set(saved["estimators"]) == KINDS
    assert saved["settings"]["n_samples"] == 2_000
