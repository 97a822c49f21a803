"""``python -m dptrees``: the main job, on California Housing as bundled with the package.

Shows the privacy machinery end to end: public bounds, exact mechanisms, and an
accountant that records every release and refuses to overspend.
"""

import argparse
import time

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeRegressor

from dptrees import mechanisms
from dptrees.accounting import BudgetAccountant
from dptrees.boosting import DPGradientBoostingRegressor
from dptrees.datasets import load_california_housing
from dptrees.exceptions import BudgetExceededError
from dptrees.forest import DPPartitionForestRegressor
from dptrees.tree import DPDecisionTreeRegressor


def _release_statistics(X, y, names, bounds, y_bounds, accountant, rng):
    """Count, mean target and an income histogram, each charged to ``accountant``."""
    n = y.size
    eps_count, eps_sum, eps_hist, eps_mode = 0.25, 0.5, 0.5, 0.25

    accountant.spend(eps_count, label="count of block groups")
    count = mechanisms.noisy_count(n, epsilon=eps_count, random_state=rng)

    accountant.spend(eps_sum, label="sum of median house values")
    total = mechanisms.noisy_sum(y, bounds=y_bounds, epsilon=eps_sum, random_state=rng)

    income = names.index("medianIncome")
    edges = np.linspace(bounds[0][income], bounds[1][income], 11)  # public bins
    cells = np.clip(np.searchsorted(edges, X[:, income], side="right") - 1, 0, 9)
    hist = np.bincount(cells, minlength=10)
    # One record falls in exactly one cell: L1 sensitivity 1 for the whole histogram.
    accountant.spend(eps_hist, label="income histogram (10 public bins)")
    noisy_hist = mechanisms.noisy_count(hist, epsilon=eps_hist, random_state=rng)

    # The most common income bracket, chosen privately: counts have sensitivity 1 and
    # move in one direction between neighbours, so the selection is monotonic.
    accountant.spend(eps_mode, label="most common income bracket")
    mode = mechanisms.permute_and_flip(hist, sensitivity=1.0, epsilon=eps_mode, monotonic=True,
                                       random_state=rng)

    print(f"{'statistic':<34}{'true':>14}{'released (DP)':>16}")
    print(f"{'number of block groups':<34}{n:>14,}{count:>16,}")
    print(f"{'mean median house value ($)':<34}{y.mean():>14,.0f}{total / max(count, 1):>16,.0f}")
    print(f"{'most common income bracket':<34}{int(np.argmax(hist)):>14}{int(mode):>16}")
    print("\nincome histogram (public bins of $15,000):")
    for lo, true_count, dp_count in zip(edges[:-1], hist, noisy_hist):
        print(f"  {lo * 1e4:>9,.0f}+ {true_count:>8,} {dp_count:>8,}")


def _dp_mean(y, y_bounds, epsilon, rng):
    """DP mean of the targets: noisy sum over noisy count, half the budget each."""
    total = mechanisms.noisy_sum(y, bounds=y_bounds, epsilon=epsilon / 2, random_state=rng)
    count = mechanisms.noisy_count(y.size, epsilon=epsilon / 2, random_state=rng)
    return float(np.clip(total / max(count, 1), *y_bounds))


def _compare_models(X, y, bounds, y_bounds, epsilons, rng):
    """MAE of DP trees and forests on a held-out split, beside non-private references."""
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
    reference = DecisionTreeRegressor(max_depth=8, random_state=0).fit(X_train, y_train)
    ref_mae = np.abs(reference.predict(X_test) - y_test).mean()
    print(f"\nDP regression on a held-out 20 % (MAE in $; non-private depth-8 tree: "
          f"{ref_mae:,.0f})")
    print(f"{'epsilon':>8}{'DP mean':>12}{'DP tree':>12}{'DP forest':>12}{'DP boosting':>13}"
          f"{'fit time':>10}")
    for epsilon in epsilons:
        models = {
            "tree": DPDecisionTreeRegressor(
                epsilon=epsilon, max_depth=5, bounds=bounds, y_bounds=y_bounds, random_state=rng,
                selection="permute_and_flip", accountant=BudgetAccountant()),
            "forest": DPPartitionForestRegressor(
                n_estimators=10, epsilon=epsilon, max_depth=4, bounds=bounds, y_bounds=y_bounds,
                random_state=rng,
                selection="permute_and_flip", budget_weights=(1, 1, 4), n_jobs=-1,
                accountant=BudgetAccountant()),
            # (epsilon, 1e-6)-DP: Gaussian noise with Renyi-DP accounting
            "boosting": DPGradientBoostingRegressor(
                n_estimators=100, epsilon=epsilon, delta=1e-6, bounds=bounds, y_bounds=y_bounds,
                random_state=rng, accountant=BudgetAccountant()),
        }
        start = time.perf_counter()
        mae = {name: np.abs(m.fit(X_train, y_train).predict(X_test) - y_test).mean()
               for name, m in models.items()}
        elapsed = time.perf_counter() - start
        mean_mae = np.abs(_dp_mean(y_train, y_bounds, epsilon, rng) - y_test).mean()
        print(f"{epsilon:>8}{mean_mae:>12,.0f}{mae['tree']:>12,.0f}{mae['forest']:>12,.0f}"
              f"{mae['boosting']:>13,.0f}{elapsed:>9.2f}s")
    print("(each model is its own release: the tree, forest and mean epsilon-DP, the boosting "
          "(epsilon, 1e-6)-DP; a seed was used only if --seed was given)")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m dptrees", description=__doc__)
    parser.add_argument("--epsilon", type=float, default=2.0, help="total privacy budget")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed for reproducible noise (testing only: a known seed "
                             "lets anyone recompute the noise)")
    parser.add_argument("--models-epsilon", type=float, nargs="+", default=[0.5, 1.0, 4.0],
                        help="epsilons at which the DP tree and forest are compared")
    args = parser.parse_args(argv)

    X, y, names, bounds, y_bounds = load_california_housing()
    rng = np.random.default_rng(args.seed)
    accountant = BudgetAccountant(epsilon=args.epsilon, delta=0.0)
    print(f"dptrees demo: California Housing, {y.size:,} block groups, {X.shape[1]} features")
    print(f"privacy budget: epsilon = {args.epsilon} (add/remove-one neighbours)\n")

    _release_statistics(X, y, names, bounds, y_bounds, accountant, rng)

    print("\nprivacy ledger:")
    for record in accountant.ledger:
        print(f"  {record.epsilon:>6.3f}  {record.label}")
    spent, _ = accountant.spent
    print(f"  total spent: {spent:.3f} of {accountant.epsilon}")
    try:
        accountant.spend(accountant.remaining()[0] + 0.1, label="one query too many")
    except BudgetExceededError as exc:
        print(f"\na further release is refused: {exc}")

    _compare_models(X, y, bounds, y_bounds, args.models_epsilon, rng)
    return 0
