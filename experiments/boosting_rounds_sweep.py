"""Gradient boosting's ensemble size and learning rate at small ``epsilon x n`` (issue 36).

On Adult's validation rows (``experiments/sbdt_levers.py``) 400 trees at learning rate 0.1
beat the defaults' 100 trees at 0.3 where ``epsilon x n`` is below about 1,000 fit rows.
This script measures the two ensembles side by side (and ``"auto"``, the library's
default rule choosing between them from ``epsilon`` times the noisy record count of the
initial score) on several data sets, so that the rule's threshold is chosen on
validation rows and checked elsewhere:

* ``adult``: Adult one-hot (``experiments/small_eps_trees.load``), the fixed 80 % fit /
  20 % validation split of ``adult.data``; ``--test``: all of ``adult.data``, scored on
  ``adult.test``;
* ``adult-frame``: Adult as a frame with its public domain
  (``experiments/sbdt_levers.load_frame``), the same split; ``--test`` likewise;
* ``california``: California Housing on the seed's protocol
  (``experiments/reproduce_hoang2020.py``: scaled to [0, 1], unshuffled ``KFold(10)``):
  the training rows of outer fold 0, split 80 % fit / 20 % validation
  (``experiments/splits.validation_split``); ``--test``: the training rows of outer folds
  0-2, scored on their test folds; MAE in scaled units;
* ``mushroom``, ``nursery``: UCI (ordinal encoding, public schema), an 80 % train / 20 %
  test split, the train part split again 80 % fit / 20 % validation; ``--test``: all the
  train part, scored on the test part. Mushroom: ROC AUC; Nursery (5 classes): accuracy.

Configs: ``defaults`` (100 trees at learning rate 0.3, given explicitly), ``400 trees at
lr 0.1`` and ``auto`` (no ``n_estimators`` / ``learning_rate`` given: the library's
default rule; what it resolved to is printed). Every other parameter is the library
default with the public bounds and target domain. The capacity of the trees at large
budgets: ``200 trees at lr 0.15``, ``depth 3`` / ``5`` / ``6`` (the default is 4),
``select 2`` / ``3`` / ``4`` (selected levels; the default selects up to 3 from 15,000
of ``eps x n`` on at most 16 columns, else 2) and ``private splits`` (every level selected
by the exponential mechanism), each with 100 trees at 0.3; ``split 0.2`` / ``0.45`` (the
selected levels' share, 0.3 by default); ``init 0.02`` / ``0.04`` (the initial score's
share, 0.01 by default); ``Hessian 0.2`` / ``0.1`` / ``0.05`` (the Hessian sums' share
of every release at every budget, the rounds ``"auto"``: :data:`HESSIAN`; the library
gives 0.05 below 1,000 of ``eps x n``, else 0.2); and ``non-private HGB``, scikit-learn's
``HistGradientBoosting*`` in the defaults' shape (100 trees of depth 4 at 0.3, 32 bins,
categories declared): the ceiling a DP model of that shape can reach, not a DP model.
``--estimator ebm`` fits the explainable boosting machine instead, with ``auto`` (its
defaults) and the ``Hessian`` configs (its share, 0.2 in the library at every budget).

Usage::

    python -m experiments.boosting_rounds_sweep --data adult-frame --eps 0.03 0.05 --seeds 5
    python -m experiments.boosting_rounds_sweep --data california --eps 0.01 0.03 --test
    python -m experiments.boosting_rounds_sweep --quick    # Mushroom, 1 eps, 1 seed
    python -m experiments.boosting_rounds_sweep --eps 0.03 --models "Hessian 0.2" auto \
        --baseline "Hessian 0.2"    # the library's rule against one share everywhere
    python -m experiments.boosting_rounds_sweep --estimator ebm --models "Hessian 0.2" \
        auto --baseline "Hessian 0.2"

``main(argv)`` returns the results as a dict. Fixed seeds make the noise recomputable:
they are for research, never for a release.
"""

from contextlib import nullcontext
from functools import partial
import time
from unittest.mock import patch

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.metrics import accuracy_score, roc_auc_score

from dptrees import (
    BudgetAccountant,
    DPExplainableBoostingClassifier,
    DPExplainableBoostingRegressor,
    DPGradientBoostingClassifier,
    DPGradientBoostingRegressor,
)
from dptrees.boosting import _cyclic, _gradient

from experiments import reproduce_hoang2020 as hoang
from experiments import uci_datasets as uci
from experiments.adult_dataframe import read_frames
from experiments.cli import (
    config_table,
    gain_over_defaults,
    record_cell,
    sweep_main,
)
from experiments.sbdt_levers import load_frame
from experiments.small_eps_trees import load as load_adult
from experiments.splits import validation_split

CONFIGS = {
    "defaults": {"n_estimators": 100, "learning_rate": 0.3},
    "400 trees at lr 0.1": {"n_estimators": 400, "learning_rate": 0.1},
    "200 trees at lr 0.15": {"n_estimators": 200, "learning_rate": 0.15},
    "depth 5": {"n_estimators": 100, "learning_rate": 0.3, "max_depth": 5},
    "depth 6": {"n_estimators": 100, "learning_rate": 0.3, "max_depth": 6},
    "depth 3": {"n_estimators": 100, "learning_rate": 0.3, "max_depth": 3},
    "select 2": {"n_estimators": 100, "learning_rate": 0.3, "select_depth": 2},
    "select 3": {"n_estimators": 100, "learning_rate": 0.3, "select_depth": 3},
    "select 4": {"n_estimators": 100, "learning_rate": 0.3, "select_depth": 4},
    "private splits": {"n_estimators": 100, "learning_rate": 0.3, "split": "private"},
    "split 0.2": {"n_estimators": 100, "learning_rate": 0.3, "split_fraction": 0.2},
    "split 0.45": {"n_estimators": 100, "learning_rate": 0.3, "split_fraction": 0.45},
    "init 0.02": {"n_estimators": 100, "learning_rate": 0.3, "init_fraction": 0.02},
    "init 0.04": {"n_estimators": 100, "learning_rate": 0.3, "init_fraction": 0.04},
    "auto": {},
    "Hessian 0.2": {"hessian_share": 0.2},
    "Hessian 0.1": {"hessian_share": 0.1},
    "Hessian 0.05": {"hessian_share": 0.05},
    "non-private HGB": {},
}
#: The Hessian sums' share of every release is a rule of the library, not a parameter
#: (``dptrees.boosting._gradient.hessian_share``: 0.05 below ``ROUNDS_EPS_ROWS`` of
#: ``eps x n``, else 0.2); a config with this key patches it to one share at every
#: budget for its fits (the rounds stay ``"auto"``). ``Hessian 0.2`` is the rule before
#: the small-budget share.
HESSIAN = "hessian_share"
#: ``--estimator``: (regressor, classifier).
MODELS = {"gb": (DPGradientBoostingRegressor, DPGradientBoostingClassifier),
          "ebm": (DPExplainableBoostingRegressor, DPExplainableBoostingClassifier)}
#: The configs the explainable boosting machine takes (the others set gradient boosting's
#: parameters).
EBM_CONFIGS = {"auto", "Hessian 0.2", "Hessian 0.1", "Hessian 0.05"}
#: The ceiling of the defaults' shape: scikit-learn's non-private
#: ``HistGradientBoosting*`` with 100 trees of depth 4 at learning rate 0.3 and 32 bins,
#: categorical columns declared (it ignores epsilon; not a DP model).
REFERENCE = "non-private HGB"
DATASETS = ("adult", "adult-frame", "california", "mushroom", "nursery")
EPSILONS = (0.03, 0.05, 0.1)
QUICK_EPSILONS = (0.1,)
N_SEEDS = 5
TEST_FOLDS = (0, 1, 2)  # California's outer folds scored with --test


def _adult(test, data_dir):
    Xtr, ytr, Xte, yte, classes, bounds = load_adult(validation=not test, data_dir=data_dir)
    return [(Xtr, ytr, Xte, yte)], {"classes": np.asarray(classes), "bounds": bounds}


def _adult_frame(test, data_dir):
    if test:
        Xtr, ytr, Xte, yte, domain, classes = read_frames(data_dir)
    else:
        Xtr, ytr, Xte, yte, classes, domain = load_frame(data_dir=data_dir)
    return [(Xtr, ytr, Xte, yte)], {"classes": np.asarray(classes), "bounds": domain}


def _california(test, data_dir):
    X, y = hoang.load_data(None if data_dir is None else
                           data_dir / "california_housing" / "cal_housing.data")
    folds = hoang.paper_folds(len(y))
    if test:
        parts = [(X[tr], y[tr], X[te], y[te]) for tr, te in (folds[f] for f in TEST_FOLDS)]
    else:
        train = folds[0][0]
        fit, val = (train[i] for i in validation_split(len(train)))
        parts = [(X[fit], y[fit], X[val], y[val])]
    return parts, {"bounds": hoang.BOUNDS, "y_bounds": hoang.Y_BOUNDS}


def _uci(name, test, data_dir):
    data = uci.load_dataset(name, data_dir=data_dir)
    train, held_out = validation_split(len(data.y))
    if not test:
        train, held_out = (train[i] for i in validation_split(len(train)))
    return ([(data.X[train], data.y[train], data.X[held_out], data.y[held_out])],
            {"bounds": data.bounds, **data.target_kwargs})


LOADERS = {"adult": _adult, "adult-frame": _adult_frame, "california": _california,
           "mushroom": partial(_uci, "mushroom"), "nursery": partial(_uci, "nursery")}


def _category_text(column):
    """A frame column's values as text, a missing value as ``"?"``: one category each."""
    return column.astype(object).fillna("?").astype(str)


class _Reference:
    """A fitted non-private ``HistGradientBoosting*`` that reads a frame's category
    columns through the codes of its own fit (``classes_`` as the DP model's)."""

    def __init__(self, model, codes):
        self.model, self.codes = model, codes

    def _encode(self, X):
        if not self.codes:
            return X
        X = X.copy()
        for column, categories in self.codes.items():
            X[column] = pd.Categorical(_category_text(X[column]), categories=categories)
        return X

    def predict(self, X):
        return self.model.predict(self._encode(X))

    def predict_proba(self, X):
        return self.model.predict_proba(self._encode(X))


def non_private_reference(X, y, public, rng):
    """:data:`REFERENCE` fitted on ``(X, y)``: a frame's string columns become pandas
    categories (their categories from the public domain's)."""
    codes = {}
    if isinstance(X, pd.DataFrame):
        codes = {c: sorted(set(_category_text(X[c]))
                           | {str(v) for v in public["bounds"][c] if v is not None})
                 for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])}
    kind = (HistGradientBoostingRegressor if "y_bounds" in public
            else HistGradientBoostingClassifier)
    model = kind(max_iter=100, max_depth=4, learning_rate=0.3, max_bins=32,
                 early_stopping=False, categorical_features="from_dtype",
                 random_state=int(rng.integers(2**31)))
    reference = _Reference(model, codes)
    model.fit(reference._encode(X), y)
    if hasattr(model, "classes_"):
        reference.classes_ = model.classes_
    return reference


def score(est, X, y):
    """``(metric name, value, higher is better)``: MAE for a regressor, ROC AUC for two
    classes, accuracy for more."""
    if not hasattr(est, "classes_"):
        return "MAE", float(np.mean(np.abs(est.predict(X) - y))), False
    if len(est.classes_) > 2:
        return "accuracy", float(accuracy_score(y, est.predict(X))), True
    return "AUC", float(roc_auc_score(y == est.classes_[1], est.predict_proba(X)[:, 1])), True


def hessian_share_patch(estimator, share):
    """The fits' Hessian share fixed at ``share`` at every budget (a context manager;
    none if ``share`` is None): gradient boosting's rule ``_gradient.hessian_share``,
    the explainable boosting machine's constant (``_HESSIAN_SHARE``, 0.2)."""
    if share is None:
        return nullcontext()
    if estimator == "ebm":
        return patch.object(_cyclic, "_HESSIAN_SHARE", share)
    return patch.object(_gradient, "hessian_share", lambda _: share)


def run(epsilons=EPSILONS, n_seeds=N_SEEDS, configs=tuple(CONFIGS), quick=False,
        data_dir=None, data=None, test=False, baseline="defaults", estimator="gb",
        log=print):
    """Per config and epsilon on the data set ``data`` (default: ``adult-frame``,
    ``mushroom`` with ``quick``), the mean metric over seeds (and parts) and the per-seed
    values (each the mean over the parts: California's test folds); the gains are taken
    over the config ``baseline``. ``estimator``: ``"gb"`` (gradient boosting) or
    ``"ebm"`` (the explainable boosting machine: ``auto`` and the ``Hessian`` configs
    only)."""
    dataset = data or ("mushroom" if quick else "adult-frame")
    parts, public = LOADERS[dataset](test, data_dir)
    if quick:
        parts = [tuple(a[:2000] for a in part) for part in parts]
    model = MODELS[estimator]["y_bounds" not in public]
    if estimator == "ebm" and set(configs) - EBM_CONFIGS:
        raise ValueError(f"the explainable boosting machine takes only the configs "
                         f"{sorted(EBM_CONFIGS)}")
    results = {"dataset": dataset, "test": test, "quick": quick,
               "n_fit": int(len(parts[0][1])), "n_scored": int(len(parts[0][3])),
               "n_parts": len(parts), "epsilons": list(epsilons), "n_seeds": n_seeds,
               "baseline": baseline, "estimator": estimator, "cells": {}}
    for name in configs:
        for eps in epsilons:
            t0 = time.perf_counter()
            values, resolved = [], set()
            for s in range(n_seeds):
                per_part = []
                for p, (Xf, yf, Xs, ys) in enumerate(parts):
                    # the same seeds for every config: paired differences
                    rng = np.random.default_rng(
                        np.random.SeedSequence([36, int(round(eps * 1000)), s, p]))
                    if name == REFERENCE:
                        est = non_private_reference(Xf, yf, public, rng)
                    else:
                        params = dict(CONFIGS[name])
                        share = params.pop(HESSIAN, None)
                        est = model(epsilon=eps, accountant=BudgetAccountant(),
                                    random_state=rng, **public, **params)
                        with hessian_share_patch(estimator, share):
                            est.fit(Xf, yf)
                    metric, value, higher = score(est, Xs, ys)
                    per_part.append(value)
                    if name != REFERENCE and estimator == "gb":
                        resolved.add((getattr(est, "n_estimators_", est.n_estimators),
                                      getattr(est, "learning_rate_", est.learning_rate)))
                values.append(float(np.mean(per_part)))
            cell = {"value": float(np.mean(values)), "values": values,
                    "resolved": sorted(resolved), "seconds": time.perf_counter() - t0}
            results.update(metric=metric, higher_is_better=higher)
            record_cell(results, name, eps, cell, log, f"{dataset} {name} eps={eps:g}] "
                        f"{metric} {cell['value']:.4f} {cell['resolved']}")
    return results


def format_results(results):
    """Per config and epsilon: the mean metric, its difference from the baseline's (signed
    so that + is better) with twice its standard error over the seeds, and for ``auto``
    what it resolved to."""
    epsilons, cells = results["epsilons"], results["cells"]
    baseline = results.get("baseline", "defaults")
    sign = 1 if results["higher_is_better"] else -1
    rows = "test" if results["test"] else "validation"
    lines = [f"{results['dataset']}, {rows} rows ({results['n_fit']} fit, "
             f"{results['n_scored']} scored, {results['n_parts']} part(s))"
             + (", QUICK" if results["quick"] else "")
             + f"; {results['metric']}, mean over {results['n_seeds']} seed(s); "
               f"[gain over {baseline}, + better, +- 2 SE]", ""]
    labels = [f"eps {e:g} (eps x n {e * results['n_fit']:,.0f})" for e in epsilons]

    def text(name, e):
        cell = cells[name][e]
        gain = gain_over_defaults(cells, name, e, "values", sign, baseline)
        return (f"{cell['value']:.4f}" + gain
                + (" " + ",".join(f"{n}/{lr:g}" for n, lr in cell["resolved"])
                   if name == "auto" else ""))

    lines += config_table(cells, epsilons, labels, text, 22, 44)
    return "\n".join(lines)


main = sweep_main(
    __doc__, run=run, format_results=format_results, epsilons=EPSILONS,
    quick_epsilons=QUICK_EPSILONS, n_seeds=N_SEEDS, models=CONFIGS,
    quick_help="Mushroom's first 2,000 rows, eps 0.1, 1 seed",
    options=[("--data", {"choices": DATASETS, "default": None,
                         "help": "the data set (default: adult-frame; mushroom with "
                                 "--quick)"}),
             ("--estimator", {"choices": list(MODELS), "default": "gb",
                              "help": "gradient boosting (gb) or the explainable "
                                      "boosting machine (ebm: auto and Hessian configs)"}),
             ("--baseline", {"choices": list(CONFIGS), "default": "defaults",
                             "help": "the config the gains are taken over"}),
             ("--test", {"action": "store_true",
                         "help": "score on the test rows (after the choice: a check "
                                 "only)"})])


if __name__ == "__main__":
    main()
