"""Smoke test of ``experiments/category_order_sweep.py`` (the library's ``category_order``
against the listed order, and the oracle order).

Runs the ``--quick`` mode once and checks the structure of its results, never their
figures; checks the oracle's tables and ordering. The library's release is tested in
``tests/data/test_category_order.py``. Skipped where the shared UCI data is absent.
"""

import math

import numpy as np
import pandas as pd
import pytest

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
