"""Private bin edges against equal-width bins (issue 36's first lever).

Every setting is called as a user would: ``epsilon``, the public domain (``bounds``,
``classes`` / ``y_bounds``), ``random_state`` and the settings below; everything else is
the library default (``delta = 1e-6``).

* ``uniform``: ``bin_edges="uniform"``: equal-width bins of the bounds;
* ``default``: the estimator's default (gradient boosting's ``"auto"``: private edges
  when ``epsilon`` times the initial score's noisy count is at least 10,000; the
  explainable boosting machine's ``"uniform"``);
* ``private s``: ``bin_edges="private", edges_budget=s``: a share ``s`` of the budget
  releases each numeric feature's dyadic histogram of 1,024 fine cells, and the bins are
  its noisy quantiles (gradient boosting: half of them, the other half equal-width;
  ``dptrees/data/private_edges.py``).

Data:

* **Adult** as pandas reads it with its public domain (``experiments/adult_dataframe.py``:
  US natives, ``fnlwgt`` and ``native-country`` dropped, missing values a category of their
  own): the categorical columns keep their categories, the 5 numeric columns get private
  edges. Validation: the fixed 80 % fit / 20 % validation split of ``adult.data``
  (``experiments.splits.validation_split``); test (``--test``): fit on all of
  ``adult.data``, ROC AUC on ``adult.test``. Models: gradient boosting (``gb``) and the
  explainable boosting machine (``ebm``), library defaults.
* **California Housing** on the seed's protocol (min-max scaled over the file, ``bounds``
  and ``y_bounds`` (0, 1)): validation, the training rows of the first 3 of the seed's
  unshuffled folds, each split 80/20 (``experiments.etr_thresholds_sweep.validation_sets``);
  test (``--test``), the seed's 10 folds (train on 9, MAE on the held-out one). MAE in
  scaled units; gradient boosting.

``--exact-edges`` (an upper bound, **not differentially private**): the same budget is
spent, but the edges come from the exact fine counts (the release's noise is thrown away),
as the issue's non-private quantile edges did.

Choices are made on validation rows only; the test figures are printed as a check after
the choice. Every cell fits every setting with the same seeds (paired).

Usage::

    python -m experiments.private_edges_sweep            # Adult eps 0.03/0.1/1, 3 seeds,
                                                         # California eps 0.25/1
    python -m experiments.private_edges_sweep --test     # the same on test rows
    python -m experiments.private_edges_sweep --quick    # 2,000 rows, eps 0.1 and 1, 1 seed

``main(argv)`` returns the results as a dict. Fixed seeds make the noise recomputable:
they are for research, never for a release.
"""

import time

import numpy as np
from sklearn.metrics import roc_auc_score

from dptrees import (
    BudgetAccountant,
    DPExplainableBoostingClassifier,
    DPExplainableBoostingRegressor,
    DPGradientBoostingClassifier,
    DPGradientBoostingRegressor,
)
from experiments.adult_dataframe import read_frames
from experiments.cli import finish, sweep_parser, sweep_settings
from experiments.etr_thresholds_sweep import validation_sets
from experiments.reproduce_hoang2020 import BOUNDS, Y_BOUNDS, load_data, paper_folds
from experiments.splits import random_rows, validation_split

#: Epsilons per data set (the issue's cells).
EPSILONS = {"adult": (0.03, 0.1, 1.0), "california_housing": (0.25, 1.0)}
QUICK_EPSILONS = (0.1, 1.0)
N_SEEDS = 3
N_FOLDS = 3
QUICK_ROWS = 2000
SETTINGS = {"uniform": {"bin_edges": "uniform"},
            "default": {},
            "private 0.05": {"bin_edges": "private", "edges_budget": 0.05},
            "private 0.1": {"bin_edges": "private", "edges_budget": 0.1},
            "private 0.2": {"bin_edges": "private", "edges_budget": 0.2}}
MODELS = {"adult": {"gb": DPGradientBoostingClassifier, "ebm": DPExplainableBoostingClassifier},
          "california_housing": {"gb": DPGradientBoostingRegressor,
                                 "ebm": DPExplainableBoostingRegressor}}
DEFAULT_MODELS = {"adult": ("gb", "ebm"), "california_housing": ("gb",)}
DATASETS = tuple(MODELS)


def _adult_cells(test, quick, data_dir):
    """``[(n_fit, fit_score)]``: one split of Adult (see the module docstring)."""
    X, y, X_test, y_test, domain, classes = read_frames(data_dir)
    rows = np.arange(len(y))
    if quick:
        rows = random_rows(np.random.default_rng(0), len(y), QUICK_ROWS)
    if test:
        fit, X_val, y_val = rows, X_test, y_test
    else:
        fit_idx, val_idx = validation_split(len(rows))
        fit, X_val, y_val = rows[fit_idx], X.iloc[rows[val_idx]], y[rows[val_idx]]
    positive = y_val == classes[1]

    def fit_score(model, params, eps, rng):
        est = MODELS["adult"][model](epsilon=eps, bounds=domain, classes=classes,
                                     accountant=BudgetAccountant(), random_state=rng,
                                     **params).fit(X.iloc[fit], y[fit])
        return float(roc_auc_score(positive, est.predict_proba(X_val)[:, 1]))

    return [(len(fit), fit_score)]


def _california_cells(test, quick, data_dir):
    """``[(n_fit, fit_score)]``: a validation split per fold, or the seed's test folds."""
    path = None if data_dir is None else data_dir / "california_housing" / "cal_housing.data"
    if test:
        X, y = load_data(path)
        parts = paper_folds(len(y))
    else:
        X, y, _, _, parts = validation_sets("california_housing", N_FOLDS, data_dir)
    if quick:
        rng = np.random.default_rng(0)
        parts = [(fit[random_rows(rng, fit.size, QUICK_ROWS)], val) for fit, val in parts[:1]]
    cells = []
    for fit, val in parts:
        def fit_score(model, params, eps, rng, fit=fit, val=val):
            est = MODELS["california_housing"][model](
                epsilon=eps, bounds=BOUNDS, y_bounds=Y_BOUNDS, accountant=BudgetAccountant(),
                random_state=rng, **params).fit(X[fit], y[fit])
            return float(np.mean(np.abs(est.predict(X[val]) - y[val])))
        cells.append((len(fit), fit_score))
    return cells


def run(datasets=DATASETS, epsilons=None, n_seeds=N_SEEDS, models=None, test=False,
        quick=False, data_dir=None, settings=SETTINGS, log=print):
    """Fit every setting with the same seeds per cell; returns ``results["cells"][data
    set][model][eps][setting]``: the mean metric (AUC or MAE) and its paired difference
    from ``uniform`` with two standard errors."""
    results = {"test": test, "quick": quick, "n_seeds": n_seeds, "settings": list(settings),
               "cells": {}}
    for d_index, name in enumerate(datasets):
        parts = (_adult_cells if name == "adult" else _california_cells)(test, quick,
                                                                         data_dir)
        metric = "auc" if name == "adult" else "mae"
        res = results["cells"][name] = {"metric": metric, "n_fit": [n for n, _ in parts]}
        for model in (models or DEFAULT_MODELS[name]):
            res[model] = {}
            for eps in (epsilons or EPSILONS[name]):
                t0 = time.perf_counter()
                scores = {s: [] for s in settings}
                for p_index, (_, fit_score) in enumerate(parts):
                    for seed in range(n_seeds):
                        key = [36, d_index, int(round(eps * 1000)), p_index, seed]
                        for setting, params in settings.items():  # paired: the same seed
                            rng = np.random.default_rng(np.random.SeedSequence(key))
                            scores[setting].append(fit_score(model, params, eps, rng))
                base = np.array(scores["uniform"])
                cell = {}
                for setting in settings:
                    diff = np.array(scores[setting]) - base
                    two_se = (2 * diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1
                              else float("nan"))
                    cell[setting] = {"mean": float(np.mean(scores[setting])),
                                     "diff": float(diff.mean()), "diff_2se": float(two_se)}
                res[model][f"{eps:g}"] = cell
                if log:
                    log(f"  [{name} {model} eps={eps:g}] {metric} "
                        + " ".join(f"{s} {c['mean']:.4f}" for s, c in cell.items())
                        + f" ({time.perf_counter() - t0:.1f} s)")
    return results


def format_results(results):
    """One table per data set and model: each setting's mean, and its paired difference
    from ``uniform`` (two standard errors in brackets)."""
    settings = results["settings"]
    where = "TEST" if results["test"] else "validation"
    lines = []
    for name, res in results["cells"].items():
        for model, by_eps in res.items():
            if model in ("metric", "n_fit"):
                continue
            lines.append(f"{name} {model}: {where} {res['metric'].upper()}, fit rows "
                         f"{res['n_fit']}, {results['n_seeds']} seed(s)"
                         + (" (QUICK)" if results["quick"] else ""))
            lines.append(f"{'eps':>6}" + "".join(f"{s:>26}" for s in settings))
            for eps, cell in by_eps.items():
                lines.append(f"{eps:>6}" + "".join(
                    f"{cell[s]['mean']:>10.4f} ({cell[s]['diff']:+.4f}+-{cell[s]['diff_2se']:.4f})"
                    for s in settings))
            lines.append("")
    return "\n".join(lines)


def _exact_edges():
    """Make every later fit's edges from its exact fine counts (the release is still made
    and paid for, its output ignored): an upper bound of what private edges can give,
    never a DP result."""
    from dptrees.data import private_edges

    release = private_edges.noisy_levels

    def exact(plan, budget, counts, rng):
        release(plan, budget, counts, rng)
        return private_edges.dyadic_levels(counts).astype(float)

    private_edges.noisy_levels = exact


def main(argv=None):
    parser = sweep_parser(__doc__, f"{QUICK_ROWS} fit rows, eps {QUICK_EPSILONS}, 1 seed",
                          DATASETS)
    parser.add_argument("--test", action="store_true",
                        help="test rows (adult.test, the seed's 10 folds): a check, "
                             "never for choosing")
    parser.add_argument("--estimators", nargs="+", choices=["gb", "ebm"], default=None)
    parser.add_argument("--settings", nargs="+", choices=list(SETTINGS), default=None,
                        help="a subset of the settings (uniform is always fitted)")
    parser.add_argument("--exact-edges", action="store_true",
                        help="edges from the exact counts: a NON-PRIVATE upper bound")
    args = parser.parse_args(argv)
    if args.exact_edges:
        _exact_edges()
    start = time.perf_counter()
    _, n_seeds, datasets = sweep_settings(args, None, None, N_SEEDS, DATASETS)
    epsilons = tuple(args.eps) if args.eps else (QUICK_EPSILONS if args.quick else None)
    chosen = SETTINGS if args.settings is None else {
        name: SETTINGS[name] for name in ["uniform"] + [s for s in args.settings
                                                         if s != "uniform"]}
    results = run(datasets, epsilons, n_seeds, args.estimators, test=args.test,
                  quick=args.quick, data_dir=args.data_dir, settings=chosen)
    return finish(results, format_results(results), start, args.json)


if __name__ == "__main__":
    main()
