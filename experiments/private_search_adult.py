"""Private hyperparameter search on Adult: ``DPRandomSearch`` at a total eps vs the defaults.

The column "DP GB selected" of ``compare_boosting.py`` picks settings on the training rows
without accounting for it; here the selection itself is private. At a total ``eps``
(default 1):

* **defaults**: ``DPGradientBoostingClassifier`` with its default settings (Gaussian
  noise, ``delta = 1e-6``) at ``eps`` on all training rows, as ``compare_boosting.py``'s
  "DP GB defaults";
* **defaults (Laplace)**: the same with ``noise="laplace"`` (pure DP), which the search
  needs for its trials;
* **searched**: ``dptrees.model_selection.DPRandomSearch`` at total ``eps`` (pure DP): a
  geometric number of trials (mean ``--mean-trials``), each fitting at ``eps / 3`` with
  Laplace noise on about 80 % of the training rows and scored (noisy count of correct
  predictions) on the rest; the winning trial's model is kept (no refit);
* **selected, refit** (diagnostic, *not* within the budget): the searched settings refit
  at ``eps`` on all training rows, to judge the quality of the chosen settings apart from
  the search's cost;
* **searched, Renyi**: ``DPRandomSearch`` at total ``(eps, 1e-6)`` (Renyi DP, Papernot &
  Steinke): a logarithmic number of trials (mean ``--mean-trials``) of the estimator with
  its default Gaussian noise, each ``rho_t``-zCDP (about 37 % of the ``rho`` of a fit at
  ``eps``) and scored with Gaussian noise; the winning trial's model is kept;
* **Renyi-selected, refit** (diagnostic, *not* within the budget): its settings refit at
  ``eps`` with Gaussian noise on all training rows, beside "defaults".

Search space (around the defaults ``learning_rate=0.3, max_depth=4, n_estimators=100,
reg_lambda=50``, leaning to the faster-learning settings that suit small budgets):
``learning_rate`` in {0.2, 0.3, 0.5, 1}, ``max_depth`` in {3, 4, 5}, ``n_estimators`` in
{25, 50, 100}, ``reg_lambda`` in {20, 50, 200, 500}.

The number of trials of each search is printed as a diagnostic; it is not part of what
the search's guarantee covers (see ``dptrees.model_selection``).

Reports test accuracy and ROC AUC (mean and std over ``--seeds`` seeds). ``--quick`` uses
2,000 rows of ``adult.data`` and of ``adult.test``, 1 seed and 2 mean trials.

    python -m experiments.private_search_adult [--quick] [--eps 1] [--seeds 3]

The searches' trials run on about 80 % of the rows, so the searched models stand against
defaults fitted on all of them at the whole budget.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from dptrees import BudgetAccountant
from dptrees.boosting import DPGradientBoostingClassifier
from dptrees.model_selection import DPRandomSearch

from experiments import compare_boosting as cb

SPACE = {
    "learning_rate": [0.2, 0.3, 0.5, 1.0],
    "max_depth": [3, 4, 5],
    "n_estimators": [25, 50, 100],
    "reg_lambda": [20.0, 50.0, 200.0, 500.0],
}
MEAN_TRIALS = 10
VALIDATION_FRACTION = 0.2
SEEDS = 3
QUICK_ROWS = 2_000
QUICK_MEAN_TRIALS = 2
COLUMNS = ("defaults", "defaults (Laplace)", "searched", "selected, refit",
           "searched, Renyi", "Renyi-selected, refit")


def _gb(train, epsilon, rng, **params):
    return DPGradientBoostingClassifier(epsilon=epsilon, bounds=train.bounds,
                                        classes=train.classes, accountant=BudgetAccountant(),
                                        random_state=rng, **params)


def run_seed(train, test, epsilon, seed, mean_trials):
    """``{column: (accuracy, auc)}`` and the search's details for one seed."""
    rngs = np.random.default_rng(np.random.SeedSequence([seed, 7331])).spawn(4)
    positive = train.classes[-1]
    out = {}
    out["defaults"] = cb.scores(_gb(train, epsilon, rngs[0], delta=cb.DELTA)
                                .fit(train.X, train.y), test.X, test.y, positive)
    out["defaults (Laplace)"] = cb.scores(_gb(train, epsilon, rngs[1], noise="laplace")
                                          .fit(train.X, train.y), test.X, test.y, positive)
    acc = BudgetAccountant(epsilon=epsilon, delta=0.0)
    search = DPRandomSearch(_gb(train, epsilon, None, noise="laplace"), SPACE,
                            epsilon=epsilon, mean_trials=mean_trials,
                            validation_fraction=VALIDATION_FRACTION, accountant=acc,
                            random_state=rngs[2]).fit(train.X, train.y)
    assert acc.spent == (epsilon, 0.0)
    out["searched"] = cb.scores(search, test.X, test.y, positive)
    out["selected, refit"] = cb.scores(
        _gb(train, epsilon, rngs[3], noise="laplace", **search.best_params_)
        .fit(train.X, train.y), test.X, test.y, positive)
    details = {"best_params": search.best_params_, "n_trials": search._n_trials,
               "epsilon_spent": search.epsilon_spent_, "delta_spent": search.delta_spent_}
    # The Renyi search's generators are spawned apart, so the columns above keep theirs.
    renyi_rngs = np.random.default_rng(np.random.SeedSequence([seed, 7331, 1])).spawn(2)
    acc = BudgetAccountant(epsilon=epsilon, delta=cb.DELTA)
    renyi = DPRandomSearch(_gb(train, epsilon, None), SPACE, epsilon=epsilon,
                           delta=cb.DELTA, mean_trials=mean_trials,
                           validation_fraction=VALIDATION_FRACTION, accountant=acc,
                           random_state=renyi_rngs[0]).fit(train.X, train.y)
    assert acc.spent == (epsilon, cb.DELTA)
    out["searched, Renyi"] = cb.scores(renyi, test.X, test.y, positive)
    out["Renyi-selected, refit"] = cb.scores(
        _gb(train, epsilon, renyi_rngs[1], delta=cb.DELTA, **renyi.best_params_)
        .fit(train.X, train.y), test.X, test.y, positive)
    details["renyi"] = {"best_params": renyi.best_params_, "n_trials": renyi._n_trials,
                        "trial_epsilon": renyi.trial_epsilon_, "trial_rho": renyi.trial_rho_,
                        "epsilon_spent": renyi.epsilon_spent_,
                        "delta_spent": renyi.delta_spent_}
    return out, details


def run(data, epsilon=1.0, seeds=SEEDS, mean_trials=MEAN_TRIALS):
    train, test = data["ordinal"]
    per_seed = [run_seed(train, test, epsilon, s, mean_trials) for s in range(seeds)]
    summary = {}
    for column in COLUMNS:
        accs = [r[column][0] for r, _ in per_seed]
        aucs = [r[column][1] for r, _ in per_seed]
        summary[column] = {"accuracy": cb.adult._summary(accs), "auc": cb.adult._summary(aucs)}
    return {"columns": summary, "searches": [d for _, d in per_seed],
            "n_train": int(len(train.y)), "n_test": int(len(test.y)), "epsilon": epsilon}


def format_results(res):
    lines = [f"Adult, total eps {res['epsilon']:g} (train {res['n_train']}, test "
             f"{res['n_test']} rows)",
             f"{'column':<22}{'accuracy':>18}{'ROC AUC':>18}"]
    for column, s in res["columns"].items():
        a, u = s["accuracy"], s["auc"]
        lines.append(f"{column:<22}{a['mean']:>10.4f} ± {a['std']:.4f}"
                     f"{u['mean']:>10.4f} ± {u['std']:.4f}")
    for i, d in enumerate(res["searches"]):
        lines.append(f"seed {i}: {d['n_trials']} trials, chose {d['best_params']}, spent "
                     f"(eps {d['epsilon_spent']:g}, delta {d['delta_spent']:g})")
    for i, d in enumerate(res["searches"]):
        r = d["renyi"]
        lines.append(f"seed {i}, Renyi: {r['n_trials']} trials (each rho "
                     f"{r['trial_rho']:.4g}, eps {r['trial_epsilon']:.3g}), chose "
                     f"{r['best_params']}, spent (eps {r['epsilon_spent']:g}, delta "
                     f"{r['delta_spent']:g})")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small subset, 1 seed")
    parser.add_argument("--eps", type=float, default=1.0, help="total epsilon (default 1)")
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--mean-trials", type=float, default=None)
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args(argv)
    if not (math.isfinite(args.eps) and args.eps > 0):
        parser.error("--eps must be finite and > 0")
    seeds = args.seeds if args.seeds is not None else (1 if args.quick else SEEDS)
    mean_trials = args.mean_trials if args.mean_trials is not None else (
        QUICK_MEAN_TRIALS if args.quick else MEAN_TRIALS)
    t0 = time.perf_counter()
    try:
        data = cb.load_adult_data(args.data_dir, QUICK_ROWS if args.quick else None)
    except FileNotFoundError as exc:
        parser.error(str(exc))
    res = run(data, args.eps, seeds, mean_trials)
    res["time"] = time.perf_counter() - t0
    print(format_results(res))
    print(f"time: {res['time']:.1f} s{' (QUICK mode)' if args.quick else ''}")
    return res


if __name__ == "__main__":
    main()
