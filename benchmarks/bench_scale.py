"""Training past memory and on Dask: DP trees and gradient boosting on rows on disk.

Writes ``--rows`` x ``--features`` float32 features and uint8 labels to memmap files
(block by block, never all in memory), then:

1. **Out of core**: ``DPGradientBoostingClassifier`` (``--rounds`` rounds, depth 4, random
   and private splits) and ``DPDecisionTreeClassifier`` (depth 10, epsilon 1, greedy
   private splits: one pass over the rows per level) fitted on ``dptrees.Blocks(memmap)``:
   wall time and the peak of the process's anonymous memory (``RssAnon``, sampled every
   50 ms; the file's pages are the operating system's cache, not anonymous memory).
2. **Beside it**: the same fit in memory on a tenth of the rows (float64), its time
   scaled by 10 (``--in-memory-rows`` changes the fraction; with all rows the two
   models are compared, and must be identical), and scikit-learn's
   ``HistGradientBoostingClassifier`` on those rows (same rounds and depth, no early
   stopping) for scale.
3. **Dask**: the first ``--dask-rows`` rows as a Dask array read from the file by the
   workers, on a ``LocalCluster`` of 1 and of 2 single-threaded worker processes: wall
   times of private-split boosting and of the DP tree, their ratios, and whether the
   models on 1 and 2 workers are identical.

Usage::

    python benchmarks/bench_scale.py                     # 100M x 20 (8 GB on disk)
    python benchmarks/bench_scale.py --rows 20000000 --dir /scratch
    python benchmarks/bench_scale.py --tree-only         # the DP tree alone (Dask too)
    python benchmarks/bench_scale.py --quick             # 200,000 rows, 5 rounds (tests)
"""

import argparse
import json
import os
import shutil
import tempfile
import threading
import time

import numpy as np

from dptrees import Blocks, DPDecisionTreeClassifier, DPGradientBoostingClassifier

GENERATE_ROWS = 1_000_000


def write_data(directory, n, p, seed=0):
    """Features uniform in [0, 1] and a noisy nonlinear label, as float32 / uint8 memmaps."""
    X = np.lib.format.open_memmap(os.path.join(directory, "X.npy"), mode="w+",
                                  dtype=np.float32, shape=(n, p))
    y = np.lib.format.open_memmap(os.path.join(directory, "y.npy"), mode="w+",
                                  dtype=np.uint8, shape=(n,))
    rng = np.random.default_rng(seed)
    for a in range(0, n, GENERATE_ROWS):
        b = min(a + GENERATE_ROWS, n)
        block = rng.random((b - a, p), dtype=np.float32)
        score = (block[:, 0] + block[:, 1] * block[:, 2] - 0.8 * block[:, 3 % p]
                 + 0.3 * rng.standard_normal(b - a))
        X[a:b] = block
        y[a:b] = score > 0.45
    X.flush()
    y.flush()
    del X, y
    return (np.load(os.path.join(directory, "X.npy"), mmap_mode="r"),
            np.load(os.path.join(directory, "y.npy"), mmap_mode="r"))


class PeakAnonymousMemory:
    """Peak ``RssAnon`` of this process while the block runs (Linux; NaN elsewhere)."""

    def __enter__(self):
        self.peak = self._read()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self):
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, self._read())

    @staticmethod
    def _read():
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("RssAnon:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return float("nan")

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._read())


def boosting(split, rounds, n_jobs, n_rows, seed=0):
    """The library's defaults but for the rounds, the split rule and a delta below
    ``1 / n**1.1`` (the default 1e-6 is weak past a million records)."""
    return DPGradientBoostingClassifier(n_estimators=rounds, split=split, max_depth=4,
                                        delta=min(1e-6, n_rows**-1.1), bounds=(0.0, 1.0),
                                        classes=[0, 1], n_jobs=n_jobs, random_state=seed)


def dp_tree(seed=0):
    """The library's DP tree classifier at depth 10 (``epsilon=1``), public bounds."""
    return DPDecisionTreeClassifier(epsilon=1.0, max_depth=10, bounds=(0.0, 1.0),
                                    classes=[0, 1], random_state=seed)


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def out_of_core(X, y, rounds, n_jobs, block_rows, splits=("random", "private")):
    results = {}
    fits = {split: (lambda split=split: boosting(split, rounds, n_jobs, X.shape[0]))
            for split in splits}
    fits["tree"] = dp_tree
    for name, make in fits.items():
        with PeakAnonymousMemory() as memory:
            model, seconds = timed(lambda: make().fit(Blocks(X, block_rows=block_rows), y))
        results[name] = {"seconds": seconds, "peak_rss_anon_gib": memory.peak / 2**30,
                         "model": model}
    return results


def in_memory(X, y, rounds, n_jobs, m, splits=("random", "private")):
    """Fits on the first ``m`` rows, held as float64 (with the out-of-core fit's delta)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    Xm, ym = np.asarray(X[:m], dtype=np.float64), np.asarray(y[:m])
    results = {"rows": m}
    for split in splits:
        model, seconds = timed(lambda: boosting(split, rounds, n_jobs, X.shape[0]).fit(Xm, ym))
        results[split] = {"seconds": seconds, "model": model}
    if splits:
        _, results["sklearn_hgb_seconds"] = timed(lambda: HistGradientBoostingClassifier(
            max_iter=rounds, max_depth=4, early_stopping=False).fit(Xm, ym))
    results["tree"] = {}
    results["tree"]["model"], results["tree"]["seconds"] = timed(lambda: dp_tree().fit(Xm, ym))
    results["check_rows"] = (Xm[:100_000], ym[:100_000])
    return results


def _load_rows(path, a, b, dtype):
    return np.asarray(np.load(path, mmap_mode="r")[a:b], dtype=dtype)


def dask_speedup(directory, n, p, rounds, chunk_rows, names=("private", "tree")):
    """Times of the same fits (private-split boosting, the DP tree) on 1 and 2
    single-threaded worker processes: ``{name: {1: .., 2: .., "speedup": ..}}``."""
    import dask
    import dask.array as da
    from distributed import Client, LocalCluster

    starts = list(range(0, n, chunk_rows))
    x_parts, y_parts = [], []
    for a in starts:
        b = min(a + chunk_rows, n)
        x_parts.append(da.from_delayed(dask.delayed(_load_rows)(
            os.path.join(directory, "X.npy"), a, b, np.float32), (b - a, p), np.float32))
        y_parts.append(da.from_delayed(dask.delayed(_load_rows)(
            os.path.join(directory, "y.npy"), a, b, np.uint8), (b - a,), np.uint8))
    X, y = da.concatenate(x_parts), da.concatenate(y_parts)
    fits = {"private": lambda: boosting("private", rounds, 1, n), "tree": dp_tree}
    results = {name: {} for name in names}
    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster):
            for name in names:
                model, seconds = timed(lambda: fits[name]().fit(X, y))
                results[name][workers] = {"seconds": seconds, "model": model}
    for name in names:
        results[name]["speedup"] = results[name][1]["seconds"] / results[name][2]["seconds"]
    return results


def same_model(a, b, X):
    if hasattr(a, "tree_"):
        return bool(np.array_equal(a.predict_proba(X), b.predict_proba(X))
                    and np.array_equal(a.tree_.feature, b.tree_.feature))
    return bool(np.array_equal(a.decision_function(X), b.decision_function(X)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000_000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--in-memory-rows", type=int, default=None,
                        help="rows of the in-memory fit (default: a tenth)")
    parser.add_argument("--dask-rows", type=int, default=20_000_000)
    parser.add_argument("--block-rows", type=int, default=2**18)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--dir", default=None, help="where the data files go (temporary)")
    parser.add_argument("--skip-dask", action="store_true")
    parser.add_argument("--tree-only", action="store_true",
                        help="only the DP tree (no boosting, no Dask)")
    parser.add_argument("--quick", action="store_true",
                        help="200,000 rows, 5 rounds, Dask on 100,000 rows")
    parser.add_argument("--json", default=None, help="write the figures to this file")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.rounds, args.dask_rows, args.block_rows = 200_000, 5, 100_000, 30_000

    directory = tempfile.mkdtemp(prefix="dptrees-bench-scale-", dir=args.dir)
    try:
        _, write_seconds = timed(lambda: write_data(directory, args.rows, args.features))
        X, y = (np.load(os.path.join(directory, name), mmap_mode="r")
                for name in ("X.npy", "y.npy"))
        print(f"data: {args.rows:,} x {args.features} float32 on disk "
              f"({X.nbytes / 2**30:.1f} GiB, written in {write_seconds:.0f} s); "
              f"{args.rounds} rounds, depth 4, n_jobs={args.n_jobs}")
        splits = () if args.tree_only else ("random", "private")
        ooc = out_of_core(X, y, args.rounds, args.n_jobs, args.block_rows, splits)
        mem = in_memory(X, y, args.rounds, args.n_jobs,
                        args.in_memory_rows or max(args.rows // 10, 1), splits)
        check_X = mem.pop("check_rows")[0]
        scale = args.rows / mem["rows"]
        print(f"\n{'fit':<24}{'out of core':>14}{'peak RssAnon':>14}"
              f"{f'in memory x{scale:g}':>16}{'ratio':>8}")
        figures = {"rows": args.rows, "features": args.features, "rounds": args.rounds,
                   "in_memory_rows": mem["rows"]}
        for split in splits:
            scaled = mem[split]["seconds"] * args.rows / mem["rows"]
            o = ooc[split]
            print(f"{'boosting, ' + split:<24}{o['seconds']:>12.1f} s"
                  f"{o['peak_rss_anon_gib']:>10.2f} GiB"
                  f"{scaled:>14.1f} s{o['seconds'] / scaled:>8.2f}")
            figures[f"out_of_core_{split}_seconds"] = o["seconds"]
            figures[f"out_of_core_{split}_peak_rss_anon_gib"] = o["peak_rss_anon_gib"]
            figures[f"in_memory_{split}_seconds_scaled"] = scaled
        hgb = mem.get("sklearn_hgb_seconds", float("nan"))
        if splits:
            print(f"{'sklearn HGB (in memory)':<24}{'':>14}{'':>14}{scale * hgb:>14.1f} s  "
                  f"(on {mem['rows']:,} rows: {hgb:.1f} s)")
        tree, scaled = ooc["tree"], scale * mem["tree"]["seconds"]
        print(f"{'DP tree, depth 10':<24}{tree['seconds']:>12.1f} s"
              f"{tree['peak_rss_anon_gib']:>10.2f} GiB{scaled:>14.1f} s"
              f"{tree['seconds'] / scaled:>8.2f}")
        figures["sklearn_hgb_seconds_scaled"] = scale * hgb
        figures["out_of_core_tree_seconds"] = tree["seconds"]
        figures["out_of_core_tree_peak_rss_anon_gib"] = tree["peak_rss_anon_gib"]
        figures["in_memory_tree_seconds_scaled"] = scaled
        if not args.skip_dask:
            dask_rows = min(args.dask_rows, args.rows)
            names = ("tree",) if args.tree_only else ("private", "tree")
            dsk = dask_speedup(directory, dask_rows, args.features, args.rounds,
                               max(dask_rows // 16, 1), names)
            print(f"\nDask, {dask_rows:,} rows, 1 and 2 single-threaded worker processes "
                  "(target >= 1.6x):")
            figures["dask_rows"] = dask_rows
            for name in names:
                d = dsk[name]
                same = same_model(d[1]["model"], d[2]["model"], check_X)
                label = "DP tree, depth 10" if name == "tree" else "boosting, private"
                print(f"  {label:<20} 1 worker {d[1]['seconds']:.1f} s, 2 workers "
                      f"{d[2]['seconds']:.1f} s, speed-up {d['speedup']:.2f}x; "
                      f"same model on 1 and 2 workers: {same}")
                key = "dask" if name == "private" else "dask_tree"
                figures.update({f"{key}_1_worker_seconds": d[1]["seconds"],
                                f"{key}_2_workers_seconds": d[2]["seconds"],
                                f"{key}_speedup": d["speedup"], f"{key}_same_model": same})
        figures["out_of_core_equals_in_memory"] = None
        if args.rows == mem["rows"]:  # only when the in-memory fit saw every row
            figures["out_of_core_equals_in_memory"] = all(
                same_model(ooc[name]["model"], mem[name]["model"], check_X)
                for name in splits[1:] + ("tree",))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(figures, f, indent=2)
        return figures
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
