"""Smoke test of ``benchmarks/bench_scale.py`` (out-of-core DP tree and boosting, Dask).

Runs the script's quick mode (200,000 rows on disk, 5 rounds, Dask on 100,000 rows with
1 and 2 worker processes) and checks the structure of its figures and that the Dask fits
on 1 and 2 workers are the same model; never timings. Skipped where the source tree's
scripts are absent.
"""

import math

import pytest

from support import BENCHMARKS, load_script

# A script's quick mode (a reproduction or a benchmark): run by .ci/run after the
# default suite, with the other slow tests.
pytestmark = pytest.mark.slow

SCRIPT = BENCHMARKS / "bench_scale.py"


@pytest.fixture(scope="module")
def bench_scale():
    return load_script(SCRIPT, "_dptrees_bench_scale")


def test_quick_run_reports_every_figure(bench_scale, tmp_path, capsys):
    pytest.importorskip("distributed")
    figures = bench_scale.main(["--quick", "--dir", str(tmp_path)])
    out = capsys.readouterr().out
    for split in ("random", "private", "tree"):
        assert figures[f"out_of_core_{split}_seconds"] > 0
        assert 0 < figures[f"out_of_core_{split}_peak_rss_anon_gib"] < 4
        assert math.isfinite(figures[f"in_memory_{split}_seconds_scaled"])
    assert figures["dask_same_model"] is True and figures["dask_tree_same_model"] is True
    assert figures["dask_speedup"] > 0 and figures["dask_tree_speedup"] > 0
    assert "boosting, private" in out and "DP tree" in out and "speed-up" in out
    assert list(tmp_path.iterdir()) == []  # the data files are removed


def test_out_of_core_fit_equals_the_in_memory_fit(bench_scale, tmp_path):
    figures = bench_scale.main(["--rows", "20000", "--rounds", "3", "--skip-dask",
                                "--block-rows", "3000", "--in-memory-rows", "20000",
                                "--dir", str(tmp_path)])
    assert figures["out_of_core_equals_in_memory"] is True
    partial = bench_scale.main(["--rows", "20000", "--rounds", "2", "--skip-dask",
                                "--dir", str(tmp_path)])
    assert partial["out_of_core_equals_in_memory"] is None  # a tenth: nothing to compare


def test_written_data_is_the_same_in_blocks(bench_scale, tmp_path):
    X, y = bench_scale.write_data(str(tmp_path), 2_500_001 // 1000, 4, seed=3)
    assert X.dtype == "float32" and X.shape == (2_500, 4) and set(y.tolist()) <= {0, 1}
    assert 0 <= X.min() and X.max() <= 1
