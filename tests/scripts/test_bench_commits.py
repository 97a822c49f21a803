"""Smoke test of ``benchmarks/bench_commits.py`` (two installed builds, same run).

The script runs as a user runs it, in ``--quick`` mode with this interpreter for both
builds (the same dptrees twice), and only the structure of its output is checked: every
workload in the table, finite ratios. Never timings: the two builds are one here, and the
machine is shared. Skipped where the source tree's scripts are absent.
"""

import json
import math
import subprocess
import sys

import pytest

from support import BENCHMARKS, load_script

# Slow, as the other scripts' quick modes: --quick starts two interpreters (about 6 s).
pytestmark = pytest.mark.slow

SCRIPT = BENCHMARKS / "bench_commits.py"


@pytest.fixture(scope="module")
def bench_commits():
    return load_script(SCRIPT, "_dptrees_bench_commits")


@pytest.fixture(scope="module")
def quick_run(bench_commits, tmp_path_factory):
    out = tmp_path_factory.mktemp("bench_commits") / "results.json"
    proc = subprocess.run(
        [sys.executable, "-P", str(SCRIPT), "--quick", "--quiet", "--json", str(out),
         "--python", f"first={sys.executable}", "--python", f"second={sys.executable}"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, json.loads(out.read_text())


def test_table_has_every_workload(bench_commits, quick_run):
    stdout, _ = quick_run
    for metric in ("CPU time", "wall time"):
        assert metric in stdout
    verdicts = ("slower", "faster", "same", "n/a")
    table_rows = [line.split()[0] for line in stdout.splitlines()
                  if line.strip() and line.split()[-1] in verdicts]
    assert sorted(table_rows) == sorted(bench_commits.ROWS * 2)  # one line per metric
    assert "first min" in stdout and "second med" in stdout


def test_ratios_finite(bench_commits, quick_run):
    _, results = quick_run
    assert results["labels"] == ["first", "second"]
    assert results["settings"]["repeat"] == 1
    assert set(results["table"]) == set(bench_commits.ROWS)
    for row, metrics in results["table"].items():
        for metric, s in metrics.items():
            for key in ("ratio_min", "ratio_median", "paired_low", "paired_high"):
                assert math.isfinite(s[key]), (row, metric, key, s[key])
            assert s["verdict"] in {"slower", "faster", "same", "n/a"}
    for label in ("first", "second"):
        build = results["builds"][label]
        assert build["interpreter"] == sys.executable
        assert build["dptrees"]["version"] and build["dptrees"]["file"]
        assert not any("PrivacyLeakWarning" in w for w in build["warnings"])


def test_summarise_verdicts(bench_commits):
    summarise = bench_commits.summarise
    same = summarise([1.0, 2.0, 1.5], [1.1, 1.9, 1.5])
    assert same["verdict"] == "same"
    assert same["ratio_min"] == pytest.approx(1.1) and same["ratio_median"] == 1.0
    assert (same["paired_low"], same["paired_high"]) == pytest.approx((0.95, 1.1))
    assert summarise([1.0] * 3, [1.2, 1.1, 1.01])["verdict"] == "slower"
    assert summarise([1.0] * 3, [0.9, 0.8, 0.99])["verdict"] == "faster"
    assert summarise([1.0, 1.0], [1.2, 1.1])["verdict"] == "n/a"  # too few rounds
    assert summarise([0.001, -0.001, 0.001], [0.002, 0.001, 0.002])["verdict"] == "n/a"


def test_command_line_errors(bench_commits):
    with pytest.raises(SystemExit):
        bench_commits.main(["--python", "only=python"])
    with pytest.raises(SystemExit):
        bench_commits.parse_args(["--python", "no-label"])
    with pytest.raises(ValueError):
        bench_commits.run([("a", "python"), ("b", "python")], rows=10, features=5,
                          max_depth=2, rounds=(3, 3), repeat=1, inner=1)
