"""Default boosting estimators of two installed builds of dptrees on the sweep data sets.

Issue 36's condition: "No sweep data set loses more than its seed noise at any eps in
{0.03, 0.05, 0.1, 0.25, 0.5, 1, 4} against today's defaults." This script measures it.
Two Python interpreters, each with its own installed (non-editable) dptrees, fit the
library's *default* ``DPGradientBoostingClassifier`` / ``Regressor`` and
``DPExplainableBoostingClassifier`` / ``Regressor`` on the same rows with the same seeds,
and the script prints, per data set, estimator and epsilon, the mean score of each build
and the paired difference (second build minus first, signed so that positive means the
second build is better) with twice its standard error as the noise band.

Data (the data sets of ``experiments/guided_splits_sweep.py``, the same rows and public
bounds; validation rows only, no test row is read):

* ``adult``: ``experiments.small_eps_trees.load(validation=True)``, one-hot, the fixed
  80 % fit / 20 % validation split of ``adult.data``; ROC AUC (and accuracy,
  ``P(class 1) > 0.5``);
* ``mushroom``, ``nursery``: ``uci_datasets.load_dataset(name, encoding="onehot")``, the
  80 / 20 ``experiments.splits.validation_split`` of their rows; accuracy of ``predict``;
* ``california_housing``: ``experiments.etr_thresholds_sweep.validation_sets`` with 3
  folds (the training rows of the seed's first 3 folds, each split 80 / 20); MAE.

Estimators: the library defaults, given only ``epsilon``, the public ``bounds``,
``classes`` or ``y_bounds``, ``accountant=BudgetAccountant()`` and ``random_state``, a
``numpy.random.Generator`` from ``SeedSequence([seed, dataset, round(1000 eps), split,
repeat, estimator])`` (``dataset`` indexes ``("adult", "california_housing",
"mushroom", "nursery")``, ``estimator`` 0 for gradient boosting, 1 for EBM): both builds
get the same seed for a fit, so the differences are paired by split and repeat.

Setup: two virtual environments, each with one build installed *non-editable*, as for
``benchmarks/bench_commits.py``::

    git -C /work/main worktree add --detach /work/wt-base df98951
    python3.11 -m venv /work/venv-base
    /work/venv-base/bin/pip install -q meson-python meson Cython ninja numpy scikit-learn
    /work/venv-base/bin/pip install -q --no-build-isolation /work/wt-base
    # the same for the other build: /work/venv-head from a checkout of its commit

Usage, from the repository root, with an interpreter that can import ``experiments``
(it reads the data and writes them as ``.npy`` files for the children)::

    python -m experiments.defaults_across_builds \\
        --python base=/work/venv-base/bin/python --python head=/work/venv-head/bin/python \\
        --json /tmp/defaults_across_builds.json
    python -m experiments.defaults_across_builds --quick \\
        --python base=/work/venv-base/bin/python --python head=/work/venv-head/bin/python

The first ``--python`` is the baseline. Defaults: eps {0.03, 0.05, 0.1, 0.25, 0.5, 1,
4}; Adult, Mushroom and Nursery 1 split x 5 repeats, California Housing 3 splits x 3
repeats (``--seeds N`` sets the repeats per split of every data set). ``--quick``: eps
0.1 and 1, 1 split, 1 repeat, fit and validation rows each a fixed random subsample of
at most 2,000 (a smoke test: its figures are not the experiment's). ``--markdown``
prints the tables as Markdown. ``--json PATH`` saves every score.

How the builds are run: every (data set, estimator, build) is one child process,
``python -P thisfile --child SPEC.json``, working directory a temporary folder,
``PYTHONPATH`` removed and one thread for OpenMP and BLAS, so that ``import dptrees``
finds the interpreter's installed copy and no source tree. A child needs only numpy,
scikit-learn and dptrees (it does not import ``experiments``): it reads the rows from the
parent's ``.npy`` files and the public parameters from the spec, fits every epsilon,
split and repeat, suppresses warnings, and writes its scores as JSON. The children run
one at a time, the two builds in turn. A fit that raises is recorded with its error and
its pair left out.

Verdict of a cell, from the mean ``d`` of the paired differences and its ``2 SE``
(``2 std(ddof=1) / sqrt(pairs)``): ``loses beyond noise`` if ``d < -2 SE``, ``gains
beyond noise`` if ``d > 2 SE``, ``identical`` if every pair is equal, ``within noise``
otherwise, ``n/a`` with fewer than 2 pairs. With 5 or 9 pairs the band is itself a rough
estimate: it is the issue's "seed noise", not a calibrated test. Recorded runs:
``RESULTS.md``.
"""

import argparse
import importlib.util
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _bench_commits():
    """``benchmarks/bench_commits.py``, whose child-process machinery this script reuses
    (how a child finds its build's installed dptrees and reports it, the children's
    environment, the machine's description, ``LABEL=PYTHON``). Loaded by its path: a
    child runs with ``-P`` and imports nothing else from the source tree, and that
    script needs only the standard library."""
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_commits.py"
    spec = importlib.util.spec_from_file_location("_bench_commits", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_BENCH = _bench_commits()
installed_dptrees, child_env = _BENCH.installed_dptrees, _BENCH.child_env
machine_info, parse_python = _BENCH.machine_info, _BENCH.parse_python

EPSILONS = (0.03, 0.05, 0.1, 0.25, 0.5, 1.0, 4.0)
QUICK_EPSILONS = (0.1, 1.0)
DATASETS = ("adult", "mushroom", "nursery", "california_housing")
#: The index of a data set in a fit's seed (``guided_splits_sweep.ALL_DATASETS``' order).
SEED_DATASETS = ("adult", "california_housing", "mushroom", "nursery")
ESTIMATORS = ("gb", "ebm")
ESTIMATOR_CLASSES = {"gb": "DPGradientBoosting", "ebm": "DPExplainableBoosting"}
N_SPLITS = {"adult": 1, "mushroom": 1, "nursery": 1, "california_housing": 3}
N_SEEDS = {"adult": 5, "mushroom": 5, "nursery": 5, "california_housing": 3}
METRICS = {"adult": "auc", "mushroom": "accuracy", "nursery": "accuracy",
           "california_housing": "mae"}
#: Metrics where lower is better: the difference is then baseline - other.
LOWER_IS_BETTER = ("mae",)
QUICK_ROWS = 2000


# ======================================================================================
# Child: fit one estimator of one build on one data set (numpy, scikit-learn, dptrees)
# ======================================================================================


def _public(value):
    """A bound from JSON: a float, or a float array for a list."""
    import numpy as np

    return np.asarray(value, dtype=float) if isinstance(value, list) else float(value)


def score(est, metric, X, y, classes):
    """The scores of a fitted estimator on the validation rows ``X, y``."""
    import numpy as np
    from sklearn.metrics import roc_auc_score

    if metric == "mae":
        pred = est.predict(X)
        return {"mae": float(np.mean(np.abs(pred - y))),
                "mse": float(np.mean((pred - y) ** 2))}
    if metric == "auc":  # binary: as guided_splits_sweep._adult_cells
        positive = y == classes[1]
        proba = est.predict_proba(X)[:, 1]
        auc = (float(roc_auc_score(positive, proba)) if 0 < positive.sum() < len(y)
               else float("nan"))
        return {"auc": auc, "accuracy": float(np.mean((proba > 0.5) == positive))}
    return {"accuracy": float(np.mean(est.predict(X) == y))}


def run_child(spec):
    """Fit ``spec``'s estimator at every epsilon, split and repeat; return the report."""
    import warnings

    import numpy as np
    import sklearn

    import dptrees

    regression = spec["metric"] in LOWER_IS_BETTER
    cls = getattr(dptrees, ESTIMATOR_CLASSES[spec["estimator"]]
                  + ("Regressor" if regression else "Classifier"))
    bounds = tuple(_public(b) for b in spec["bounds"])
    public = ({"y_bounds": tuple(float(b) for b in spec["y_bounds"])} if regression
              else {"classes": np.asarray(spec["classes"])})
    splits = [{k: np.load(path, allow_pickle=False) for k, path in files.items()}
              for files in spec["splits"]]
    scores, started = {}, time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for eps in spec["epsilons"]:
            cell = []
            for s_index, data in enumerate(splits):
                for repeat in range(spec["n_seeds"]):
                    key = [spec["seed"], spec["dataset_index"], int(round(eps * 1000)),
                           s_index, repeat, spec["estimator_index"]]
                    rng = np.random.default_rng(np.random.SeedSequence(key))
                    fit = {"split": s_index, "repeat": repeat}
                    t0 = time.perf_counter()
                    try:
                        est = cls(epsilon=eps, bounds=bounds, accountant=dptrees.BudgetAccountant(),
                                  random_state=rng, **public).fit(data["X_fit"], data["y_fit"])
                        fit.update(score(est, spec["metric"], data["X_val"], data["y_val"],
                                         public.get("classes")))
                    except Exception as exc:  # recorded; the pair is left out
                        fit["error"] = f"{type(exc).__name__}: {exc}"
                    fit["seconds"] = time.perf_counter() - t0
                    cell.append(fit)
            scores[f"{eps:g}"] = cell
    return {"scores": scores, "seconds": time.perf_counter() - started,
            "dptrees": installed_dptrees(), "numpy": np.__version__,
            "sklearn": sklearn.__version__, "python": platform.python_version(),
            "class": cls.__name__}


# ======================================================================================
# Parent: the data, the children, the paired differences
# ======================================================================================


def _subsample(rows, quick, rng):
    if not quick:
        return rows
    from experiments.splits import random_rows

    return rows[random_rows(rng, len(rows), QUICK_ROWS)]


def load_parts(name, quick=False, data_dir=None):
    """``(X, y, parts, public)`` of a data set: its rows, ``[(fit_idx, val_idx), ...]``
    (``guided_splits_sweep``'s) and its public parameters (``bounds`` and ``classes`` or
    ``y_bounds``). With ``quick``: the first split, each part a fixed random subsample of
    at most ``QUICK_ROWS``."""
    import numpy as np

    if name == "adult":
        from experiments import small_eps_trees

        Xf, yf, Xv, yv, classes, bounds = small_eps_trees.load(validation=True,
                                                               data_dir=data_dir)
        X, y = np.concatenate([Xf, Xv]), np.concatenate([yf, yv])
        parts = [(np.arange(len(yf)), len(yf) + np.arange(len(yv)))]
        public = {"bounds": bounds, "classes": classes}
    elif name == "california_housing":
        from experiments.etr_thresholds_sweep import validation_sets

        X, y, bounds, y_bounds, parts = validation_sets(name, N_SPLITS[name], data_dir)
        public = {"bounds": bounds, "y_bounds": y_bounds}
    else:
        from experiments import uci_datasets
        from experiments.splits import validation_split

        data = uci_datasets.load_dataset(name, encoding="onehot", data_dir=data_dir)
        X, y = data.X, data.y
        parts = [validation_split(len(y))]
        public = {"bounds": data.bounds, "classes": data.classes}
    if quick:
        rng = np.random.default_rng(0)
        parts = [tuple(_subsample(np.asarray(p), True, rng) for p in parts[0])]
    return X, y, parts, public


def _jsonable_bound(b):
    import numpy as np

    b = np.asarray(b, dtype=float)
    return b.tolist() if b.ndim else float(b)


def _labels(y):
    """Labels as a numpy array ``np.save`` writes without pickling (strings as str)."""
    import numpy as np

    y = np.asarray(y)
    return y.astype(str) if y.dtype == object else y


def write_data(name, workdir, quick=False, data_dir=None):
    """Write a data set's splits as ``.npy`` files in ``workdir``; return the spec part
    (metric, public parameters, files, fit rows)."""
    import numpy as np

    X, y, parts, public = load_parts(name, quick, data_dir)
    metric = METRICS[name]
    y = np.asarray(y, dtype=float) if metric in LOWER_IS_BETTER else _labels(y)
    spec = {"metric": metric, "bounds": [_jsonable_bound(b) for b in public["bounds"]],
            "dataset_index": SEED_DATASETS.index(name), "splits": [],
            "n_fit": [int(len(f)) for f, _ in parts], "n_val": [int(len(v)) for _, v in parts]}
    if "classes" in public:
        spec["classes"] = _labels(public["classes"]).tolist()
    else:
        spec["y_bounds"] = [float(b) for b in public["y_bounds"]]
    for s_index, (fit, val) in enumerate(parts):
        files = {}
        for key, array in (("X_fit", X[fit]), ("y_fit", y[fit]), ("X_val", X[val]),
                           ("y_val", y[val])):
            files[key] = os.path.join(workdir, f"{name}_{s_index}_{key}.npy")
            np.save(files[key], np.ascontiguousarray(array), allow_pickle=False)
        spec["splits"].append(files)
    return spec


def spawn(python, spec, workdir, tag):
    """Run one child with interpreter ``python`` on ``spec``; return its report."""
    spec_path = os.path.join(workdir, f"{tag}.spec.json")
    out_path = os.path.join(workdir, f"{tag}.out.json")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    cmd = [python, "-P", os.path.abspath(__file__), "--child", spec_path, "--out", out_path]
    proc = subprocess.run(cmd, cwd=workdir, env=child_env(), capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"child {python} {tag} failed (status {proc.returncode}):\n"
                           f"{proc.stderr[-4000:]}")
    with open(out_path) as f:
        return json.load(f)


def paired(base, other, metric):
    """Paired differences (positive: ``other`` better) of two builds' fits of a cell,
    matched by split and repeat; fits with an error on either side are left out."""
    sign = -1.0 if metric in LOWER_IS_BETTER else 1.0
    by_key = {(f["split"], f["repeat"]): f for f in base}
    diffs, errors = [], 0
    for f in other:
        b = by_key.get((f["split"], f["repeat"]))
        if b is None or "error" in b or "error" in f:
            errors += 1
            continue
        diffs.append(sign * (f[metric] - b[metric]))
    return diffs, errors


def summarise(diffs):
    """``(mean, 2 SE, verdict)`` of the paired differences of a cell."""
    n = len(diffs)
    if n == 0:
        return float("nan"), float("nan"), "n/a"
    mean = sum(diffs) / n
    if n < 2:
        return mean, float("nan"), "n/a"
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    two_se = 2 * sd / math.sqrt(n)
    if all(d == 0 for d in diffs):
        verdict = "identical"
    elif mean < -two_se:
        verdict = "loses beyond noise"
    elif mean > two_se:
        verdict = "gains beyond noise"
    else:
        verdict = "within noise"
    return mean, two_se, verdict


def _mean(fits, metric):
    values = [f[metric] for f in fits if "error" not in f]
    return sum(values) / len(values) if values else float("nan")


def run(pythons, epsilons=EPSILONS, datasets=DATASETS, estimators=ESTIMATORS, n_seeds=None,
        quick=False, data_dir=None, seed=0, log=None):
    """Fit every (data set, estimator) with both builds; return the results as a dict.

    Parameters
    ----------
    pythons : list of (str, str)
        ``(label, interpreter)`` of the baseline build, then the other.
    epsilons : sequence of float
    datasets : sequence of str
        Among ``DATASETS``.
    estimators : sequence of str
        ``"gb"`` (gradient boosting), ``"ebm"`` (explainable boosting).
    n_seeds : int, optional
        Repeats per split (default ``N_SEEDS`` per data set; 1 with ``quick``).
    quick : bool, default=False
        The first split only, at most ``QUICK_ROWS`` fit and validation rows.
    data_dir : path, optional
        Where the data sets are (default ``experiments.DATA_DIR``).
    seed : int, default=0
        The first entry of every fit's seed.
    log : callable, optional
        Called with a line of progress after every child.
    """
    if len(pythons) != 2:
        raise ValueError(f"two builds to compare, got {len(pythons)}")
    (base, _), (other, _) = pythons
    started = time.perf_counter()
    results = {"labels": [base, other], "epsilons": list(epsilons), "quick": quick,
               "seed": seed, "builds": {}, "datasets": {}}
    with tempfile.TemporaryDirectory(prefix="defaults_across_builds_") as workdir:
        for name in datasets:
            data_spec = write_data(name, workdir, quick, data_dir)
            seeds = n_seeds or (1 if quick else N_SEEDS[name])
            res = {"metric": data_spec["metric"], "n_fit": data_spec["n_fit"],
                   "n_val": data_spec["n_val"], "n_seeds": seeds, "estimators": {}}
            for estimator in estimators:
                spec = dict(data_spec, estimator=estimator,
                            estimator_index=ESTIMATORS.index(estimator),
                            epsilons=list(epsilons), n_seeds=seeds, seed=seed)
                reports = {}
                for label, python in pythons:  # one at a time: the same conditions
                    report = spawn(python, spec, workdir, f"{name}_{estimator}_{label}")
                    reports[label] = report
                    results["builds"].setdefault(label, {
                        "interpreter": python,
                        **{k: report[k] for k in ("dptrees", "numpy", "sklearn", "python")}})
                    if log is not None:
                        errors = sum("error" in f for c in report["scores"].values() for f in c)
                        log(f"[{time.perf_counter() - started:6.0f} s] {name} "
                            f"{report['class']} {label}: "
                            f"{sum(len(c) for c in report['scores'].values())} fits in "
                            f"{report['seconds']:.1f} s" + (f", {errors} ERRORS" if errors else ""))
                res["estimators"][estimator] = {
                    "class": reports[other]["class"],
                    "scores": {label: reports[label]["scores"] for label in reports},
                    "cells": cells(reports[base]["scores"], reports[other]["scores"],
                                   data_spec["metric"], res["n_fit"])}
                if log is not None:
                    for eps, c in res["estimators"][estimator]["cells"].items():
                        log(f"    eps {eps:>5} {c['metric']} {base} {c['base']:.4f} "
                            f"{other} {c['other']:.4f} diff {c['diff']:+.4f} "
                            f"+- {c['two_se']:.4f} {c['verdict']}")
            results["datasets"][name] = res
    results["seconds"] = time.perf_counter() - started
    results["machine"] = machine_info()
    return results


def cells(base_scores, other_scores, metric, n_fit):
    """Per epsilon: the two builds' means and the paired difference of ``metric`` (and of
    accuracy beside the AUC)."""
    out = {}
    for eps, base_fits in base_scores.items():
        other_fits = other_scores[eps]
        diffs, errors = paired(base_fits, other_fits, metric)
        mean, two_se, verdict = summarise(diffs)
        cell = {"metric": metric, "eps_rows": float(eps) * sum(n_fit) / len(n_fit),
                "base": _mean(base_fits, metric), "other": _mean(other_fits, metric),
                "diff": mean, "two_se": two_se, "verdict": verdict, "pairs": len(diffs),
                "errors": errors,
                "base_errors": sorted({f["error"] for f in base_fits if "error" in f}),
                "other_errors": sorted({f["error"] for f in other_fits if "error" in f})}
        if metric == "auc":
            acc_diffs, _ = paired(base_fits, other_fits, "accuracy")
            acc_mean, acc_se, _ = summarise(acc_diffs)
            cell.update(base_accuracy=_mean(base_fits, "accuracy"),
                        other_accuracy=_mean(other_fits, "accuracy"),
                        accuracy_diff=acc_mean, accuracy_two_se=acc_se)
        out[eps] = cell
    return out


# ======================================================================================
# Report
# ======================================================================================


def _title(name, res, estimator):
    e = res["estimators"][estimator]
    metric = res["metric"]
    parts = len(res["n_fit"])
    return (f"{name}, {e['class']}: validation {metric.upper()}"
            f" ({'lower' if metric in LOWER_IS_BETTER else 'higher'} is better), "
            f"{parts} split(s) x {res['n_seeds']} seed(s), fit rows "
            + ", ".join(f"{n:,}" for n in sorted(set(res["n_fit"]))))


def format_table(results, name, estimator, markdown=False):
    """The table of one data set and estimator."""
    base, other = results["labels"]
    res = results["datasets"][name]
    c0 = next(iter(res["estimators"][estimator]["cells"].values()))
    diff_name = f"{other}-{base}" if c0["metric"] not in LOWER_IS_BETTER else f"{base}-{other}"
    auc = c0["metric"] == "auc"
    cols = ["eps", "eps x n", base, other, diff_name, "2 SE", "verdict"]
    if auc:
        cols[-1:-1] = [f"acc {base}", f"acc {other}", "acc diff", "acc 2 SE"]
    rows = []
    for eps, c in res["estimators"][estimator]["cells"].items():
        row = [eps, f"{c['eps_rows']:,.0f}", f"{c['base']:.4f}", f"{c['other']:.4f}",
               f"{c['diff']:+.4f}", f"{c['two_se']:.4f}"]
        if auc:
            row += [f"{c['base_accuracy']:.4f}", f"{c['other_accuracy']:.4f}",
                    f"{c['accuracy_diff']:+.4f}", f"{c['accuracy_two_se']:.4f}"]
        verdict = c["verdict"] + (f" ({c['errors']} pairs with an error)" if c["errors"]
                                  else "")
        rows.append(row + [verdict])
    title = _title(name, res, estimator)
    if markdown:
        lines = [f"{title}:", "", "| " + " | ".join(cols) + " |",
                 "|" + "---|" * len(cols)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(cols[i]), *(len(r[i]) for r in rows)) for i in range(len(cols))]
    fmt = lambda r: "  ".join(  # noqa: E731
        f"{v:<{w}}" if i == len(cols) - 1 else f"{v:>{w}}"
        for i, (v, w) in enumerate(zip(r, widths)))
    return "\n".join([title, fmt(cols), "-" * len(fmt(cols))] + [fmt(r) for r in rows])


def format_report(results, markdown=False):
    """Builds, every table, the cells that lose beyond their noise, the run time."""
    base, other = results["labels"]
    m = results["machine"]
    lines = []
    for label in results["labels"]:
        lines.append(_BENCH.build_line(label, results["builds"][label]))
    lines.append(f"difference: {other} - {base} (MAE: {base} - {other}), positive = {other} "
                 f"better; 2 SE over the paired fits (split x seed)"
                 + ("; QUICK (subsampled rows, 1 seed): a smoke test" if results["quick"]
                    else ""))
    losing = []
    for name, res in results["datasets"].items():
        for estimator, e in res["estimators"].items():
            lines += ["", format_table(results, name, estimator, markdown)]
            losing += [f"{name} {e['class']} eps {eps} (eps x n {c['eps_rows']:,.0f}): "
                       f"{c['diff']:+.4f} +- {c['two_se']:.4f}"
                       for eps, c in e["cells"].items() if c["verdict"] == "loses beyond noise"]
    lines += ["", f"cells where {other} loses beyond 2 SE: {len(losing)}"]
    lines += [f"  {line}" for line in losing]
    lines.append(f"\n{m['platform']}, {m['cpus']} CPUs, load average at the end "
                 f"{m['loadavg']}; run time {results['seconds']:.0f} s")
    return "\n".join(lines)


# ======================================================================================
# Command line
# ======================================================================================


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--python", action="append", type=parse_python, default=[],
                   metavar="LABEL=PYTHON", help="a build: give two, the baseline first")
    p.add_argument("--eps", type=float, nargs="+", help=f"epsilons (default {EPSILONS})")
    p.add_argument("--seeds", type=int, help="repeats per split (default: 5, California 3)")
    p.add_argument("--datasets", nargs="+", choices=DATASETS, default=None)
    p.add_argument("--estimators", nargs="+", choices=ESTIMATORS, default=None)
    p.add_argument("--data-dir", help="where the data sets are (default: shared/data)")
    p.add_argument("--seed", type=int, default=0, help="first entry of every fit's seed")
    p.add_argument("--quick", action="store_true",
                   help=f"eps {QUICK_EPSILONS}, 1 split, 1 seed, <= {QUICK_ROWS} rows")
    p.add_argument("--markdown", action="store_true", help="tables as Markdown")
    p.add_argument("--json", metavar="PATH", help="save the results as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--child", metavar="SPEC", help=argparse.SUPPRESS)
    p.add_argument("--out", metavar="PATH", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.child is not None:
        with open(args.child) as f:
            report = run_child(json.load(f))
        with open(args.out, "w") as f:
            json.dump(report, f)
        return 0
    if len(args.python) != 2:
        raise SystemExit("give two builds: --python BASE=PYTHON --python OTHER=PYTHON")

    def log(line):
        print(line, file=sys.stderr, flush=True)

    results = run(args.python,
                  epsilons=tuple(args.eps) if args.eps else
                  (QUICK_EPSILONS if args.quick else EPSILONS),
                  datasets=tuple(args.datasets or DATASETS),
                  estimators=tuple(args.estimators or ESTIMATORS), n_seeds=args.seeds,
                  quick=args.quick,
                  data_dir=Path(args.data_dir) if args.data_dir else None, seed=args.seed,
                  log=None if args.quiet else log)
    print(format_report(results, args.markdown))
    if args.json:
        from experiments.results_json import write_json

        write_json(args.json, results)
    return results


if __name__ == "__main__":
    main()
