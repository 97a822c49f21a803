#!/usr/bin/env python
"""Speed of two installed builds of dptrees, compared in the same run (issue 34).

Issue 34 (one fit lifecycle, one release plan, one grower) must leave the DP tree and a
boosting round at least as fast as before the refactor. This script times the same
workloads with two Python interpreters, each with its own installed copy of dptrees, and
prints the ratio of the second to the first.

Setup: two virtual environments, each with one build installed *non-editable* (an
editable install rebuilds on import and runs from the source tree)::

    git -C /work/main worktree add --detach /work/wt-base df98951   # before issue 34
    python3.11 -m venv /work/venv-base
    /work/venv-base/bin/pip install -q meson-python meson Cython ninja numpy
    /work/venv-base/bin/pip install -q --no-build-isolation /work/wt-base
    # the same for the current tree: /work/venv-head from a checkout of the branch

Usage (the interpreter running the script needs only the standard library)::

    python benchmarks/bench_commits.py \\
        --python base=/work/venv-base/bin/python --python head=/work/venv-head/bin/python
    python benchmarks/bench_commits.py --quick --python a=python --python b=python

Workloads, on float64 features uniform in [0, 1) with Friedman #1 targets (fixed seed,
generated identically in every child; public bounds: features [0, 1], targets [-3, 33],
classes ``y > 14``), every estimator with its defaults except the public bounds and
classes, ``n_jobs=1``, ``random_state=0`` and its own unlimited ``BudgetAccountant``:

* ``tree_classifier`` / ``tree_regressor``: one fit of ``DPDecisionTreeClassifier`` /
  ``DPDecisionTreeRegressor`` with ``max_depth=--max-depth``;
* ``gb_classifier_round`` / ``gb_regressor_round``: one round of
  ``DPGradientBoostingClassifier`` / ``DPGradientBoostingRegressor``, the slope
  ``(t(K2) - t(K1)) / (K2 - K1)`` of fits with ``n_estimators`` K1 and K2 (``--rounds``),
  so that validation, binning and the initial score cancel;
* ``gb_classifier_fit`` / ``gb_regressor_fit``: the whole fit with K1 rounds (setup
  included).

Fairness on a shared machine: every measurement runs in a fresh child process of its
interpreter (``python -P thisfile --child SPEC``, working directory a temporary folder,
``PYTHONPATH`` removed, so ``import dptrees`` finds the installed copy and no source
tree; one thread for OpenMP and BLAS), and the builds alternate A, B, A, B, ... within
every round of ``--repeat``. A child fits once untimed (warm-up), then ``--inner`` times
(a boosting child its K1 and K2 fits in turn), and reports the fastest CPU time
(``time.process_time``) and the fastest wall time of each, and the fewest minor page
faults of a fit (listed under the tables: fresh pages cost system time, and how many a
fit needs depends on glibc's dynamic mmap and trim thresholds, that is on what the
process allocated before, as much as on the fit; ``MALLOC_MMAP_THRESHOLD_=131072`` in
the environment fixes the state: then every large array is fresh). Over the rounds
the table gives, per build, the minimum and the median, and the ratio B / A of the
minima and of the medians. The noise band is the range of the *paired* ratios (round r's
B over round r's A): a workload is called ``slower`` when B was slower in every round,
``faster`` when it was faster in every round, ``same`` otherwise (a sign test: with 5
rounds a chance of 1/32 each way when nothing changed; ``n/a`` under 3 rounds).
``--quick`` (tiny data, one round) runs all workloads of a build in one child: a smoke
test of the same code with 2 interpreter starts instead of 8.
"""

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

FEATURE_BOUNDS = (0.0, 1.0)
Y_BOUNDS = (-3.0, 33.0)
CLASS_THRESHOLD = 14.0  # Friedman #1 targets average about 14.4: 53 % of rows in class 1
SEED = 0

TREE_WORKLOADS = ("tree_classifier", "tree_regressor")
BOOSTING_WORKLOADS = ("gb_classifier", "gb_regressor")
#: Rows of the table: each boosting child measures both its round and its K1-round fit.
ROWS = ("tree_classifier", "tree_regressor", "gb_classifier_round", "gb_regressor_round",
        "gb_classifier_fit", "gb_regressor_fit")
METRICS = ("cpu", "wall")
MIN_VERDICT_ROUNDS = 3  # a sign test over fewer rounds says nothing

DEFAULTS = dict(rows=200_000, features=20, max_depth=10, rounds=(5, 25), repeat=5, inner=3)
QUICK = dict(rows=3_000, features=5, max_depth=4, rounds=(1, 6), repeat=1, inner=1,
             one_child=True)

# One thread for OpenMP and BLAS in every child (child_env also drops PYTHONPATH).
CHILD_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


# ======================================================================================
# Child: one measurement in a fresh process
# ======================================================================================


def make_data(n, p, seed=SEED):
    """Friedman #1 features and targets (``bench_boosting.make_data``) and the class
    labels ``y > CLASS_THRESHOLD`` as 0/1 integers."""
    import numpy as np

    # appended, after the installed packages: the child still imports the installed dptrees
    sys.path.append(os.path.dirname(os.path.abspath(__file__)))
    from bench_boosting import make_data as friedman

    X, y = friedman(n, p, seed)
    return X, y, (y > CLASS_THRESHOLD).astype(np.int64)


def make_estimator(kind, max_depth=None, n_estimators=None):
    """The estimator of a workload: defaults except bounds, classes and the settings
    that make runs comparable (keyword arguments only: both commits accept them)."""
    import dptrees

    common = dict(bounds=FEATURE_BOUNDS, accountant=dptrees.BudgetAccountant(), n_jobs=1,
                  random_state=0)
    if kind == "tree_classifier":
        return dptrees.DPDecisionTreeClassifier(max_depth=max_depth, classes=[0, 1], **common)
    if kind == "tree_regressor":
        return dptrees.DPDecisionTreeRegressor(max_depth=max_depth, y_bounds=Y_BOUNDS, **common)
    if kind == "gb_classifier":
        return dptrees.DPGradientBoostingClassifier(n_estimators=n_estimators, classes=[0, 1],
                                                    **common)
    if kind == "gb_regressor":
        return dptrees.DPGradientBoostingRegressor(n_estimators=n_estimators,
                                                   y_bounds=Y_BOUNDS, **common)
    raise ValueError(f"unknown workload {kind!r}")


def minor_faults():
    """Minor page faults of this process so far (0 where ``resource`` is missing)."""
    try:
        import resource
    except ImportError:  # not on Windows
        return 0
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def time_fit(make, X, y):
    """CPU and wall seconds and minor page faults of one ``make().fit(X, y)`` (the
    construction untimed)."""
    import gc

    est = make()
    gc.collect()
    faults = minor_faults()
    cpu, wall = time.process_time(), time.perf_counter()
    est.fit(X, y)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return cpu, wall, minor_faults() - faults


def best_fit(makes, X, y, inner):
    """Fastest CPU and fastest wall time of each ``make`` in ``makes`` over ``inner`` fits,
    and the fewest minor page faults of a fit (``faults``: pages the fit had to be given
    afresh, which depends on the allocator's state as much as on the fit).

    One untimed fit of the first comes first (imports, caches); the timed fits of the
    makes are interleaved, so that a change of the machine's load falls on all of them.
    """
    makes[0]().fit(X, y)
    times = [[time_fit(make, X, y) for make in makes] for _ in range(inner)]
    return [{"cpu": min(t[i][0] for t in times), "wall": min(t[i][1] for t in times),
             "faults": min(t[i][2] for t in times)} for i in range(len(makes))]


def measure_tree(kind, X, target, spec):
    """``{row: {"cpu": s, "wall": s}}`` of one tree workload."""
    (fit,) = best_fit([lambda: make_estimator(kind, max_depth=spec["max_depth"])], X,
                      target, spec["inner"])
    return {kind: fit}


def measure_boosting(kind, X, target, spec):
    """``{row: {"cpu": s, "wall": s}}``: one round (the slope between K1 and K2 rounds)
    and the whole fit with K1 rounds."""
    k1, k2 = spec["rounds"]
    short, long = best_fit([lambda k=k: make_estimator(kind, n_estimators=k) for k in (k1, k2)],
                           X, target, spec["inner"])
    per_round = {m: (long[m] - short[m]) / (k2 - k1) for m in METRICS + ("faults",)}
    return {f"{kind}_round": per_round, f"{kind}_fit": short}


def installed_dptrees():
    """Version, location and install kind of the dptrees this child imports."""
    import importlib.metadata

    import dptrees

    info = {"version": dptrees.__version__, "file": dptrees.__file__, "editable": None,
            "source": None}
    try:
        direct = importlib.metadata.distribution("dptrees").read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        return info
    if direct:
        url = json.loads(direct)
        info["editable"] = bool(url.get("dir_info", {}).get("editable", False))
        info["source"] = url.get("url")
    return info


def run_child(spec):
    """Run the measurements described by ``spec`` (a dict); return the child's report."""
    import warnings

    import numpy as np

    X, y, labels = make_data(spec["rows"], spec["features"])
    times = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for kind in spec["workloads"]:
            measure = measure_tree if kind in TREE_WORKLOADS else measure_boosting
            times.update(measure(kind, X, labels if "classifier" in kind else y, spec))
    return {"times": times, "warnings": sorted({f"{w.category.__name__}: {w.message}"
                                                for w in caught}),
            "dptrees": installed_dptrees(), "numpy": np.__version__,
            "python": platform.python_version()}


# ======================================================================================
# Parent: alternate the builds, summarise
# ======================================================================================


def child_env():
    """The parent's environment without ``PYTHONPATH``, one thread for OpenMP and BLAS."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(CHILD_ENV)
    return env


def spawn(python, spec, workdir):
    """Run one child with interpreter ``python``; return its JSON report."""
    cmd = [python, "-P", os.path.abspath(__file__), "--child", json.dumps(spec)]
    proc = subprocess.run(cmd, cwd=workdir, env=child_env(), capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"child {cmd[0]} {spec['workloads']} failed "
                           f"(status {proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def collect(pythons, settings, log=None):
    """Measure every workload ``settings["repeat"]`` times per build, alternating builds.

    Parameters
    ----------
    pythons : list of (str, str)
        ``(label, interpreter)`` of build A then build B.
    settings : dict
        ``rows``, ``features``, ``max_depth``, ``rounds``, ``repeat``, ``inner`` and
        ``one_child`` (all workloads of a build in one child: a quicker smoke test).
    log : callable, optional
        Called with a line of progress after every child.

    Returns
    -------
    samples : dict
        ``samples[row][label][metric]``: one value per round.
    children : dict
        ``children[label]``: the last child report of each build (versions, warnings).
    """
    workloads = TREE_WORKLOADS + BOOSTING_WORKLOADS
    groups = [workloads] if settings["one_child"] else [(w,) for w in workloads]
    samples = {row: {label: {m: [] for m in METRICS + ("faults",)} for label, _ in pythons}
               for row in ROWS}
    children, warned = {}, {label: set() for label, _ in pythons}
    with tempfile.TemporaryDirectory(prefix="bench_commits_") as workdir:
        for r in range(settings["repeat"]):
            for group in groups:
                spec = dict(settings, workloads=list(group))
                for label, python in pythons:
                    report = spawn(python, spec, workdir)
                    for row, times in report["times"].items():
                        for m in METRICS + ("faults",):
                            samples[row][label][m].append(times.get(m, float("nan")))
                    warned[label].update(report["warnings"])
                    children[label] = report
                    if log is not None:
                        log(f"round {r + 1}/{settings['repeat']} {label:<8} "
                            + " ".join(f"{row} {t['cpu'] * 1e3:.1f} ms"
                                       for row, t in report["times"].items()))
    for label in children:
        children[label]["warnings"] = sorted(warned[label])
    return samples, children


def _ratio(b, a):
    return b / a if a != 0 and math.isfinite(a) and math.isfinite(b) else float("nan")


def summarise(values_a, values_b):
    """Minimum, median and ratios B / A of two builds' samples of one row and metric.

    Returns
    -------
    dict
        ``a_min``, ``a_median``, ``b_min``, ``b_median``, ``ratio_min`` (of the minima),
        ``ratio_median`` (of the medians), ``paired_low``/``paired_high`` (the range of
        round-by-round ratios) and ``verdict``: ``slower`` (B slower in every round),
        ``faster`` (in none), ``same``, or ``n/a`` where a time is not positive (a
        boosting slope lost in the noise) or with fewer than ``MIN_VERDICT_ROUNDS``.
    """
    paired = [_ratio(b, a) for a, b in zip(values_a, values_b)]
    finite = [p for p in paired if math.isfinite(p)]
    out = {"a_min": min(values_a), "a_median": statistics.median(values_a),
           "b_min": min(values_b), "b_median": statistics.median(values_b)}
    out["ratio_min"] = _ratio(out["b_min"], out["a_min"])
    out["ratio_median"] = _ratio(out["b_median"], out["a_median"])
    out["paired_low"] = min(finite, default=float("nan"))
    out["paired_high"] = max(finite, default=float("nan"))
    if min(values_a + values_b) <= 0 or len(finite) < MIN_VERDICT_ROUNDS:
        # A slope lost in the timing noise (negative or zero), or too few rounds.
        out["verdict"] = "n/a"
    else:
        out["verdict"] = ("slower" if out["paired_low"] > 1 else
                          "faster" if out["paired_high"] < 1 else "same")
    return out


def run(pythons, rows, features, max_depth, rounds, repeat, inner, one_child=False,
        log=None):
    """Compare two builds on every workload; return the results as a JSON-ready dict.

    Parameters
    ----------
    pythons : list of (str, str)
        ``(label, interpreter)`` of the two builds: A (the baseline) then B.
    rows, features : int
        Size of the synthetic data.
    max_depth : int
        Depth of the DP trees (the boosted trees keep their default).
    rounds : (int, int)
        K1 < K2: the boosting fits whose difference gives one round.
    repeat : int
        Rounds of alternating children (one child per workload and build in each).
    inner : int
        Timed fits in each child (after an untimed one); the child reports the fastest.
    one_child : bool, default=False
        All workloads of a build in one child per round instead of one child each: a
        smoke test that starts 2 interpreters per round instead of 8.
    log : callable, optional
        Progress lines.
    """
    if len(pythons) != 2:
        raise ValueError(f"two builds to compare, got {len(pythons)}")
    if not 0 < rounds[0] < rounds[1]:
        raise ValueError(f"rounds must be 0 < K1 < K2, got {rounds}")
    settings = dict(rows=rows, features=features, max_depth=max_depth, rounds=list(rounds),
                    repeat=repeat, inner=inner, one_child=one_child)
    started = time.perf_counter()
    samples, children = collect(pythons, settings, log)
    (a, _), (b, _) = pythons
    table = {row: {metric: summarise(samples[row][a][metric], samples[row][b][metric])
                   for metric in METRICS} for row in ROWS}
    return {"settings": settings, "labels": [a, b],
            "builds": {label: {**{k: v for k, v in children[label].items() if k != "times"},
                               "interpreter": python} for label, python in pythons},
            "machine": machine_info(), "seconds": time.perf_counter() - started,
            "samples": samples, "table": table}


def machine_info():
    """Platform, cores and the load average when the run ended (another job's load)."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"platform": platform.platform(), "cpus": os.cpu_count(),
            "loadavg": list(load) if load else None}


# ======================================================================================
# Report
# ======================================================================================

ROW_TITLES = {
    "tree_classifier": "DPDecisionTreeClassifier fit",
    "tree_regressor": "DPDecisionTreeRegressor fit",
    "gb_classifier_round": "DPGradientBoostingClassifier round",
    "gb_regressor_round": "DPGradientBoostingRegressor round",
    "gb_classifier_fit": "DPGradientBoostingClassifier fit, K1",
    "gb_regressor_fit": "DPGradientBoostingRegressor fit, K1",
}


def format_table(results, metric):
    """The table of one metric (``"cpu"`` or ``"wall"``), times in milliseconds."""
    a, b = results["labels"]
    head = (f"{'workload':<38} {a + ' min':>10} {a + ' med':>10} {b + ' min':>10} "
            f"{b + ' med':>10} {'ratio min':>9} {'ratio med':>9} {'paired':>14} verdict")
    lines = [head, "-" * len(head)]
    for row in ROWS:
        s = results["table"][row][metric]
        lines.append(
            f"{row:<38} {s['a_min'] * 1e3:>10.2f} {s['a_median'] * 1e3:>10.2f} "
            f"{s['b_min'] * 1e3:>10.2f} {s['b_median'] * 1e3:>10.2f} {s['ratio_min']:>9.3f} "
            f"{s['ratio_median']:>9.3f} {s['paired_low']:>6.3f}..{s['paired_high']:<6.3f} "
            f"{s['verdict']}")
    return "\n".join(lines)


def build_line(label, build):
    """One build as a child reported it: interpreter, versions, where dptrees is from."""
    d = build["dptrees"]
    kind = "EDITABLE" if d["editable"] else "installed"
    versions = f"Python {build['python']}, numpy {build['numpy']}" + (
        f", scikit-learn {build['sklearn']}" if "sklearn" in build else "")
    return (f"{label}: {build['interpreter']} ({versions}) dptrees {d['version']} {kind} "
            f"at {d['file']}" + (f" from {d['source']}" if d["source"] else ""))


def format_report(results):
    """The whole report: builds, settings, the CPU and the wall time tables."""
    s, m = results["settings"], results["machine"]
    k1, k2 = s["rounds"]
    lines = [f"{m['platform']}, {m['cpus']} CPUs, load average at the end "
             f"{m['loadavg']}; {results['seconds']:.0f} s"]
    for label in results["labels"]:
        build = results["builds"][label]
        lines.append(build_line(label, build))
        lines += [f"  warning: {w}" for w in build["warnings"]]
    lines.append(f"{s['rows']:,} x {s['features']} rows, tree depth {s['max_depth']}, "
                 f"boosting K1={k1} K2={k2} (round = slope), {s['repeat']} alternating "
                 f"rounds, best of {s['inner']} fits per child"
                 + (", ALL WORKLOADS IN ONE CHILD per build" if s["one_child"] else ""))
    lines += textwrap.wrap("rows: " + ", ".join(f"{r} = {t}" for r, t in ROW_TITLES.items()),
                           width=100, subsequent_indent="  ")
    for metric, title in (("cpu", "CPU time (process_time), ms"), ("wall", "wall time, ms")):
        lines += ["", f"{title}; ratio = {results['labels'][1]} / {results['labels'][0]}",
                  format_table(results, metric)]
    lines += ["", "minor page faults per fit (a child's fewest; per round), median [range]"]
    for row in ROWS:
        cells = []
        for label in results["labels"]:
            f = [v + 0.0 for v in results["samples"][row][label].get("faults", []) if v == v]
            cells.append(f"{label} {statistics.median(f):.0f} [{min(f):.0f}-{max(f):.0f}]"
                         if f else f"{label} n/a")
        lines.append(f"{row:<38} " + "   ".join(cells))
    return "\n".join(lines)


# ======================================================================================
# Command line
# ======================================================================================


def parse_python(text):
    """``LABEL=INTERPRETER`` as a pair."""
    label, sep, python = text.partition("=")
    if not sep or not label or not python:
        raise argparse.ArgumentTypeError(f"expected LABEL=INTERPRETER, got {text!r}")
    return label, python


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--python", action="append", type=parse_python, default=[],
                   metavar="LABEL=PYTHON", help="a build: give two, the baseline first")
    p.add_argument("--rows", type=int, help=f"rows (default {DEFAULTS['rows']:,})")
    p.add_argument("--features", type=int, help=f"features (default {DEFAULTS['features']})")
    p.add_argument("--max-depth", type=int, help=f"tree depth (default {DEFAULTS['max_depth']})")
    p.add_argument("--rounds", type=int, nargs=2, metavar=("K1", "K2"),
                   help=f"boosting rounds of the two fits (default {DEFAULTS['rounds']})")
    p.add_argument("--repeat", type=int, help=f"alternating rounds (default {DEFAULTS['repeat']})")
    p.add_argument("--inner", type=int, help=f"timed fits per child (default {DEFAULTS['inner']})")
    p.add_argument("--one-child", action="store_true", default=None,
                   help="all workloads of a build in one child per round (--quick does)")
    p.add_argument("--quick", action="store_true",
                   help="tiny data, 1 round, 1 fit, one child per build: smoke test only")
    p.add_argument("--json", metavar="PATH", help="save the results as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--child", metavar="SPEC", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.child is not None:
        print(json.dumps(run_child(json.loads(args.child))))
        return 0
    if len(args.python) != 2:
        raise SystemExit("give two builds: --python A=PYTHON --python B=PYTHON")
    base = QUICK if args.quick else DEFAULTS
    settings = {k: getattr(args, k) if getattr(args, k) is not None else base.get(k, v)
                for k, v in dict(DEFAULTS, one_child=False).items()}

    def log(line):
        print(line, file=sys.stderr, flush=True)

    results = run(args.python, **settings, log=None if args.quiet else log)
    print(format_report(results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
