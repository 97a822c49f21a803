"""Smoke test of ``experiments/category_order_sweep.py`` (the order of a categorical
column's codes, oracle and private).

Runs the ``--quick`` mode once and checks the structure of its results, never their
figures; checks the private order's release (its noise scale is the number of tables
over epsilon) and the ordering. Skipped where the shared UCI data is absent.
"""

import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats as sps

from support import import_uci_experiment

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def script():
    return import_uci_experiment("category_order_sweep")


def test_quick_mode(script, tmp_path):
    out = tmp_path / "order.json"
    results = script.main(["--quick", "--json", str(out)])
    assert out.exists() and results["quick"] is True
    assert results["epsilons"] == list(script.QUICK_EPSILONS)
    assert set(results["cells"]) == set(script.CONFIGS)
    assert "relationship" in results["categorical"] and "age" not in results["categorical"]
    for by_eps in results["cells"].values():
        cell = by_eps[script.QUICK_EPSILONS[0]]
        assert 0 <= cell["auc"] <= 1 and 0 <= cell["accuracy"] <= 1
        assert len(cell["aucs"]) == 1 and math.isfinite(cell["seconds"])


def test_tables_count_every_row_once_and_order_by_rate(script):
    X = pd.DataFrame({"c": ["a", "b", None, "b", "a", "a"], "x": [1, 2, 3, 4, 5, 6]})
    positive = np.array([True, False, True, False, False, True])
    domain = {"c": ["a", "b", None], "x": (0, 10)}
    tables = script.category_tables(X, positive, domain)
    assert list(tables) == ["c"]
    np.testing.assert_array_equal(tables["c"], [[1, 2], [2, 0], [0, 1]])
    # rates a 2/3, b 0, missing 1: b, a, missing
    assert script.ordered_domain(domain, tables)["c"] == ["b", "a", None]
    assert script.ordered_domain(domain, tables)["x"] == (0, 10)


def test_noisy_tables_have_laplace_noise_of_the_documented_scale(script):
    tables = {"a": np.zeros((50, 2)), "b": np.zeros((100, 2))}
    noisy = script.noisy_tables(tables, 0.5, np.random.default_rng(0))
    noise = np.concatenate([noisy["a"].ravel(), noisy["b"].ravel()])
    scale = 2 / 0.5  # L1 sensitivity: one count in each of the 2 tables
    assert sps.kstest(noise, "laplace", args=(0, scale)).pvalue > 1e-3
    assert sps.kstest(noise, "laplace", args=(0, scale / 2)).pvalue < 1e-6


def test_gaussian_order_and_the_model_share_compose_within_the_budget(script):
    from dptrees.privacy.zcdp import zcdp_budget
    for eps in (0.03, 1.0):
        rho = zcdp_budget(eps, script.DELTA)
        model_eps = script.model_epsilon(eps, script.DELTA, 0.95)
        assert model_eps < eps
        assert zcdp_budget(model_eps, script.DELTA) <= 0.95 * rho
        assert zcdp_budget(model_eps * 1.001, script.DELTA) > 0.95 * rho * 0.99
    tables = {"a": np.zeros((200, 2)), "b": np.zeros((200, 2)), "c": np.zeros((200, 2))}
    noisy = script.gaussian_tables(tables, 0.02, np.random.default_rng(1))
    noise = np.concatenate([t.ravel() for t in noisy.values()])
    std = math.sqrt(3) / math.sqrt(2 * 0.02)  # L2 sensitivity sqrt(3 tables)
    assert sps.kstest(noise, "norm", args=(0, std)).pvalue > 1e-3
    assert sps.kstest(noise, "norm", args=(0, std / math.sqrt(3))).pvalue < 1e-6
