"""DP classification of Adult with dptrees' trees and forests, settings chosen on training data.

Data (``shared/seeds.md`` section 3, the preparation of Zhang et al.'s DP AdaBoost): UCI
Adult (doi:10.24432/C5XW20), US natives only, ``fnlwgt`` dropped (and ``native-country``,
constant after the filter); train on ``adult.data`` (29,170 rows), test on ``adult.test``
(14,662 rows; banner line skipped, trailing ``.`` of the labels removed). 12 attributes:
categorical ones with ``adult.names``' documented categories plus ``?``, numeric ones with
public bounds (``experiments/uci_datasets.py``): age (17, 90), education-num (1, 16),
capital-gain (0, 99999), capital-loss (0, 4356), hours-per-week (1, 99).

Models, at eps in {0.1, 0.5, 1, 2, 4} (each fit spends ``eps`` on an unlimited
``BudgetAccountant`` of its own), all with ``selection="permute_and_flip"`` (never worse
than the exponential mechanism in expected utility) and ``n_bins=40`` (at least the 17
categories of ``education`` so that ordinal categories keep bins of their own; 40
equal-width bins of the numeric bounds):

* ``DPDecisionTreeClassifier`` (greedy: the split is chosen among all (feature, edge)
  candidates, Gini utility);
* ``DPPartitionForestClassifier`` (greedy trees on disjoint parts, full eps each);
* ``DPExtraTreesClassifier`` with ``partition=False`` (DiffPETs: every tree reads all
  rows with ``eps / n_estimators``) and ``partition=True``.

Baselines: the majority class of ``adult.data`` (non-private), scikit-learn's
``DecisionTreeClassifier`` and ``ExtraTreesClassifier(n_estimators=100)`` (non-private,
``max_depth`` chosen on the same validation split).

How the settings were chosen (honesty): ``adult.test`` is used *only* for the final
numbers. ``adult.data`` is split once into 80 % fit / 20 % validation
(``train_test_split(random_state=0)``); for every model and every eps, each
configuration of a grid fixed in :data:`GRIDS` before this script's first run
(encoding ordinal / one-hot, ``max_depth``, ``budget_weights``, number of trees,
``max_features``) is fitted on the fit part with :data:`N_VAL_SEEDS` seeds and scored on
the validation part; the configuration with the best mean validation accuracy is refitted on all of
``adult.data`` with :data:`N_TEST_SEEDS` other seeds and scored on ``adult.test`` (mean,
sample std). The "best DP classifier" at eps = 1 is likewise the model with the best
*validation* accuracy, not the best test accuracy. (Note: the selection reads the training
data without noise, so selection + fit as a whole is not eps-DP — each final model is
eps-DP given its hyper-parameters; private hyper-parameter selection, e.g. Liu & Talwar
2019 or Papernot & Steinke 2022, would cost a little more budget. The printed spread of
validation accuracies over the grid shows how much the choice matters.) Disclosure: before
the script existed, a timing check fitted a few configurations at eps = 1 on all of
``adult.data`` and scored them on ``adult.test``; the grids were written after it, but
are not tuned on it (what it measured, and the recorded full run: ``RESULTS.md`` in this
folder).

Target of the issue: the best DP classifier reaches >= 0.82 test accuracy at eps = 1
(majority class 0.750 by the issue's count: that is the US-natives test set *with the rows
holding a ``?`` dropped*, 13,788 rows, 0.7496; with ``?`` kept as a category, as here by
default, the 14,662 US-native test rows give 0.7597. ``--drop-missing`` runs on the former.
diffprivlib's DP random forest is reported by the issue at 0.753, not measured here).

Usage::

    python -m experiments.adult_classification            # full: ~3-5 min on 2 cores
    python -m experiments.adult_classification --quick    # eps 1 only, small grids (< 60 s)
    python -m experiments.adult_classification --json out.json

``main(argv)`` returns all results as a dict. Fixed seeds make the noise recomputable:
they are for research, never for a release.
"""

import argparse
import itertools
import platform
import time
from pathlib import Path

import numpy as np
from sklearn.ensemble import ExtraTreesClassifier
from sklearn.tree import DecisionTreeClassifier

import dptrees
from dptrees import (
    BudgetAccountant,
    DPDecisionTreeClassifier,
    DPExtraTreesClassifier,
    DPPartitionForestClassifier,
)

from experiments import uci_datasets as uci
from experiments.cli import finish
from experiments.splits import validation_split


EPSILONS = (0.1, 0.5, 1.0, 2.0, 4.0)
TARGET_EPS = 1.0
TARGET_ACCURACY = 0.82
ISSUE_MAJORITY = 0.750   # as stated by the issue (not measured here)
ISSUE_DIFFPRIVLIB = 0.753  # diffprivlib's DP random forest, as stated by the issue
N_BINS = 40
SELECTION = "permute_and_flip"
N_VAL_SEEDS = 3
N_TEST_SEEDS = 5
N_JOBS = -1

MODELS = {
    "DP tree": DPDecisionTreeClassifier,
    "DP partition forest": DPPartitionForestClassifier,
    "DP ExtraTrees": DPExtraTreesClassifier,
    "DP ExtraTrees partition": DPExtraTreesClassifier,
}
# The settings the recorded figures were measured with, where a later library default
# differs (the classifiers' prior_strength and budget_weights defaults, and DP
# ExtraTrees' n_thresholds="auto", came later).
_AS_RECORDED = {"prior_strength": 0.0}
_ET_AS_RECORDED = dict(_AS_RECORDED, budget_weights=(1.0, 1.0, 1.0), n_thresholds=1)
FIXED = {"DP tree": _AS_RECORDED, "DP partition forest": _AS_RECORDED,
         "DP ExtraTrees": dict(_ET_AS_RECORDED, partition=False),
         "DP ExtraTrees partition": dict(_ET_AS_RECORDED, partition=True)}


def _grid(**axes):
    keys = list(axes)
    return [dict(zip(keys, values)) for values in itertools.product(*axes.values())]


# Fixed before the script's first run (see the module docstring). Rationale: depth
# trades split resolution against budget per release (eps / (2 d + 2) with equal
# weights); budget weights (count, split, leaf): equal (the papers'), more to the split
# choice, or less to the stopping counts and more to leaves; forests: few trees keep
# more rows (partition) or more budget (sequential) per tree; ExtraTrees: sqrt(p)
# random candidates or one per feature.
WEIGHTS = ((1.0, 1.0, 1.0), (1.0, 2.0, 1.0), (0.5, 1.0, 2.0))
GRIDS = {
    "DP tree": _grid(encoding=("ordinal", "onehot"), max_depth=(3, 4, 5, 6, 8, 10),
                     budget_weights=WEIGHTS),
    "DP partition forest": _grid(encoding=("ordinal", "onehot"), n_estimators=(3, 5, 10),
                                 max_depth=(3, 5, 7), budget_weights=((1.0, 1.0, 1.0),
                                                                      (0.5, 1.0, 2.0))),
    "DP ExtraTrees": _grid(encoding=("ordinal", "onehot"), n_estimators=(3, 10, 25),
                           max_depth=(4, 6, 8), max_features=("sqrt", None)),
    "DP ExtraTrees partition": _grid(encoding=("ordinal", "onehot"), n_estimators=(3, 10, 25),
                                     max_depth=(4, 6, 8), max_features=("sqrt", None)),
}
QUICK_GRIDS = {
    "DP tree": _grid(encoding=("ordinal",), max_depth=(4, 6), budget_weights=WEIGHTS[:1]),
    "DP partition forest": _grid(encoding=("ordinal",), n_estimators=(5,), max_depth=(5,),
                                 budget_weights=WEIGHTS[:1]),
    "DP ExtraTrees": _grid(encoding=("ordinal",), n_estimators=(10,), max_depth=(6,),
                           max_features=("sqrt",)),
    "DP ExtraTrees partition": _grid(encoding=("ordinal",), n_estimators=(5,), max_depth=(6,),
                                     max_features=("sqrt",)),
}
SKLEARN_TREE_DEPTHS = (2, 3, 4, 5, 6, 8, 10, 12, 15, None)
SKLEARN_ET_DEPTHS = (4, 8, 12, 16, 20, None)


def load(data_dir=None, drop_missing=False):
    """``{encoding: (train, test)}`` Datasets for both encodings."""
    return {enc: uci.load_adult(encoding=enc, data_dir=data_dir, drop_missing=drop_missing)
            for enc in ("ordinal", "onehot")}


def _seed(*keys):
    return np.random.SeedSequence([int(k) for k in keys])


def _eps_key(eps):
    return int(round(eps * 1000))


def make_model(model, config, epsilon, dataset, rng):
    params = {k: v for k, v in config.items() if k != "encoding"}
    params.update(FIXED.get(model, {}))
    cls = MODELS[model]
    if cls is not DPDecisionTreeClassifier:
        params["n_jobs"] = N_JOBS
    return cls(epsilon=epsilon, n_bins=N_BINS, selection=SELECTION, bounds=dataset.bounds,
               classes=dataset.classes, accountant=BudgetAccountant(), random_state=rng,
               **params)


def accuracy(est, X, y):
    return float(np.mean(est.predict(X) == y))


def _config_name(config):
    parts = []
    for k, v in config.items():
        if k == "budget_weights":
            v = "(" + ",".join(f"{w:g}" for w in v) + ")"
        parts.append(f"{k}={v}")
    return " ".join(parts)


def select_config(model, grid, epsilon, data, fit_idx, val_idx, n_seeds, seed=0):
    """Best configuration by mean validation accuracy; also every config's score."""
    scores = []
    m_index = list(MODELS).index(model)
    for c_index, config in enumerate(grid):
        train, _ = data[config["encoding"]]
        accs = []
        for s in range(n_seeds):
            rng = np.random.default_rng(_seed(seed, 1, m_index, _eps_key(epsilon), c_index, s))
            est = make_model(model, config, epsilon, train, rng)
            est.fit(train.X[fit_idx], train.y[fit_idx])
            accs.append(accuracy(est, train.X[val_idx], train.y[val_idx]))
        scores.append(float(np.mean(accs)))
    best = int(np.argmax(scores))
    return grid[best], scores


def final_test_accuracy(model, config, epsilon, data, n_seeds, seed=0):
    train, test = data[config["encoding"]]
    m_index = list(MODELS).index(model)
    accs = []
    for s in range(n_seeds):
        rng = np.random.default_rng(_seed(seed, 2, m_index, _eps_key(epsilon), s))
        est = make_model(model, config, epsilon, train, rng)
        est.fit(train.X, train.y)
        accs.append(accuracy(est, test.X, test.y))
    return accs


def _summary(values):
    arr = np.asarray(values, dtype=float)
    return {"mean": float(arr.mean()), "std": float(arr.std(ddof=1)) if arr.size > 1 else 0.0,
            "values": [float(v) for v in arr]}


def baselines(data, fit_idx, val_idx, n_seeds, quick=False):
    """Majority class and non-private sklearn trees (depth chosen on validation)."""
    train, test = data["ordinal"]
    values, counts = np.unique(train.y, return_counts=True)
    majority = values[np.argmax(counts)]
    out = {"majority class": {"config": f"predict {majority!r}",
                              "test": _summary([np.mean(test.y == majority)])}}
    for name, factory, depths in (
            ("sklearn DecisionTree", lambda d, s: DecisionTreeClassifier(max_depth=d,
                                                                          random_state=s),
             SKLEARN_TREE_DEPTHS),
            ("sklearn ExtraTrees", lambda d, s: ExtraTreesClassifier(
                n_estimators=100, max_depth=d, random_state=s, n_jobs=N_JOBS),
             SKLEARN_ET_DEPTHS)):
        if quick:
            depths = depths[:2]
        val = []
        for d in depths:
            est = factory(d, 0).fit(train.X[fit_idx], train.y[fit_idx])
            val.append(accuracy(est, train.X[val_idx], train.y[val_idx]))
        best = depths[int(np.argmax(val))]
        accs = [accuracy(factory(best, 100 + s).fit(train.X, train.y), test.X, test.y)
                for s in range(n_seeds)]
        out[name] = {"config": f"max_depth={best} (ordinal)", "validation": max(val),
                     "test": _summary(accs)}
    return out


def run(epsilons=EPSILONS, grids=None, n_val_seeds=N_VAL_SEEDS, n_test_seeds=N_TEST_SEEDS,
        models=tuple(MODELS), seed=0, data_dir=None, quick=False, log=print,
        drop_missing=False):
    grids = GRIDS if grids is None else grids
    data = load(data_dir, drop_missing)
    train, test = data["ordinal"]
    fit_idx, val_idx = validation_split(len(train.y))
    results = {"n_train": int(len(train.y)), "n_test": int(len(test.y)),
               "n_fit": int(len(fit_idx)), "n_validation": int(len(val_idx)),
               "test_positive_rate": float(np.mean(test.y == ">50K")),
               "epsilons": list(epsilons), "drop_missing": bool(drop_missing), "dp": {}}
    results["baselines"] = baselines(data, fit_idx, val_idx, n_test_seeds, quick=quick)
    for model in models:
        results["dp"][model] = {}
        for eps in epsilons:
            t0 = time.perf_counter()
            config, scores = select_config(model, grids[model], eps, data, fit_idx, val_idx,
                                           n_val_seeds, seed)
            accs = final_test_accuracy(model, config, eps, data, n_test_seeds, seed)
            results["dp"][model][eps] = {
                "config": config, "config_name": _config_name(config),
                "validation": float(max(scores)),
                "validation_spread": [float(min(scores)), float(np.median(scores)),
                                      float(max(scores))],
                "n_configs": len(scores), "test": _summary(accs),
                "seconds": time.perf_counter() - t0,
            }
            if log:
                r = results["dp"][model][eps]
                log(f"  [{model} eps={eps:g}] {r['config_name']}: validation "
                    f"{r['validation']:.4f}, test {r['test']['mean']:.4f} "
                    f"({r['seconds']:.1f} s)")
    target = target_check(results)
    results["target"] = target
    return results


def target_check(results, eps=TARGET_EPS):
    """Best DP model at ``eps`` *by validation accuracy*, and its test accuracy."""
    if eps not in results["epsilons"]:
        return None
    cands = {m: r[eps] for m, r in results["dp"].items() if eps in r}
    best = max(cands, key=lambda m: cands[m]["validation"])
    acc = cands[best]["test"]["mean"]
    return {"epsilon": eps, "model": best, "config": cands[best]["config_name"],
            "test_accuracy": acc, "test_std": cands[best]["test"]["std"],
            "threshold": TARGET_ACCURACY, "passed": bool(acc >= TARGET_ACCURACY)}


def format_results(results):
    eps_list = results["epsilons"]
    models = list(results["dp"])
    missing = ", rows with '?' dropped" if results.get("drop_missing") else ""
    lines = [f"Adult (US natives, fnlwgt dropped{missing}): train {results['n_train']} rows "
             f"(settings chosen on {results['n_fit']} fit / {results['n_validation']} "
             f"validation rows of adult.data), test {results['n_test']} rows of adult.test",
             "", "Test accuracy, mean (std) over seeds of the final fits on all of adult.data:"]
    width = 26
    lines.append("eps   " + "".join(f"{m:>{width}}" for m in models))
    for eps in eps_list:
        row = f"{eps:<6g}"
        for m in models:
            t = results["dp"][m][eps]["test"]
            row += f"{t['mean']:.4f} ({t['std']:.4f})".rjust(width)
        lines.append(row)
    lines.append("")
    lines.append("Non-private baselines (test accuracy):")
    for name, b in results["baselines"].items():
        t = b["test"]
        lines.append(f"  {name:<22} {t['mean']:.4f} ({t['std']:.4f})  [{b['config']}]")
    lines.append(f"  (issue's figures, not measured here: majority {ISSUE_MAJORITY:.3f}, "
                 f"diffprivlib DP random forest {ISSUE_DIFFPRIVLIB:.3f})")
    lines.append("")
    lines.append("Chosen settings (best mean validation accuracy; validation min/median/max "
                 "over the grid):")
    for m in models:
        for eps in eps_list:
            r = results["dp"][m][eps]
            lo, med, hi = r["validation_spread"]
            lines.append(f"  {m:<24} eps={eps:<4g} {r['config_name']}  val {r['validation']:.4f}"
                         f"  [grid of {r['n_configs']}: {lo:.3f} / {med:.3f} / {hi:.3f}]")
    t = results.get("target")
    if t:
        lines.append("")
        lines.append(f"Target: best DP classifier at eps={t['epsilon']:g} (chosen by validation) = "
                     f"{t['model']} [{t['config']}]: test accuracy {t['test_accuracy']:.4f} "
                     f"({t['test_std']:.4f}) -> {'PASS' if t['passed'] else 'FAIL'} "
                     f"(>= {t['threshold']})")
        lines.append("Test accuracy at eps=1 of every model: " + "; ".join(
            f"{m} {results['dp'][m][t['epsilon']]['test']['mean']:.4f}" for m in models))
    return "\n".join(lines)


def _parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help="eps 1 only, tiny grids, 1 validation and 2 test seeds (smoke test)")
    p.add_argument("--eps", type=float, nargs="+", default=None, help="epsilons")
    p.add_argument("--models", nargs="+", default=None, choices=list(MODELS))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data-dir", type=Path, default=None)
    p.add_argument("--drop-missing", action="store_true",
                   help="also drop rows with '?' (the issue's majority 0.750 is this test set)")
    p.add_argument("--json", type=Path, default=None)
    return p


def main(argv=None):
    args = _parser().parse_args(argv)
    start = time.perf_counter()
    print(f"Adult DP classification with dptrees {dptrees.__version__}, numpy "
          f"{np.__version__}, Python {platform.python_version()} on {platform.machine()}")
    if args.quick:
        kw = dict(epsilons=(1.0,), grids=QUICK_GRIDS, n_val_seeds=1, n_test_seeds=2, quick=True)
    else:
        kw = dict(epsilons=EPSILONS, grids=GRIDS, n_val_seeds=N_VAL_SEEDS,
                  n_test_seeds=N_TEST_SEEDS)
    if args.eps:
        kw["epsilons"] = tuple(args.eps)
    if args.models:
        kw["models"] = tuple(args.models)
    print(f"{'QUICK mode: ' if args.quick else ''}selection={SELECTION}, n_bins={N_BINS}, "
          f"{kw['n_val_seeds']} validation seed(s) per config, {kw['n_test_seeds']} test seeds")
    results = run(seed=args.seed, data_dir=args.data_dir, drop_missing=args.drop_missing, **kw)
    return finish(results, format_results(results), start, args.json)


if __name__ == "__main__":
    main()
