"""The order of a categorical column's codes, and what a private order would give (issue 36).

A categorical column with ``K`` public categories becomes the codes ``0 .. K-1`` in the
order its categories are listed (``dptrees.data.tables``), and a tree splits it as any
ordinal column: ``code <= t``. Listed in an order unrelated to the target, a blind split
of such a column cuts it anywhere; listed by the target's rate in each category, every
threshold separates low-rate from high-rate categories, the best split of a binary target
(Fisher 1958, as non-private boosting libraries order categories by their gradients).

This script measures the library's ``category_order`` (:mod:`dptrees.data.category_order`)
on Adult as a frame with its public domain (``experiments/sbdt_levers.load_frame``: the
fixed 80 % fit / 20 % validation split of ``adult.data``; ``--test``: all of
``adult.data``, scored on ``adult.test``), with ``DPGradientBoostingClassifier``'s
defaults otherwise, ROC AUC and accuracy (``P(>50K) > 0.5``):

* ``defaults``: ``category_order="listed"``, the categories in the domain's order (as
  listed; alphabetical here): the baseline every gain is paired against;
* ``auto``: the library's default, ``category_order="auto"`` (``ORDER_EPS_ROWS``);
* ``private s``: ``category_order="private"`` with ``order_budget=s``: one release of
  every categorical column's per-category class counts on the share ``s`` of the zCDP
  budget (after the private edges'), the codes sorted by their noisy positive rate;
* ``oracle order``: every categorical column's categories (the missing-value one
  included) listed by their exact positive rate in the fit rows, then ``"listed"``.
  **Not a DP result**: the order reads the data without noise; an upper bound of what
  a private order can give.

Earlier figures of two pipelines outside the library (a Laplace release of the same
counts on a separate share of epsilon, and a Gaussian one before the model's share) are
in ``experiments/RESULTS.md``; the library's release is the Gaussian one, in its plan.

Usage::

    python -m experiments.category_order_sweep                 # eps 0.1 .. 4, 8 seeds
    python -m experiments.category_order_sweep --test --seeds 3
    python -m experiments.category_order_sweep --quick         # 4,000 rows, 1 eps, 1 seed

``main(argv)`` returns the results as a dict. Fixed seeds make the noise recomputable:
they are for research, never for a release.
"""

import time

import numpy as np
from sklearn.metrics import roc_auc_score

from dptrees import BudgetAccountant, DPGradientBoostingClassifier
from dptrees.data.category_order import codes_by_rate

from experiments.adult_dataframe import read_frames
from experiments.cli import config_table, gain_over_defaults, record_cell, sweep_main
from experiments.sbdt_levers import load_frame
from experiments.small_eps_trees import QUICK_ROWS

#: config -> the estimator's parameters (the oracle also reorders the domain).
CONFIGS = {"defaults": {"category_order": "listed"}, "auto": {},
           "private 0.05": {"category_order": "private"},
           "private 0.1": {"category_order": "private", "order_budget": 0.1},
           "oracle order": {"category_order": "listed"}}
DELTA = 1e-6  # the estimators' default
EPSILONS = (0.1, 0.25, 0.5, 1.0, 4.0)
QUICK_EPSILONS = (1.0,)
N_SEEDS = 8


def category_tables(X, positive, domain):
    """Per categorical column of ``domain`` (a list of categories, ``None`` the missing
    value): the exact ``(negatives, positives)`` count of each category in ``X``'s rows,
    a ``(K, 2)`` array."""
    tables = {}
    for column, categories in domain.items():
        if not isinstance(categories, list):
            continue
        values = X[column].astype(object)
        rows = [(values.isna() if c is None else values == c).to_numpy() for c in categories]
        tables[column] = np.array([[np.sum(r & ~positive), np.sum(r & positive)]
                                   for r in rows], dtype=float)
    return tables


def ordered_domain(domain, tables):
    """``domain`` with every categorical column's categories sorted by the positive rate
    of ``tables`` (exact counts: the oracle, not DP)."""
    ordered = dict(domain)
    for column, table in tables.items():  # the library's sort, on exact counts
        ordered[column] = [domain[column][i] for i in codes_by_rate(table)]
    return ordered


def _rows(test, quick, data_dir):
    if test:
        Xf, yf, Xs, ys, domain, classes = read_frames(data_dir)
    else:
        Xf, yf, Xs, ys, classes, domain = load_frame(quick=quick, data_dir=data_dir)
    return Xf, yf, Xs, ys, classes, domain


def run(epsilons=EPSILONS, n_seeds=N_SEEDS, configs=tuple(CONFIGS), quick=False,
        data_dir=None, test=False, log=print):
    """Per config and epsilon: the mean AUC and accuracy over seeds, and the per-seed
    values (the same seeds for every config: paired differences)."""
    Xf, yf, Xs, ys, classes, domain = _rows(test, quick, data_dir)
    fit_positive, scored_positive = yf == classes[1], ys == classes[1]
    exact = category_tables(Xf, fit_positive, domain)
    results = {"test": test, "quick": quick, "n_fit": int(len(yf)),
               "n_scored": int(len(ys)), "epsilons": list(epsilons), "n_seeds": n_seeds,
               "categorical": list(exact), "cells": {}}
    for name in configs:
        public = ordered_domain(domain, exact) if name == "oracle order" else domain
        for eps in epsilons:
            t0 = time.perf_counter()
            aucs, accs = [], []
            for s in range(n_seeds):
                rng = np.random.default_rng(
                    np.random.SeedSequence([36, 7, int(round(eps * 1000)), s]))
                est = DPGradientBoostingClassifier(
                    epsilon=eps, delta=DELTA, bounds=public, classes=classes,
                    accountant=BudgetAccountant(), random_state=rng,
                    **CONFIGS[name]).fit(Xf, yf)
                proba = est.predict_proba(Xs)[:, 1]
                aucs.append(float(roc_auc_score(scored_positive, proba)))
                accs.append(float(np.mean((proba > 0.5) == scored_positive)))
            cell = {"auc": float(np.mean(aucs)), "aucs": aucs,
                    "accuracy": float(np.mean(accs)), "accuracies": accs,
                    "seconds": time.perf_counter() - t0}
            record_cell(results, name, eps, cell, log,
                        f"{name} eps={eps:g}] AUC {cell['auc']:.4f} "
                        f"accuracy {cell['accuracy']:.4f}")
    return results


def format_results(results):
    """Per config and epsilon: AUC [gain over the defaults +- 2 SE] / accuracy."""
    epsilons, cells = results["epsilons"], results["cells"]
    rows = "test" if results["test"] else "validation"
    lines = [f"Adult frame, {rows} rows ({results['n_fit']} fit, {results['n_scored']} "
             f"scored)" + (", QUICK" if results["quick"] else "")
             + f"; categorical columns {results['categorical']}; ROC AUC [gain over the "
               f"defaults, +- 2 SE] / accuracy, mean over {results['n_seeds']} seed(s). "
               "'oracle order' reads the data without noise: not a DP result.", ""]
    labels = [f"eps {e:g}" for e in epsilons]

    def text(name, e):
        cell = cells[name][e]
        return (f"{cell['auc']:.4f}" + gain_over_defaults(cells, name, e, "aucs")
                + f" / {cell['accuracy']:.4f}")

    lines += config_table(cells, epsilons, labels, text, 20, 38)
    return "\n".join(lines)


main = sweep_main(
    __doc__, run=run, format_results=format_results, epsilons=EPSILONS,
    quick_epsilons=QUICK_EPSILONS, n_seeds=N_SEEDS, models=CONFIGS,
    quick_help=f"{QUICK_ROWS:,} fit rows, eps {QUICK_EPSILONS}, 1 seed",
    options=[("--test", {"action": "store_true",
                         "help": "score on adult.test (after the choice: a check only)"})])


if __name__ == "__main__":
    main()
