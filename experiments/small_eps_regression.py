"""Regressors and multiclass classifiers at small epsilon against the noisy mean / majority.

Issue 36's "Never worse than the noisy prior, for regression too": with too little budget
every regressor should fall back towards its noisy mean, and every multiclass classifier
towards the majority class. This script measures the estimators as a user calls them:
only ``epsilon``, the public ``bounds`` and ``y_bounds`` (or ``classes``) and a
``random_state`` are given, everything else (``delta`` too) is the library default.

Data sets (``--data``):

* ``california``: California Housing with the seed's protocol (all 9 columns min-max
  scaled over the file, bounds [0, 1]; ``KFold(10)`` without shuffling, MAE averaged over
  the folds; ``experiments/reproduce_hoang2020.py``);
* ``wine``: Wine Quality, red (1,599 rows, 11 numeric features, documented bounds,
  ``y_bounds = (0, 10)``); test rows: a fixed 20 % (``validation_split`` of all rows);
* ``wine-classes``: the same rows, ``quality`` as one of the 7 public classes 3, ..., 9
  (accuracy);
* ``nursery``: Nursery (12,960 rows, 8 categorical features, 5 public classes), a
  learnable multiclass set (the multiclass fallback must not cost it); test rows a
  fixed 20 % as for the wine;
* ``adult``: Adult one-hot (``adult.data`` / ``adult.test``, ``small_eps_trees.py``'s
  preparation), binary classifiers (accuracy; a check that nothing is lost);
* ``mnist``: MNIST digits (60,000 training images of 784 pixels in [0, 1], 10 public
  classes; test rows the 10,000 test images; ``reproduce_geyer2017.load_mnist``), a third
  multiclass set for the per-class fallback threshold (wide, many classes); not in the
  default run (``--data mnist``).

``--validation`` scores on the fixed 80 % fit / 20 % validation split of each training set
(``experiments/splits.py``; of every fold's training rows for California) instead of on
the test rows: settings are chosen there; test rows are for the final figures only.

Anchors printed beside each cell: ``noisy mean`` (the MAE of the epsilon-DP mean of the
training targets: a noisy sum over a noisy count, Laplace noise, epsilon / 2 each; its
expected MAE, over ``ANCHOR_DRAWS`` draws),
``mean`` (the exact training mean, non-private) and ``majority`` (the accuracy of the
training set's majority class). A ``*`` marks a cell worse than its anchor (the noisy
mean, or the majority class).

Usage::

    python -m experiments.small_eps_regression --data wine             # 3 seeds, test
    python -m experiments.small_eps_regression --data california --eps 0.01 --validation
    python -m experiments.small_eps_regression --quick                 # < 20 s
    python -m experiments.small_eps_regression --data wine --no-fallback  # before it

``main(argv)`` returns the results as a dict. Fixed seeds make the noise recomputable:
they are for research, never for a release.
"""

import math
import time

import numpy as np

from dptrees import (
    BudgetAccountant,
    DPAdaBoostClassifier,
    DPDecisionTreeClassifier,
    DPDecisionTreeRegressor,
    DPExplainableBoostingClassifier,
    DPExplainableBoostingRegressor,
    DPExtraTreesClassifier,
    DPExtraTreesRegressor,
    DPGradientBoostingClassifier,
    DPGradientBoostingRegressor,
    DPPartitionForestClassifier,
    DPPartitionForestRegressor,
)
from dptrees.federated import (
    DPFederatedGradientBoostingClassifier,
    DPFederatedGradientBoostingRegressor,
)

from experiments import uci_datasets as uci
from experiments.cli import finish, sweep_parser, sweep_settings
from experiments.splits import random_rows, validation_split

DATASETS = ("california", "wine", "wine-classes", "nursery", "adult", "mnist")
DEFAULT_DATASETS = DATASETS[:-1]
EPSILONS = {"california": (0.01, 0.25, 1.0, 4.0), "wine": (0.1,),
            "wine-classes": (0.1,), "nursery": (0.01, 0.03, 0.1, 0.3),
            "adult": (0.25, 1.0, 4.0), "mnist": (0.002, 0.005, 0.01, 0.03)}
N_SEEDS = 3
ANCHOR_DRAWS = 200  # draws of the noisy mean per split: its expected MAE, not 3 draws
QUICK_EPSILONS = (0.01, 1.0)
QUICK_ROWS = 2000
WINE_CLASSES = np.arange(3.0, 10.0)  # the 3-9 scale: 7 public classes

REGRESSORS = {
    "DP tree": (DPDecisionTreeRegressor, {}),
    "DP partition forest": (DPPartitionForestRegressor, {}),
    "DP ExtraTrees": (DPExtraTreesRegressor, {"partition": False}),
    "DP ExtraTrees partition": (DPExtraTreesRegressor, {"partition": True}),
    "DP GB": (DPGradientBoostingRegressor, {}),
    "DP EBM": (DPExplainableBoostingRegressor, {}),
    "DP federated GB": (DPFederatedGradientBoostingRegressor, {}),
}
CLASSIFIERS = {
    "DP tree": (DPDecisionTreeClassifier, {}),
    "DP partition forest": (DPPartitionForestClassifier, {}),
    "DP ExtraTrees": (DPExtraTreesClassifier, {"partition": False}),
    "DP ExtraTrees partition": (DPExtraTreesClassifier, {"partition": True}),
    "DP GB": (DPGradientBoostingClassifier, {}),
    "DP EBM": (DPExplainableBoostingClassifier, {}),
    "DP AdaBoost": (DPAdaBoostClassifier, {}),
    "DP federated GB": (DPFederatedGradientBoostingClassifier, {}),
}
MODELS = tuple(REGRESSORS) + ("DP AdaBoost",)
# The issue's figures on main (California seed's folds at eps 0.01; the issue's held-out
# set, about 3,900 training rows, at eps 0.1: not the red wine measured here).
ISSUE = {"california 0.01": {"DP GB": 0.196, "DP EBM": 0.227, "DP tree": 0.210,
                             "mean": 0.189},
         "held-out 0.1": {"DP GB": 0.738, "DP EBM": 0.944, "DP tree": 0.716, "mean": 0.685},
         "held-out classes 0.1": {"DP GB": 0.423, "DP EBM": 0.418, "majority": 0.435}}


def _splits(name, validation, quick, data_dir):
    """``(X, y, splits, public)``: rows, ``[(fit_idx, score_idx), ...]`` and the public
    keyword arguments of the estimators."""
    if name == "california":
        from experiments.reproduce_hoang2020 import load_data, paper_folds
        X, y = load_data(None if data_dir is None
                         else data_dir / "california_housing" / "cal_housing.data")
        folds = paper_folds(len(y))
        public = {"bounds": (0.0, 1.0), "y_bounds": (0.0, 1.0)}
    elif name in ("wine", "wine-classes"):
        data = uci.load_wine_quality(data_dir=data_dir)
        X, y = data.X, data.y
        folds = [validation_split(len(y))]
        public = ({"bounds": data.bounds, "y_bounds": data.y_bounds} if name == "wine"
                  else {"bounds": data.bounds, "classes": WINE_CLASSES})
    elif name == "nursery":
        data = uci.load_nursery(data_dir=data_dir)
        X, y = data.X, data.y
        folds = [validation_split(len(y))]
        public = {"bounds": data.bounds, "classes": data.classes}
    elif name == "mnist":
        from experiments.reproduce_geyer2017 import DEFAULT_DATA, load_mnist
        X_train, y_train, X_test, y_test = load_mnist(
            DEFAULT_DATA if data_dir is None else data_dir / "mnist")
        X = np.concatenate([X_train, X_test]).astype(np.float64)
        y = np.concatenate([y_train, y_test])
        n = len(y_train)
        folds = [(np.arange(n), np.arange(n, len(y)))]
        public = {"bounds": (0.0, 1.0), "classes": np.arange(10)}
    else:
        train, test = uci.load_adult(encoding="onehot", data_dir=data_dir)
        X = np.concatenate([train.X, test.X])
        y = np.concatenate([train.y, test.y])
        n = len(train.y)
        folds = [(np.arange(n), np.arange(n, len(y)))]
        public = {"bounds": train.bounds, "classes": train.classes}
    if validation:
        folds = [(tr[a], tr[b]) for tr, _ in folds for a, b in [validation_split(len(tr))]]
    if quick:
        rng = np.random.default_rng(0)
        tr, te = folds[0]
        folds = [(tr[random_rows(rng, len(tr), QUICK_ROWS)],
                  te[random_rows(rng, len(te), QUICK_ROWS)])]
    return X, y, folds, public


def _rng(seed, *keys):
    return np.random.default_rng(np.random.SeedSequence([int(seed), *keys]))


def noisy_mean(y, lower, upper, epsilon, rng):
    """The epsilon-DP mean of ``y`` clipped to ``[lower, upper]``: Laplace noise on the
    sum (sensitivity ``upper - lower``) and on the count (sensitivity 1), epsilon / 2
    each; clipped to the bounds."""
    total = np.clip(y, lower, upper).sum() + rng.laplace(0, 2 * (upper - lower) / epsilon)
    count = len(y) + rng.laplace(0, 2 / epsilon)
    return float(np.clip(total / max(count, 1.0), lower, upper))


def run(name, epsilons, n_seeds, models, validation=False, quick=False, data_dir=None,
        seed=0, log=print):
    X, y, folds, public = _splits(name, validation, quick, data_dir)
    regression = "y_bounds" in public
    table = REGRESSORS if regression else CLASSIFIERS
    models = [m for m in models if m in table]
    results = {"data": name, "validation": validation, "quick": quick,
               "regression": regression, "epsilons": list(epsilons), "n_seeds": n_seeds,
               "n_train": int(len(folds[0][0])), "n_folds": len(folds), "dp": {},
               "anchors": {}}
    if regression:
        lo, hi = public["y_bounds"]
        results["anchors"]["mean"] = float(np.mean(
            [np.mean(np.abs(y[te] - y[tr].mean())) for tr, te in folds]))
        for eps in epsilons:  # the expected MAE of the noisy mean: ANCHOR_DRAWS draws
            results["anchors"][eps] = float(np.mean([
                np.mean(np.abs(y[te] - noisy_mean(y[tr], lo, hi, eps,
                                                  _rng(seed, 99, int(eps * 1e4), f, s))))
                for f, (tr, te) in enumerate(folds) for s in range(ANCHOR_DRAWS)]))
    else:
        accs = []
        for tr, te in folds:
            values, counts = np.unique(y[tr], return_counts=True)
            accs.append(np.mean(y[te] == values[np.argmax(counts)]))
        results["anchors"]["majority"] = float(np.mean(accs))
    for model in models:
        m_index = list(CLASSIFIERS if not regression else REGRESSORS).index(model)
        cls, fixed = table[model]
        results["dp"][model] = {}
        for eps in epsilons:
            t0, scores = time.perf_counter(), []
            for f, (tr, te) in enumerate(folds):
                clients = ({"n_clients": len(tr)} if "n_clients" in cls().get_params()
                           else {})
                per_seed = []
                for s in range(n_seeds):
                    est = cls(epsilon=eps, accountant=BudgetAccountant(),
                              random_state=_rng(seed, m_index, int(eps * 1e4), f, s),
                              **public, **fixed, **clients).fit(X[tr], y[tr])
                    pred = est.predict(X[te])
                    per_seed.append(float(np.mean(np.abs(pred - y[te])) if regression
                                          else np.mean(pred == y[te])))
                scores.append(per_seed)
            per_seed = np.mean(scores, axis=0)  # over folds, one value per seed
            r = {"score": float(per_seed.mean()), "per_seed": per_seed.tolist(),
                 "seconds": time.perf_counter() - t0}
            results["dp"][model][eps] = r
            if log:
                log(f"  [{name} {model} eps={eps:g}] {'MAE' if regression else 'accuracy'} "
                    f"{r['score']:.4f} ({r['seconds']:.1f} s)")
    results["checks"] = checks(results)
    return results


def _worse(results, eps, score):
    if results["regression"]:
        return score > results["anchors"][eps]
    return score < results["anchors"]["majority"]


def checks(results):
    """Every cell at least as good as its anchor (the noisy mean, the majority class)."""
    return {"at least the anchor": all(not _worse(results, eps, r["score"])
                                       for by_eps in results["dp"].values()
                                       for eps, r in by_eps.items())}


def format_results(results):
    reg = results["regression"]
    where = "validation rows" if results["validation"] else "test rows"
    lines = [f"{results['data']}: {results['n_folds']} split(s), {results['n_train']} "
             f"training rows (first split), scored on {where}"
             + (" (QUICK subsample)" if results["quick"] else ""),
             ("MAE" if reg else "accuracy") + f", mean over {results['n_seeds']} seed(s) "
             "(and folds); * worse than the anchor"]
    header = "model".ljust(26) + "".join(f"{'eps ' + format(e, 'g'):>12}"
                                         for e in results["epsilons"])
    lines.append(header)
    for model, by_eps in results["dp"].items():
        row = model.ljust(26)
        for eps in results["epsilons"]:
            score = by_eps[eps]["score"]
            row += f"{score:.4f}{'*' if _worse(results, eps, score) else ' '}".rjust(12)
        lines.append(row)
    a = results["anchors"]
    if reg:
        lines.append("noisy mean".ljust(26) + "".join(f"{a[e]:.4f} ".rjust(12)
                                                      for e in results["epsilons"]))
        lines.append(f"exact training mean (non-private): {a['mean']:.4f}")
    else:
        lines.append(f"majority class: {a['majority']:.4f}")
    lines.append("Checks: " + "; ".join(f"{k}: {'PASS' if v else 'FAIL'}"
                                        for k, v in results["checks"].items()))
    return "\n".join(lines)


def no_fallback():
    """Turn the small-budget fallbacks off: today's defaults before them (the same code
    path, bit for bit: the golden digests of the models that do not fall back are
    unchanged), for the "before" columns."""
    from dptrees.boosting import _common
    from dptrees.forest import _RegressionForest
    from dptrees.tree import _ClassificationTreeMixin, _RegressionTreeMixin

    _common.FALLBACK_EPS_ROWS = -math.inf  # (a noisy count can be negative)
    _common.multiclass_threshold = lambda n_classes: None  # multiclass: no rule
    _RegressionTreeMixin._fallback_threshold = None
    _RegressionForest._fallback_threshold = None
    _ClassificationTreeMixin._fallback_rule = lambda self, data: None


def _parser():
    p = sweep_parser(__doc__, f"{QUICK_ROWS} rows of wine, eps {QUICK_EPSILONS}, 1 seed",
                     MODELS)
    p.add_argument("--data", choices=DATASETS, nargs="+", default=None)
    p.add_argument("--validation", action="store_true",
                   help="score on validation rows of the training data, not test rows")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-fallback", action="store_true",
                   help="the estimators without the small-budget fallback (before it)")
    return p


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.no_fallback:
        no_fallback()
    start = time.perf_counter()
    names = args.data or (("wine", "wine-classes") if args.quick else DEFAULT_DATASETS)
    out, texts = {}, []
    for name in names:
        epsilons, n_seeds, models = sweep_settings(args, EPSILONS[name], QUICK_EPSILONS,
                                                   N_SEEDS, MODELS)
        if args.quick:
            models = tuple(m for m in models if "federated" not in m)
        out[name] = run(name, epsilons, n_seeds, models, validation=args.validation,
                        quick=args.quick, data_dir=args.data_dir, seed=args.seed)
        texts.append(format_results(out[name]))
    results = {"quick": args.quick, "validation": args.validation,
               "fallback": not args.no_fallback, "data": out}
    return finish(results, "\n\n".join(texts), start, args.json)


if __name__ == "__main__":
    main()
