#!/usr/bin/env python
"""Cost of one boosting round: dptrees' DP gradient boosting against scikit-learn's.

A plain script (no asv; the asv suite is ``benchmarks/asv/suite/bench_boosting.py``). On
one synthetic data set, in the same process and run, it times
``DPGradientBoostingRegressor`` (each ``split`` mode: ``"auto"``, the defaults, is random
trees with each root selected by the exponential mechanism; and ``split="random"`` with
``subsample=0.1``) and scikit-learn's
``HistGradientBoostingRegressor`` with the same depth (``max_depth``, full trees for us,
``max_leaf_nodes=None`` for scikit-learn) and the same number of bins (``n_bins`` /
``max_bins``), early stopping off.

The cost of *one round* is measured without the one-off work (validation, binning, the
initial score): ``(t(1 + k rounds) - t(1 round)) / k``, each time the best of
``--repeat`` fits. scikit-learn uses all cores (OpenMP); ours ``n_jobs`` threads for the
histograms (the selected root of ``"auto"``, ``split="private"`` and ``"hybrid"``, and
``"guided"``'s one prior histogram, which is one-off work; ``"random"`` needs none).

Data: ``n x p`` float64 features uniform in [0, 1) and Friedman #1 targets, as in
``benchmarks/bench_trees.py`` (public bounds: features [0, 1], targets [-3, 33]).

The project's target, checked on the last lines (on 1,000,000 x 20):

    one boosting round costs at most 1.5x one round of scikit-learn's
    HistGradientBoostingRegressor with the same depth and number of bins.

Usage::

    python benchmarks/bench_boosting.py              # 1,000,000 x 20, depth 6, 255 bins
    python benchmarks/bench_boosting.py --quick      # tiny data: smoke test only

Exit status 1 when the target is missed on large data (n >= 1,000,000) in every mode, 0
otherwise.
"""

import argparse
import os
import platform
import sys
import time

import numpy as np

TARGET_MAX_RATIO = 1.5  # our round / scikit-learn's round
MODES = ("auto", "random", "guided", "hybrid", "private", "random-subsample")
SUBSAMPLE = 0.1  # "random-subsample": split="random", each tree on a 10 % Poisson sample


def make_data(n, p, seed=0):
    """Friedman #1 with standard-normal noise clipped to [-3, 3] (``p >= 5``)."""
    if p < 5:
        raise ValueError(f"Friedman #1 needs at least 5 features, got {p}")
    rng = np.random.default_rng(seed)
    X = rng.random((n, p))
    y = (10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3]
         + 5 * X[:, 4] + np.clip(rng.standard_normal(n), -3, 3))
    return X, y


def _best_time(fit, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fit()
        best = min(best, time.perf_counter() - start)
    return best


def ours(n_rounds, mode, depth, n_bins, n_jobs):
    from dptrees import BudgetAccountant
    from dptrees.boosting import DPGradientBoostingRegressor

    split, subsample = ("random", SUBSAMPLE) if mode == "random-subsample" else (mode, None)
    return DPGradientBoostingRegressor(
        n_estimators=n_rounds, epsilon=1.0, max_depth=depth, n_bins=n_bins, split=split,
        subsample=subsample, bounds=(0.0, 1.0), y_bounds=(-3.0, 33.0),
        accountant=BudgetAccountant(), random_state=0, n_jobs=n_jobs,
    )


def sklearn_hgb(n_rounds, depth, n_bins):
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor(
        max_iter=n_rounds, max_depth=depth, max_leaf_nodes=None, max_bins=n_bins,
        early_stopping=False, learning_rate=0.1, min_samples_leaf=1, random_state=0,
    )


def round_cost(make, X, y, rounds, repeat):
    """Seconds per round beyond the first: ``(t(1 + rounds) - t(1)) / rounds``."""
    one = _best_time(lambda: make(1).fit(X, y), repeat)
    many = _best_time(lambda: make(1 + rounds).fit(X, y), repeat)
    return max(many - one, 0.0) / rounds, one


def run(n, p, depth, n_bins, rounds, repeat, n_jobs, modes=MODES):
    X, y = make_data(n, p)
    results = {}
    cost, first = round_cost(lambda k: sklearn_hgb(k, depth, n_bins), X, y, rounds, repeat)
    results["sklearn"] = {"round": cost, "first_fit": first}
    for mode in modes:
        cost, first = round_cost(lambda k, m=mode: ours(k, m, depth, n_bins, n_jobs), X, y,
                                 rounds, repeat)
        results[mode] = {"round": cost, "first_fit": first,
                         "ratio": cost / max(results["sklearn"]["round"], 1e-12)}
    return results


def report(results, n, p, depth, n_bins, n_jobs):
    lines = [
        f"one boosting round on {n:,} x {p}, depth {depth}, {n_bins} bins "
        f"({platform.machine()}, {os.cpu_count()} cores, n_jobs={n_jobs}):",
        f"  {'model':<44} {'per round':>11} {'1-round fit':>12} {'ratio':>7}",
    ]
    sk = results["sklearn"]
    lines.append(f"  {'sklearn HistGradientBoostingRegressor':<44} {sk['round'] * 1e3:9.1f} ms "
                 f"{sk['first_fit']:10.2f} s {'1.00':>7}")
    for mode in (m for m in MODES if m in results):
        r = results[mode]
        lines.append(f"  {'DPGradientBoostingRegressor split=' + repr(mode):<44} "
                     f"{r['round'] * 1e3:9.1f} ms {r['first_fit']:10.2f} s {r['ratio']:7.2f}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--p", type=int, default=20)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--bins", type=int, default=255)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--quick", action="store_true", help="tiny data, smoke test only")
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.rounds, args.repeat = 20_000, 3, 1
    results = run(args.n, args.p, args.depth, args.bins, args.rounds, args.repeat, args.jobs)
    print(report(results, args.n, args.p, args.depth, args.bins, args.jobs))
    best = min(results[m]["ratio"] for m in MODES)
    verdicts = {m: results[m]["ratio"] <= TARGET_MAX_RATIO for m in MODES}
    for mode, ok in verdicts.items():
        print(f"target (round <= {TARGET_MAX_RATIO}x sklearn's), split={mode!r}: "
              f"{results[mode]['ratio']:.2f}x {'PASS' if ok else 'FAIL'}"
              + ("" if args.n >= 1_000_000 else " (indicative: small data)"))
    if args.n >= 1_000_000 and best > TARGET_MAX_RATIO:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
