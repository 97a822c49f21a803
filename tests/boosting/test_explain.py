"""Explanations of the explainable boosting machines: term names, bins in the features'
own terms (intervals, public categories, the missing value), a tidy table whose rows add
up to the model's raw scores, importances from released scores only, and the shape and
importance figures."""

import copy
import sys

import matplotlib
import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from dptrees import (  # noqa: E402
    DPDecisionTreeClassifier,
    DPExplainableBoostingClassifier,
    DPExplainableBoostingRegressor,
    Numeric,
)
from dptrees.plot import plot_shape, plot_terms  # noqa: E402

EDUCATION = ["school", "college", "bachelors", "masters", "doctorate"]
BOUNDS = {"age": Numeric(17, 90, missing=True), "sex": ["Female", "Male"],
          "education": EDUCATION, "hours": (1, 99)}


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def adult_table(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    age = np.where(rng.random(n) < 0.1, np.nan, rng.uniform(17, 90, n))
    sex = rng.choice(["Female", "Male", None], n, p=[0.45, 0.45, 0.1])
    education = rng.choice(EDUCATION, n)
    hours = rng.uniform(1, 99, n)
    X = pd.DataFrame({"age": age, "sex": sex, "education": education, "hours": hours})
    logit = (np.nan_to_num(age, nan=60.0) - 50) / 15 + (sex == "Male") \
        + np.isin(education, ["masters", "doctorate"])
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return X, y


@pytest.fixture(scope="module")
def ebm():
    X, y = adult_table()
    return DPExplainableBoostingClassifier(epsilon=4.0, n_bins=16, bounds=BOUNDS,
                                           bin_edges="uniform", classes=[0, 1],
                                           random_state=0).fit(X, y)


def probe_rows():
    """A row of each category of each categorical column, and missing values."""
    return pd.DataFrame({
        "age": [20.0, 45.5, np.nan, 89.9, 17.0, 90.0, 60.0],
        "sex": ["Female", "Male", None, "Male", "Female", None, "Male"],
        "education": EDUCATION + ["school", "masters"],
        "hours": [1.0, 30.0, 50.5, 99.0, 64.2, 12.0, 80.0],  # off the edges
    })


def matching_rows(table, row):
    """The rows of ``explain()`` a record falls in, read from the table alone."""
    picked = []
    for term, rows in table.groupby("term", sort=False):
        value = row[term]
        missing = value is None or (isinstance(value, float) and np.isnan(value))
        if missing:
            hit = rows[rows["missing"]]
        elif rows["term_type"].iloc[0] == "nominal":
            hit = rows[rows["category"] == value]
        else:
            lower, upper = rows["lower"].min(), rows["upper"].max()
            v = min(max(value, lower), upper)  # clipped to the public bounds
            present = rows[~rows["missing"]]
            hit = present[(present["lower"] <= v) & ((v < present["upper"])
                                                     | (present["upper"] == upper))].head(1)
        assert len(hit) == 1, (term, value)
        picked.append(hit)
    return pd.concat(picked)


def test_terms_have_names_types_edges_and_labels(ebm):
    assert ebm.term_names_ == ["age", "sex", "education", "hours"]
    assert ebm.term_types_ == ["continuous", "nominal", "nominal", "continuous"]
    edges = ebm.bin_edges_
    np.testing.assert_allclose(edges[0], np.linspace(17, 90, 16))  # 15 bins + missing
    np.testing.assert_allclose(edges[3], np.linspace(1, 99, 17))
    assert edges[1] is None and edges[2] is None
    labels = ebm.bin_labels_
    assert all(len(lab) == ebm.n_bins_ for lab in labels)
    assert labels[0][-1] == "missing" and labels[0][0] == "[17, 21.867)"
    assert labels[3][-1] == "[92.875, 99]"  # the last bin holds the upper bound
    # every category, and the missing value, is in exactly one bin; other bins are empty
    sex = labels[1]
    assert sorted(x for x in sex if x) == ["Female", "Male", "missing"]
    assert sum(1 for x in labels[2] if x) == len(EDUCATION) + 1


def test_explain_is_a_tidy_table_that_adds_up_to_the_scores(ebm):
    table = ebm.explain()
    assert list(table.columns) == ["term", "term_type", "bin", "label", "category", "lower",
                                   "upper", "missing", "score"]
    # one row per numeric bin (and the missing value), per category (and missing)
    assert table.groupby("term", sort=False).size().to_dict() == {
        "age": 16, "sex": 3, "education": 6, "hours": 16}
    for j, term in enumerate(ebm.term_names_):
        rows = table[table["term"] == term]
        np.testing.assert_array_equal(rows["score"], ebm.term_scores_[0, j, rows["bin"]])
    probe = probe_rows()
    raw = np.array([ebm.intercept_[0] + matching_rows(table, row)["score"].sum()
                    for _, row in probe.iterrows()])
    np.testing.assert_allclose(1 / (1 + np.exp(-raw)), ebm.predict_proba(probe)[:, 1],
                               rtol=1e-12)
    columns = ebm.explain(as_frame=False)
    assert set(columns) == set(table.columns)
    np.testing.assert_array_equal(columns["score"], table["score"])


def test_explain_comes_from_the_released_scores_alone(ebm):
    # replacing the released values changes the explanation accordingly: nothing else
    # (no training data) goes into it
    other = copy.deepcopy(ebm)
    other.term_scores_ = np.random.default_rng(1).normal(size=ebm.term_scores_.shape)
    table = other.explain()
    j = other.term_names_.index("education")
    rows = table[table["term"] == "education"]
    np.testing.assert_array_equal(rows["score"], other.term_scores_[0, j, rows["bin"]])
    assert not np.allclose(other.term_importances(), ebm.term_importances())


def test_term_importances_weigh_every_value_the_same(ebm):
    importances = ebm.term_importances()
    table = ebm.explain()
    expected = [np.abs(g["score"] - g["score"].mean()).mean()
                for _, g in table.groupby("term", sort=False)]
    np.testing.assert_allclose(importances, expected)
    assert importances.shape == (4,) and (importances >= 0).all()
    # a constant shift of a term (moved into the intercept) changes no importance
    shifted = copy.deepcopy(ebm)
    shifted.term_scores_ = ebm.term_scores_ + 3.0
    np.testing.assert_allclose(shifted.term_importances(), importances)


def test_regressor_scores_are_in_target_units():
    X, _ = adult_table(n=1200, seed=2)
    y = 100 + 50 * (X["sex"] == "Male") + np.nan_to_num(X["age"].to_numpy(), nan=40)
    reg = DPExplainableBoostingRegressor(epsilon=4.0, n_bins=8, bounds=BOUNDS,
                                         y_bounds=(50, 300), random_state=0).fit(X, y)
    table = reg.explain()
    probe = probe_rows()
    raw = np.array([reg.intercept_[0] * 250 + matching_rows(table, row)["score"].sum()
                    for _, row in probe.iterrows()])
    np.testing.assert_allclose(50 + np.clip(raw / 250, 0, 1) * 250, reg.predict(probe))
    ax = plot_shape(reg, "age")
    assert ax.get_ylabel() == "score (target units)"


def test_multiclass_has_a_score_per_class():
    X, _ = adult_table(n=1200, seed=3)
    y = np.array(EDUCATION)[np.random.default_rng(0).integers(0, 3, len(X))]
    y[X["sex"] == "Male"] = "school"
    clf = DPExplainableBoostingClassifier(epsilon=4.0, n_bins=8, bounds=BOUNDS,
                                          classes=EDUCATION[:3], random_state=0).fit(X, y)
    table = clf.explain()
    assert list(clf.classes_) == ["bachelors", "college", "school"]  # sorted
    assert [c for c in table.columns if c.startswith("score")] == [
        "score_bachelors", "score_college", "score_school"]
    ax = plot_shape(clf, "sex")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "class bachelors", "class college", "class school"]
    ax = plot_shape(clf, "age", output="college")
    assert len(ax.get_legend_handles_labels()[0]) == 0  # one class: no legend
    with pytest.raises(ValueError, match="output"):
        plot_shape(clf, "age", output="phd")


def test_plot_shape_draws_the_released_scores(ebm):
    ax = plot_shape(ebm, "age")
    steps = ax.patches[0]  # bins 1.. as one step line; bin 0, the baseline, apart
    np.testing.assert_allclose(steps.get_data().values, ebm.term_scores_[0, 0, 1:15])
    assert ax.get_xlabel() == "age" and ax.get_ylabel() == "score (log-odds)"
    assert "missing" in [t.get_text() for t in ax.get_xticklabels()]
    ax.figure.savefig(__import__("io").BytesIO(), format="png")
    ax = plot_shape(ebm, 2)  # education, by index
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert [lab.replace(" (baseline)", "") for lab in labels] == EDUCATION + ["missing"]
    bins = ebm.explain().query("term == 'education'")["bin"].to_numpy()
    np.testing.assert_allclose([p.get_width() for p in ax.patches],
                               ebm.term_scores_[0, 2, bins])
    assert labels[0].endswith("(baseline)") == (bins[0] == 0)


def test_plot_terms_orders_terms_by_importance(ebm):
    ax = plot_terms(ebm)
    order = np.argsort(-ebm.term_importances(), kind="stable")
    assert [t.get_text() for t in ax.get_yticklabels()] == [ebm.term_names_[j]
                                                            for j in order]
    np.testing.assert_allclose([p.get_width() for p in ax.patches],
                               ebm.term_importances()[order])
    assert len(plot_terms(ebm, max_terms=2).patches) == 2


def test_errors(ebm, monkeypatch):
    with pytest.raises(NotFittedError):
        DPExplainableBoostingClassifier().explain()
    with pytest.raises(NotFittedError):
        plot_terms(DPExplainableBoostingRegressor())
    assert not hasattr(DPExplainableBoostingClassifier(), "term_names_")
    with pytest.raises(KeyError, match="no term 'income'"):
        plot_shape(ebm, "income")
    with pytest.raises(IndexError):
        plot_shape(ebm, 4)
    with pytest.raises(TypeError):
        plot_shape(ebm, 1.5)
    with pytest.raises(TypeError, match="ExplainableBoosting"):
        plot_terms(DPDecisionTreeClassifier())
    with pytest.raises(ValueError, match="max_terms"):
        plot_terms(ebm, max_terms=0)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"as_frame=False"):
        ebm.explain()
    assert ebm.explain(as_frame=False)["term"][0] == "age"
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"dptrees\[plot\]"):
        plot_terms(ebm)


def test_numeric_arrays_have_default_names():
    rng = np.random.default_rng(0)
    X = rng.random((800, 2))
    y = (X[:, 0] > 0.5).astype(int)
    clf = DPExplainableBoostingClassifier(epsilon=4.0, n_bins=4, bounds=(0, 1),
                                          bin_edges="uniform", classes=[0, 1],
                                          random_state=0).fit(X, y)
    assert clf.term_names_ == ["x[0]", "x[1]"]
    assert clf.bin_labels_[0] == ["[0, 0.25)", "[0.25, 0.5)", "[0.5, 0.75)", "[0.75, 1]"]
    assert len(clf.explain()) == 8


def test_released_private_edges_are_the_terms_edges_and_labels():
    rng = np.random.default_rng(0)
    X = rng.random((800, 2)) ** 3  # skewed: the noisy quantiles crowd near 0
    y = (X[:, 0] > 0.05).astype(int)
    clf = DPExplainableBoostingClassifier(epsilon=4.0, n_bins=4, bounds=(0, 1),
                                          classes=[0, 1], random_state=0).fit(X, y)
    assert clf.private_edges_  # "auto": 4 x 800 noisy records is inside its window
    edges = clf.bin_edges_[0]
    assert edges[0] == 0 and edges[-1] == 1 and np.all(np.diff(edges) > 0)
    assert edges[1] < 0.25  # at a noisy quantile, not equal-width
    label = clf.bin_labels_[0][0]  # its interval, to 3 decimals
    assert label.startswith("[0, ") and float(label[4:-1]) == pytest.approx(edges[1],
                                                                             abs=5e-4)
    # the bins the edges describe are the bins predict uses
    inner = (X[:, 0] != edges[1:-1, None]).all(axis=0)  # away from the edges themselves
    by_edges = np.clip(np.searchsorted(edges, X[:, 0], side="right") - 1, 0,
                       len(edges) - 2)
    np.testing.assert_array_equal(clf.binner_.transform(X)[inner, 0], by_edges[inner])
