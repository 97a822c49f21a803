#!/usr/bin/env python
"""Fit cost of dptrees' DP ExtraTrees classifier against scikit-learn's ExtraTrees.

A plain script (no asv). On one synthetic binary classification data set, in the same
process and run, it fits

* ``DPExtraTreesClassifier(n_estimators=100, max_depth=10, partition=False)``: DiffPETs, every tree
  reads every row with ``epsilon / 100``;
* ``DPExtraTreesClassifier(n_estimators=100, max_depth=10, partition=True)``: every tree reads a
  disjoint ~1/100 of the rows with the full ``epsilon``;
* scikit-learn's ``ExtraTreesClassifier(n_estimators=100, max_depth=10)`` (no bootstrap by
  default: every tree reads every row, like ``partition=False``),

all three with the same ``n_jobs``, and prints their fit and predict times, the speed-ups
(scikit-learn's time over ours) and the test accuracies.

Data: the features and Friedman #1 targets of ``benchmarks/bench_trees.py`` (imported as
a sibling module, not copied: ``make_data``, ``machine_info`` and the timing helpers come
from there), with the class ``y > median(y_train)``: balanced, and learnable from
features 0-4 (features 5 and up are noise). Public bounds: features [0, 1], classes {0, 1}. The test
set uses the training median as its threshold too.

The issue's target, checked for each mode on the last lines:

    Fitting 100 DP ExtraTrees of depth 10 on 1M x 20 is at least 10x faster than
    scikit-learn's ExtraTreesClassifier(n_estimators=100, max_depth=10) in the same run.

Usage::

    python benchmarks/bench_extra_trees.py              # 1,000,000 x 20 (sklearn: minutes)
    python benchmarks/bench_extra_trees.py --quick      # small data: smoke test only
    python benchmarks/bench_extra_trees.py --profile --json out.json

The exit status is 1 when a mode misses the target on large data (n >= 1,000,000) and 0
otherwise; on smaller data the verdicts are printed but only indicative.
"""

import argparse
import json
import math
import sys
import time

import numpy as np

import dptrees

import bench_trees  # a sibling: Python puts a script's folder first on sys.path

TARGET_MIN_SPEEDUP = 10.0  # sklearn ExtraTreesClassifier fit time / our fit time
EPSILON = 1.0
N_BINS = 40
QUICK = {"n_samples": 50_000, "n_features": 20, "repeat": 1, "n_estimators": 20}

KINDS = ("dp_et", "dp_et_partition", "sklearn_et")
DP_KINDS = ("dp_et", "dp_et_partition")
DESCRIPTIONS = {
    "dp_et": "dptrees DPExtraTrees partition=False",
    "dp_et_partition": "dptrees DPExtraTrees partition=True",
    "sklearn_et": "sklearn ExtraTreesClassifier",
}
MODE_NAMES = {"dp_et": "partition=False (DiffPETs)", "dp_et_partition": "partition=True"}

FEATURE_BOUNDS = bench_trees.FEATURE_BOUNDS
LARGE_N = bench_trees.LARGE_N
machine_info = bench_trees.machine_info
resolve_n_jobs = bench_trees.resolve_n_jobs


# -- data and estimators ------------------------------------------------------------------

def make_data(n_samples, n_features, seed=0, threshold=None):
    """``X`` and binary classes ``y > threshold`` (default: the median of these ``y``).

    Returns ``(X, labels, threshold)``; pass the training threshold for the test set.
    """
    X, y = bench_trees.make_data(n_samples, n_features, seed)
    if threshold is None:
        threshold = float(np.median(y))
    return X, (y > threshold).astype(np.int64), threshold


def make_estimator(kind, *, max_depth=10, n_estimators=100, n_jobs=-1, seed=0):
    """A fresh, unfitted estimator of ``kind`` (one of :data:`KINDS`)."""
    if kind in DP_KINDS:
        return dptrees.DPExtraTreesClassifier(
            n_estimators=n_estimators, epsilon=EPSILON, max_features="sqrt",
            partition=(kind == "dp_et_partition"),
            max_depth=max_depth, n_bins=N_BINS, bounds=FEATURE_BOUNDS, classes=[0, 1],
            # an unlimited ledger of our own: the process-wide default one would grow
            accountant=dptrees.BudgetAccountant(), n_jobs=n_jobs, random_state=seed,
        )
    if kind == "sklearn_et":
        from sklearn.ensemble import ExtraTreesClassifier

        return ExtraTreesClassifier(n_estimators=n_estimators, max_depth=max_depth,
                                    n_jobs=n_jobs, random_state=seed)
    raise ValueError(f"unknown estimator kind {kind!r}, expected one of {KINDS}")


# -- stage timings of our fit ---------------------------------------------------------------

def profile_stages(X, y, *, max_depth=10, n_estimators=100, seed=0, repeat=1):
    """Seconds of the stages of ``DPExtraTreesClassifier.fit``, single-threaded.

    Stages: ``_prepare`` (validation and feature binning, once per forest), one tree's
    compiled ``TreeBuilder.build`` on all the rows (what each of the ``n_estimators`` trees
    costs with ``partition=False``), the Python assembly of that tree, and for
    ``partition=True`` the row subset of one part plus the build on it. Uses private
    helpers: returns what was measured and an ``"error"`` entry if they changed.
    """
    stages = {}
    result = {"stages": stages}

    def best(name, fn):
        t_best, out = math.inf, None
        for _ in range(max(1, int(repeat))):
            t0 = time.perf_counter()
            out = fn()
            t_best = min(t_best, time.perf_counter() - t0)
        stages[name] = t_best
        return out

    try:
        from dptrees.tree import resolve_max_features

        est = make_estimator("dp_et", max_depth=max_depth, n_estimators=n_estimators,
                             n_jobs=1, seed=seed)
        epsilon = est._check_params()
        budget = est._tree_budget(epsilon / n_estimators)
        data = best("prepare (validate + bin X, classes)", lambda: bench_trees.tree_data(est, X, y))
        k = resolve_max_features(est.max_features, data.n_features)
        builder = est._builder(budget, data, k)

        def build_one():
            noise, cand = np.random.default_rng(seed).spawn(2)
            return builder.build(noise, cand, data.codes, data.y_fixed, data.labels)

        best("one tree: builder.build on all rows", build_one)
        best("one tree: _grow (build + assembly), all rows",
             lambda: est._grow(data, builder, np.random.default_rng(seed)))
        parts = np.random.default_rng(seed).integers(0, n_estimators, size=X.shape[0])
        part = best("partition=True: subset of one part",
                    lambda: data.subset(np.flatnonzero(parts == 0)))
        pbuilder = est._builder(est._tree_budget(epsilon), data, k)

        def build_part():
            noise, cand = np.random.default_rng(seed).spawn(2)
            return pbuilder.build(noise, cand, part.codes, part.y_fixed, part.labels)

        best("partition=True: builder.build on one part", build_part)
    except Exception as exc:  # pragma: no cover - depends on dptrees' internals
        result["error"] = f"private helpers changed: {type(exc).__name__}: {exc}"
    return result


# -- the benchmark ------------------------------------------------------------------------

def run(n_samples=1_000_000, n_features=20, repeat=3, *, max_depth=10, n_estimators=100,
        n_jobs=-1, sklearn_repeat=1, n_test=None, profile=False, seed=0, verbose=False):
    """Run the benchmark and return the results as a dict.

    Parameters
    ----------
    n_samples, n_features : int
        Training data size (features >= 5).
    repeat : int
        Our fits: one warm-up fit (reported as ``fit_times[0]``, "cold"), then the best of
        ``repeat``; predictions: best of ``repeat``.
    n_jobs : int
        Threads (ours) and joblib workers (scikit-learn) of every forest; -1: all cores.
    sklearn_repeat : int
        scikit-learn fits: best of this many, no warm-up (minutes each at 1M rows).
    n_test : int, optional
        Rows of the separate test set; default ``min(n_samples, 200,000)``.
    profile : bool
        Single-threaded stage timings of our fit (:func:`profile_stages`).

    Returns
    -------
    dict with keys ``info``, ``settings``, ``estimators`` (kind -> ``description``,
    ``fit_seconds`` (best), ``fit_times`` (all, in order), ``predict_seconds``,
    ``predict_rows``, ``accuracy``, ``n_leaves``), ``comparisons`` (DP kind ->
    ``fit_speedup``, ``fit_speedup_cold``, ``predict_speedup``: sklearn's time over ours),
    ``targets`` (DP kind -> ``min``, ``value``, ``passed``; and ``large_data``) and
    ``profile`` (or None).
    """
    n_samples, n_features = int(n_samples), int(n_features)
    repeat = max(1, int(repeat))
    sklearn_repeat = max(1, int(sklearn_repeat))
    n_jobs_resolved = resolve_n_jobs(n_jobs)
    n_test = int(n_test) if n_test is not None else min(n_samples, 200_000)

    def log(msg):
        if verbose:
            print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    log("generating data")
    X, y, threshold = make_data(n_samples, n_features, seed)
    X_test, y_test, _ = make_data(n_test, n_features, seed + 1, threshold=threshold)
    settings = {
        "n_samples": n_samples, "n_features": n_features, "repeat": repeat,
        "sklearn_repeat": sklearn_repeat, "max_depth": int(max_depth),
        "n_estimators": int(n_estimators), "n_jobs": n_jobs_resolved, "n_test": n_test,
        "epsilon": EPSILON, "n_bins": N_BINS, "seed": seed, "x_nbytes": int(X.nbytes),
        "class_threshold": threshold, "positive_rate": float(y.mean()),
    }
    est_kw = dict(max_depth=max_depth, n_estimators=n_estimators, n_jobs=n_jobs_resolved,
                  seed=seed)

    estimators = {}
    for kind in KINDS:
        ours = kind in DP_KINDS
        log(f"timing {kind} on {n_samples:,} rows")
        est, fit_best, fit_times = bench_trees._time_fit(
            lambda: make_estimator(kind, **est_kw), X, y,
            repeat if ours else sklearn_repeat, warmup=ours)
        pred, pred_seconds = bench_trees._time_predict(est, X_test, repeat)
        estimators[kind] = {
            "description": DESCRIPTIONS[kind],
            "fit_seconds": fit_best,
            "fit_times": fit_times,
            "predict_seconds": pred_seconds,
            "predict_rows": n_test,
            "accuracy": float(np.mean(np.asarray(pred) == y_test)),
            "n_leaves": bench_trees._n_leaves(est),
        }
        if ours:
            estimators[kind]["tree_epsilon"] = float(est.tree_epsilon_)
            estimators[kind]["max_features"] = int(est.max_features_)
        else:
            estimators[kind]["max_features"] = int(est.estimators_[0].max_features_)
        del est

    prof = None
    if profile:
        log("stage timings of our fit")
        prof = profile_stages(X, y, max_depth=max_depth, n_estimators=n_estimators,
                              seed=seed, repeat=repeat)

    def ratio(a, b):
        return a / b if b > 0 else float("inf")

    sk = estimators["sklearn_et"]
    comparisons, targets = {}, {"large_data": n_samples >= LARGE_N}
    for kind in DP_KINDS:
        e = estimators[kind]
        comparisons[kind] = {
            "fit_speedup": ratio(sk["fit_seconds"], e["fit_seconds"]),
            "fit_speedup_cold": ratio(sk["fit_seconds"], e["fit_times"][0]),
            "predict_speedup": ratio(sk["predict_seconds"], e["predict_seconds"]),
        }
        value = comparisons[kind]["fit_speedup"]
        targets[kind] = {"min": TARGET_MIN_SPEEDUP, "value": value,
                         "passed": bool(value >= TARGET_MIN_SPEEDUP)}
    return {
        "info": machine_info(),
        "settings": settings,
        "estimators": estimators,
        "comparisons": comparisons,
        "targets": targets,
        "profile": prof,
    }


# -- report -------------------------------------------------------------------------------

def format_report(results):
    """The human-readable report of :func:`run`'s results, as a string."""
    info, s = results["info"], results["settings"]
    lines = [
        f"machine : {info['platform']} ({info['machine']}, {info['cpu_count']} CPUs, "
        f"{info['processor']})",
        f"python  : {info['python']}   numpy {info['numpy']}   scikit-learn "
        f"{info['sklearn']}   dptrees {info['dptrees']}",
        f"data    : {s['n_samples']:,} x {s['n_features']} float64, classes y > median(y) "
        f"of Friedman #1 (positive rate {s['positive_rate']:.3f}); test set "
        f"{s['n_test']:,} rows",
        f"settings: {s['n_estimators']} trees of max_depth {s['max_depth']}, n_jobs "
        f"{s['n_jobs']} (all three), epsilon {s['epsilon']:g}, n_bins {s['n_bins']}; ours: "
        f"warm-up + best of {s['repeat']}, sklearn: best of {s['sklearn_repeat']}",
        "",
    ]
    header = (f"{'estimator':<38} {'fit s':>9} {'cold s':>9} {'predict s':>10} "
              f"{'accuracy':>9} {'leaves':>9} {'K':>3}")
    lines += [header, "-" * len(header)]
    for kind in KINDS:
        e = results["estimators"][kind]
        cold = f"{e['fit_times'][0]:>9.3f}" if kind in DP_KINDS else f"{'-':>9}"
        lines.append(
            f"{e['description']:<38} {e['fit_seconds']:>9.3f} {cold} "
            f"{e['predict_seconds']:>10.4f} {e['accuracy']:>9.4f} {e['n_leaves']:>9,} "
            f"{e['max_features']:>3}"
        )
    lines += [
        "'cold s' is our first fit in the process (the warm-up), not in 'fit s'. K: "
        "features tried per node (ours round sqrt(p) up, sklearn down).",
        "",
        f"{'speed-up (sklearn time / ours)':<38} {'fit':>9} {'predict':>10}",
    ]
    for kind in DP_KINDS:
        c = results["comparisons"][kind]
        lines.append(f"{MODE_NAMES[kind]:<38} {c['fit_speedup']:>8.1f}x "
                     f"{c['predict_speedup']:>9.2f}x   (vs our cold fit: "
                     f"{c['fit_speedup_cold']:.1f}x)")
    lines += [
        "  partition=False: every tree reads all rows with epsilon/n_estimators (like "
        "ExtraTrees, which does not bootstrap);",
        "  partition=True: each tree reads a disjoint ~1/n_estimators of the rows with the "
        "full epsilon.",
        "",
    ]
    prof = results.get("profile")
    if prof:
        lines.append("our fit, single-threaded stage timings (best of repeat):")
        for name, sec in prof["stages"].items():
            lines.append(f"  {name:<52} {sec:>8.3f} s")
        if prof.get("error"):
            lines.append(f"  profile error: {prof['error']}")
        lines.append("")
    t = results["targets"]
    note = "" if t["large_data"] else f"  [n < {LARGE_N:,}: indicative only]"
    for kind in DP_KINDS:
        tk = t[kind]
        lines.append(
            f"{'PASS' if tk['passed'] else 'FAIL'}: {MODE_NAMES[kind]}: {s['n_estimators']} "
            f"DP ExtraTrees of depth {s['max_depth']} fit {tk['value']:.1f}x faster than "
            f"sklearn's ExtraTreesClassifier (target >= {tk['min']:g}x){note}"
        )
    return "\n".join(lines)


def _failed(results):
    t = results["targets"]
    return t["large_data"] and not all(t[kind]["passed"] for kind in DP_KINDS)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"small data ({QUICK['n_samples']:,} x {QUICK['n_features']}, "
                             f"{QUICK['n_estimators']} trees, 1 repeat): a smoke test")
    parser.add_argument("--n", type=int, default=1_000_000, help="training rows (1,000,000)")
    parser.add_argument("--features", type=int, default=20, help="features, >= 5 (20)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="our fits: warm-up + best of this many (3)")
    parser.add_argument("--sklearn-repeat", type=int, default=1,
                        help="scikit-learn fits: best of this many, no warm-up (1)")
    parser.add_argument("--n-jobs", type=int, default=-1,
                        help="threads/workers of ALL forests (-1: all cores)")
    parser.add_argument("--max-depth", type=int, default=10, help="tree depth (10)")
    parser.add_argument("--n-estimators", type=int, default=100, help="trees (100)")
    parser.add_argument("--n-test", type=int, default=None,
                        help="test rows for predictions (min(n, 200,000))")
    parser.add_argument("--profile", action="store_true",
                        help="single-threaded stage timings of our fit")
    parser.add_argument("--seed", type=int, default=0, help="data and estimator seed (0)")
    parser.add_argument("--json", metavar="PATH", default=None,
                        help="also write the results as JSON to PATH")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)

    n, p, repeat, n_est = args.n, args.features, args.repeat, args.n_estimators
    if args.quick:
        n, p, repeat, n_est = (QUICK["n_samples"], QUICK["n_features"], QUICK["repeat"],
                               QUICK["n_estimators"])
    results = run(n, p, repeat, max_depth=args.max_depth, n_estimators=n_est,
                  n_jobs=args.n_jobs, sklearn_repeat=args.sklearn_repeat, n_test=args.n_test,
                  profile=args.profile, seed=args.seed, verbose=not args.quiet)
    print(format_report(results))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)
    # Only a miss on large data is a failure: small fits are dominated by overheads.
    return 1 if _failed(results) else 0


if __name__ == "__main__":
    sys.exit(main())
