"""Plain helpers shared by the test modules (fixtures live in ``conftest.py``).

``tests/`` has no ``__init__.py``: under pytest's default ("prepend") import mode the
folder is put on ``sys.path``, so test modules import this one as ``support``.

* Data: ``step_data`` and ``random_data`` on uniform features in [0, 1] (``BOUNDS``).
* Trees: ``assert_same_trees`` compares fitted trees array by array.
* Audits: ``release_sampler`` and ``run_audit`` replay what a tree estimator's ``fit``
  releases (its own compiled builder on data prepared once) for ``dptrees.audit``;
  ``audit_samplers`` runs ``audit_pair`` at the suite's significance level ``ALPHA``;
  ``root_split`` is a statistic of the split-selection audits.
* Source tree: ``import_experiment`` imports a module of the ``experiments`` package,
  ``load_script`` a speed script of ``benchmarks/``, or the calling test skips.
* scikit-learn: ``parametrize_with_checks`` runs its estimator checks with expected
  failures as strict xfails on every scikit-learn that ``pyproject.toml`` allows;
  ``SKLEARN_VERSION`` is the installed (major, minor).
"""

import functools
import importlib
import importlib.util
import inspect
import warnings
from pathlib import Path

import numpy as np
import pytest
import sklearn
from sklearn.utils import estimator_checks

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
from dptrees.model_selection import DPRandomSearch
from dptrees.audit import audit_pair
from dptrees.exceptions import PrivacyLeakWarning

ALPHA = 1e-3  # significance level of every estimator audit
BOUNDS = (0.0, 1.0)  # public feature bounds of the data below

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

SKLEARN_VERSION = tuple(int(part) for part in sklearn.__version__.split(".")[:2])

TREE_KEYS = ("feature", "bin_threshold", "threshold", "left", "right", "depth", "noisy_count")


# ======================================================================================
# Data
# ======================================================================================


def step_data(n=20_000, p=2, seed=0, dtype=float):
    """``y = 1 if x0 > 0.5 else 0`` (as ``dtype``) on uniform features in [0, 1]."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, p))
    return X, (X[:, 0] > 0.5).astype(dtype)


def random_data(n=300, p=3, seed=0, weight=1.0, clip=None):
    """``y = weight sin(6 x0) + weight x1 + N(0, 0.1^2)`` on uniform features in [0, 1],
    clipped to ``clip = (low, high)`` if given.

    The defaults give ``sin(6 x0) + x1 + noise`` (multiplying by 1.0 is exact: the very
    same floats); ``weight=0.5, clip=(0, 1)`` a target inside [0, 1].
    """
    rng = np.random.default_rng(seed)
    X = rng.random((n, p))
    y = weight * np.sin(6 * X[:, 0]) + weight * X[:, 1] + 0.1 * rng.standard_normal(n)
    if clip is not None:
        y = np.clip(y, *clip)
    return X, y


# ======================================================================================
# Trees
# ======================================================================================


def assert_same_tree(a, b, keys=TREE_KEYS, values=True):
    """``a`` and ``b`` have the same node arrays ``keys`` (and leaf values if ``values``)."""
    for key in keys:
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key), err_msg=key)
    if values:
        leaves = a.left == -1
        np.testing.assert_array_equal(a.value[leaves], b.value[leaves])


def assert_same_trees(trees_a, trees_b, keys=TREE_KEYS):
    """Two lists of fitted trees are equal, tree by tree (see ``assert_same_tree``)."""
    assert len(trees_a) == len(trees_b)
    for a, b in zip(trees_a, trees_b):
        assert_same_tree(a, b, keys)


# ======================================================================================
# Audits
# ======================================================================================


def audit_samplers(sampler_d0, sampler_d1, n_calibration, n_test, seed=0):
    """``audit_pair`` of two batched samplers at the significance level ``ALPHA``."""
    return audit_pair(sampler_d0, sampler_d1, n_calibration=n_calibration, n_test=n_test,
                      alpha=ALPHA, random_state=seed)


def tree_data(est, X, y, sample_weight=None):
    """What a tree or forest's ``fit`` trains on: ``est._training_data`` (the rows through
    :func:`dptrees.data.prepare.prepare`, as :class:`dptrees._tree_data.TreeData`). Rows
    in memory need no closing: the arrays stay with the data."""
    with est._training_data(X, y, sample_weight=sample_weight) as data:
        return data


def release_sampler(est, X, y, summarise, *, prepare=tree_data, fresh_streams):
    """Batched sampler ``(n, rng) -> n`` summaries of the trees ``est`` releases on ``(X, y)``.

    Runs exactly what ``est.fit`` runs after validation and accounting: the estimator's
    compiled builder (``est._builder(budget, data)``, ``budget`` from
    ``est._tree_budget(est._check_params())``) on ``data = prepare(est, X, y)`` (by default
    :func:`tree_data`; its sample weights, if any, go to the builder as ``fit`` passes
    them). ``summarise`` receives the builder's node arrays.

    ``fresh_streams=True``: every release draws its noise and candidate streams from its
    own ``rng.spawn(2)``, as ``fit`` does. ``False``: a batch of releases shares one pair
    spawned once (same distribution -- independent noise for every release -- and cheaper).
    The two consume ``rng`` differently: an audit's measured numbers depend on the choice.
    """
    data = prepare(est, X, y)
    budget = est._tree_budget(est._check_params())
    builder = est._builder(budget, data)
    codes, y_fixed, labels = data.codes, data.y_fixed, data.labels
    build = functools.partial(builder.build, weights=data.weights)

    if fresh_streams:
        def sampler(n, rng):
            out = np.empty(n)
            for i in range(n):
                out[i] = summarise(build(*rng.spawn(2), codes, y_fixed, labels))
            return out
    else:
        def sampler(n, rng):
            noise, candidates = rng.spawn(2)
            return np.array([summarise(build(noise, candidates, codes, y_fixed, labels))
                             for _ in range(n)])

    return sampler


def root_split(nodes):
    """Statistic: the released root split as one number, ``feature * 15 + bin_threshold``
    (trees on 16 bins: 15 thresholds a feature), or -1 if the root is a leaf."""
    if nodes["left"][0] == -1:
        return -1.0
    return float(nodes["feature"][0] * 15 + nodes["bin_threshold"][0])


def run_audit(est, d0, d1, summarise, n_calibration, n_test, seed=0, *, prepare=tree_data,
              fresh_streams):
    """Audit ``est`` on the neighbouring datasets ``d0 = (X0, y0)`` and ``d1`` through the
    statistic ``summarise`` (see ``release_sampler`` for ``prepare`` and ``fresh_streams``)."""
    return audit_samplers(
        release_sampler(est, *d0, summarise, prepare=prepare, fresh_streams=fresh_streams),
        release_sampler(est, *d1, summarise, prepare=prepare, fresh_streams=fresh_streams),
        n_calibration, n_test, seed)


# ======================================================================================
# Experiments and speed scripts (source tree only)
# ======================================================================================


def import_experiment(name):
    """The module ``experiments.<name>`` (a reproduction or comparison), or skip.

    ``experiments`` is a package of the source tree, not of the installed dptrees
    (``conftest.py`` makes it importable): the calling test (or fixture) is skipped where
    it is absent, e.g. tests run from a wheel's test sources.
    """
    if importlib.util.find_spec("experiments") is None:
        pytest.skip("the source tree's experiments package is not importable")
    return importlib.import_module(f"experiments.{name}")


def import_uci_experiment(name):
    """``experiments.<name>``, a script on the shared UCI data, or skip where the module
    or the data is absent."""
    uci = import_experiment("uci_datasets")
    if not uci.data_available():
        pytest.skip(f"shared UCI data not found at {uci.DATA_DIR}")
    return import_experiment(name)


def one_informative_feature(n=4000, p=10, seed=0):
    """``(X, y)``: ``p`` uniform features in [0, 1); the label is feature 3 above 0.7."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, p))
    return X, (X[:, 3] > 0.7).astype(int)


def boosting_classifier(**params):
    """A small ``DPGradientBoostingClassifier`` (10 rounds, depth 3, bounds [0, 1],
    classes 0/1, its own accountant, seed 0), ``params`` overriding."""
    from dptrees import DPGradientBoostingClassifier

    base = dict(n_estimators=10, max_depth=3, bounds=(0.0, 1.0), classes=[0, 1],
                accountant=BudgetAccountant(), random_state=0)
    base.update(params)
    return DPGradientBoostingClassifier(**base)


def boosting_makers():
    """``(make, n_outputs)`` of small gradient-boosting estimators of each kind (binary,
    3 classes, regression): ``make(**params)`` builds one."""
    from dptrees import DPGradientBoostingRegressor

    return [
        (lambda **kw: boosting_classifier(**kw), 1),
        (lambda **kw: boosting_classifier(classes=[0, 1, 2], **kw), 3),
        (lambda **kw: DPGradientBoostingRegressor(n_estimators=10, max_depth=3,
                                                  bounds=(0.0, 1.0), y_bounds=(0.0, 1.0),
                                                  random_state=0, **kw), 1),
    ]


def one_hot_columns(n, groups, levels, seed):
    """``(X, cats)``: ``groups`` categorical columns of ``levels`` levels each, drawn at
    random, and their one-hot encoding (``groups * levels`` columns, one 1 per group)."""
    rng = np.random.default_rng(seed)
    cats = rng.integers(levels, size=(n, groups))
    X = np.zeros((n, groups * levels))
    X[np.arange(n)[:, None], np.arange(groups) * levels + cats] = 1.0
    return X, cats


def run_quick_sweep(name, argv=("--quick",)):
    """``experiments.<name>.main(argv)`` (its ``--quick`` mode) of a sweep over California
    Housing and the UCI data sets, or skip where the module or the shared data is absent."""
    hoang = import_experiment("reproduce_hoang2020")
    uci = import_experiment("uci_datasets")
    if not Path(hoang.DEFAULT_DATA).is_file() or not uci.data_available():
        pytest.skip("shared California Housing or UCI data not found")
    return import_experiment(name).main(list(argv))


def load_script(path, name):
    """Import the speed script at ``path`` as a module called ``name``; skip if it is absent.

    The scripts ``benchmarks/bench_*.py`` live in the source tree, not in the installed
    package: the calling test (or fixture) is skipped where the file is absent. They are
    imported as they run (``python benchmarks/bench_x.py``): with their folder first on
    ``sys.path`` while they import, so that a sibling (``import bench_trees``) is found.
    """
    if not path.is_file():
        pytest.skip(f"benchmark script not found at {path}")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(path.parent))
        spec.loader.exec_module(module)
    return module


#: (classes, change to y, expected message) of ``check_bad_classes``: one public class, a
#: label outside the public classes, and classes inferred from data with only one present.
BAD_CLASSES = [
    ([0], None, "at least two"),
    ([0, 1], 7, "not in classes"),
    (None, "one-class", "one class"),
]


def check_bad_classes(make_classifier, X, y, classes, y_change, match):
    """Fitting ``make_classifier(classes=..., accountant=...)`` on ``y`` changed as
    ``y_change`` says raises ``ValueError`` matching ``match`` and spends nothing."""
    acc = BudgetAccountant()
    if y_change == "one-class":
        y = np.zeros_like(y)
    elif y_change is not None:
        y = y.copy()
        y[0] = y_change
    with pytest.raises(ValueError, match=match), warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        make_classifier(classes=classes, accountant=acc).fit(X, y)
    assert acc.spent == (0.0, 0.0) and not acc.ledger


def dask_inputs(X, y, row_chunk):
    """``(X, y)`` as Dask sees them: a Dask array with row chunks of ``row_chunk`` and
    labels in chunks of 500, then a dataframe of 3 partitions with numpy labels."""
    import dask.array as da
    import dask.dataframe as dd
    import pandas as pd

    yield da.from_array(X, chunks=(row_chunk, X.shape[1])), da.from_array(y, chunks=500)
    yield dd.from_pandas(pd.DataFrame(X), npartitions=3), y


# ======================================================================================
# scikit-learn's estimator checks
# ======================================================================================

_WEIGHTS_ABOVE_ONE = (
    "BY DESIGN (DP): the check fits with sample weights of {w}. dptrees bounds a record's "
    "weight in [0, 1], so that it contributes no more than an unweighted record: the "
    "sensitivities, and so the guarantee, hold unchanged. Larger weights are refused "
    "with a ValueError that says to divide them by a public upper bound.")

def sample_weight_expected_failures():
    """The sample-weight checks that every estimator with ``fit(..., sample_weight)``
    fails by design, as the installed scikit-learn names them."""
    out = {"check_sample_weights_list": _WEIGHTS_ABOVE_ONE.format(w=3),
           "check_sample_weights_not_overwritten": _WEIGHTS_ABOVE_ONE.format(w="1 and 10")}
    repeated = _WEIGHTS_ABOVE_ONE.format(w="0 to 4, against repeating each row that many "
                                           "times")
    for name in ("check_sample_weight_equivalence_on_dense_data",  # scikit-learn >= 1.7
                 "check_sample_weight_equivalence"):  # 1.6
        if hasattr(estimator_checks, name):
            out[name] = repeated
            return out
    # scikit-learn < 1.6 (its kind="ones" twin passes: a weight of 1 is the unweighted
    # record, bit for bit)
    out["check_sample_weights_invariance(kind=zeros)"] = (
        "BY DESIGN (DP): the check compares a fit on 16 rows with a fit on those rows "
        "plus 16 shifted rows of weight 0. The checks run without public bounds, so the "
        "bins are read from the data, rows of weight 0 included: the bins, and so the "
        "models, differ. With public bounds a weight of 0 is the record's removal, bit "
        "for bit (tests/test_sample_weight.py).")
    return out


def check_key(check):
    """A check's name, with its keyword arguments if it is a ``functools.partial`` of
    one with a ``kind`` (``check_sample_weights_invariance(kind=zeros)``)."""
    name = getattr(check, "func", check).__name__
    kind = getattr(check, "keywords", {}).get("kind")
    return name if kind is None else f"{name}(kind={kind})"


def parametrize_with_checks(estimators, expected_failed_checks=None):
    """scikit-learn's ``parametrize_with_checks`` where every check named in
    ``expected_failed_checks(estimator) -> {check name: reason}`` is a strict xfail (a
    check that starts passing fails the suite), on every scikit-learn we support.

    scikit-learn >= 1.8 does this itself (``expected_failed_checks=``, ``xfail_strict=``);
    before it (1.6 and 1.7 lack ``xfail_strict``, 1.4 and 1.5 also
    ``expected_failed_checks``) the generated (estimator, check) pairs are marked here.
    Either way the checks are a list (``.mark.args[1]``), which the tests read back.
    """
    native = estimator_checks.parametrize_with_checks
    if "xfail_strict" in inspect.signature(native).parameters:
        return native(estimators, expected_failed_checks=expected_failed_checks,
                      xfail_strict=True)
    mark = native(estimators)
    params = []
    for param in mark.mark.args[1]:
        estimator, check = param.values if hasattr(param, "values") else param
        marks = list(getattr(param, "marks", ()))
        expected = expected_failed_checks(estimator) if expected_failed_checks else {}
        reason = expected.get(check_key(check))
        if reason is not None:
            marks.append(pytest.mark.xfail(strict=True, reason=reason))
        params.append(pytest.param(estimator, check, marks=marks))
    return pytest.mark.parametrize("estimator, check", params, ids=mark.mark.kwargs.get("ids"))


# -- one small fit of every estimator and both searches ---------------------------------
# (the seed-release and lifecycle tests walk all of them)

def small_table(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3))
    return X, (X[:, 0] + 0.3 * X[:, 1] > 0.6).astype(int)


def estimators():
    clf = dict(bounds=(0.0, 1.0), classes=[0, 1])
    reg = dict(bounds=(0.0, 1.0), y_bounds=(0.0, 1.0))
    yield DPDecisionTreeClassifier(max_depth=2, **clf)
    yield DPDecisionTreeRegressor(max_depth=2, **reg)
    yield DPPartitionForestClassifier(n_estimators=2, max_depth=2, **clf)
    yield DPPartitionForestRegressor(n_estimators=2, max_depth=2, **reg)
    yield DPExtraTreesClassifier(n_estimators=2, max_depth=2, **clf)
    yield DPExtraTreesRegressor(n_estimators=2, max_depth=2, **reg)
    yield DPGradientBoostingClassifier(n_estimators=3, max_depth=2, **clf)
    yield DPGradientBoostingRegressor(n_estimators=3, max_depth=2, **reg)
    yield DPExplainableBoostingClassifier(n_cycles=2, **clf)
    yield DPExplainableBoostingRegressor(n_cycles=2, **reg)
    yield DPAdaBoostClassifier(n_estimators=3, **clf)
    yield DPFederatedGradientBoostingClassifier(n_estimators=2, max_depth=2, n_clients=300,
                                                noise_multiplier=2.0, **clf)
    yield DPFederatedGradientBoostingRegressor(n_estimators=2, max_depth=2, n_clients=300,
                                               noise_multiplier=2.0, **reg)
    yield DPRandomSearch(DPDecisionTreeClassifier(**clf), {"max_depth": [1, 2]},
                         mean_trials=2)
    yield DPRandomSearch(DPGradientBoostingClassifier(n_estimators=2, max_depth=2, **clf),
                         {"learning_rate": [0.1, 0.3]}, delta=1e-6, mean_trials=2)


ESTIMATORS = list(estimators())
IDS = [f"{type(e).__name__}-{i}" for i, e in enumerate(ESTIMATORS)]


def fit_quietly(est, X, y):
    target = y.astype(float) if "y_bounds" in est.get_params() else y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # weak-delta warnings of the tiny federations
        return est.fit(X, target)
