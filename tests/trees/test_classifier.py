"""Tests of the DP classifiers: :class:`DPDecisionTreeClassifier` and
:class:`DPPartitionForestClassifier`.

What is checked
---------------
* Learning: with a large epsilon both learn an easy problem (binary and 3 classes,
  string and integer labels) and predict labels of ``classes_``.
* Probabilities: rows of ``predict_proba`` are distributions whatever the noise (tiny
  epsilon included); ``predict`` is their argmax; the post-processing of noisy counts
  (negatives to 0, all-zero leaves uniform).
* The public ``classes``: classes absent from ``y`` are fine (small probability), labels
  outside ``classes`` and fewer than two classes are errors, order does not matter.
* Privacy bookkeeping: one spend of ``epsilon`` per fit, ``PrivacyLeakWarning`` when
  ``classes`` or ``bounds`` are read from the data and none otherwise, refused spends.
* Randomness (a seed reproduces a fit) and input validation (nothing spent on errors).
* Black-box privacy AUDITS (``dptrees.audit``, ``alpha = 1e-3``) of what ``fit``
  releases, on neighbouring datasets ``D1 = D0`` plus one record: class-count leaves
  with the root count, the Gini split selection, and the partition forest. Each must
  stay within the claimed epsilon and reach a floor (so the audit is not vacuous).
  POSITIVE CONTROLS inject a bug into the very same pipeline and MUST be flagged.

Audit harness
-------------
As in ``tests/test_tree.py``: the audits run the estimator's own compiled builder,
``est._builder(budget, data)`` with ``budget = est._tree_budget(est._check_params())``,
on data prepared once by ``support.tree_data`` -- exactly what ``fit`` runs after
validation and accounting (``test_audit_harness_releases_what_fit_releases``). For speed
a batch of releases draws its noise from one pair of spawned streams (same distribution
as one fresh pair per release: independent noise for every release).

Measured numbers (these seeds) are in the comments next to each floor.
"""

import functools
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

import dptrees.tree as tree_module
from dptrees import (
    BudgetAccountant,
    BudgetExceededError,
    DPDecisionTreeClassifier,
    DPPartitionForestClassifier,
    PrivacyLeakWarning,
)
from dptrees.forest import assign_partitions, auto_n_estimators
from dptrees._tree_data import TreeData
from dptrees.tree import auto_max_depth, split_tree_budget

import support
from support import BOUNDS, audit_samplers, root_split

KINDS = ("tree", "forest")


def make(kind, epsilon=1.0, **params):
    """A classifier with public bounds and its own unlimited accountant."""
    params.setdefault("bounds", BOUNDS)
    params.setdefault("accountant", BudgetAccountant())
    if kind == "tree":
        return DPDecisionTreeClassifier(epsilon=epsilon, **params)
    params.setdefault("n_estimators", 5)
    return DPPartitionForestClassifier(epsilon=epsilon, **params)


def easy_data(n=20_000, labels=(0, 1), p=2, seed=0):
    """Class ``labels[k]`` where ``x0`` is in the k-th of ``len(labels)`` equal slices."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, p))
    k = np.minimum((X[:, 0] * len(labels)).astype(int), len(labels) - 1)
    return X, np.asarray(labels)[k]


def noisy_data(n=300, n_classes=3, p=3, seed=0):
    """Labels loosely tied to the features (a hard problem)."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, p))
    y = (3 * X[:, 0] + X[:, 1] + rng.normal(0, 0.7, n)).astype(int) % n_classes
    return X, y


def trees_of(est):
    return [est.tree_] if hasattr(est, "tree_") else est.estimators_


# ======================================================================================
# Learning
# ======================================================================================

LABELS = {
    "binary-str": ("no", "yes"),
    "binary-int": (0, 1),
    "3-class-str": ("cat", "cow", "dog"),
    "3-class-int": (-4, 7, 12),
}


@pytest.mark.parametrize("labels", sorted(LABELS))
@pytest.mark.parametrize("kind", KINDS)
def test_learns_an_easy_problem_with_large_epsilon(kind, labels):
    classes = LABELS[labels]
    X, y = easy_data(labels=classes)
    est = make(kind, 50.0, max_depth=3, classes=list(classes), random_state=0).fit(X, y)
    np.testing.assert_array_equal(est.classes_, np.sort(np.asarray(classes)))
    assert est.n_classes_ == len(classes)
    X_test, y_test = easy_data(n=5_000, labels=classes, seed=1)
    pred = est.predict(X_test)
    assert pred.dtype == est.classes_.dtype
    assert set(np.unique(pred).tolist()) <= set(classes)
    # errors only next to the class boundaries (x0 = k / n_classes, bins of 1/40)
    away = np.min(np.abs(X_test[:, [0]] - np.arange(1, len(classes)) / len(classes)), axis=1)
    away = away > 1.0 / 40
    assert np.mean(pred[away] == y_test[away]) > 0.98
    assert est.score(X_test, y_test) > 0.95
    for tree in trees_of(est):
        assert tree.feature[0] == 0  # the informative feature


@pytest.mark.parametrize("kind", KINDS)
def test_depth_zero_leaf_probabilities_are_the_class_frequencies(kind):
    rng = np.random.default_rng(4)
    X = rng.random((30_000, 2))
    y = rng.choice(["a", "b", "c"], p=[0.2, 0.3, 0.5], size=30_000)
    est = make(kind, 1e3, max_depth=0, classes=["a", "b", "c"], random_state=0).fit(X, y)
    proba = est.predict_proba(X[:10])
    np.testing.assert_allclose(proba, np.tile(np.bincount(
        np.searchsorted(["a", "b", "c"], y), minlength=3) / 30_000, (10, 1)), atol=0.02)
    assert np.all(est.predict(X[:10]) == "c")


# ======================================================================================
# Probabilities
# ======================================================================================


@pytest.mark.parametrize("epsilon", [1e-3, 0.5, 50.0])
@pytest.mark.parametrize("kind", KINDS)
def test_predict_proba_rows_are_distributions(kind, epsilon):
    X, y = noisy_data(n=2_000)
    est = make(kind, epsilon, max_depth=4, classes=[0, 1, 2], min_samples_split=5,
               min_samples_leaf=1, random_state=0).fit(X, y)
    X_test = np.random.default_rng(1).normal(0.5, 2.0, size=(500, 3))  # also out of bounds
    proba = est.predict_proba(X_test)
    assert proba.shape == (500, 3)
    assert np.all(np.isfinite(proba))
    assert np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    pred = est.predict(X_test)
    assert set(np.unique(pred).tolist()) <= {0, 1, 2}
    np.testing.assert_array_equal(pred, est.classes_[np.argmax(proba, axis=1)])
    # leaves hold distributions, internal nodes NaN (only leaves release values)
    for tree in trees_of(est):
        leaves = tree.left == -1
        assert tree.value.shape == (tree.node_count, 3)
        np.testing.assert_allclose(tree.value[leaves].sum(axis=1), 1.0, atol=1e-12)
        assert np.all(np.isnan(tree.value[~leaves]))


def test_noisy_counts_become_probabilities_by_post_processing():
    est = make("tree", 1.0, classes=[0, 1, 2])
    counts = np.array([[3.0, -1.0, 1.0],   # negative count -> 0
                       [-2.0, -5.0, 0.0],  # nothing positive -> uniform
                       [0.0, 7.0, 0.0],
                       [np.nan, np.nan, np.nan]])  # internal node stays NaN
    probs = est._output_values(counts, None)
    np.testing.assert_allclose(probs[:3], [[0.75, 0.0, 0.25], [1 / 3, 1 / 3, 1 / 3],
                                           [0.0, 1.0, 0.0]])
    assert np.all(np.isnan(probs[3]))


@pytest.mark.usefixtures("no_tree_fallback")
def test_forest_probabilities_are_the_average_of_the_trees():
    X, y = noisy_data(n=1_500)
    est = make("forest", 5.0, n_estimators=4, max_depth=3, classes=[0, 1, 2],
               min_samples_split=5, random_state=2).fit(X, y)
    codes = est.binner_.transform(X)
    per_tree = np.array([tree.predict(codes) for tree in est.estimators_])
    np.testing.assert_allclose(est.predict_proba(X), per_tree.mean(axis=0), rtol=1e-12)
    assert not np.allclose(per_tree[0], per_tree[1])
    # every record trains exactly one tree: the root counts add up to n (+- noise)
    big = make("forest", 1e3, n_estimators=4, max_depth=0, classes=[0, 1, 2],
               random_state=0).fit(X, y)
    roots = [tree.noisy_count[0] for tree in big.estimators_]
    assert abs(sum(roots) - 1_500) <= 4
    np.testing.assert_allclose(roots, np.bincount(
        assign_partitions(1_500, 4, np.random.default_rng(0)), minlength=4), atol=1)


# ======================================================================================
# The public list of classes
# ======================================================================================


@pytest.mark.parametrize("kind", KINDS)
def test_a_class_absent_from_y_is_fine_and_improbable(kind):
    X, y = easy_data(labels=("a", "b"))
    est = make(kind, 50.0, max_depth=2, classes=["a", "b", "zebra"], random_state=0).fit(X, y)
    np.testing.assert_array_equal(est.classes_, ["a", "b", "zebra"])
    assert est.n_classes_ == 3
    proba = est.predict_proba(X[:2_000])
    assert proba.shape == (2_000, 3)
    assert proba[:, 2].mean() < 0.01 and proba[:, 2].max() < 0.1
    assert np.mean(est.predict(X[:2_000]) == "zebra") < 0.01
    assert est.privacy_leaks_ == []


@pytest.mark.parametrize("kind", KINDS)
def test_y_with_a_single_class_works_when_classes_are_public(kind):
    X = np.random.default_rng(0).random((2_000, 2))
    est = make(kind, 20.0, max_depth=1, classes=[0, 1], random_state=0).fit(X, np.ones(2_000))
    assert est.predict_proba(X).mean(axis=0)[1] > 0.95
    with pytest.raises(ValueError, match="only one class"):
        make(kind, 1.0, random_state=0).fit(X, np.ones(2_000))


def test_order_of_classes_does_not_matter():
    X, y = noisy_data(n=500)
    a = make("tree", 3.0, classes=[0, 1, 2], random_state=5).fit(X, y)
    b = make("tree", 3.0, classes=[2, 0, 1], random_state=5).fit(X, y)
    np.testing.assert_array_equal(b.classes_, [0, 1, 2])
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


BAD_CLASSES = [
    ({"classes": ["a", "b"]}, [0, 1], ValueError, r"labels that are not in classes: \[0, 1\]"),
    ({"classes": ["a", "b"]}, ["a", "c"], ValueError, r"not in classes: \['c'\]"),
    ({"classes": ["a"]}, ["a", "a"], ValueError, "at least two classes"),
    ({"classes": []}, ["a", "a"], ValueError, "at least two classes"),
    ({"classes": ["a", "b", "a"]}, ["a", "b"], ValueError, "duplicates"),
    ({"classes": "ab"}, ["a", "b"], TypeError, "classes must be a list"),
    ({"classes": list(range(257))}, [0, 1], ValueError, "at most 256 classes"),
    ({"classes": None}, ["a", "a"], ValueError, "only one class"),
    ({"classes": [0, 1]}, [0.5, 1.5], ValueError, "Unknown label type"),
    ({"classes": [0, 1]}, [0, np.nan], ValueError, "NaN"),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("params,labels,error,match", BAD_CLASSES,
                         ids=[f"{p['classes']!r:.20}-{lab!r}" for p, lab, _, _ in BAD_CLASSES])
def test_bad_classes_raise_and_spend_nothing(kind, params, labels, error, match):
    n = 40
    X = np.random.default_rng(0).random((n, 2))
    y = np.resize(np.asarray(labels), n)
    acc = BudgetAccountant()
    est = make(kind, 1.0, accountant=acc, random_state=0, **params)
    with pytest.raises(error, match=match):
        est.fit(X, y)
    assert len(acc) == 0 and not hasattr(est, "classes_")


# ======================================================================================
# Privacy bookkeeping and public inputs
# ======================================================================================


@pytest.mark.usefixtures("no_tree_fallback")
@pytest.mark.parametrize("kind", KINDS)
def test_fit_spends_epsilon_once_and_predicting_is_free(kind):
    X, y = noisy_data()
    acc = BudgetAccountant()
    est = make(kind, 1.7, max_depth=3, classes=[0, 1, 2], accountant=acc, random_state=0)
    est.fit(X, y)
    name = type(est).__name__
    assert acc.spent == (1.7, 0.0)
    assert [(r.label, r.epsilon) for r in acc.ledger] == [(name, 1.7)]
    assert est.epsilon_spent_ == 1.7
    # forest: every tree gets epsilon
    assert est.budget_ == split_tree_budget(1.7, 3, est.budget_weights)
    if kind == "forest":
        assert est.tree_epsilon_ == 1.7
    est.predict(X)
    est.predict_proba(X)
    est.apply(X)
    est.score(X, y)
    assert len(acc) == 1
    est.fit(X, y)
    assert acc.spent[0] == pytest.approx(3.4) and len(acc) == 2


@pytest.mark.parametrize("kind", KINDS)
def test_exhausted_accountant_refuses_and_leaves_the_estimator_unfitted(kind):
    X, y = noisy_data()
    acc = BudgetAccountant(epsilon=1.0)
    first = make(kind, 1.0, classes=[0, 1, 2], accountant=acc, random_state=0).fit(X, y)
    before = first.predict_proba(X)
    with pytest.raises(BudgetExceededError):
        first.fit(X[:100], y[:100])
    np.testing.assert_array_equal(first.predict_proba(X), before)
    second = make(kind, 0.1, classes=[0, 1, 2], accountant=acc, random_state=0)
    with pytest.raises(BudgetExceededError):
        second.fit(X, y)
    assert not hasattr(second, "classes_")
    with pytest.raises(NotFittedError):
        second.predict_proba(X)
    assert acc.spent == (1.0, 0.0)


@pytest.mark.parametrize("kind", KINDS)
def test_predict_before_fit_raises_not_fitted(kind):
    X, y = noisy_data(n=20)
    est = make(kind, 1.0, classes=[0, 1, 2])
    for call in (lambda: est.predict(X), lambda: est.score(X, y)):
        try:
            call()
        except NotFittedError:
            continue
        except AttributeError as exc:
            raise AssertionError(f"AttributeError, not NotFittedError: {exc}") from exc
        raise AssertionError("no error")


@pytest.mark.parametrize("kind", KINDS)
def test_no_warning_when_bounds_and_classes_are_given(kind):
    X, y = noisy_data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = make(kind, 1.0, classes=[0, 1, 2], random_state=0).fit(X, y)
        est.predict_proba(X)
    assert est.privacy_leaks_ == []


@pytest.mark.parametrize("omit,expected", [
    (("classes",), ["classes"]),
    (("bounds",), ["bounds"]),
    (("bounds", "classes"), ["bounds", "classes"]),
])
@pytest.mark.parametrize("kind", KINDS)
def test_privacy_leak_warning_when_a_public_input_is_omitted(kind, omit, expected):
    X, y = noisy_data()
    params = {"classes": [0, 1, 2], **{name: None for name in omit}}
    with pytest.warns(PrivacyLeakWarning) as record:
        est = make(kind, 1.0, random_state=0, **params).fit(X, y)
    leaks = [w for w in record if issubclass(w.category, PrivacyLeakWarning)]
    assert len(leaks) == len(expected)
    assert all("NOT differentially private" in str(w.message) for w in leaks)
    assert [leak.split(":")[0] for leak in est.privacy_leaks_] == expected
    if "classes" in omit:
        assert "classes: class labels read from the training data" in est.privacy_leaks_
        np.testing.assert_array_equal(est.classes_, [0, 1, 2])
    if "bounds" in omit:
        np.testing.assert_array_equal(est.bounds_[0], X.min(axis=0))
    # a fit with everything public clears the record
    est.set_params(bounds=BOUNDS, classes=[0, 1, 2]).fit(X, y)
    assert est.privacy_leaks_ == []


# ======================================================================================
# Randomness
# ======================================================================================


@pytest.mark.parametrize("kind", KINDS)
def test_a_seed_reproduces_the_fit_and_other_seeds_differ(kind):
    X, y = noisy_data(n=1_000)

    def proba(seed):
        est = make(kind, 3.0, classes=[0, 1, 2], min_samples_split=5, random_state=seed)
        return est.fit(X, y).predict_proba(X)

    a = proba(7)
    np.testing.assert_array_equal(a, proba(7))
    np.testing.assert_array_equal(a, proba(np.random.SeedSequence(7)))
    assert not np.array_equal(a, proba(8))
    assert not np.array_equal(proba(None), proba(None))


# ======================================================================================
# Input validation
# ======================================================================================


def _with(X, i, j, value):
    X = X.copy()
    X[i, j] = value
    return X


BAD_DATA = {
    "nan in X": (lambda X, y: (_with(X, 3, 1, np.nan), y), ValueError, "NaN"),
    "inf in X": (lambda X, y: (_with(X, 0, 0, np.inf), y), ValueError, "infinity"),
    "1-D X": (lambda X, y: (X[:, 0], y), ValueError, "2D array"),
    "3-D X": (lambda X, y: (X[:, :, None], y), ValueError, "2D array"),
    "y too short": (lambda X, y: (X, y[:-1]), ValueError, "inconsistent numbers of samples"),
    "y too long": (lambda X, y: (X[:-1], y), ValueError, "inconsistent numbers of samples"),
    "2-D y": (lambda X, y: (X, np.column_stack([y, y])), ValueError, "1D array|multi"),
    "empty X": (lambda X, y: (X[:0], y[:0]), ValueError, "0 sample"),
    "None y": (lambda X, y: (X, None), ValueError, "requires y"),
    "string X": (lambda X, y: (X.astype(str), y), TypeError, "string"),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", sorted(BAD_DATA))
def test_bad_data_raises_a_clear_error_and_spends_nothing(kind, case):
    transform, error, match = BAD_DATA[case]
    X, y = noisy_data(n=30)
    acc = BudgetAccountant()
    est = make(kind, 1.0, classes=[0, 1, 2], accountant=acc, random_state=0)
    with pytest.raises(error, match=match):
        est.fit(*transform(X, y))
    assert len(acc) == 0 and not hasattr(est, "classes_")


BAD_PARAMS = [
    ({"epsilon": 0}, ValueError, "epsilon"),
    ({"epsilon": -1.0}, ValueError, "epsilon"),
    ({"epsilon": float("nan")}, ValueError, "epsilon"),
    ({"epsilon": float("inf")}, ValueError, "epsilon"),
    ({"epsilon": "1"}, TypeError, "epsilon"),
    ({"max_depth": -1}, ValueError, "max_depth"),
    ({"max_depth": "deep"}, TypeError, "max_depth"),
    ({"prior_strength": -1.0}, ValueError, "prior_strength"),
    ({"prior_strength": float("nan")}, ValueError, "prior_strength"),
    ({"prior_strength": True}, ValueError, "prior_strength"),
    ({"n_bins": 1}, ValueError, "n_bins"),
    ({"selection": "gini"}, ValueError, "selection"),
    ({"min_samples_leaf": -1}, ValueError, "min_samples_leaf"),
    ({"budget_weights": (1, 0, 1)}, ValueError, "weights"),
    ({"bounds": (1, 0)}, ValueError, "lower bound exceeds upper bound"),
    ({"accountant": "acc"}, TypeError, "accountant"),
    ({"random_state": -1}, ValueError, "random_state"),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("params,error,match", BAD_PARAMS,
                         ids=[f"{k}={v!r}" for (k, v), in (p.items() for p, _, _ in BAD_PARAMS)])
def test_bad_parameters_raise_and_spend_nothing(kind, params, error, match):
    X, y = noisy_data(n=30)
    acc = BudgetAccountant()
    kwargs = {"classes": [0, 1, 2], "accountant": acc, "random_state": 0, **params}
    est = make(kind, kwargs.pop("epsilon", 1.0), **kwargs)
    with pytest.raises(error, match=match):
        est.fit(X, y)
    assert len(acc) == 0 and not hasattr(est, "classes_")


@pytest.mark.parametrize("n_estimators,error", [(0, ValueError), (2.5, TypeError),
                                                (True, TypeError)])
def test_forest_rejects_bad_n_estimators(n_estimators, error):
    X, y = noisy_data(n=30)
    acc = BudgetAccountant()
    est = make("forest", 1.0, n_estimators=n_estimators, classes=[0, 1, 2], accountant=acc)
    with pytest.raises(error, match="n_estimators"):
        est.fit(X, y)
    assert len(acc) == 0


@pytest.mark.parametrize("cls", [DPDecisionTreeClassifier, DPPartitionForestClassifier])
def test_unknown_parameters_are_rejected(cls):
    with pytest.raises(TypeError):
        cls(bogus=3)
    with pytest.raises(ValueError, match="bogus"):
        cls().set_params(bogus=3)
    assert "classes" in cls().get_params() and "y_bounds" not in cls().get_params()


@pytest.mark.parametrize("kind", KINDS)
def test_predict_input_errors(kind):
    X, y = noisy_data(n=100)
    est = make(kind, 1.0, classes=[0, 1, 2], random_state=0).fit(X, y)
    with pytest.raises(ValueError, match=f"X has 2 features, but {type(est).__name__}"):
        est.predict(X[:, :2])
    with pytest.raises(ValueError, match="NaN"):
        est.predict_proba(_with(X, 0, 0, np.nan))
    assert est.predict(X[:1]).shape == (1,)


@pytest.mark.parametrize("kind", KINDS)
def test_clone_and_pickle(kind):
    X, y = noisy_data(n=400)
    acc = BudgetAccountant()
    est = make(kind, 2.0, classes=["x", "y", "z"], accountant=acc, random_state=3)
    labels = np.array(["x", "y", "z"])[y]
    est.fit(X, labels)
    twin = clone(est)
    assert not hasattr(twin, "classes_") and twin.accountant is acc
    np.testing.assert_array_equal(twin.fit(X, labels).predict_proba(X), est.predict_proba(X))
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    np.testing.assert_array_equal(again.classes_, ["x", "y", "z"])


# ======================================================================================
# Privacy audits
# ======================================================================================


def _neighbours(x0, n, x_record, class_record, n_features=None):
    """``D0``: ``n`` class-0 records at ``x0``; ``D1``: plus one of ``class_record``."""
    X0 = np.tile(np.asarray(x0, dtype=float), (n, 1))
    y0 = np.zeros(n, dtype=int)
    return (X0, y0), (np.vstack([X0, [x_record]]), np.append(y0, class_record))


# ``release_sampler(est, X, y, summarise)``: batched sampler ``(n, rng) -> n`` summaries
# of the trees ``est`` releases on ``(X, y)``, a batch's releases sharing one pair of
# spawned streams. ``summarise`` receives the builder's node arrays: raw noisy class
# counts at the leaves (``predict_proba`` is their post-processing, which cannot weaken
# the guarantee). ``run_audit(est, d0, d1, summarise, n_calibration, n_test, seed=0)``
# audits a pair of neighbouring datasets. (Fixtures ``inject`` and ``record_audit``:
# ``conftest.py``.)
HARNESS = dict(fresh_streams=False)
release_sampler = functools.partial(support.release_sampler, **HARNESS)
run_audit = functools.partial(support.run_audit, **HARNESS)


@pytest.mark.usefixtures("no_tree_fallback")
def test_audit_harness_releases_what_fit_releases():
    X, y = noisy_data(n=200, p=2)
    est = make("tree", 8.0, max_depth=3, n_bins=4, classes=[0, 1, 2], min_samples_split=0,
               min_samples_leaf=0, random_state=11).fit(X, y)
    nodes = {}
    release_sampler(est, X, y, lambda n: nodes.update(n) or 0.0)(1, np.random.default_rng(11))
    t = est.tree_
    assert t.node_count > 3
    for key in ("feature", "bin_threshold", "left", "right", "depth", "noisy_count"):
        np.testing.assert_array_equal(nodes[key], getattr(t, key), err_msg=key)
    leaves = t.left == -1
    # fit's probabilities are the post-processed noisy counts of the replay (shrunk
    # towards the noisy class prior by the default prior_strength)
    np.testing.assert_array_equal(t.noisy_value, nodes["value"])
    np.testing.assert_allclose(t.value[leaves], est._output_values(
        nodes["value"], None, est.class_prior_, est.leaf_pseudo_count_)[leaves],
        rtol=0, atol=1e-15)
    assert np.all(nodes["value"][leaves] == np.round(nodes["value"][leaves]))  # integer noise


# -- root noisy count + class-count leaf (max_depth=0) ----------------------------------
#
# D0: 10 records of class 0; D1 adds a record of class 1. Equal weights at depth 0 give
# the root count and the leaf's count vector epsilon / 2 each. The record moves the count
# by 1 and the class-1 count by 1 (the count vector's L1 sensitivity); the joint event
# {count >= 11 and class-1 count >= 1} has probability ratio exp(epsilon): the tightest
# event there is.

LEAF_D0, LEAF_D1 = _neighbours([0.5], 10, [0.5], 1)


def count_and_class_1_high(nodes):
    return float(nodes["noisy_count"][0] >= 11 and nodes["value"][0, 1] >= 1)


def leaf_tree():
    return make("tree", 2.0, max_depth=0, n_bins=4, classes=[0, 1])


def test_audit_class_count_leaf_and_root_count(record_audit):
    res = run_audit(leaf_tree(), LEAF_D0, LEAF_D1, count_and_class_1_high, 3_000, 12_000)
    record_audit(res, 2.0).assert_within(2.0)
    assert res.epsilon_lower_bound > 1.5  # measured 1.84 (1.83-1.87 over seeds): tight


def test_control_under_scaled_leaf_count_noise_is_flagged(record_audit, inject):
    # the count vector's noise scale halved (e.g. budget split over the classes wrongly
    # assumed parallel): the leaf costs 2 epsilon_leaf, true epsilon 3
    inject(lambda kw: kw.update(leaf_s=2 * kw["leaf_s"]))
    res = run_audit(leaf_tree(), LEAF_D0, LEAF_D1, count_and_class_1_high, 2_000, 8_000)
    record_audit(res, 2.0)
    assert res.epsilon_lower_bound > 2.0, res.summary()  # measured 2.71 (2.71-2.78)


# -- Gini split selection at the root (max_depth=1) -------------------------------------
#
# Two features, 16 bins (30 candidates). D0: 30 class-0 records in bin 1 of both
# features; D1 adds a class-1 record in bin 0 of feature 0. The candidate (feature 0,
# after bin 0) isolates it: its Gini utility keeps its value, while every other candidate
# mixes it with 30 zeros and loses 2 * 30 / 31 (sensitivity 2). Weights (1, 20, 1) give
# the split 20/23 of epsilon. Statistic: the released root split (``root_split``, -1 for a leaf).

B1 = 1.5 / 16
SPLIT_D0, SPLIT_D1 = _neighbours([B1, B1], 30, [0.0, B1], 1)


def split_tree(selection="exponential"):
    return make("tree", 2.0, max_depth=1, n_bins=16, classes=[0, 1], min_samples_split=0,
                min_samples_leaf=0, budget_weights=(1, 20, 1), selection=selection)


@pytest.mark.parametrize("selection", ["exponential", "permute_and_flip"])
def test_audit_gini_split_selection(record_audit, selection):
    res = run_audit(split_tree(selection), SPLIT_D0, SPLIT_D1, root_split, 3_000, 12_000)
    record_audit(res, 2.0).assert_within(2.0)
    assert res.event == "stat == 0.0"  # the isolating split
    assert res.epsilon_lower_bound > 0.9  # measured 1.23 / 1.36 (split's share 1.74)


@pytest.mark.parametrize("bug", ["split epsilon x4", "gini sensitivity 1 (as for MSE)"])
def test_control_understated_gini_sensitivity_is_flagged(record_audit, inject, monkeypatch,
                                                         bug):
    if bug == "split epsilon x4":  # = Gini sensitivity understated 4 times
        inject(lambda kw: kw.update(split_eps_num=4 * kw["split_eps_num"]))
    else:  # the selection calibrated to sensitivity 1 instead of 2
        monkeypatch.setitem(tree_module._UTILITY_SENSITIVITY, "gini", 1.0)
    res = run_audit(split_tree(), SPLIT_D0, SPLIT_D1, root_split, 2_000, 12_000)
    record_audit(res, 2.0)
    assert res.epsilon_lower_bound > 2.0, f"{bug} not flagged:\n{res.summary()}"
    # measured 3.12 / 2.43 (2.43-2.59 over seeds)


# -- partition forest of classification trees (max_depth=0) ----------------------------
#
# 3 parts, epsilon 2 (1 for the root count, 1 for the count vector of each tree). D0: 30
# class-0 records; D1 adds a class-1 record, which lands in one part and moves that
# tree's count and class-1 count by 1. The part sizes add up to n, so the statistic is
# the sum over the trees of (noisy count + noisy class-1 count): D1 shifts it by 2.
# CONTROL: every tree grown on all the data (no partitioning) with the full epsilon.

FOREST_D0, FOREST_D1 = _neighbours([0.5], 30, [1.0], 1)


def forest_sampler(est, X, y):
    data = support.tree_data(est, X, y)
    builder = est._builder(est._tree_budget(est._check_params()), data)
    k, n = est.n_estimators, data.codes.shape[0]

    def sampler(size, rng):
        noise, candidates = rng.spawn(2)
        out = np.empty(size)
        for i in range(size):
            parts = assign_partitions(n, k, rng)
            total = 0.0
            for j in range(k):
                part = data.subset(np.flatnonzero(parts == j))
                nodes = builder.build(noise, candidates, part.codes, part.y_fixed, part.labels)
                total += nodes["noisy_count"][0] + nodes["value"][0, 1]
            out[i] = total
        return out

    return sampler


def forest_audit(n_calibration, n_test):
    est = make("forest", 2.0, n_estimators=3, max_depth=0, n_bins=4, classes=[0, 1])
    return audit_samplers(forest_sampler(est, *FOREST_D0), forest_sampler(est, *FOREST_D1),
                          n_calibration, n_test)


@pytest.mark.usefixtures("no_tree_fallback")
def test_forest_replay_is_fit():
    X, y = noisy_data(n=300)
    est = make("forest", 3.0, n_estimators=3, max_depth=2, classes=[0, 1, 2],
               min_samples_split=5, min_samples_leaf=1, random_state=4).fit(X, y)
    data = support.tree_data(est, X, y)
    builder = est._builder(est._tree_budget(est._check_params()), data)
    rng = np.random.default_rng(4)
    parts = assign_partitions(300, 3, rng)
    for j, (tree, stream) in enumerate(zip(est.estimators_, rng.spawn(3))):
        part = data.subset(np.flatnonzero(parts == j))
        nodes = builder.build(*stream.spawn(2), part.codes, part.y_fixed, part.labels)
        for key in ("feature", "bin_threshold", "left", "noisy_count"):
            np.testing.assert_array_equal(nodes[key], getattr(tree, key), err_msg=key)
        leaves = tree.left == -1
        np.testing.assert_allclose(est._output_values(
            nodes["value"], None, est.class_prior_, est.leaf_pseudo_count_)[leaves],
            tree.value[leaves], atol=1e-15)


def test_audit_partition_forest_classifier(record_audit):
    res = forest_audit(2_000, 6_000)
    record_audit(res, 2.0).assert_within(2.0)
    assert res.epsilon_lower_bound > 0.45  # measured 0.67 (0.62-0.72 over seeds): not vacuous


def test_control_forest_classifier_without_partitioning_is_flagged(record_audit,
                                                                   monkeypatch):
    monkeypatch.setattr(TreeData, "subset", lambda self, rows: self)
    res = forest_audit(1_000, 6_000)
    record_audit(res, 2.0)  # the record moves 3 counts and 3 class counts
    assert res.epsilon_lower_bound > 2.0, res.summary()  # measured 2.61 (2.35-2.61)


# ======================================================================================
# Defaults for small epsilon: public-input rules and the noisy-prior fallback
# ======================================================================================


@pytest.mark.parametrize("kind", KINDS)
def test_multiclass_falls_back_to_the_noisy_class_counts_with_little_budget(kind):
    """Below CLASSIFIER_FALLBACK_EPS_ROWS_PER_CLASS x n_classes (epsilon x noisy count), a
    multiclass tree or forest is one tree of depth 0: the noisy class counts. The
    rule's count is one more Laplace release of the ledger; the total stays epsilon."""
    from dptrees._tree_fallback import (CLASSIFIER_FALLBACK_EPS_ROWS_PER_CLASS,
                                        FALLBACK_CLASSIFIER_WEIGHTS, FALLBACK_SHARE)
    X, y = noisy_data(n=2_000, n_classes=5)
    y[:1_200] = 0  # a clear majority class
    epsilon = 0.5 * CLASSIFIER_FALLBACK_EPS_ROWS_PER_CLASS * 5 / 2_000
    acc = BudgetAccountant()
    est = make(kind, epsilon, classes=[0, 1, 2, 3, 4], accountant=acc,
               random_state=3).fit(X, y)
    assert [t.node_count for t in trees_of(est)] == [1] and est.max_depth_ == 0
    assert np.all(est.predict(X) == 0)
    rest = epsilon * (1 - FALLBACK_SHARE)
    assert est.budget_ == split_tree_budget(rest, 0, FALLBACK_CLASSIFIER_WEIGHTS)
    counts = [e for e in est.privacy_ledger_ if "fallback rule" in e["release"]]
    assert len(counts) == 1 and counts[0]["epsilon"] == pytest.approx(epsilon * FALLBACK_SHARE)
    assert acc.spent == (epsilon, 0.0) and est.epsilon_spent_ == epsilon


@pytest.mark.parametrize("kind", KINDS)
def test_multiclass_grows_with_enough_budget_and_binary_never_counts(kind):
    from dptrees._tree_fallback import FALLBACK_SHARE
    X, y = noisy_data(n=2_000, n_classes=3)
    est = make(kind, 2.0, max_depth=3, classes=[0, 1, 2], random_state=3).fit(X, y)
    assert est.max_depth_ == 3
    assert est.budget_ == split_tree_budget(2.0 * (1 - FALLBACK_SHARE), 3,
                                            est.budget_weights)
    assert any("fallback rule" in e["release"] for e in est.privacy_ledger_)
    binary = make(kind, 0.001, max_depth=3, classes=[0, 1, 2][:2], random_state=3).fit(
        X, np.minimum(y, 1))
    assert not any("fallback rule" in e["release"] for e in binary.privacy_ledger_)
    assert binary.budget_ == split_tree_budget(0.001, 3, binary.budget_weights)


def test_auto_max_depth_is_a_rule_in_epsilon():
    expected = {1e-6: 0, 0.01: 0, 0.0249: 0, 0.025: 1, 0.05: 2, 0.1: 3, 0.2: 4, 0.4: 5,
                1.0: 5, 1e6: 5}
    assert {eps: auto_max_depth(eps) for eps in expected} == expected


def test_auto_n_estimators_is_a_rule_in_epsilon():
    expected = {1e-6: 1, 0.5: 1, 1.0: 1, 3.9: 1, 4.0: 2, 6.0: 3, 20.0: 10, 1e6: 10}
    assert {eps: auto_n_estimators(eps) for eps in expected} == expected


@pytest.mark.usefixtures("no_tree_fallback")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("epsilon", [0.01, 0.1, 1.0, 9.0])
def test_auto_defaults_depend_on_epsilon_only(kind, epsilon):
    X, y = noisy_data(n=400)
    extra = {} if kind == "tree" else {"n_estimators": "auto"}
    est = make(kind, epsilon, classes=[0, 1, 2], random_state=0, **extra)
    assert est.get_params()["max_depth"] == "auto"
    est.fit(X, y)
    n_trees = 1 if kind == "tree" else auto_n_estimators(epsilon)
    # partition forest: every tree gets the full epsilon
    assert est.max_depth_ == auto_max_depth(epsilon)
    assert est.budget_ == split_tree_budget(epsilon, est.max_depth_, (0.5, 2.0, 1.0))
    assert len(trees_of(est)) == n_trees
    assert all(t.max_depth <= est.max_depth_ for t in trees_of(est))
    if kind == "forest":
        assert est.n_estimators_ == n_trees
    # the same rule on other data of the same shape: nothing read from the data
    X2, y2 = noisy_data(n=50, seed=3)
    other = clone(est).fit(X2, y2)
    assert other.max_depth_ == est.max_depth_ and len(trees_of(other)) == n_trees


@pytest.mark.parametrize("kind", KINDS)
def test_prior_shrinkage_is_post_processing_of_the_released_counts(kind):
    X, y = noisy_data(n=1_000)
    kw = dict(classes=[0, 1, 2], max_depth=3, min_samples_split=5, random_state=7)
    shrunk = make(kind, 0.5, prior_strength=2.0, **kw).fit(X, y)
    plain = make(kind, 0.5, prior_strength=0.0, **kw).fit(X, y)
    assert plain.class_prior_ is None and plain.leaf_pseudo_count_ == 0.0
    k = 3
    assert shrunk.leaf_pseudo_count_ == pytest.approx(2.0 * np.sqrt(2) * k
                                                      / shrunk.budget_["leaf"])
    sums = sum(np.nansum(t.noisy_value, axis=0) for t in trees_of(shrunk))
    positive = np.maximum(sums, 0)
    np.testing.assert_allclose(shrunk.class_prior_, positive / positive.sum())
    for a, b in zip(trees_of(shrunk), trees_of(plain)):
        # the same releases (same seed): only the post-processing differs
        for key in ("feature", "bin_threshold", "left", "right", "noisy_count"):
            np.testing.assert_array_equal(getattr(a, key), getattr(b, key))
        np.testing.assert_array_equal(a.noisy_value, b.noisy_value)
        np.testing.assert_allclose(b.value, plain._output_values(b.noisy_value, None),
                                   equal_nan=True)
        np.testing.assert_allclose(a.value, shrunk._output_values(
            a.noisy_value, None, shrunk.class_prior_, shrunk.leaf_pseudo_count_),
            equal_nan=True)
        leaves = a.left == -1
        np.testing.assert_allclose(a.value[leaves].sum(axis=1), 1.0, atol=1e-12)


def test_leaves_holding_mostly_noise_fall_back_to_the_prior():
    # 90 % of class 0; tiny epsilon on a deep tree: without shrinkage some leaves predict
    # a class at random, with it every leaf predicts the prior's class
    rng = np.random.default_rng(0)
    X = rng.random((3_000, 3))
    y = (rng.random(3_000) < 0.1).astype(int)
    kw = dict(classes=[0, 1], max_depth=4, min_samples_split=0, min_samples_leaf=0)
    wrong = {0.0: 0, 1.0: 0}
    for seed in range(10):
        for strength in wrong:
            est = make("tree", 0.05, prior_strength=strength, random_state=seed, **kw)
            est.fit(X, y)
            wrong[strength] += np.mean(est.predict(X) != 0)
    assert wrong[1.0] < wrong[0.0]
    assert wrong[1.0] / 10 < 0.05


def test_tiny_epsilon_default_predicts_the_noisy_prior():
    X, y = noisy_data(n=2_000, n_classes=2)
    est = make("tree", 0.01, classes=[0, 1], random_state=0).fit(X, y)
    assert est.max_depth_ == 0 and est.tree_.node_count == 1
    proba = est.predict_proba(X)
    np.testing.assert_allclose(proba, np.broadcast_to(proba[0], proba.shape))


def test_label_leaves_are_not_shrunk():
    X, y = noisy_data(n=300)
    est = make("tree", 1.0, classes=[0, 1, 2], leaf="label", max_depth=2,
               random_state=0).fit(X, y)
    assert est.class_prior_ is None and est.leaf_pseudo_count_ == 0.0
    leaves = est.tree_.left == -1
    assert set(np.unique(est.tree_.value[leaves])) <= {0.0, 1.0}
