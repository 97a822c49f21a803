"""DP gradient boosting: guided random splits against uniform ones, on validation rows.

This sweep chose the first rule of ``split="auto"`` (guided splits from ``eps x n >=
10,000``); ``experiments/selected_splits_sweep.py``, which shares its machinery, chose the
present one (random trees with a selected root from ``eps x n >= 1,000``). Both settings
are called as a user would: only ``epsilon``, the public ``bounds`` and ``classes`` /
``y_bounds``, ``random_state`` and ``split`` are given; everything else is the library
default (``select_depth="auto"`` selects nothing for an explicit ``split``).

* ``split="random"``: every split (feature, bin) uniform;
* ``split="guided"``: ``split_fraction`` (0.3) of the budget after the initial score
  releases one histogram of the initial gradients; every tree draws its splits from the
  prior it gives (``dptrees/boosting/_split_prior.py``).

Data (validation rows only; no test row is read):

* Adult (``experiments/small_eps_trees.py``'s one-hot preparation): the fixed 80 % fit /
  20 % validation split of ``adult.data``. Metrics: ROC AUC and accuracy;
* California Housing (``experiments/etr_thresholds_sweep.validation_sets``): the
  training rows of the first 3 of the seed's folds, each split 80/20. Metric: MAE.

Every cell fits both settings with the same seeds (a paired comparison). The printed
difference ``guided - random`` is the mean over fits of the per-fit differences, with
twice its standard error as the noise band; ``eps x n`` is epsilon times the number of
fit rows, what ``split="auto"`` compares with 10,000 (through a noisy count).

``--test-folds`` is a check on test rows, made after the choice and never used for it:
California Housing on the seed's 10 unshuffled folds (train on 9, MAE on the held-out
one, 3 seeds each), the protocol of ``reproduce_hoang2020`` and ``compare_boosting``.
Its folds are blocks of a file ordered by place, so a test fold is a region the model
did not see.

Usage::

    python -m experiments.guided_splits_sweep           # 7 eps, Adult 5 seeds,
                                                        # California 3 folds x 3 seeds
    python -m experiments.guided_splits_sweep --quick   # eps {0.1, 2}, 1 seed, 1 fold
    python -m experiments.guided_splits_sweep --test-folds --eps 0.5 1 2

``main(argv)`` returns the results as a dict. Fixed seeds make the noise recomputable:
they are for research, never for a release.
"""

import time

import numpy as np
from sklearn.metrics import roc_auc_score

from dptrees import (
    DPExplainableBoostingClassifier,
    DPExplainableBoostingRegressor,
    BudgetAccountant,
    DPGradientBoostingClassifier,
    DPGradientBoostingRegressor,
)
from dptrees.federated import (
    DPFederatedGradientBoostingClassifier,
    DPFederatedGradientBoostingRegressor,
)

from experiments import small_eps_trees, uci_datasets
from experiments.cli import finish, paired_difference, sweep_parser, sweep_settings
from experiments.etr_thresholds_sweep import validation_sets
from experiments.reproduce_hoang2020 import BOUNDS, Y_BOUNDS, load_data, paper_folds
from experiments.splits import random_rows, validation_split

EPSILONS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0)
QUICK_EPSILONS = (0.1, 2.0)
N_SEEDS = {"adult": 5, "california_housing": 3, "mushroom": 6, "nursery": 6, "adult_age": 5}
N_FOLDS = 3
#: The settings compared (estimator parameters beside the defaults), and which two the
#: printed difference is of: (baseline, challenger).
SETTINGS = {"random": {"split": "random"}, "guided": {"split": "guided"}}
COMPARED = ("random", "guided")
DATASETS = ("adult", "california_housing")
#: Every data set a sweep can take (the first two by default); UCI Mushroom and Nursery
#: (one-hot, ``experiments.splits.validation_split`` of their rows, validation accuracy)
#: cross-check classification rules on data they were not chosen on.
ALL_DATASETS = DATASETS + ("mushroom", "nursery")
#: A second regression task beside California Housing (``experiments/boosting_defaults_sweep.py``
#: checks the regressor's defaults on it): age from the other Adult columns.
ADULT_AGE = "adult_age"
METRICS = {"adult": "auc", "california_housing": "mae", "mushroom": "accuracy",
           "nursery": "accuracy", "adult_age": "mae"}
QUICK_UCI_ROWS = 2000


#: The estimators a setting can name with its ``"estimator"`` key (default ``"gb"``):
#: ``(classifier, regressor)``.
ESTIMATORS = {"gb": (DPGradientBoostingClassifier, DPGradientBoostingRegressor),
              "ebm": (DPExplainableBoostingClassifier, DPExplainableBoostingRegressor),
              "federated": (DPFederatedGradientBoostingClassifier,
                            DPFederatedGradientBoostingRegressor)}


def _estimator(params, regression):
    """The class a setting's ``params`` name and the rest of its parameters."""
    params = dict(params)
    return ESTIMATORS[params.pop("estimator", "gb")][regression], params


def _adult_cells(data_dir, quick):
    Xf, yf, Xv, yv, classes, bounds = small_eps_trees.load(validation=True, quick=quick,
                                                           data_dir=data_dir)
    positive = yv == classes[1]

    def fit_score(params, eps, rng):
        model, params = _estimator(params, False)
        est = model(epsilon=eps, bounds=bounds, classes=classes,
                    accountant=BudgetAccountant(), random_state=rng, **params).fit(Xf, yf)
        proba = est.predict_proba(Xv)[:, 1]
        return {"auc": float(roc_auc_score(positive, proba)),
                "accuracy": float(np.mean((proba > 0.5) == positive))}

    return [(len(yf), fit_score)]


def _fit_and_validation_rows(n_rows, quick):
    """The fit and validation rows (``validation_split``) of a table of ``n_rows``, or of
    a fixed random subsample of ``QUICK_UCI_ROWS`` of them with ``quick``."""
    rows = (random_rows(np.random.default_rng(0), n_rows, QUICK_UCI_ROWS) if quick
            else np.arange(n_rows))
    return tuple(rows[part] for part in validation_split(len(rows)))


def _regression_scores(errors, scale=1.0):
    """MAE (the compared metric) and RMSE (printed beside it), in units of ``scale``."""
    return {"mae": float(np.mean(np.abs(errors))) / scale,
            "rmse": float(np.sqrt(np.mean(np.square(errors)))) / scale}


def _adult_age_cells(data_dir, quick):
    """A second regression task on other data than California Housing: a person's age
    from the other Adult columns (ordinal; the income label as one more 0/1 column),
    public target bounds (17, 90) (``uci_datasets.ADULT_NUMERIC_BOUNDS``); the fixed 80 %
    fit / 20 % validation split of ``adult.data``. MAE in units of the target range."""
    train, _ = uci_datasets.load_adult(encoding="ordinal", data_dir=data_dir)
    age = list(train.feature_names).index("age")
    keep = [j for j in range(train.X.shape[1]) if j != age]
    X = np.column_stack([train.X[:, keep], (train.y == train.classes[1]).astype(float)])
    lower, upper = (np.asarray(b, dtype=float) for b in train.bounds)
    bounds = (np.append(lower[keep], 0.0), np.append(upper[keep], 1.0))
    y, y_bounds = train.X[:, age].astype(float), uci_datasets.ADULT_NUMERIC_BOUNDS["age"]
    fit, val = _fit_and_validation_rows(len(y), quick)
    scale = y_bounds[1] - y_bounds[0]

    def fit_score(params, eps, rng):
        model, params = _estimator(params, True)
        est = model(epsilon=eps, bounds=bounds, y_bounds=y_bounds,
                    accountant=BudgetAccountant(), random_state=rng,
                    **params).fit(X[fit], y[fit])
        return _regression_scores(est.predict(X[val]) - y[val], scale)

    return [(len(fit), fit_score)]


def _uci_cells(name, data_dir, quick):
    data = uci_datasets.load_dataset(name, encoding="onehot", data_dir=data_dir)
    fit, val = _fit_and_validation_rows(len(data.y), quick)

    def fit_score(params, eps, rng):
        model, params = _estimator(params, False)
        est = model(epsilon=eps, bounds=data.bounds, classes=data.classes,
                    accountant=BudgetAccountant(), random_state=rng,
                    **params).fit(data.X[fit], data.y[fit])
        return {"accuracy": float(np.mean(est.predict(data.X[val]) == data.y[val]))}

    return [(len(fit), fit_score)]


def _california_cells(data_dir, n_folds, test_folds=False):
    if test_folds:  # the seed's folds: train on 9, score the held-out one
        path = None if data_dir is None else data_dir / "california_housing" / "cal_housing.data"
        X, y = load_data(path)
        bounds, y_bounds, parts = BOUNDS, Y_BOUNDS, paper_folds(len(y))
    else:
        X, y, bounds, y_bounds, parts = validation_sets("california_housing", n_folds,
                                                        data_dir)
    cells = []
    for fit, val in parts:
        def fit_score(params, eps, rng, fit=fit, val=val):
            model, params = _estimator(params, True)
            est = model(epsilon=eps, bounds=bounds, y_bounds=y_bounds,
                        accountant=BudgetAccountant(), random_state=rng,
                        **params).fit(X[fit], y[fit])
            return _regression_scores(est.predict(X[val]) - y[val])
        cells.append((len(fit), fit_score))
    return cells


def run(epsilons=EPSILONS, n_seeds=None, datasets=DATASETS, quick=False, data_dir=None,
        seed=0, log=print, test_folds=False, settings=SETTINGS, compared=COMPARED):
    """Fit every setting with the same seeds per cell; ``compared``: the (baseline,
    challenger) whose paired difference is reported."""
    base, challenger = compared
    results = {"epsilons": list(epsilons), "quick": quick, "test_folds": test_folds,
               "settings": list(settings), "compared": list(compared), "datasets": {}}
    if test_folds:
        datasets = ("california_housing",)
    for name in datasets:
        d_index = (ALL_DATASETS + (ADULT_AGE,)).index(name)
        if name == "adult":
            parts = _adult_cells(data_dir, quick)
        elif name == "california_housing":
            parts = _california_cells(data_dir, 1 if quick else N_FOLDS, test_folds)
        elif name == ADULT_AGE:
            parts = _adult_age_cells(data_dir, quick)
        else:
            parts = _uci_cells(name, data_dir, quick)
        seeds = n_seeds or N_SEEDS[name]
        metric = METRICS[name]
        res = {"metric": metric, "n_fit": [n for n, _ in parts], "n_seeds": seeds,
               "cells": {}}
        for eps in epsilons:
            t0 = time.perf_counter()
            scores = {s: [] for s in settings}
            for p_index, (_, fit_score) in enumerate(parts):
                for s in range(seeds):
                    key = [seed, d_index, int(round(eps * 1000)), p_index, s]
                    for setting, params in settings.items():  # the same seed: paired
                        rng = np.random.default_rng(np.random.SeedSequence(key))
                        scores[setting].append(fit_score(params, eps, rng))
            diff = np.array([c[metric] - b[metric]
                             for c, b in zip(scores[challenger], scores[base])])
            cell = {s: {m: float(np.mean([v[m] for v in scores[s]])) for m in scores[s][0]}
                    for s in settings}
            mean_diff, two_se = paired_difference(diff)
            cell.update(diff=mean_diff, diff_2se=two_se,
                        eps_rows=float(eps * np.mean(res["n_fit"])),
                        seconds=time.perf_counter() - t0)
            res["cells"][f"{eps:g}"] = cell
            if log:
                log(f"  [{name} eps={eps:g}] {metric} "
                    + " ".join(f"{s} {cell[s][metric]:.4f}" for s in settings)
                    + f" diff {cell['diff']:+.4f} +- {cell['diff_2se']:.4f} "
                      f"({cell['seconds']:.1f} s)")
        results["datasets"][name] = res
    return results


def format_results(results, note=""):
    """The table of every setting's mean and the paired difference, per data set."""
    settings, (base, challenger) = results["settings"], results["compared"]
    lines = []
    for name, res in results["datasets"].items():
        metric = res["metric"]
        extra = {"auc": "accuracy", "mae": "rmse"}.get(metric)
        label = {"accuracy": "acc", "rmse": "rmse"}.get(extra)
        where = "TEST folds" if results.get("test_folds") else "validation"
        lines.append(f"{name}: {where} {metric.upper()}, {len(res['n_fit'])} split(s) x "
                     f"{res['n_seeds']} seed(s), fit rows {res['n_fit']}"
                     + (" (QUICK)" if results["quick"] else ""))
        width = max(9, max(len(s) for s in settings) + 2)
        diff_width = max(15, len(challenger + base) + 3)
        head = (f"{'eps':>6}{'eps x n':>10}" + "".join(f"{s:>{width}}" for s in settings)
                + f"{challenger + '-' + base:>{diff_width}}{'2 SE':>8}")
        if extra:
            head += "".join(f"{label + ' ' + s:>{width + 5}}" for s in settings)
        lines.append(head)
        for eps, c in res["cells"].items():
            line = (f"{eps:>6}{c['eps_rows']:>10.0f}"
                    + "".join(f"{c[s][metric]:>{width}.4f}" for s in settings)
                    + f"{c['diff']:>+{diff_width}.4f}{c['diff_2se']:>8.4f}")
            if extra:
                line += "".join(f"{c[s][extra]:>{width + 5}.4f}" for s in settings)
            lines.append(line)
        lines.append("")
    lines.append(note)
    return "\n".join(lines)


def cli(argv, doc, settings, compared, note, datasets=DATASETS):
    """Parse ``argv`` (``--quick --eps --seeds --models --data-dir --json --seed
    --test-folds --noise``; ``--models`` picks among ``datasets``), run the sweep of
    ``settings`` and print its table."""
    parser = sweep_parser(doc, f"eps {QUICK_EPSILONS}, 1 seed, 1 fold, subsampled rows",
                          datasets)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--test-folds", action="store_true",
                        help="California Housing on the seed's 10 test folds (a check)")
    parser.add_argument("--noise", choices=["gaussian", "laplace"], default="gaussian",
                        help="the noise of every setting (default: the library's, Gaussian)")
    args = parser.parse_args(argv)
    if args.noise != "gaussian":
        settings = {name: {**params, "noise": args.noise} for name, params in settings.items()}
    start = time.perf_counter()
    epsilons, n_seeds, datasets = sweep_settings(args, EPSILONS, QUICK_EPSILONS, None,
                                                 datasets)
    results = run(epsilons, n_seeds, datasets, quick=args.quick, data_dir=args.data_dir,
                  seed=args.seed, test_folds=args.test_folds, settings=settings,
                  compared=compared)
    return finish(results, format_results(results, note), start, args.json)


def main(argv=None):
    return cli(argv, __doc__, SETTINGS, COMPARED,
               "The first rule of split='auto': guided splits when eps x (noisy) n >= 10,000.")


if __name__ == "__main__":
    main()
