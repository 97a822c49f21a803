"""Smoke test of the plain benchmark script ``benchmarks/bench_samplers.py``.

Only the structure of the results is checked, never the timings: the speed target is
reported by the script itself on large arrays, and asserting timings in a test would make
it flaky. The script lives in the source tree, not in the installed package; the test is
skipped where it is absent (e.g. tests run from a wheel's test sources).
"""

import json
import math

import pytest

from support import BENCHMARKS, load_script

# A script's quick mode (a reproduction or a benchmark): run by .ci/run after the
# default suite, with the other slow tests.
pytestmark = pytest.mark.slow

SCRIPT = BENCHMARKS / "bench_samplers.py"


@pytest.fixture(scope="module")
def bench_samplers():
    return load_script(SCRIPT, "_dptrees_bench_samplers")


def _positive_finite(x):
    return isinstance(x, float) and math.isfinite(x) and x > 0


@pytest.fixture(scope="module")
def results(bench_samplers):
    return bench_samplers.run(2_000, 1, n_selections=3, seed=0)


def test_run_structure(bench_samplers, results):
    assert results["n"] == 2_000
    assert results["repeat"] == 1
    assert results["n_candidates"] == 1_000
    assert results["n_selections"] == 3
    assert results["info"]["numpy"]

    expected = {
        "numpy_laplace", "numpy_normal", "discrete_laplace", "laplace_mechanism",
        "noisy_count", "discrete_gaussian", "gaussian_mechanism",
    }
    assert set(results["samplers"]) == expected
    for name, entry in results["samplers"].items():
        for key in ("seconds", "ns_per_sample", "ratio_to_numpy_laplace",
                    "ratio_to_float_twin"):
            assert _positive_finite(entry[key]), (name, key, entry[key])
    assert results["samplers"]["numpy_laplace"]["ratio_to_numpy_laplace"] == 1.0

    assert set(results["selection"]) == {
        "numpy_float_em", "permute_and_flip", "exponential_mechanism",
    }
    for name, entry in results["selection"].items():
        for key in ("seconds", "us_per_selection", "ratio_to_float_em"):
            assert _positive_finite(entry[key]), (name, key, entry[key])

    assert set(results["ratios"]) == {"discrete_laplace", "laplace_mechanism"}
    assert all(_positive_finite(r) for r in results["ratios"].values())

    target = results["target"]
    assert target["max_ratio"] == 15.0
    assert target["large_arrays"] is False
    assert isinstance(target["passed"], bool)


def test_report_and_main(bench_samplers, results, capsys, tmp_path):
    report = bench_samplers.format_report(results)
    assert "numpy" in report
    assert report.splitlines()[-1].startswith(("PASS", "FAIL"))

    out = tmp_path / "results.json"
    # Small arrays: the verdict is indicative only and never a failing exit status.
    assert bench_samplers.main(["--quick", "--seed", "1", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.strip().splitlines()[-1].startswith(("PASS", "FAIL"))
    assert "numpy" in printed
    saved = json.loads(out.read_text())
    assert set(saved["ratios"]) == {"discrete_laplace", "laplace_mechanism"}
