#!/usr/bin/env python
"""Fit and predict cost of dptrees' DP trees and forests against scikit-learn's.

A plain script (no asv). On one synthetic data set, in the same process and run, it times

* ``DPDecisionTreeRegressor(max_depth=10)`` against scikit-learn's
  ``DecisionTreeRegressor(max_depth=10)`` (both single-threaded);
* a 100-tree ``DPPartitionForestRegressor(max_depth=10)`` against
  ``ExtraTreesRegressor(n_estimators=100, max_depth=10)``, with the same ``n_jobs``,

and measures the peak memory of our fits relative to the size of ``X`` (``X.nbytes``),
twice: with :mod:`tracemalloc` around the fit (numpy registers its buffers with it: the
peak of memory *allocated during the fit*), and in a fresh subprocess per estimator from
the kernel's resident-set high-water mark (``VmHWM``, reset just before the fit, and
``getrusage`` ``ru_maxrss``): the true process peak during the fit, above the resident
set before it (X, y, the interpreter).

Data: ``n x p`` float64 features uniform in [0, 1) and Friedman #1 targets
``10 sin(pi x0 x1) + 20 (x2 - 1/2)**2 + 10 x3 + 5 x4 + e`` with ``e`` a standard normal
clipped to [-3, 3]. The public bounds are exact: features in [0, 1], targets in [-3, 33].
Features 5 and up are noise. Predictions and R^2 are on a separate test set.

The project's targets, checked on the last lines (on 1,000,000 x 20):

    our DP tree of depth 10 fits at least 20x faster than scikit-learn's depth-10 tree
    in the same run, and the peak memory of the fit stays under 2x the size of X.

Usage::

    python benchmarks/bench_trees.py                      # 1,000,000 x 20, best of 3 (~5 min)
    python benchmarks/bench_trees.py --quick              # tiny data: smoke test only
    python benchmarks/bench_trees.py --sklearn-forest-rows 100000   # faster; the
        # ExtraTrees fit time is then extrapolated linearly to n rows and labelled so
    python benchmarks/bench_trees.py --profile --json out.json

The exit status is 1 when a target is missed on large data (n >= 1,000,000) and 0
otherwise; with smaller data the verdicts are printed but only indicative.
"""

import argparse
import cProfile
import gc
import io
import json
import math
import os
import platform
import pstats
import resource
import subprocess
import sys
import time
import tracemalloc

import numpy as np

import dptrees

TARGET_MIN_SPEEDUP = 20.0  # sklearn tree fit time / our DP tree fit time
TARGET_MAX_MEMORY = 2.0  # peak memory of our fit / X.nbytes
LARGE_N = 1_000_000  # data at least this large count as "large" for the targets

FEATURE_BOUNDS = (0.0, 1.0)
Y_BOUNDS = (-3.0, 33.0)
EPSILON = 1.0
QUICK = {"n_samples": 20_000, "n_features": 10, "repeat": 1, "n_estimators": 10}

KINDS = ("dp_tree", "dp_tree_threads", "sklearn_tree", "dp_forest", "sklearn_forest")
DESCRIPTIONS = {
    "dp_tree": "dptrees DPDecisionTreeRegressor",
    "dp_tree_threads": "dptrees DP tree, n_jobs threads",
    "sklearn_tree": "sklearn DecisionTreeRegressor",
    "dp_forest": "dptrees DPPartitionForestRegressor",
    "sklearn_forest": "sklearn ExtraTreesRegressor",
}


# -- data and estimators ------------------------------------------------------------------

def make_data(n_samples, n_features, seed=0):
    """Friedman #1 regression data with exact public bounds (see the module docstring)."""
    n_samples, n_features = int(n_samples), int(n_features)
    if n_samples < 1 or n_features < 5:
        raise ValueError("need n_samples >= 1 and n_features >= 5 (Friedman #1 uses 5)")
    rng = np.random.default_rng(seed)
    X = rng.random((n_samples, n_features))
    y = 10.0 * np.sin(np.pi * X[:, 0] * X[:, 1])
    y += 20.0 * (X[:, 2] - 0.5) ** 2
    y += 10.0 * X[:, 3]
    y += 5.0 * X[:, 4]
    y += np.clip(rng.standard_normal(n_samples), -3.0, 3.0)
    return X, y


def resolve_n_jobs(n_jobs):
    """The number of threads/processes ``n_jobs`` means on this machine (sklearn rule)."""
    cpus = os.cpu_count() or 1
    if n_jobs is None:
        return 1
    n_jobs = int(n_jobs)
    if n_jobs == 0:
        raise ValueError("n_jobs must not be 0")
    return max(1, cpus + 1 + n_jobs) if n_jobs < 0 else n_jobs


def make_estimator(kind, *, max_depth=10, n_estimators=100, n_jobs=1, seed=0):
    """A fresh, unfitted estimator of ``kind`` (one of :data:`KINDS`)."""
    common_dp = dict(
        max_depth=max_depth, bounds=FEATURE_BOUNDS, y_bounds=Y_BOUNDS, random_state=seed,
        # an unlimited ledger of our own: the process-wide default one would grow
        accountant=dptrees.BudgetAccountant(),
    )
    if kind == "dp_tree":
        return dptrees.DPDecisionTreeRegressor(epsilon=EPSILON, **common_dp)
    if kind == "dp_tree_threads":
        return dptrees.DPDecisionTreeRegressor(epsilon=EPSILON, n_jobs=n_jobs, **common_dp)
    if kind == "dp_forest":
        return dptrees.DPPartitionForestRegressor(n_estimators=n_estimators, epsilon=EPSILON,
                                                  n_jobs=n_jobs,
                                                  **common_dp)
    if kind == "sklearn_tree":
        from sklearn.tree import DecisionTreeRegressor

        return DecisionTreeRegressor(max_depth=max_depth, random_state=seed)
    if kind == "sklearn_forest":
        from sklearn.ensemble import ExtraTreesRegressor

        return ExtraTreesRegressor(n_estimators=n_estimators, max_depth=max_depth,
                                   n_jobs=n_jobs, random_state=seed)
    raise ValueError(f"unknown estimator kind {kind!r}, expected one of {KINDS}")


def _n_leaves(est):
    if hasattr(est, "get_n_leaves"):
        return int(est.get_n_leaves())
    return int(sum(t.get_n_leaves() for t in est.estimators_))


def _r2(y_true, y_pred):
    ss_res = float(np.sum((y_true - y_pred) ** 2))
    ss_tot = float(np.sum((y_true - y_true.mean()) ** 2))
    return 1.0 - ss_res / ss_tot if ss_tot > 0 else float("nan")


# -- machine ------------------------------------------------------------------------------

def machine_info():
    """Machine, Python, numpy, scikit-learn and dptrees versions."""
    import sklearn

    model = "unknown"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        model = platform.processor() or "unknown"
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": model,
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "sklearn": sklearn.__version__,
        "dptrees": getattr(dptrees, "__version__", "unknown"),
    }


# -- timing -------------------------------------------------------------------------------

def _time_fit(make, X, y, repeat, warmup):
    """Fit ``repeat`` fresh estimators (plus one untimed-for-best warm-up if ``warmup``).

    Returns (the last fitted estimator, the best time, every time in call order); the
    warm-up's time is the first entry of the list when there is one (a cold fit).
    """
    times = []
    est = None
    for _ in range(int(warmup) + max(1, int(repeat))):
        est = make()
        t0 = time.perf_counter()
        est.fit(X, y)
        times.append(time.perf_counter() - t0)
    timed = times[1:] if warmup else times
    return est, min(timed), times


def _time_predict(est, X, repeat):
    best = math.inf
    pred = None
    for _ in range(max(1, int(repeat))):
        t0 = time.perf_counter()
        pred = est.predict(X)
        best = min(best, time.perf_counter() - t0)
    return pred, best


# -- memory -------------------------------------------------------------------------------

def tracemalloc_peak(make, X, y):
    """Peak bytes allocated (numpy buffers included) during one fit, tracked by tracemalloc.

    ``X`` and ``y`` were allocated before tracing starts, so they are not counted: this
    is the fit's own peak working memory.
    """
    gc.collect()
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        est = make()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        est.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return max(0, peak - base)


def _proc_status():
    """VmRSS and VmHWM of this process in bytes (Linux), or None."""
    out = {}
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    out[key] = int(rest.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return out if len(out) == 2 else None


def _reset_peak_rss():
    """Reset the kernel's RSS high-water mark to the current RSS (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _ru_maxrss_bytes():
    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def _memory_child(kind, n_samples, n_features, max_depth, n_estimators, n_jobs, seed):
    """Run in a fresh process: build the data, fit once, report the process peak as JSON."""
    gc.collect()
    start = _proc_status()  # the interpreter and the imported modules, before any data
    X, y = make_data(n_samples, n_features, seed)
    est = make_estimator(kind, max_depth=max_depth, n_estimators=n_estimators,
                         n_jobs=n_jobs, seed=seed)
    gc.collect()
    reset = _reset_peak_rss()
    before = _proc_status()
    ru_before = _ru_maxrss_bytes()
    t0 = time.perf_counter()
    est.fit(X, y)
    seconds = time.perf_counter() - t0
    after = _proc_status()
    ru_after = _ru_maxrss_bytes()
    result = {
        "kind": kind,
        "x_nbytes": int(X.nbytes),
        "fit_seconds": seconds,
        "hwm_reset": reset and before is not None,
        "rss_at_start": start["VmRSS"] if start else None,
        "rss_before_fit": before["VmRSS"] if before else None,
        "vmhwm_after_fit": after["VmHWM"] if after else None,
        "ru_maxrss_before_fit": ru_before,
        "ru_maxrss_after_fit": ru_after,
    }
    print(json.dumps(result))


def subprocess_peak(kind, n_samples, n_features, *, max_depth, n_estimators, n_jobs, seed,
                    timeout=3600):
    """Process peak RSS of one fit of ``kind`` in a fresh interpreter, as a dict.

    Keys: ``rss_at_start`` (bytes resident before the data exist: interpreter and
    modules), ``rss_before_fit`` (just before the fit: the same plus X and y),
    ``rss_peak`` (the high-water mark during the fit: ``VmHWM`` reset before the fit
    when the kernel allows it, else ``ru_maxrss``, which then also covers the data
    generation), ``rss_delta`` (peak minus ``rss_before_fit``: what the fit added),
    ``ru_maxrss`` (``getrusage`` after the fit), ``method`` and ``fit_seconds``.
    Spawn these before allocating large arrays in the parent: on Linux a child's
    ``ru_maxrss`` starts at its parent's high-water mark.
    """
    cmd = [sys.executable, os.path.abspath(__file__), "--memory-child", kind,
           "--n", str(n_samples), "--features", str(n_features),
           "--max-depth", str(max_depth), "--n-estimators", str(n_estimators),
           "--n-jobs", str(n_jobs), "--seed", str(seed)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"memory subprocess for {kind} failed:\n{proc.stderr[-2000:]}")
    child = json.loads(proc.stdout.strip().splitlines()[-1])
    if child["hwm_reset"] and child["vmhwm_after_fit"]:
        peak, method = child["vmhwm_after_fit"], "VmHWM reset before the fit"
    else:
        peak, method = child["ru_maxrss_after_fit"], "ru_maxrss (includes data generation)"
    before = child["rss_before_fit"] or child["ru_maxrss_before_fit"]
    return {
        "rss_at_start": int(child["rss_at_start"] or 0),
        "rss_before_fit": int(before),
        "rss_peak": int(peak),
        "rss_delta": int(max(0, peak - before)),
        "ru_maxrss": int(child["ru_maxrss_after_fit"]),
        "method": method,
        "fit_seconds": float(child["fit_seconds"]),
        "x_nbytes": int(child["x_nbytes"]),
    }


# -- profile of the DP tree fit -----------------------------------------------------------

def tree_data(est, X, y):
    """What ``est.fit`` trains on (private: the rows prepared for the compiled builder)."""
    with est._training_data(X, y) as data:
        return data


def profile_tree_stages(X, y, *, max_depth=10, seed=0, repeat=3):
    """Seconds (best of ``repeat``) of each stage of ``DPDecisionTreeRegressor.fit``.

    Stages as in :class:`dptrees._tree_data.TreeData` and ``_grow``: input
    validation, feature binning (``_binning.bin_features``), target preparation, the
    compiled ``TreeBuilder.build`` and the Python assembly of the tree. Uses private
    helpers: returns the stages measured so far and ``"error"`` if they changed. Also a
    cProfile of one fit (top functions by cumulative time) under ``"cprofile"``.
    """
    stages = {}
    result = {"stages": stages}

    def best(name, fn):
        t_best = math.inf
        out = None
        for _ in range(max(1, int(repeat))):
            t0 = time.perf_counter()
            out = fn()
            t_best = min(t_best, time.perf_counter() - t0)
        stages[name] = t_best
        return out

    est = make_estimator("dp_tree", max_depth=max_depth, seed=seed)
    try:
        from dptrees._core import _binning
        from dptrees.data.domains import check_bounds, check_y_bounds
        from dptrees.validation import check_features, check_targets_regression

        Xv = best("validate X (check_features)", lambda: check_features(X))
        best("validate y + bounds", lambda: (
            check_targets_regression(y, X.shape[0]),
            check_bounds(est.bounds, Xv, n_features=X.shape[1]),
            check_y_bounds(est.y_bounds, y),
        ))
        lower = np.full(X.shape[1], FEATURE_BOUNDS[0])
        upper = np.full(X.shape[1], FEATURE_BOUNDS[1])

        def bin_only():
            codes = np.empty(Xv.shape, dtype=np.uint8)
            _binning.bin_features(Xv, lower, upper, est.n_bins, codes)
            return codes

        best("bin features (bin_features)", bin_only)
        data = best("prepared tree data (the above + targets)",
                    lambda: tree_data(est, X, y))
        # dptrees >= the "one tree engine" builder: _check_params -> epsilon,
        # _tree_budget, _builder(budget, data), build(noise_rng, candidate_rng, ...)
        budget = est._tree_budget(est._check_params())
        builder = est._builder(budget, data)

        def build_only():
            noise, cand = np.random.default_rng(seed).spawn(2)
            return builder.build(noise, cand, data.codes, data.y_fixed, data.labels)

        best("builder.build (compiled tree growth)", build_only)
        best("_grow (build + tree assembly)",
             lambda: est._grow(data, builder, np.random.default_rng(seed)))
    except Exception as exc:  # pragma: no cover - depends on dptrees' internals
        result["error"] = f"private helpers changed: {type(exc).__name__}: {exc}"
    best("fit (total)", lambda: make_estimator("dp_tree", max_depth=max_depth,
                                               seed=seed).fit(X, y))

    prof = cProfile.Profile()
    fresh = make_estimator("dp_tree", max_depth=max_depth, seed=seed)
    prof.enable()
    fresh.fit(X, y)
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(12)
    result["cprofile"] = buf.getvalue()
    return result


# -- the benchmark ------------------------------------------------------------------------

def run(n_samples=1_000_000, n_features=20, repeat=3, *, max_depth=10, n_estimators=100,
        n_jobs=-1, sklearn_repeat=1, sklearn_forest_rows=None, n_test=None,
        memory=True, subprocess_memory=True, sklearn_memory=False, profile=False,
        seed=0, verbose=False):
    """Run the benchmark and return the results as a dict.

    Parameters
    ----------
    n_samples, n_features : int
        Training data size (features >= 5).
    repeat : int
        Our fits: one warm-up fit, then the best of ``repeat``; predictions: best of
        ``repeat``.
    sklearn_repeat : int
        scikit-learn fits: best of this many, no warm-up (they take minutes at 1M rows).
    sklearn_forest_rows : int, optional
        Fit ExtraTrees on only the first this-many rows and extrapolate its fit time
        linearly to ``n_samples`` (flagged ``"extrapolated"``; its prediction time and
        R^2 are those of the smaller fit). ``None``: all rows.
    n_test : int, optional
        Rows of the separate test set for predictions; default ``min(n_samples, 200,000)``.
    memory : bool
        tracemalloc peak of one more fit of each of our estimators.
    subprocess_memory : bool
        Process peak RSS of one fit of each of our estimators in a fresh subprocess.
    sklearn_memory : bool
        Also the subprocess peak of scikit-learn's tree (slow: one more sklearn fit).
    profile : bool
        Stage timings and a cProfile of our tree's fit (:func:`profile_tree_stages`).

    Returns
    -------
    dict with keys ``info``, ``settings``, ``estimators`` (kind -> ``description``,
    ``fit_seconds`` (best), ``fit_times`` (all, in order), ``fit_rows``,
    ``extrapolated``, ``predict_seconds``, ``predict_rows``, ``r2``, ``n_leaves``),
    ``comparisons`` (``tree`` and ``forest`` -> ``fit_speedup``, ``predict_speedup``:
    sklearn's time over ours; ``fit_speedup_cold`` for the tree: sklearn over our
    first, cold fit), ``memory`` (kind -> ``tracemalloc_peak``, ``tracemalloc_x`` and,
    with subprocesses, ``rss_*`` in bytes and ``rss_delta_x``, ``rss_data_fit_x``,
    ``rss_peak_x``: multiples of ``x_nbytes``), ``targets`` (``speedup`` and ``memory`` -> threshold, value(s),
    ``passed``; ``large_data``) and ``profile`` (or None).
    """
    n_samples, n_features = int(n_samples), int(n_features)
    repeat = max(1, int(repeat))
    n_jobs_resolved = resolve_n_jobs(n_jobs)
    n_test = int(n_test) if n_test is not None else min(n_samples, 200_000)
    forest_rows = n_samples
    if sklearn_forest_rows is not None:
        forest_rows = max(1, min(n_samples, int(sklearn_forest_rows)))

    def log(msg):
        if verbose:
            print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    settings = {
        "n_samples": n_samples, "n_features": n_features, "repeat": repeat,
        "sklearn_repeat": max(1, int(sklearn_repeat)), "max_depth": int(max_depth),
        "n_estimators": int(n_estimators), "n_jobs": n_jobs_resolved, "n_test": n_test,
        "sklearn_forest_rows": forest_rows, "epsilon": EPSILON, "seed": seed,
        "x_nbytes": n_samples * n_features * 8,
    }
    est_kw = dict(max_depth=max_depth, n_estimators=n_estimators, n_jobs=n_jobs_resolved,
                  seed=seed)

    memory_results = {kind: {} for kind in ("dp_tree", "dp_forest")}
    # Subprocesses first, while this process is still small (see subprocess_peak).
    if subprocess_memory:
        kinds = ["dp_tree", "dp_forest"] + (["sklearn_tree"] if sklearn_memory else [])
        for kind in kinds:
            log(f"memory subprocess: {kind}")
            sub = subprocess_peak(kind, n_samples, n_features, **est_kw)
            x_nbytes = sub["x_nbytes"]
            entry = memory_results.setdefault(kind, {})
            entry.update({k: sub[k] for k in ("rss_at_start", "rss_before_fit", "rss_peak",
                                                "rss_delta", "ru_maxrss", "method")})
            entry["rss_delta_x"] = sub["rss_delta"] / x_nbytes
            entry["rss_peak_x"] = sub["rss_peak"] / x_nbytes
            # the peak without the interpreter's own footprint: X, y and the fit
            entry["rss_data_fit_x"] = (sub["rss_peak"] - sub["rss_at_start"]) / x_nbytes

    log("generating data")
    X, y = make_data(n_samples, n_features, seed)
    X_test, y_test = make_data(n_test, n_features, seed + 1)
    settings["x_nbytes"] = int(X.nbytes)

    estimators = {}

    def record(kind, est, fit_best, fit_times, fit_rows, extrapolated, X_pred, y_pred_true):
        pred, pred_seconds = _time_predict(est, X_pred, repeat)
        estimators[kind] = {
            "description": DESCRIPTIONS[kind],
            "fit_seconds": fit_best,
            "fit_times": fit_times,
            "fit_rows": fit_rows,
            "extrapolated": extrapolated,
            "predict_seconds": pred_seconds,
            "predict_rows": int(X_pred.shape[0]),
            "r2": _r2(y_pred_true, pred),
            "n_leaves": _n_leaves(est),
        }

    for kind in KINDS:
        ours = kind.startswith("dp_")
        Xf, yf, rows = X, y, n_samples
        if kind == "sklearn_forest" and forest_rows < n_samples:
            Xf, yf, rows = X[:forest_rows], y[:forest_rows], forest_rows
        log(f"timing {kind} on {rows:,} rows")
        est, fit_best, fit_times = _time_fit(
            lambda: make_estimator(kind, **est_kw), Xf, yf,
            repeat if ours else settings["sklearn_repeat"], warmup=ours)
        extrapolated = rows < n_samples
        if extrapolated:
            fit_best *= n_samples / rows
        record(kind, est, fit_best, fit_times, rows, extrapolated, X_test, y_test)
        del est
        gc.collect()

    if memory:
        for kind in ("dp_tree", "dp_forest"):
            log(f"tracemalloc: {kind}")
            peak = tracemalloc_peak(lambda: make_estimator(kind, **est_kw), X, y)
            memory_results[kind]["tracemalloc_peak"] = int(peak)
            memory_results[kind]["tracemalloc_x"] = peak / X.nbytes

    prof = None
    if profile:
        log("profiling the DP tree fit")
        prof = profile_tree_stages(X, y, max_depth=max_depth, seed=seed, repeat=repeat)

    def ratio(a, b):
        return a / b if b > 0 else float("inf")

    tree_ours, tree_sk = estimators["dp_tree"], estimators["sklearn_tree"]
    forest_ours, forest_sk = estimators["dp_forest"], estimators["sklearn_forest"]
    comparisons = {
        "tree": {
            "fit_speedup": ratio(tree_sk["fit_seconds"], tree_ours["fit_seconds"]),
            "fit_speedup_cold": ratio(tree_sk["fit_seconds"], tree_ours["fit_times"][0]),
            "predict_speedup": ratio(tree_sk["predict_seconds"], tree_ours["predict_seconds"]),
            # the same tree on n_jobs threads (sklearn's tree has no threads)
            "fit_speedup_threads": ratio(tree_sk["fit_seconds"],
                                         estimators["dp_tree_threads"]["fit_seconds"]),
            "threads_over_one": ratio(tree_ours["fit_seconds"],
                                      estimators["dp_tree_threads"]["fit_seconds"]),
        },
        "forest": {
            "fit_speedup": ratio(forest_sk["fit_seconds"], forest_ours["fit_seconds"]),
            "predict_speedup": ratio(forest_sk["predict_seconds"],
                                     forest_ours["predict_seconds"]),
            "sklearn_extrapolated": forest_sk["extrapolated"],
        },
    }

    tree_mem = memory_results["dp_tree"]
    mem_values = {k: tree_mem[k] for k in ("tracemalloc_x", "rss_delta_x") if k in tree_mem}
    targets = {
        "large_data": n_samples >= LARGE_N,
        "speedup": {
            "min": TARGET_MIN_SPEEDUP,
            "value": comparisons["tree"]["fit_speedup"],
            "passed": bool(comparisons["tree"]["fit_speedup"] >= TARGET_MIN_SPEEDUP),
        },
        "memory": {
            "max_x": TARGET_MAX_MEMORY,
            "values": mem_values,
            # None when nothing was measured
            "passed": (bool(all(v < TARGET_MAX_MEMORY for v in mem_values.values()))
                       if mem_values else None),
        },
    }
    return {
        "info": machine_info(),
        "settings": settings,
        "estimators": estimators,
        "comparisons": comparisons,
        "memory": memory_results,
        "targets": targets,
        "profile": prof,
    }


# -- report -------------------------------------------------------------------------------

def _mb(nbytes):
    return f"{nbytes / 2**20:,.1f} MiB"


def format_report(results):
    """The human-readable report of :func:`run`'s results, as a string."""
    info, s = results["info"], results["settings"]
    lines = [
        f"machine : {info['platform']} ({info['machine']}, {info['cpu_count']} CPUs, "
        f"{info['processor']})",
        f"python  : {info['python']}   numpy {info['numpy']}   scikit-learn "
        f"{info['sklearn']}   dptrees {info['dptrees']}",
        f"data    : {s['n_samples']:,} x {s['n_features']} float64 (X.nbytes = "
        f"{_mb(s['x_nbytes'])}), Friedman #1 + clipped noise; test set {s['n_test']:,} rows",
        f"settings: max_depth {s['max_depth']}, forests {s['n_estimators']} trees, "
        f"n_jobs {s['n_jobs']} (both forests), epsilon {s['epsilon']:g}; ours: warm-up + "
        f"best of {s['repeat']}, sklearn: best of {s['sklearn_repeat']}",
        "",
    ]
    header = (f"{'estimator':<36} {'fit rows':>10} {'fit s':>9} {'cold s':>8} "
              f"{'predict s':>10} {'R^2':>7} {'leaves':>8}")
    lines += [header, "-" * len(header)]
    for kind in KINDS:
        e = results["estimators"][kind]
        mark = "*" if e["extrapolated"] else " "
        cold = e["fit_times"][0] if kind.startswith("dp_") else float("nan")
        cold_s = f"{cold:>8.3f}" if math.isfinite(cold) else f"{'-':>8}"
        lines.append(
            f"{e['description']:<36} {e['fit_rows']:>10,} {e['fit_seconds']:>8.3f}{mark} "
            f"{cold_s} {e['predict_seconds']:>10.4f} {e['r2']:>7.3f} {e['n_leaves']:>8,}"
        )
    if results["estimators"]["sklearn_forest"]["extrapolated"]:
        e = results["estimators"]["sklearn_forest"]
        lines.append(
            f"* EXTRAPOLATED: ExtraTrees was fitted on {e['fit_rows']:,} rows and its fit "
            f"time scaled linearly to {s['n_samples']:,} rows; its predict time and R^2 "
            "are those of the smaller fit."
        )
    lines.append("'cold s' is our first fit in the process (the warm-up), not in 'fit s'.")
    lines.append("")
    c = results["comparisons"]
    lines += [
        f"{'speed-up (sklearn time / ours)':<36} {'fit':>9} {'predict':>10}",
        f"{'DP tree vs DecisionTreeRegressor':<36} {c['tree']['fit_speedup']:>8.1f}x "
        f"{c['tree']['predict_speedup']:>9.2f}x   (vs our cold fit: "
        f"{c['tree']['fit_speedup_cold']:.1f}x)",
        f"{'DP tree, n_jobs threads, vs sklearn':<36} {c['tree']['fit_speedup_threads']:>8.1f}x"
        f"   ({c['tree']['threads_over_one']:.2f}x our one-thread fit; the same tree)",
        f"{'DP forest vs ExtraTreesRegressor':<36} {c['forest']['fit_speedup']:>8.1f}x "
        f"{c['forest']['predict_speedup']:>9.2f}x"
        + ("   (sklearn fit time EXTRAPOLATED)" if c["forest"]["sklearn_extrapolated"] else ""),
        "  note: each DP partition-forest tree is grown on a disjoint 1/n_estimators of the "
        "rows; every ExtraTrees tree sees all rows.",
        "",
    ]
    mem = results["memory"]
    if any(mem.values()):
        header = (f"{'peak memory of the fit / X.nbytes':<36} {'tracemalloc':>12} "
                  f"{'RSS delta':>10} {'RSS-interp':>11} {'RSS total':>10}")
        lines += [header, "-" * len(header)]
        for kind, entry in mem.items():
            if not entry:
                continue

            def fmt(key):
                return f"{entry[key]:.3f}x" if key in entry else "-"

            lines.append(f"{DESCRIPTIONS[kind]:<36} {fmt('tracemalloc_x'):>12} "
                         f"{fmt('rss_delta_x'):>10} {fmt('rss_data_fit_x'):>11} "
                         f"{fmt('rss_peak_x'):>10}")
        for kind, entry in mem.items():
            if "rss_peak" in entry:
                lines.append(
                    f"  {kind}: RSS at start {_mb(entry['rss_at_start'])}, before fit "
                    f"{_mb(entry['rss_before_fit'])}, peak "
                    f"{_mb(entry['rss_peak'])} ({entry['method']}), ru_maxrss "
                    f"{_mb(entry['ru_maxrss'])}"
                    + (f", tracemalloc peak {_mb(entry['tracemalloc_peak'])}"
                       if "tracemalloc_peak" in entry else "")
                )
        lines += [
            "  tracemalloc: peak of the memory allocated during the fit (numpy buffers "
            "included, X and y excluded).",
            "  RSS delta: peak resident set during the fit minus the resident set just "
            "before it, in a fresh process; RSS-interp: the peak minus the interpreter's",
            "  resident set before any data (X + y + the fit); RSS total: the whole process "
            "peak.",
            "",
        ]
    prof = results.get("profile")
    if prof:
        if "stages" in prof:
            lines.append("DP tree fit, stage timings (best of repeat; nested stages "
                         "include the ones above them where stated):")
            for name, sec in prof["stages"].items():
                lines.append(f"  {name:<52} {sec:>8.3f} s")
        if prof.get("error"):
            lines.append(f"  profile error: {prof['error']}")
        if prof.get("cprofile"):
            lines += ["", "cProfile of one DP tree fit:", prof["cprofile"].rstrip(), ""]
    t = results["targets"]
    note = "" if t["large_data"] else f"  [n < {LARGE_N:,}: indicative only]"
    sp = t["speedup"]
    lines.append(
        f"{'PASS' if sp['passed'] else 'FAIL'}: DP tree (depth {s['max_depth']}) fits "
        f"{sp['value']:.1f}x faster than sklearn's DecisionTreeRegressor (target >= "
        f"{sp['min']:g}x){note}"
    )
    mt = t["memory"]
    if mt["passed"] is None:
        lines.append("SKIP: peak memory not measured")
    else:
        detail = ", ".join(f"{k.replace('_x', '')} {v:.3f}x" for k, v in mt["values"].items())
        lines.append(
            f"{'PASS' if mt['passed'] else 'FAIL'}: peak memory of the DP tree fit is under "
            f"{mt['max_x']:g}x X.nbytes ({detail}){note}"
        )
    return "\n".join(lines)


def _failed(results):
    t = results["targets"]
    if not t["large_data"]:
        return False
    return (not t["speedup"]["passed"]) or t["memory"]["passed"] is False


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"tiny data ({QUICK['n_samples']:,} x {QUICK['n_features']}, "
                             f"{QUICK['n_estimators']}-tree forests, 1 repeat): a smoke test")
    parser.add_argument("--n", type=int, default=1_000_000, help="training rows (1,000,000)")
    parser.add_argument("--features", type=int, default=20, help="features, >= 5 (20)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="our fits: warm-up + best of this many (3)")
    parser.add_argument("--sklearn-repeat", type=int, default=1,
                        help="scikit-learn fits: best of this many, no warm-up (1)")
    parser.add_argument("--n-jobs", type=int, default=-1,
                        help="threads/processes of BOTH forests (-1: all cores)")
    parser.add_argument("--max-depth", type=int, default=10, help="tree depth (10)")
    parser.add_argument("--n-estimators", type=int, default=100, help="forest trees (100)")
    parser.add_argument("--sklearn-forest-rows", type=int, default=None,
                        help="fit ExtraTrees on this many rows only and EXTRAPOLATE its fit "
                             "time linearly (default: all rows)")
    parser.add_argument("--n-test", type=int, default=None,
                        help="test rows for predictions (min(n, 200,000))")
    parser.add_argument("--no-memory", action="store_true",
                        help="skip the tracemalloc and subprocess memory measurements")
    parser.add_argument("--no-subprocess", action="store_true",
                        help="skip the subprocess (RSS) memory measurement")
    parser.add_argument("--sklearn-memory", action="store_true",
                        help="also measure the RSS peak of sklearn's tree (one more fit)")
    parser.add_argument("--profile", action="store_true",
                        help="stage timings and a cProfile of the DP tree fit")
    parser.add_argument("--seed", type=int, default=0, help="data and estimator seed (0)")
    parser.add_argument("--json", metavar="PATH", default=None,
                        help="also write the results as JSON to PATH")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--memory-child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.memory_child:
        _memory_child(args.memory_child, args.n, args.features, args.max_depth,
                      args.n_estimators, args.n_jobs, args.seed)
        return 0

    n, p, repeat, n_est = args.n, args.features, args.repeat, args.n_estimators
    if args.quick:
        n, p, repeat, n_est = (QUICK["n_samples"], QUICK["n_features"], QUICK["repeat"],
                               QUICK["n_estimators"])
    results = run(
        n, p, repeat, max_depth=args.max_depth, n_estimators=n_est, n_jobs=args.n_jobs,
        sklearn_repeat=args.sklearn_repeat, sklearn_forest_rows=args.sklearn_forest_rows,
        n_test=args.n_test, memory=not args.no_memory,
        subprocess_memory=not (args.no_memory or args.no_subprocess),
        sklearn_memory=args.sklearn_memory, profile=args.profile, seed=args.seed,
        verbose=not args.quiet,
    )
    print(format_report(results))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)
    # Only a miss on large data is a failure: small fits are dominated by overheads.
    return 1 if _failed(results) else 0


if __name__ == "__main__":
    sys.exit(main())
