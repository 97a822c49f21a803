"""The order of a categorical column's codes, and what a private order would give (issue 36).

A categorical column with ``K`` public categories becomes the codes ``0 .. K-1`` in the
order its categories are listed (``dptrees.data.tables``), and a tree splits it as any
ordinal column: ``code <= t``. Listed in an order unrelated to the target, a blind split
of such a column cuts it anywhere; listed by the target's rate in each category, every
threshold separates low-rate from high-rate categories, the best split of a binary target
(Fisher 1958, as non-private boosting libraries order categories by their gradients).

This script measures the lever on Adult as a frame with its public domain
(``experiments/sbdt_levers.load_frame``: the fixed 80 % fit / 20 % validation split of
``adult.data``; ``--test``: all of ``adult.data``, scored on ``adult.test``), with
``DPGradientBoostingClassifier``'s defaults, ROC AUC and accuracy (``P(>50K) > 0.5``):

* ``defaults``: the categories in the domain's order (as listed; alphabetical here);
* ``oracle order``: every categorical column's categories (the missing-value one
  included) sorted by their exact positive rate in the fit rows. **Not a DP result**: the
  order reads the data without noise; an upper bound of what a private order can give;
* ``private order s``: the same sort on noisy counts, a DP pipeline of two releases. The
  per-category counts of negatives and positives of every categorical column (``2 K``
  cells each) are released once with Laplace noise at ``epsilon_o = s x epsilon``: a
  record is in exactly one cell of each column's table, so adding or removing it moves
  the whole release by ``c`` in L1, ``c`` the number of categorical columns (the
  sensitivity). The order is post-processing (the noisy rate ``max(pos, 0) / (max(pos,
  0) + max(neg, 0))``, 1/2 where both are 0). The model is then fitted with ``(1 - s)
  epsilon`` and ``delta``; by sequential composition the pipeline is ``(epsilon,
  delta)``-DP;
* ``Gaussian order s``: the same counts with Gaussian noise on the share ``s`` of the zCDP
  budget ``rho = zcdp_budget(epsilon, delta)`` (L2 sensitivity ``sqrt(c)``), as a release
  inside the library's plan would be; the model is fitted with the largest ``epsilon'``
  whose zCDP budget is at most ``(1 - s) rho`` (:func:`model_epsilon`). Every release of
  the binary classifier is zCDP (it never falls back), so the two compose to ``rho``-zCDP,
  which converts to ``(epsilon, delta)``.

Usage::

    python -m experiments.category_order_sweep                 # eps 0.03 0.1 0.25 1, 8 seeds
    python -m experiments.category_order_sweep --test --seeds 3
    python -m experiments.category_order_sweep --quick         # 4,000 rows, 1 eps, 1 seed

``main(argv)`` returns the results as a dict. Fixed seeds make the noise recomputable:
they are for research, never for a release.
"""

import math
import time

import numpy as np
from sklearn.metrics import roc_auc_score

from dptrees import BudgetAccountant, DPGradientBoostingClassifier
from dptrees.mechanisms import gaussian_mechanism, laplace_mechanism
from dptrees.privacy.zcdp import zcdp_budget

from experiments.adult_dataframe import read_frames
from experiments.cli import config_table, gain_over_defaults, record_cell, sweep_main
from experiments.sbdt_levers import load_frame
from experiments.small_eps_trees import QUICK_ROWS

#: config -> (noise, share of the budget spent on the order); None: no release.
CONFIGS = {"defaults": None, "oracle order": None,
           "private order 0.05": ("laplace", 0.05), "private order 0.1": ("laplace", 0.1),
           "Gaussian order 0.02": ("gaussian", 0.02),
           "Gaussian order 0.05": ("gaussian", 0.05)}
DELTA = 1e-6  # the estimators' default
EPSILONS = (0.03, 0.1, 0.25, 1.0)
QUICK_EPSILONS = (0.1,)
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
    of ``tables`` (exact or noisy counts; negative noisy counts read as 0)."""
    ordered = dict(domain)
    for column, table in tables.items():
        neg, pos = np.maximum(table, 0.0).T
        total = neg + pos
        rate = np.divide(pos, total, out=np.full_like(pos, 0.5), where=total > 0)
        ordered[column] = [domain[column][i] for i in np.argsort(rate, kind="stable")]
    return ordered


def noisy_tables(tables, epsilon, rng):
    """``tables`` released at once with Laplace noise, ``epsilon``-DP: L1 sensitivity the
    number of tables (one record is one count in each)."""
    flat = np.concatenate([t.ravel() for t in tables.values()])
    noisy = laplace_mechanism(flat, sensitivity=float(len(tables)), epsilon=epsilon,
                              random_state=rng)
    return _unflatten(noisy, tables)


def gaussian_tables(tables, rho, rng):
    """``tables`` released at once with Gaussian noise, ``rho``-zCDP: L2 sensitivity the
    square root of the number of tables (one record is one count in each)."""
    flat = np.concatenate([t.ravel() for t in tables.values()])
    noisy = gaussian_mechanism(flat, sensitivity=math.sqrt(len(tables)),
                               noise_multiplier=1.0 / math.sqrt(2.0 * rho), random_state=rng)
    return _unflatten(noisy, tables)


def model_epsilon(epsilon, delta, rest):
    """The largest ``epsilon'`` (by bisection) whose zCDP budget at ``delta`` is at most
    the share ``rest`` of ``epsilon``'s: the model's releases, all zCDP, then compose with
    the order's ``(1 - rest) rho`` to at most ``zcdp_budget(epsilon, delta)``."""
    target, low, high = rest * zcdp_budget(epsilon, delta), 0.0, epsilon
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if zcdp_budget(mid, delta) <= target else (low, mid)
    return low


def _unflatten(flat, tables):
    out, start = {}, 0
    for column, table in tables.items():
        out[column] = flat[start:start + table.size].reshape(table.shape)
        start += table.size
    return out


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
        noise, share = CONFIGS[name] or (None, None)
        for eps in epsilons:
            t0 = time.perf_counter()
            aucs, accs = [], []
            for s in range(n_seeds):
                rng = np.random.default_rng(
                    np.random.SeedSequence([36, 7, int(round(eps * 1000)), s]))
                order_rng, model_rng = rng.spawn(2)
                model_eps = eps
                if name == "oracle order":
                    public = ordered_domain(domain, exact)
                elif noise == "laplace":
                    public = ordered_domain(domain, noisy_tables(exact, share * eps,
                                                                 order_rng))
                    model_eps = (1.0 - share) * eps
                elif noise == "gaussian":
                    rho = share * zcdp_budget(eps, DELTA)
                    public = ordered_domain(domain, gaussian_tables(exact, rho, order_rng))
                    model_eps = model_epsilon(eps, DELTA, 1.0 - share)
                else:
                    public = domain
                est = DPGradientBoostingClassifier(
                    epsilon=model_eps, delta=DELTA, bounds=public, classes=classes,
                    accountant=BudgetAccountant(), random_state=model_rng).fit(Xf, yf)
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
