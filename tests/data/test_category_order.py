"""Private category order (``category_order``, :mod:`dptrees.data.category_order`).

* Sensitivity: adding one record adds 1 to exactly one ``(code, class)`` cell of each
  categorical column's table; counts of any split into blocks add up; codes that are not
  a categorical column's are refused. The release's noise is audited (quick settings),
  and a deliberately broken variant (one table's sensitivity stated for two) is flagged.
* Post-processing: codes sorted by their noisy positive rate, negative counts read as 0,
  ties kept in the listed order; the binner bins each code as its position, keeps the
  private edges' tables, prints sets of categories (no threshold), and survives pickling.
* The fit: one ledger entry, the budget never exceeded, ``"listed"`` and a declined
  ``"auto"`` give the model of before, the same model from an array and from Dask
  (the golden models), ``"private"`` refused for more than two classes.
"""

import math
import pickle

import numpy as np
import pandas as pd
import pytest

import dptrees as dp
from dptrees._sources import _rows
from dptrees.audit import audit_epsilon
from dptrees.boosting._gradient import ORDER_EPS_ROWS
from dptrees.data import category_order as CO
from dptrees.data.binning import Binner, column_bins
from dptrees.plot import export_text
from dptrees.privacy.release_plan import ReleasePlan

COLOURS = ["red", "green", "blue", "grey"]
SIZES = ["S", "M", "L"]
SCHEMA = {"colour": COLOURS + [None], "size": SIZES, "x": (0.0, 1.0)}


def make_frame(n=4000, seed=0):
    """Two categorical columns whose positive rate is not in their listed order."""
    rng = np.random.default_rng(seed)
    colour = rng.choice(np.array(COLOURS + [None], dtype=object), n)
    size = rng.choice(np.array(SIZES, dtype=object), n)
    x = rng.random(n)
    rate = pd.Series(colour).map({"red": 0.7, "green": 0.1, "blue": 0.9, "grey": 0.4}
                                 ).fillna(0.2).to_numpy()
    y = (rng.random(n) < 0.8 * rate + 0.2 * x).astype(int)
    return pd.DataFrame({"colour": colour, "size": size, "x": x}), y


def codes_and_labels(n=500, seed=1):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, 5, n), rng.random(n), rng.integers(0, 3, n)])
    return X.astype(float), rng.integers(0, 2, n)


def counts(X, y, n_codes=5):
    return _rows.block_category_counts(X, y, 0, [0, 2], n_codes, 2, X.shape[1])


# -- sensitivity -----------------------------------------------------------------------


@pytest.mark.parametrize("row,label", [([0, 0.5, 0], 0), ([4, 0.1, 2], 1), ([2, 0.9, 1], 1)])
def test_adding_one_record_adds_one_to_one_cell_of_each_table(row, label):
    X, y = codes_and_labels()
    diff = counts(np.vstack([X, row]), np.append(y, label)) - counts(X, y)
    assert diff.min() == 0 and np.all(diff.sum(axis=(1, 2)) == 1)
    assert diff[0, int(row[0]), label] == 1 and diff[1, int(row[2]), label] == 1


def test_counts_of_any_split_into_blocks_add_up_and_count_every_row():
    X, y = codes_and_labels()
    whole = counts(X, y)
    parts = sum(counts(X[a:a + 70], y[a:a + 70]) for a in range(0, len(y), 70))
    np.testing.assert_array_equal(parts, whole)
    assert whole.sum() == 2 * len(y)


@pytest.mark.parametrize("bad", [5.0, -1.0, 1.5])
def test_values_that_are_not_codes_are_refused(bad):
    X, y = codes_and_labels()
    X[3, 0] = bad
    with pytest.raises(ValueError, match="not the codes 0 .. 4"):
        counts(X, y)


# -- audit of the release --------------------------------------------------------------

EPSILON = 1.0
AUDIT = dict(n_calibration=2_000, n_test=6_000, alpha=1e-3)
D0 = (np.zeros((0, 2)), np.zeros(0, dtype=int))
D1 = (np.array([[1.0, 2.0]]), np.array([1]))  # one record: code 1 and code 2, class 1
CHANGED = [1 * 2 + 1, 3 * 2 + 2 * 2 + 1]  # its cell in each table, flattened


def _order_mechanism(stated_cells=None):
    """Laplace release of two columns' tables (3 codes each), as
    :func:`~dptrees.data.category_order.noisy_counts` makes it; with ``stated_cells``
    the broken variant that states that many changed values instead of 2."""

    def release(data, rng):
        X, y = data
        tables = (_rows.block_category_counts(X, y, 0, [0, 1], 3, 2, 2) if len(y)
                  else np.zeros((2, 3, 2), dtype=np.int64))
        pending = CO.PendingOrder(list(tables), np.array([0, 1]), 0.1)
        plan = ReleasePlan("laplace", EPSILON, 0.0)
        if stated_cells is None:
            return CO.noisy_counts(plan, EPSILON, pending, rng)
        return plan.release(tables.astype(float).ravel(), 1.0, EPSILON, rng,
                            cells=stated_cells)

    return release


def _statistic(outputs):
    """The record's two cells' moves towards 1, clipped to [0, 1] and summed."""
    return np.clip(np.asarray(outputs)[:, CHANGED], 0.0, 1.0).sum(axis=1)


def test_noisy_counts_audit_within_the_claim(record_audit):
    res = audit_epsilon(_order_mechanism(), D0, D1, statistic=_statistic, batch=False,
                        random_state=38, **AUDIT)
    record_audit(res, EPSILON).assert_within(EPSILON)


def test_control_one_table_sensitivity_for_two_tables_is_flagged(record_audit):
    res = audit_epsilon(_order_mechanism(stated_cells=1), D0, D1, statistic=_statistic,
                        batch=False, random_state=39, **AUDIT)
    record_audit(res, EPSILON)
    assert res.epsilon_lower_bound > 1.3
    with pytest.raises(AssertionError, match="privacy claim refuted"):
        res.assert_within(EPSILON)


def test_gaussian_noise_has_the_documented_scale():
    import scipy.stats as sps
    tables = [np.zeros((200, 2), dtype=np.int64)] * 3
    pending = CO.PendingOrder(tables, np.arange(3), 0.05)
    plan = ReleasePlan("gaussian", 1.0, 1e-6)
    rho = 0.02
    noise = CO.noisy_counts(plan, rho, pending, np.random.default_rng(1))
    std = math.sqrt(3) / math.sqrt(2 * rho)  # L2 sensitivity sqrt(3 tables)
    assert sps.kstest(noise, "norm", args=(0, std)).pvalue > 1e-3
    assert sps.kstest(noise, "norm", args=(0, std / math.sqrt(3))).pvalue < 1e-6


# -- post-processing and binning -------------------------------------------------------


def test_positions_sort_codes_by_noisy_rate_with_ties_in_listed_order():
    # rates: 0.25, 0, 1/2 (both counts clipped to 0), 0.75, 1/2 (tie, kept after code 2)
    table = np.array([[3, 1], [5, -2], [-1, -4], [1, 3], [2, 2]], dtype=float)
    pending = CO.PendingOrder([table], np.array([7]), 0.05)
    positions = CO.positions_from_counts(table.ravel(), pending)
    np.testing.assert_array_equal(positions[7], [1, 0, 2, 4, 3])


@pytest.mark.parametrize("n_bins", [32, 4])
def test_binner_bins_each_code_as_its_position(n_bins):
    lower, upper = np.array([-0.5, 0.0]), np.array([6.5, 1.0])  # 7 codes, one numeric
    position = np.array([3, 0, 6, 1, 5, 2, 4])
    binner = Binner(lower, upper, n_bins, positions={0: position})
    listed = Binner(lower, upper, n_bins)
    codes = np.arange(7, dtype=float)
    np.testing.assert_array_equal(column_bins(binner, 0, codes),
                                  column_bins(listed, 0, position.astype(float)))
    X = np.column_stack([codes, np.linspace(0, 1, 7)])
    np.testing.assert_array_equal(binner.transform(X)[:, 1], listed.transform(X)[:, 1])
    assert np.isnan(binner.thresholds(0, 0)) and np.isfinite(binner.thresholds(1, 0))
    again = pickle.loads(pickle.dumps(binner))
    np.testing.assert_array_equal(again.transform(X), binner.transform(X))


def test_binner_refuses_positions_that_are_not_a_permutation():
    with pytest.raises(ValueError, match="positions of feature 0"):
        Binner(np.array([-0.5]), np.array([2.5]), 8, positions={0: [0, 0, 1]})


# -- the fit ---------------------------------------------------------------------------


def _fit(**params):
    X, y = make_frame()
    params = {"epsilon": 4.0, "bounds": SCHEMA, "classes": [0, 1], "random_state": 3,
              "accountant": dp.BudgetAccountant(), **params}
    return dp.DPGradientBoostingClassifier(**params).fit(X, y), X, y


def test_one_ledger_entry_and_the_budget_is_never_exceeded():
    accountant = dp.BudgetAccountant(4.0, 1e-6)
    est, X, y = _fit(category_order="private", order_budget=0.2, accountant=accountant)
    entries = [e for e in est.privacy_ledger_ if e["release"].startswith("category order")]
    assert len(entries) == 1 and entries[0]["count"] == 1
    assert entries[0]["norm"] == "L2" and entries[0]["sensitivity"] == pytest.approx(
        math.sqrt(2))
    assert est.private_category_order_ and est.epsilon_spent_ <= 4.0
    assert accountant.spent[0] <= 4.0
    # colour: 5 listed categories (None among them) and the missing code; size: 3 + 1
    assert {j: p.size for j, p in est.binner_.positions.items()} == {0: 6, 1: 4}
    # the order's share of what the private edges left (rho, the plan's total)
    total = sum(e["rho"] * e["count"] for e in est.privacy_ledger_)
    assert entries[0]["rho"] == pytest.approx(0.2 * 0.9 * total, rel=0.05)
    # the noisy order found the rates' order of the colours
    order = [k for k in np.argsort(est.binner_.positions[0]) if k < len(COLOURS)]
    assert [COLOURS[k] for k in order] == ["green", "grey", "red", "blue"]


def test_splits_print_as_sets_of_categories():
    est, X, y = _fit(category_order="private")
    text = export_text(est, index=0)
    assert "colour in {" in text and "colour <" not in text and "colour >=" not in text
    assert est.score(X, y) > 0.7


def test_listed_and_declined_auto_give_the_model_of_before():
    listed, X, _ = _fit(category_order="listed", epsilon=0.5)
    assert ORDER_EPS_ROWS > 0.5 * len(X)  # auto declines here
    auto, _, _ = _fit(epsilon=0.5)
    assert not listed.private_category_order_ and not auto.private_category_order_
    assert listed.binner_.positions is None and auto.binner_.positions is None
    np.testing.assert_array_equal(auto.predict_proba(X), listed.predict_proba(X))
    assert auto.privacy_ledger_ == listed.privacy_ledger_


@pytest.mark.parametrize("epsilon", [0.05, 0.1, 0.22])
def test_declining_the_edges_and_the_order_gives_back_the_whole_budget(epsilon):
    # Regression: the second of two declined reservations was given back from a float
    # difference an ulp short of it, and the default fit failed (at eps 0.05 here).
    est, X, _ = _fit(epsilon=epsilon)
    assert epsilon * len(X) < ORDER_EPS_ROWS
    assert not est.private_edges_ and not est.private_category_order_
    assert est.epsilon_spent_ <= epsilon


@pytest.mark.parametrize("epsilon", np.linspace(0.001, 2.0, 41))
def test_reservations_come_back_exactly_in_either_order(epsilon):
    for first, second in ((0, 1), (1, 0)):
        plan = ReleasePlan("gaussian", epsilon, 1e-6)
        whole = plan.total
        budgets = [plan.reserve(0.1), plan.reserve(0.05)]
        assert plan.total + plan.reserved == pytest.approx(whole, rel=1e-14)
        plan.restore(budgets[first])
        plan.restore(budgets[second])
        assert plan.total == whole and plan.reserved == 0
        with pytest.raises(ValueError, match="cannot restore"):
            plan.restore(budgets[first])


def test_auto_orders_from_the_noisy_count():
    est, X, _ = _fit(epsilon=4.0)
    assert 4.0 * len(X) >= ORDER_EPS_ROWS and est.private_category_order_


def test_laplace_noise_spends_the_order_epsilon_out_of_the_fit():
    est, _, _ = _fit(category_order="private", noise="laplace", delta=0.0, epsilon=1.0)
    entry = [e for e in est.privacy_ledger_ if e["release"].startswith("category order")][0]
    assert entry["norm"] == "L1" and entry["sensitivity"] == 2
    assert est.epsilon_spent_ <= 1.0


def test_private_order_needs_two_classes():
    X, y = make_frame()
    y3 = y + (X["x"].to_numpy() > 0.9)
    with pytest.raises(ValueError, match="two classes"):
        dp.DPGradientBoostingClassifier(bounds=SCHEMA, classes=[0, 1, 2],
                                        category_order="private").fit(X, y3)
    est = dp.DPGradientBoostingClassifier(bounds=SCHEMA, classes=[0, 1, 2], epsilon=4.0,
                                          random_state=0).fit(X, y3)
    assert not est.private_category_order_


def test_a_table_without_categorical_columns_releases_no_order():
    X, y = make_frame()
    est = dp.DPGradientBoostingClassifier(bounds=(0.0, 1.0), classes=[0, 1],
                                          category_order="private", random_state=0
                                          ).fit(X[["x"]].to_numpy(), y)
    assert not est.private_category_order_


@pytest.mark.parametrize("params,message", [({"category_order": "sorted"}, "category_order"),
                                            ({"order_budget": 1.5}, "order_budget")])
def test_bad_parameters_are_refused_before_anything_is_spent(params, message):
    X, y = make_frame()
    accountant = dp.BudgetAccountant(10.0, 1e-5)
    with pytest.raises(ValueError, match=message):
        dp.DPGradientBoostingClassifier(bounds=SCHEMA, classes=[0, 1],
                                        accountant=accountant, **params).fit(X, y)
    assert accountant.spent == (0.0, 0.0)
