"""DP ExtraTrees regression: ``n_thresholds="auto"`` against 1, library defaults otherwise.

The default of ``DPExtraTreesRegressor(n_thresholds=...)`` is chosen here, on validation
rows only. Both settings are called as a user would: only ``epsilon``, the public
``bounds`` and ``y_bounds``, ``random_state`` (and ``partition``, both values measured)
are given; everything else is the library default.

Data (validation rows only; no fold's test rows are read):

* California Housing as in ``experiments/reproduce_hoang2020.py`` (its loader, all
  columns scaled to [0, 1], public ``bounds = y_bounds = (0, 1)``; its unshuffled
  ``KFold(10)``): the training rows of each of its first 3 folds, split 80/20 into
  fit / validation rows by :func:`experiments.splits.validation_split`;
* Wine Quality (red) as in ``experiments/reproduce_diffpets.py`` (loader and public
  bounds of ``experiments/uci_datasets.py``; ``y_bounds = (0, 10)``): the training rows
  of each of its first 3 train/test splits (``train_test_split(random_state=rep)``),
  split 80/20 the same way.

Every cell fits both settings with the *same* seeds (a paired comparison): the printed
difference ``auto - 1`` is the mean over folds x seeds of the per-fit differences, with
twice its standard error (``2 * std(ddof=1) / sqrt(n)``) as the noise band. Metric: MAE
(the metric of ``reproduce_hoang2020``; for wine also MSE, the metric of
``reproduce_diffpets``). For reference, the MAE of the fit rows' exact mean
(non-private).

Usage::

    python -m experiments.etr_thresholds_sweep            # 3 folds x 20 seeds (~25 s, 1 core)
    python -m experiments.etr_thresholds_sweep --quick    # 1 fold, 2 seeds, eps {0.5, 2}
    python -m experiments.etr_thresholds_sweep --eps 0.1 --seeds 100 --seed 2 \
        --models california_housing --json out.json      # an independent replicate

``--seed`` (default 0) starts other random streams: an independent replicate of the
cells. The default run chose ``DPExtraTreesRegressor``'s ``n_thresholds="auto"`` (its
figures are in :func:`dptrees.forest.auto_n_thresholds`); replicates with ``--seed 1``
(40 seeds) and ``--seed 2`` (100 seeds) checked its cells at small epsilon, and
``--seed 1 --seeds 100 --models wine_quality`` the wine cells.

``main(argv)`` returns the results as a dict. Fixed seeds make the noise recomputable:
they are for research, never for a release.
"""

import time

import numpy as np
from sklearn.model_selection import train_test_split

from dptrees import BudgetAccountant, DPExtraTreesRegressor

from experiments import uci_datasets as uci
from experiments.cli import finish, paired_difference, sweep_parser, sweep_settings
from experiments.reproduce_hoang2020 import BOUNDS, Y_BOUNDS, load_data, paper_folds
from experiments.splits import validation_split

EPSILONS = (0.1, 0.25, 0.5, 1.0, 2.0)
QUICK_EPSILONS = (0.5, 2.0)
N_SEEDS = 20
N_FOLDS_USED = 3
SETTINGS = {"1": 1, "auto": "auto"}
MODES = {"shared": False, "partition": True}
DATASETS = ("california_housing", "wine_quality")


def validation_sets(name, n_folds, data_dir=None):
    """``(X, y, bounds, y_bounds, [(fit_idx, val_idx), ...])`` of ``name``: the fit and
    validation rows of the training rows of its first ``n_folds`` folds / splits."""
    if name == "california_housing":
        path = None if data_dir is None else data_dir / "california_housing" / "cal_housing.data"
        X, y = load_data(path)
        bounds, y_bounds = BOUNDS, Y_BOUNDS
        trains = [train for train, _ in paper_folds(len(y))[:n_folds]]
    else:
        ds = uci.load_wine_quality(data_dir=data_dir)
        X, y, bounds, y_bounds = ds.X, np.asarray(ds.y, float), ds.bounds, ds.y_bounds
        idx = np.arange(len(y))
        trains = [train_test_split(idx, test_size=0.2, random_state=rep)[0]
                  for rep in range(n_folds)]
    parts = []
    for train in trains:
        fit, val = validation_split(len(train))
        parts.append((train[fit], train[val]))
    return X, y, bounds, y_bounds, parts


def run(epsilons=EPSILONS, n_seeds=N_SEEDS, datasets=DATASETS, n_folds=N_FOLDS_USED,
        quick=False, data_dir=None, seed=0, log=print):
    results = {"epsilons": list(epsilons), "n_seeds": n_seeds, "n_folds": n_folds,
               "quick": quick, "datasets": {}}
    for name in datasets:
        d_index = DATASETS.index(name)  # a cell's seeds do not depend on the other cells
        X, y, bounds, y_bounds, parts = validation_sets(name, n_folds, data_dir)
        res = {"n_fit": [len(f) for f, _ in parts], "n_val": [len(v) for _, v in parts],
               "mean_mae": float(np.mean([np.mean(np.abs(y[v] - y[f].mean()))
                                          for f, v in parts])),
               "cells": {}}
        for mode, partition in MODES.items():
            for eps in epsilons:
                t0 = time.perf_counter()
                mae = {s: [] for s in SETTINGS}
                mse = {s: [] for s in SETTINGS}
                for f_index, (fit, val) in enumerate(parts):
                    for s in range(n_seeds):
                        key = [seed, d_index, int(partition), int(round(eps * 1000)),
                               f_index, s]
                        for setting, value in SETTINGS.items():
                            # the same seed for both settings: a paired comparison
                            est = DPExtraTreesRegressor(
                                epsilon=eps, n_thresholds=value, partition=partition,
                                bounds=bounds, y_bounds=y_bounds,
                                accountant=BudgetAccountant(),
                                random_state=np.random.default_rng(np.random.SeedSequence(key)))
                            err = est.fit(X[fit], y[fit]).predict(X[val]) - y[val]
                            mae[setting].append(float(np.mean(np.abs(err))))
                            mse[setting].append(float(np.mean(err ** 2)))
                diff = np.asarray(mae["auto"]) - np.asarray(mae["1"])
                mean_diff, two_se = paired_difference(diff)
                cell = {"mae": {s: float(np.mean(v)) for s, v in mae.items()},
                        "mse": {s: float(np.mean(v)) for s, v in mse.items()},
                        "mae_values": mae,
                        "diff": mean_diff,
                        "diff_2se": two_se,
                        "auto_wins": int(np.sum(diff < 0)), "n": int(diff.size),
                        "seconds": time.perf_counter() - t0}
                res["cells"][f"{mode} {eps:g}"] = cell
                if log:
                    log(f"  [{name} {mode} eps={eps:g}] MAE 1: {cell['mae']['1']:.4f} "
                        f"auto: {cell['mae']['auto']:.4f} diff {cell['diff']:+.4f} "
                        f"+- {cell['diff_2se']:.4f} ({cell['seconds']:.1f} s)")
        results["datasets"][name] = res
    return results


def format_results(results):
    lines = []
    for name, res in results["datasets"].items():
        lines.append(f"{name}: validation MAE, mean over {results['n_folds']} fold(s) x "
                     f"{results['n_seeds']} seed(s) (fit rows {res['n_fit']}, validation "
                     f"rows {res['n_val']}); exact mean of the fit rows: "
                     f"{res['mean_mae']:.4f}" + (" (QUICK)" if results["quick"] else ""))
        lines.append(f"{'mode':<10}{'eps':>6}{'MAE 1':>9}{'MAE auto':>10}{'auto-1':>9}"
                     f"{'2 SE':>8}{'auto wins':>11}{'MSE 1':>10}{'MSE auto':>10}")
        for key, c in res["cells"].items():
            mode, eps = key.split()
            lines.append(f"{mode:<10}{eps:>6}{c['mae']['1']:>9.4f}{c['mae']['auto']:>10.4f}"
                         f"{c['diff']:>+9.4f}{c['diff_2se']:>8.4f}"
                         f"{c['auto_wins']:>6}/{c['n']:<4}"
                         f"{c['mse']['1']:>10.4f}{c['mse']['auto']:>10.4f}")
        lines.append("")
    return "\n".join(lines).rstrip()


def main(argv=None):
    parser = sweep_parser(__doc__, f"1 fold, eps {QUICK_EPSILONS}, 2 seeds", DATASETS)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    epsilons, n_seeds, datasets = sweep_settings(args, EPSILONS, QUICK_EPSILONS, N_SEEDS,
                                                 DATASETS)
    if args.quick and not args.seeds:
        n_seeds = 2
    results = run(epsilons, n_seeds, datasets, n_folds=1 if args.quick else N_FOLDS_USED,
                  quick=args.quick, data_dir=args.data_dir, seed=args.seed)
    return finish(results, format_results(results), start, args.json)


if __name__ == "__main__":
    main()
