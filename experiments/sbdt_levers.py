"""S-BDT's levers, one at a time, in dptrees' gradient boosting on Adult's validation rows.

Issue 36: S-BDT (Peinemann, Kirschte et al.) leads dptrees' defaults below epsilon 0.1 on
Adult. Its settings at 0.03 differ from ours in several levers; this script adds them to
``DPGradientBoostingClassifier``'s defaults one at a time (and together), as far as the
library has them, and scores each on the fixed 80 % fit / 20 % validation split of
``adult.data`` (``experiments/splits.validation_split``): the choice of a default is
made here, never on ``adult.test``.

Levers (the :data:`CONFIGS`; every other parameter is the library default, with the
public ``bounds`` and ``classes`` only):

* ``shape``: S-BDT's ensemble shape, 400 trees of depth 6 at learning rate 0.1;
* ``subsample``: Poisson subsampling of the records per tree, ``q`` = 0.01 as S-BDT at
  0.03 (privacy amplification by subsampling; accounted as Poisson-subsampled discrete
  Gaussian releases), and the milder 0.05 and 0.2 with the tree count scaled so that
  every record is read about as often;
* ``gradient_clip``: 0.3 (S-BDT's; our classifier's ``"auto"`` is 0.5 below eps 4);
* ``Hessian share``: S-BDT spends 4 % of a tree's budget on the leaf denominators, we
  20 % on the Hessian sums (a constant of the library, patched for these fits);
* ``Hessian clip``: S-BDT clips every record's Hessian ``p (1 - p)`` at 0.1, we at its
  bound 1/4 (patched for these fits);
* ``cyclic``: S-BDT's trees of one feature each, the features taken in turn (tree ``t``
  splits every node on feature ``t mod p`` at random thresholds; patched for these
  fits, with no selected level, so that every split is drawn blind). The ensemble is
  then an additive model of deep single-feature trees.

Usage::

    python -m experiments.sbdt_levers                 # eps 0.03 and 0.1, 3 seeds
    python -m experiments.sbdt_levers --quick         # 4,000 rows, eps 0.1, 1 seed
    python -m experiments.sbdt_levers --eps 0.03 0.05 --seeds 5 --models defaults shape
    python -m experiments.sbdt_levers --frame   # Adult as a frame, categories kept
    python -m experiments.sbdt_levers --frame --paired   # every config on the same seeds

``main(argv)`` returns the results as a dict. Fixed seeds make the noise recomputable:
they are for research, never for a release.
"""

from functools import partial
import itertools
import time
from unittest.mock import patch

import numpy as np

from dptrees import BudgetAccountant, DPGradientBoostingClassifier
from dptrees.boosting import _gradient, _grower
from dptrees.boosting._losses import BinaryLogistic
from dptrees.boosting._trees import draw_random_structure

from experiments.adult_dataframe import read_frames
from experiments.cli import (
    config_table,
    gain_over_defaults,
    record_cell,
    sweep_main,
)
from experiments.small_eps_trees import QUICK_ROWS, load, score
from experiments.splits import random_rows, validation_split

EPSILONS = (0.03, 0.1)
QUICK_EPSILONS = (0.1,)
N_SEEDS = 3
# Two levers are not parameters of the library, so the fits that measure them patch it:
# the share of each leaf release's budget spent on the Hessian sums, the constant
# ``dptrees.boosting._gradient._HESSIAN_SHARE`` (0.2), and the Hessian clip, the log-loss's
# public ``hessian_bound`` (1/4), to which every record's Hessian is clipped before its
# fixed-point sums (``_sources/_rows.py``, ``boosting/_common._FixedPoint``), so a smaller
# one is a smaller sensitivity of the Hessian sums.
HESSIAN_SHARE, HESSIAN_CLIP = "hessian_share", "hessian_clip"
# The feature-cyclic trees are not a parameter either: the fits that measure them patch
# the random structure of every tree (the grower's ``draw_random_structure``) so that all
# its nodes split the same feature, the next one for the next tree. The splits stay drawn
# from the fit's data-independent generator, so the patched fits stay DP.
CYCLIC = "cyclic"
SHAPE = {"n_estimators": 400, "max_depth": 6, "learning_rate": 0.1}
CONFIGS = {
    "defaults": {},
    "shape": SHAPE,
    "depth 6": {"max_depth": 6},
    "400 trees at lr 0.1": {"n_estimators": 400, "learning_rate": 0.1},
    "shape + subsample 0.01": {**SHAPE, "subsample": 0.01},
    "subsample 0.05 (200 trees)": {"n_estimators": 200, "subsample": 0.05},
    "subsample 0.2 (100 trees)": {"subsample": 0.2},
    "gradient_clip 0.3": {"gradient_clip": 0.3},
    "shape + gradient_clip 0.3": {**SHAPE, "gradient_clip": 0.3},
    "Hessian share 0.04": {HESSIAN_SHARE: 0.04},
    "Hessian clip 0.1": {HESSIAN_CLIP: 0.1},
    "Hessian clip 0.1 and share 0.04": {HESSIAN_CLIP: 0.1, HESSIAN_SHARE: 0.04},
    "cyclic": {CYCLIC: True, "select_depth": 0},
    "cyclic shape": {**SHAPE, CYCLIC: True, "select_depth": 0},
    "cyclic shape + subsample 0.01": {**SHAPE, CYCLIC: True, "subsample": 0.01},
}
# S-BDT on this protocol, quoted from issue 36 (its code run here, tuned settings): AUC
SBDT_AUC = {0.03: 0.8625, 0.1: 0.8804, 0.5: 0.8954, 1.0: 0.8975}


def load_frame(quick=False, data_dir=None):
    """Adult as pandas reads it, its categories given by the public domain
    (``experiments/adult_dataframe.py``), split as :func:`small_eps_trees.load` splits the
    one-hot table: ``(fit X, fit y, validation X, validation y, classes, domain)``."""
    X, y, _, _, domain, classes = read_frames(data_dir)
    fit_idx, val_idx = validation_split(len(y))
    if quick:
        rng = np.random.default_rng(0)
        fit_idx = fit_idx[random_rows(rng, len(fit_idx), QUICK_ROWS)]
        val_idx = val_idx[random_rows(rng, len(val_idx), QUICK_ROWS)]
    return (X.iloc[fit_idx], y[fit_idx], X.iloc[val_idx], y[val_idx], np.asarray(classes),
            domain)


def cyclic_structure():
    """A stand-in for ``draw_random_structure`` whose ``t``-th tree splits every node on
    feature ``t mod n_features`` (the thresholds still drawn at random); one per fit."""
    trees = itertools.count()

    def draw(rng, n_features, n_bins, depth, prior=None):
        feature, bin_threshold = draw_random_structure(rng, n_features, n_bins, depth,
                                                       prior)
        feature[:2**depth - 1] = next(trees) % n_features
        return feature, bin_threshold
    return draw


def run(epsilons=EPSILONS, n_seeds=N_SEEDS, configs=tuple(CONFIGS), quick=False,
        data_dir=None, frame=False, paired=False, log=print):
    """Validation AUC and accuracy of every config at every epsilon, per seed (the
    same seeds for every config with ``paired``, so that their differences are paired)."""
    loader = load_frame if frame else partial(load, validation=True)
    Xtr, ytr, Xva, yva, classes, bounds = loader(quick=quick, data_dir=data_dir)
    results = {"n_fit": int(len(ytr)), "n_validation": int(len(yva)), "quick": quick,
               "frame": frame, "paired": paired, "epsilons": list(epsilons),
               "n_seeds": n_seeds, "cells": {}}
    for name in configs:
        # a config's seeds do not depend on --models
        c_index = 0 if paired else list(CONFIGS).index(name)
        for eps in epsilons:
            t0 = time.perf_counter()
            accs, aucs = [], []
            for s in range(n_seeds):
                rng = np.random.default_rng(
                    np.random.SeedSequence([36, c_index, int(round(eps * 1000)), s]))
                params = dict(CONFIGS[name])
                share = params.pop(HESSIAN_SHARE, _gradient._HESSIAN_SHARE)
                clip = params.pop(HESSIAN_CLIP, BinaryLogistic.hessian_bound)
                structure = (cyclic_structure() if params.pop(CYCLIC, False)
                             else draw_random_structure)
                est = DPGradientBoostingClassifier(
                    epsilon=eps, bounds=bounds, classes=classes,
                    accountant=BudgetAccountant(), random_state=rng, **params)
                with patch.object(_gradient, "_HESSIAN_SHARE", share), \
                        patch.object(BinaryLogistic, "hessian_bound", clip), \
                        patch.object(_grower, "draw_random_structure", structure):
                    est.fit(Xtr, ytr)
                acc, auc = score(est, Xva, yva, classes)
                accs.append(acc)
                aucs.append(auc)
            cell = {"auc": float(np.mean(aucs)), "accuracy": float(np.mean(accs)),
                    "aucs": aucs, "seconds": time.perf_counter() - t0}
            record_cell(results, name, eps, cell, log, f"{name} eps={eps:g}] AUC "
                        f"{cell['auc']:.4f} accuracy {cell['accuracy']:.4f}")
    return results


def format_results(results):
    """The table: per config and epsilon, validation AUC / accuracy and the AUC's
    difference from the defaults' with twice its standard error over the seeds."""
    epsilons, cells = results["epsilons"], results["cells"]
    encoding = "frame with its domain" if results["frame"] else "one-hot"
    lines = [f"Adult {encoding}, validation rows ({results['n_fit']} fit, "
             f"{results['n_validation']} scored)"
             + (", QUICK subsample" if results["quick"] else "")
             + f"; ROC AUC / accuracy, mean over {results['n_seeds']} seed(s); "
               "[AUC minus the defaults', +- 2 SE"
             + ("; paired: the same seeds for every config]" if results.get("paired")
                else "]"), ""]

    def text(name, e):
        cell = cells[name][e]
        gain = gain_over_defaults(cells, name, e, "aucs")
        return f"{cell['auc']:>12.4f} / {cell['accuracy']:.3f}" + (gain or " " * 22)

    lines += config_table(cells, epsilons, [f"eps {e:g}" for e in epsilons], text, 34, 34)
    lines.append(f"{'S-BDT (issue 36, test rows)':<34}" + "".join(
        f"{SBDT_AUC[e]:>12.4f}" + " " * 22 if e in SBDT_AUC else " " * 34 for e in epsilons))
    return "\n".join(lines)


main = sweep_main(
    __doc__, run=run, format_results=format_results, epsilons=EPSILONS,
    quick_epsilons=QUICK_EPSILONS, n_seeds=N_SEEDS, models=CONFIGS,
    quick_help=f"{QUICK_ROWS} fit rows, eps {QUICK_EPSILONS}, 1 seed",
    options=[("--frame", {"action": "store_true",
                          "help": "Adult as a frame with its categories (needs pandas)"}),
             ("--paired", {"action": "store_true",
                           "help": "the same seeds for every config (paired differences)"})])


if __name__ == "__main__":
    main()
