"""dptrees.plot: tree text and figures show the released arrays; curves and budget charts
have the expected artists; unfitted models and bad input are refused."""

import json
import re
import sys

import matplotlib
import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from dptrees import (  # noqa: E402
    DPAdaBoostClassifier,
    Numeric,
    DPDecisionTreeClassifier,
    DPDecisionTreeRegressor,
    DPExplainableBoostingRegressor,
    DPGradientBoostingClassifier,
    DPGradientBoostingRegressor,
    DPPartitionForestRegressor,
)
from dptrees._tree_structure import Tree  # noqa: E402
from dptrees.federated import DPFederatedGradientBoostingClassifier  # noqa: E402
from dptrees.plot import export_text, plot_budget, plot_privacy_utility, plot_tree  # noqa: E402
from support import BOUNDS, random_data, step_data  # noqa: E402

NAMES = ["age", "income", "score"]


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def regressor():
    X, y = random_data(n=3000)
    return DPDecisionTreeRegressor(epsilon=2.0, max_depth=3, bounds=BOUNDS, y_bounds=(-1, 2),
                                   random_state=0).fit(pd.DataFrame(X, columns=NAMES), y)


@pytest.fixture(scope="module")
def classifier():
    X, y = step_data(n=4000, p=3)
    return DPDecisionTreeClassifier(epsilon=2.0, max_depth=2, bounds=BOUNDS,
                                    classes=[0.0, 1.0], random_state=0).fit(X, y)


def preorder(tree):
    """``(node, is_left_branch, parent)`` of every node but the root, in the order the
    text lists them (left subtree first)."""
    out = []

    def walk(node):
        if tree.left[node] == -1:
            return
        for child, left in ((tree.left[node], True), (tree.right[node], False)):
            out.append((child, left, node))
            walk(child)

    walk(0)
    return out


def test_export_text_matches_the_tree_arrays(regressor):
    tree = regressor.tree_
    lines = export_text(regressor).splitlines()
    assert lines[0] == f"root: noisy count {tree.noisy_count[0]:.0f}"
    split = re.compile(r"^[| ]*\|--- (\w+) (<|>=) (\S+)  \[noisy count (\S+)\]$")
    leaf = re.compile(r"^[| ]*\|--- value: (\S+)$")
    body = iter(lines[1:])
    for child, left, parent in preorder(tree):
        m = split.match(next(body))
        assert m, "a split line"
        name, op, threshold, count = m.groups()
        assert name == NAMES[tree.feature[parent]]  # feature_names_in_ of the data frame
        assert op == ("<" if left else ">=")
        assert float(threshold) == pytest.approx(tree.threshold[parent], abs=5e-4)
        assert float(count) == tree.noisy_count[child]
        if tree.left[child] == -1:
            value = float(leaf.match(next(body)).group(1))
            assert value == pytest.approx(tree.value[child], abs=5e-4)
    assert next(body, None) is None
    # indentation follows the depth
    assert all(line.index("|---") == 4 * (line.count("|") - 1) for line in lines[1:])


def test_export_text_of_a_classifier_shows_released_counts(classifier):
    tree = classifier.tree_
    text = export_text(classifier, feature_names=NAMES, class_names=["low", "high"],
                       decimals=2)
    leaves = np.flatnonzero(tree.left == -1)
    found = re.findall(r"class: (\w+); proba \[(\S+), (\S+)\]; noisy class counts "
                       r"\[(\S+), (\S+)\]", text)
    assert len(found) == len(leaves)
    for node, (name, p0, p1, c0, c1) in zip(leaves, found):
        assert name == ["low", "high"][int(np.argmax(tree.value[node]))]
        assert [float(p0), float(p1)] == pytest.approx(tree.value[node], abs=0.005)
        assert [float(c0), float(c1)] == list(tree.noisy_value[node])
    assert "age < 0.5" in text  # the step of the data, released as a threshold


def test_export_text_options(regressor):
    tree = regressor.tree_
    assert "noisy count" not in export_text(regressor, show_counts=False)
    shallow = export_text(regressor, max_depth=1)
    assert "truncated branch of depth" in shallow
    assert export_text(regressor.tree_).startswith("root:")  # a bare Tree
    assert "x[0]" in export_text(regressor.tree_) or "x[1]" in export_text(regressor.tree_)
    # a count that was not released (NaN) is not shown
    tree_copy = type(tree)(feature=tree.feature, bin_threshold=tree.bin_threshold,
                           threshold=tree.threshold, left=tree.left, right=tree.right,
                           depth=tree.depth, value=tree.value,
                           noisy_count=np.full(tree.node_count, np.nan))
    assert "noisy count" not in export_text(tree_copy)
    # whole numbers keep their zeros at any number of decimals
    stump = type(tree)(feature=[-1], bin_threshold=[-1], threshold=[np.nan], left=[-1],
                       right=[-1], depth=[0], value=[410229.6], noisy_count=[1000.0])
    assert export_text(stump, decimals=0) == "root: noisy count 1000\n|--- value: 410230\n"
    assert export_text(stump, decimals=2).endswith("value: 410229.6\n")


def test_plot_tree_draws_one_box_per_node(regressor, classifier):
    artists = plot_tree(regressor)
    assert len(artists) == regressor.tree_.node_count
    texts = [a.get_text() for a in artists]
    assert texts[0].startswith(f"{NAMES[regressor.tree_.feature[0]]} < ")
    leaves = [t for t in texts if t.startswith("value: ")]
    assert len(leaves) == regressor.tree_.n_leaves
    fig, ax = plt.subplots()
    artists = plot_tree(classifier, max_depth=1, ax=ax, fontsize=8)
    tree = classifier.tree_
    assert len(artists) == 3
    for artist, child in zip(artists[1:], (tree.left[0], tree.right[0])):
        text = artist.get_text()
        assert text == "(...)" if tree.left[child] != -1 else text.startswith("class: ")
    assert all(a.get_fontsize() == 8 for a in artists)
    fig.savefig(__import__("io").BytesIO(), format="png")  # draws without error


def test_ensembles_take_an_index():
    X, y = random_data(n=2000)
    forest = DPPartitionForestRegressor(n_estimators=3, max_depth=2, bounds=BOUNDS,
                                        y_bounds=(-1, 2), random_state=0).fit(X, y)
    assert export_text(forest, index=2) == export_text(forest.estimators_[2])
    assert len(plot_tree(forest, index=-1)) == forest.estimators_[-1].node_count
    with pytest.raises(ValueError, match="index"):
        export_text(forest)
    with pytest.raises(IndexError):
        export_text(forest, index=3)
    with pytest.raises(TypeError):
        export_text(forest, index="0")

    Xc, yc = step_data(n=2000, p=3)
    gb = DPGradientBoostingRegressor(n_estimators=3, max_depth=2, bounds=BOUNDS,
                                     y_bounds=(0, 1), random_state=0).fit(Xc, yc)
    assert export_text(gb, index=1) == export_text(gb, index=(1, 0))
    multi = DPGradientBoostingClassifier(n_estimators=2, max_depth=2, bounds=BOUNDS,
                                         classes=[0, 1, 2], random_state=0)
    multi.fit(Xc, (Xc[:, 0] * 3).astype(int))
    with pytest.raises(ValueError, match="round, output"):
        export_text(multi, index=0)
    text = export_text(multi, index=(1, 2))
    assert "noisy count" not in text  # boosted trees release no counts
    assert len(re.findall("value: ", text)) == 4

    ada = DPAdaBoostClassifier(n_estimators=2, max_depth=1, bounds=BOUNDS, classes=[0, 1],
                               random_state=0).fit(Xc, yc.astype(int))
    learner = ada.learners_[0]
    text = export_text(ada, index=0)
    assert text.count("noisy weighted totals") == 2
    assert f"class: {ada.classes_[learner.leaf_label[0]]}" in text.splitlines()[1]
    assert len(plot_tree(ada, index=1)) == 3


def test_federated_boosting_tree_and_budget():
    rng = np.random.default_rng(0)
    X = rng.random((1200, 2))
    y = (X[:, 0] > 0.5).astype(int)
    fed = DPFederatedGradientBoostingClassifier(
        n_estimators=3, epsilon=2.0, delta=1e-5, sampling_probability=0.5,
        noise_multiplier=4.0, bounds=BOUNDS, classes=[0, 1], n_clients=20, max_depth=2,
        random_state=0).fit(X, y, np.arange(1200) % 20)
    assert len(plot_tree(fed, index=0)) == fed.estimators_[0][0].node_count
    ax = plot_budget(fed)  # subsampled Gaussian rounds: no additive unit
    assert ax.get_xlabel() == "number of releases"
    heights = sorted(p.get_width() for p in ax.patches)
    assert sum(heights) == sum(e["count"] for e in fed.privacy_ledger_)


def test_errors_for_unfitted_models_and_bad_input(regressor):
    with pytest.raises(NotFittedError):
        export_text(DPDecisionTreeRegressor())
    with pytest.raises(NotFittedError):
        plot_tree(DPPartitionForestRegressor(), index=0)
    with pytest.raises(NotFittedError):
        plot_budget(DPDecisionTreeClassifier())
    with pytest.raises(TypeError, match="additive model"):
        export_text(DPExplainableBoostingRegressor())
    with pytest.raises(TypeError, match="Tree"):
        export_text(np.zeros(3))
    with pytest.raises(ValueError, match="index must be None"):
        export_text(regressor, index=0)
    with pytest.raises(ValueError, match="feature_names"):
        export_text(regressor, feature_names=["a"])
    with pytest.raises(ValueError, match="decimals"):
        export_text(regressor, decimals=-1)
    with pytest.raises(ValueError, match="max_depth"):
        plot_tree(regressor, max_depth=1.5)
    with pytest.raises(ValueError, match="kind"):
        plot_budget(regressor, kind="donut")
    with pytest.raises(TypeError):
        plot_budget({"no": "ledger"})


def test_plot_budget_bars_add_up_to_epsilon(classifier):
    ax = plot_budget(classifier)
    widths = [p.get_width() for p in ax.patches]
    assert len(widths) == len(classifier.privacy_ledger_) == 3
    assert sum(widths) == pytest.approx(classifier.epsilon_spent_)
    assert ax.get_xlabel() == "epsilon x count"
    assert [t.get_text() for t in ax.get_yticklabels()][0] == "node counts"
    # the same from the report, from its JSON, and as a pie
    report = classifier.privacy_report()
    assert [p.get_width() for p in plot_budget(report).patches] == widths
    assert [p.get_width() for p in plot_budget(json.loads(report.to_json())).patches] == widths
    assert len(plot_budget(classifier, kind="pie").patches) == 3


def test_plot_budget_merges_rounds():
    X, y = step_data(n=2000, p=2)
    ada = DPAdaBoostClassifier(n_estimators=4, max_depth=2, bounds=BOUNDS, classes=[0, 1],
                               random_state=0).fit(X, y.astype(int))
    kinds = {re.sub(r"^round \d+: ", "", e["release"]) for e in ada.privacy_ledger_}
    ax = plot_budget(ada)
    assert len(ax.patches) == len(kinds) < len(ada.privacy_ledger_)
    assert sum(p.get_width() for p in ax.patches) == pytest.approx(
        sum(e["epsilon"] * e["count"] for e in ada.privacy_ledger_))
    assert len(plot_budget(ada, merge_rounds=False).patches) == len(ada.privacy_ledger_)

    gb = DPGradientBoostingRegressor(n_estimators=3, max_depth=2, bounds=BOUNDS,
                                     y_bounds=(0, 1), random_state=0).fit(X, y)
    assert plot_budget(gb).get_xlabel() == "rho (zCDP) x count"


def records():
    """Two models at three epsilons, two repeats each, and a non-private baseline."""
    out = [{"model": "non-private", "epsilon": None, "r2": 0.9}]
    for model, base in (("DP tree", 0.3), ("DP GB", 0.5)):
        for eps in (0.1, 1.0, 10.0):
            for seed in range(2):
                out.append({"model": model, "epsilon": eps, "seed": seed,
                            "r2": base + 0.1 * np.log10(eps) + 0.01 * seed})
    return out


def test_plot_privacy_utility_from_records():
    ax = plot_privacy_utility(records(), metric="r2", title="t")
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["DP tree", "DP GB", "non-private"]
    assert len(ax.containers) == 2  # one error-bar line per model
    line = ax.containers[0].lines[0]
    assert list(line.get_xdata()) == [0.1, 1.0, 10.0]
    assert line.get_ydata()[1] == pytest.approx(0.305)
    assert ax.get_xscale() == "log" and ax.get_ylabel() == "r2"
    # the baseline: a horizontal line at its value
    assert [tuple(h.get_ydata()) for h in ax.get_lines() if h.get_label() == "non-private"] \
        == [(0.9, 0.9)]
    # the metric is found when the records hold one number besides by and epsilon
    only = [{k: v for k, v in r.items() if k != "seed"} for r in records()]
    assert plot_privacy_utility(only).get_ylabel() == "r2"
    with pytest.raises(ValueError, match="metric"):
        plot_privacy_utility(records())  # seed or r2?


def test_plot_privacy_utility_from_benchmark_json(tmp_path):
    # the shape of benchmarks/small_eps_trees.py --json: {"dp": {model: {eps: cell}}}
    small = {"epsilons": [0.05, 1.0], "majority": 0.75, "dp": {
        m: {str(e): {"accuracy": 0.8 + i / 100, "auc": 0.85, "accuracies": [0.79 + i / 100,
                                                                            0.81 + i / 100],
                     "aucs": [0.85, 0.85], "seconds": 1.0} for e in (0.05, 1.0)}
        for i, m in enumerate(("DP tree", "DP EBM", "DP GB"))}}
    path = tmp_path / "small.json"
    path.write_text(json.dumps(small))
    ax = plot_privacy_utility(path, metric="accuracy")
    assert len(ax.containers) == 3
    bars = ax.containers[0].lines[2][0].get_segments()  # the error bars of the repeats
    assert bars[0][:, 1] == pytest.approx([0.8 - 0.01 * 2**0.5, 0.8 + 0.01 * 2**0.5])
    with pytest.raises(ValueError, match="accuracy"):
        plot_privacy_utility(str(path))
    # compare_boosting.py: {"cal": {"columns": {model: {eps: {"mean", "std"}}}}, "adult": ...}
    both = {"cal": {"columns": {"DP GB": {"1.0": {"mean": 0.12, "std": 0.01}}}},
            "adult": {"columns": {"DP GB": {"1.0": {"accuracy": {"mean": 0.84, "std": 0},
                                                     "auc": {"mean": 0.89, "std": 0}}}}}}
    with pytest.raises(ValueError, match="cal/columns"):
        plot_privacy_utility(both)
    assert plot_privacy_utility(both, key="cal/columns").containers[0].lines[0] \
        .get_ydata()[0] == 0.12
    ax = plot_privacy_utility(both, key=("adult", "columns"), metric="auc")
    assert ax.containers[0].lines[0].get_ydata()[0] == 0.89
    # federated_adult.py: {"rows": [records]}, lines by model and number of clients
    rows = {"rows": [{"model": "fed", "epsilon": 1.0, "n_clients": k, "accuracy": a,
                      "accuracy_sd": 0.01} for k, a in ((100, 0.8), (1000, 0.83))]}
    ax = plot_privacy_utility(rows, metric="accuracy", by=("model", "n_clients"))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "fed, n_clients=100", "fed, n_clients=1000"]
    with pytest.raises(KeyError):
        plot_privacy_utility(both, key="nope")
    with pytest.raises(TypeError):
        plot_privacy_utility(3.0)
    with pytest.raises(ValueError):
        plot_privacy_utility({"a": 1})


def test_matplotlib_is_optional(monkeypatch, regressor):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    assert export_text(regressor)  # text needs no matplotlib
    with pytest.raises(ImportError, match=r"dptrees\[plot\]"):
        plot_tree(regressor)


# ------------------------------------------------------------------------------------
# Categorical columns and missing values: the printed routes are predict's

SEX, MARITAL = ["Female", "Male"], ["single", "married", "divorced", "widowed"]
TABLE_BOUNDS = {"sex": SEX, "marital": MARITAL, "age": Numeric(17, 90, missing=True)}


def categorical_table(n=3000, seed=0):
    """A frame with two categorical columns (sex with missing values) and a numeric one
    that may be missing; the label depends on all three."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(SEX + [None], n, p=[0.45, 0.45, 0.1])
    marital = rng.choice(MARITAL, n)
    age = np.where(rng.random(n) < 0.1, np.nan, rng.uniform(17, 90, n))
    y = ((sex == "Male") ^ np.isin(marital, ["married", "widowed"])
         | np.isnan(age)).astype(int)
    return pd.DataFrame({"sex": sex, "marital": marital, "age": age}), y


@pytest.fixture(scope="module")
def categorical_tree():
    X, y = categorical_table()
    return DPDecisionTreeClassifier(epsilon=20.0, max_depth=4, bounds=TABLE_BOUNDS,
                                    classes=[0, 1], random_state=0).fit(X, y)


_CONDITION = re.compile(r"^(?P<name>\S+) (?:in \{(?P<cats>[^}]*)\}(?P<or> or missing)?"
                        r"|is (?P<is>missing|present)"
                        r"|(?P<op><|>=) (?P<t>\S+)(?P<or2> or missing)?)"
                        r"(?P<empty>  \(no (category|value) goes here: the split separates "
                        r"nothing\))?$")


def _holds(text, row):
    """Whether ``row`` (a dict of column values) meets a printed branch condition, read
    from the text alone."""
    m = _CONDITION.match(text)
    assert m, text
    value = row[m["name"]]
    missing = value is None or (isinstance(value, float) and np.isnan(value))
    if m["is"]:
        return missing == (m["is"] == "missing")
    if m["op"]:
        if missing:
            return bool(m["or2"])
        t = float(m["t"])
        return value < t if m["op"] == "<" else value >= t
    if missing:
        return bool(m["or"])
    return value in [c for c in m["cats"].split(", ") if c]


def _printed_leaf(text, row):
    """The leaf line that the printed conditions send ``row`` to."""
    lines = text.splitlines()
    depth, i = 0, 0
    while True:
        indent = "|   " * depth + "|--- "
        line = lines[i]
        assert line.startswith(indent), line
        body = line[len(indent):]
        if body.startswith("class: "):
            return body
        # the two branches of this split: the first, then its sibling further down
        sibling = next(k for k in range(i + 1, len(lines)) if lines[k].startswith(indent))
        other = lines[sibling][len(indent):]
        went = [_holds(body, row), _holds(other, row)]
        assert sum(went) == 1, (body, other, row)  # exactly one branch takes it
        i = i + 1 if went[0] else sibling + 1
        depth += 1


def test_printed_routes_are_the_routes_predict_takes(categorical_tree):
    est = categorical_tree
    text = export_text(est, show_counts=False, decimals=6)
    assert re.search(r"(sex|marital) in \{", text)  # categorical splits, by category
    assert "or missing" in text or "is missing" in text
    assert not re.search(r"(sex|marital) (<|>=)", text)  # no codes shown as numbers
    rows = [{"sex": s, "marital": m, "age": a} for s in SEX + [None] for m in MARITAL
            for a in (30.0, 70.0, np.nan)]
    probe = pd.DataFrame(rows)
    proba = est.predict_proba(probe)
    for row, p in zip(rows, proba):
        leaf = _printed_leaf(text, row)
        shown = re.search(r"proba \[(\S+), (\S+)\]", leaf).groups()
        assert [float(v) for v in shown] == pytest.approx(p, abs=1e-6), (row, leaf)


def test_a_split_below_every_category_is_marked(categorical_tree):
    est = categorical_tree
    binner = est.binner_
    assert binner.n_bins > 3  # several bins per category of sex: bin 0 holds none
    sex = 0
    codes = binner.transform(np.array([[0.0, 0.0, 50.0], [1.0, 0.0, 50.0],
                                       [2.0, 0.0, 50.0]]))[:, sex]
    assert codes.min() > 0
    stump = Tree(feature=[sex, -1, -1], bin_threshold=[0, -1, -1],
                 threshold=[binner.thresholds(sex, 0), np.nan, np.nan], left=[1, -1, -1],
                 right=[2, -1, -1], depth=[0, 1, 1], value=[[0.5, 0.5], [1, 0], [0, 1]],
                 noisy_count=[10.0, 0.0, 10.0])
    est.tree_, saved = stump, est.tree_
    try:
        lines = export_text(est, show_counts=False).splitlines()
        assert lines[0] == ("|--- sex in {}  (no category goes here: the split separates "
                            "nothing)")
        assert lines[2] == "|--- sex in {Female, Male} or missing"
        probe = pd.DataFrame({"sex": ["Female", "Male", None], "marital": ["single"] * 3,
                              "age": [20.0, 50.0, np.nan]})
        np.testing.assert_array_equal(est.predict(probe), [1, 1, 1])  # all go right
        box = plot_tree(est)[0].get_text()
        assert box.startswith("sex: splits nothing\n(all go right)")
    finally:
        est.tree_ = saved


def test_plot_tree_shows_categories_and_missing_routes(categorical_tree):
    texts = [a.get_text() for a in plot_tree(categorical_tree)]
    splits = [t for t in texts if not t.startswith("class: ")]
    assert any(re.match(r"(sex|marital) (not )?in \{", t) for t in splits)
    assert any("missing \u2192 " in t for t in splits)
    # a categorical split shows the route of missing values (sex may be missing)
    for t in splits:
        if t.startswith("sex in") or t.startswith("sex not in"):
            assert "missing \u2192 " in t


def test_plot_tree_sizes_its_text():
    X, y = categorical_table(n=2000, seed=1)
    gb = DPGradientBoostingClassifier(n_estimators=2, max_depth=4, epsilon=4.0,
                                      bounds=TABLE_BOUNDS, classes=[0, 1],
                                      random_state=0).fit(X, y)
    artists = plot_tree(gb, index=0, max_depth=2)
    fig = artists[0].figure
    assert len(artists) == 7
    assert fig.get_size_inches()[0] <= 16
    assert min(a.get_fontsize() for a in artists) >= 9  # large text in a small figure
    artists = plot_tree(gb, index=0)  # 16 leaves in 16 inches: small but readable
    assert artists[0].figure.get_size_inches()[0] <= 16
    assert min(a.get_fontsize() for a in artists) >= 6.5
    # a tree too wide to read: drawn, with a warning naming the depth that fits
    fig, ax = plt.subplots(figsize=(4, 3))
    with pytest.warns(UserWarning, match=r"max_depth=\d"):
        plot_tree(gb, index=0, ax=ax)
