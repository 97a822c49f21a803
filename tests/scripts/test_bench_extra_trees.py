"""Smoke test of the plain benchmark script ``benchmarks/bench_extra_trees.py``.

Only the structure of the results is checked, never timings: the 10x target is reported
by the script itself on large data, and asserting it in a test would make it flaky. The
script lives in the source tree, not in the installed package (and imports its sibling
``bench_trees.py``); the test is skipped where it is absent.
"""

import json
import math

import pytest

from support import BENCHMARKS, load_script

# A script's quick mode (a reproduction or a benchmark): run by .ci/run after the
# default suite, with the other slow tests.
pytestmark = pytest.mark.slow

SCRIPT = BENCHMARKS / "bench_extra_trees.py"
KINDS = {"dp_et", "dp_et_partition", "sklearn_et"}
DP_KINDS = ("dp_et", "dp_et_partition")
TINY = dict(n_samples=3_000, n_features=6, repeat=1)
TINY_KW = dict(max_depth=4, n_estimators=3, n_jobs=1, n_test=500, seed=0)


@pytest.fixture(scope="module")
def bench():
    return load_script(SCRIPT, "_dptrees_bench_extra_trees")


@pytest.fixture(scope="module")
def results(bench):
    return bench.run(**TINY, **TINY_KW, profile=True)


def _positive_finite(x):
    return isinstance(x, float) and math.isfinite(x) and x > 0


def test_make_data(bench):
    X, y, threshold = bench.make_data(2_000, 7, seed=3)
    assert X.shape == (2_000, 7) and y.shape == (2_000,)
    assert set(y.tolist()) <= {0, 1} and 0.4 < y.mean() < 0.6  # median split: balanced
    lo, hi = bench.FEATURE_BOUNDS
    assert X.min() >= lo and X.max() <= hi
    X2, y2, t2 = bench.make_data(500, 7, seed=4, threshold=threshold)
    assert t2 == threshold and X2.shape == (500, 7)


def test_run_structure(results):
    s = results["settings"]
    assert s["n_samples"] == 3_000 and s["n_features"] == 6 and s["repeat"] == 1
    assert s["max_depth"] == 4 and s["n_estimators"] == 3 and s["n_jobs"] == 1
    assert results["info"]["numpy"] and results["info"]["sklearn"]

    assert set(results["estimators"]) == KINDS
    for kind, e in results["estimators"].items():
        assert _positive_finite(e["fit_seconds"]) and _positive_finite(e["predict_seconds"])
        assert e["predict_rows"] == 500
        assert 0.0 <= e["accuracy"] <= 1.0
        assert isinstance(e["n_leaves"], int) and e["n_leaves"] >= 1
        assert isinstance(e["max_features"], int) and e["max_features"] >= 1
        # ours: one warm-up + repeat; sklearn: sklearn_repeat, no warm-up
        assert len(e["fit_times"]) == (2 if kind in DP_KINDS else 1)
    assert results["estimators"]["dp_et"]["tree_epsilon"] == pytest.approx(1.0 / 3)
    assert results["estimators"]["dp_et_partition"]["tree_epsilon"] == pytest.approx(1.0)

    t = results["targets"]
    assert t["large_data"] is False
    for kind in DP_KINDS:
        c = results["comparisons"][kind]
        for key in ("fit_speedup", "fit_speedup_cold", "predict_speedup"):
            assert _positive_finite(c[key]), (kind, key)
        assert t[kind]["min"] == 10.0 and isinstance(t[kind]["passed"], bool)
        assert t[kind]["value"] == c["fit_speedup"]

    # The stage timings use dptrees' private helpers: if they change they report an
    # "error" entry instead of failing.
    prof = results["profile"]
    assert all(_positive_finite(v) for v in prof["stages"].values())
    assert "error" in prof or "one tree: builder.build on all rows" in prof["stages"]


def test_report(bench, results):
    report = bench.format_report(results)
    lines = report.splitlines()
    assert lines[-2].startswith(("PASS", "FAIL")) and "partition=False" in lines[-2]
    assert lines[-1].startswith(("PASS", "FAIL")) and "partition=True" in lines[-1]
    assert "ExtraTreesClassifier" in report and "indicative only" in report
    json.dumps(results)  # JSON-serialisable


def test_main_quick(bench, capsys, tmp_path):
    out = tmp_path / "results.json"
    status = bench.main(["--quick", "--n-jobs", "1", "--quiet", "--json", str(out)])
    assert status == 0  # small data: verdicts are indicative, never a failing status
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[-1].startswith(("PASS", "FAIL"))
    saved = json.loads(out.read_text())
    assert set(saved["estimators"]) == KINDS
    assert saved["settings"]["n_samples"] == bench.QUICK["n_samples"]
    assert saved["profile"] is None
