"""Golden models: a fixed set of fits, compared bit for bit with stored digests.

Every model is a deterministic function of its inputs and its seed (exact integer
statistics, exact noise), so a change that should change nothing -- a refactoring, a
faster kernel, a new source -- must leave every digest below as it is. Each
configuration fits one estimator family in one setting (split modes, noise and
accounting options, sample weights, missing values and categories, every source of
rows, threads, federated clients, the private search) and stores three digests:

* ``predictions``: ``predict`` and, where there is one, ``predict_proba`` on held-out
  rows, to the last bit;
* ``arrays``: every number of the fitted model (public fitted attributes, walked into
  trees, binners and losses), as a multiset, so that renaming or moving an attribute
  does not change it but changing a value does;
* ``ledger``: the privacy ledger and the ``(epsilon, delta)`` spent.

The configurations that read the same rows from another source (blocks, memmap,
Parquet, Dask) or on two threads must also give their in-memory twin's digests.

A deliberate change of a model (a fix) updates ``golden_models.json``: run
``DPTREES_UPDATE_GOLDEN=1 python -P -m pytest tests/test_golden_models.py`` and say in
the commit which digests changed and why.
"""

import hashlib
import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

from dptrees import (
    Blocks,
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
    Numeric,
    Parquet,
)
from dptrees.federated import (
    DPFederatedGradientBoostingClassifier,
    DPFederatedGradientBoostingRegressor,
)
from dptrees.model_selection import DPRandomSearch

GOLDEN = Path(__file__).with_name("golden_models.json")
UPDATE = os.environ.get("DPTREES_UPDATE_GOLDEN") == "1"

N, P = 800, 4
BOUNDS = (0.0, 1.0)
Y_BOUNDS = (-1.0, 3.0)
COLOURS = ["red", "green", "blue"]
SCHEMA = {"x0": Numeric(0.0, 1.0, missing=True), "x1": (0.0, 1.0), "x2": (0.0, 1.0),
          "colour": COLOURS + [None]}


# ======================================================================================
# Data
# ======================================================================================


def arrays(n=N, p=P, seed=0):
    """Features in [0, 1] (one sparse column), a 3-class label, its binary cut, a target
    in ``Y_BOUNDS``, weights in [0, 1] and client ids."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, p))
    X[:, 3] = X[:, 3] > 0.8
    cls = np.minimum((X[:, 0] + X[:, 1]) * 1.6, 2).astype(int)
    reg = np.clip(2 * X[:, 0] - X[:, 2] + 0.3 * rng.normal(size=n), *Y_BOUNDS)
    weights = rng.uniform(0.2, 1.0, size=n)
    return {"X": X, "cls": cls, "bin": (cls > 0).astype(int), "reg": reg,
            "weights": weights, "clients": np.arange(n) % 50}


def wide(n=N, p=24, seed=1):
    """A one-hot-like table with more features than the sparse split prior's limit."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, p)) > 0.85).astype(float)
    return X, (X[:, 0] + X[:, 1] + 0.5 * rng.random(n) > 0.8).astype(int)


def frame(n=N, seed=2):
    """A data frame with a categorical column (with missing values) and a numeric one
    with missing values."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    x0 = rng.random(n)
    x0[rng.random(n) < 0.1] = np.nan
    X = pd.DataFrame({"x0": x0, "x1": rng.random(n), "x2": rng.random(n),
                      "colour": rng.choice(np.array(COLOURS + [None], dtype=object), n)})
    y = ((np.nan_to_num(x0, nan=0.5) + (X["colour"] == "red")) > 0.8).astype(int).to_numpy()
    return X, y


TEST_ROWS = np.random.default_rng(99).random((60, P))


# ======================================================================================
# Configurations: (id, estimator factory, data kind, target, source, fit keywords)
# ======================================================================================

CLF = dict(bounds=BOUNDS, classes=[0, 1], random_state=11)
CLF3 = dict(bounds=BOUNDS, classes=[0, 1, 2], random_state=12)
REG = dict(bounds=BOUNDS, y_bounds=Y_BOUNDS, random_state=13)


def _configs():
    c = []

    def add(name, make, target, *, source="array", weights=False, data="arrays",
            twin=None, clients=False):
        c.append(dict(name=name, make=make, target=target, source=source, weights=weights,
                      data=data, twin=twin, clients=clients))

    # Greedy DP trees
    add("tree-reg", lambda: DPDecisionTreeRegressor(max_depth=4, **REG), "reg")
    add("tree-reg-median-pf", lambda: DPDecisionTreeRegressor(
        max_depth=3, leaf="median", selection="permute_and_flip", **REG), "reg")
    add("tree-clf", lambda: DPDecisionTreeClassifier(max_depth=4, **CLF), "bin")
    add("tree-clf-label-3", lambda: DPDecisionTreeClassifier(
        max_depth=3, leaf="label", **CLF3), "cls")
    add("tree-clf-weights", lambda: DPDecisionTreeClassifier(max_depth=4, **CLF), "bin",
        weights=True)
    add("tree-clf-frame", lambda: DPDecisionTreeClassifier(
        max_depth=3, bounds=SCHEMA, classes=[0, 1], random_state=14), "frame",
        data="frame")
    add("tree-clf-2-threads", lambda: DPDecisionTreeClassifier(
        max_depth=4, n_jobs=2, **CLF), "bin", twin="tree-clf")
    add("tree-clf-blocks", lambda: DPDecisionTreeClassifier(max_depth=4, **CLF), "bin",
        source="blocks", twin="tree-clf")
    add("tree-reg-memmap", lambda: DPDecisionTreeRegressor(max_depth=4, **REG), "reg",
        source="memmap", twin="tree-reg")
    add("tree-reg-parquet", lambda: DPDecisionTreeRegressor(max_depth=4, **REG), "reg",
        source="parquet", twin="tree-reg")
    add("tree-clf-dask", lambda: DPDecisionTreeClassifier(max_depth=4, **CLF), "bin",
        source="dask", twin="tree-clf")
    # Forests
    # (forest regressors at epsilon 4: at 1 they would fall back to the noisy mean on
    # these 800 rows, dptrees._tree_fallback)
    add("partition-forest-reg", lambda: DPPartitionForestRegressor(
        n_estimators=4, max_depth=3, epsilon=4.0, **REG), "reg")
    add("partition-forest-clf", lambda: DPPartitionForestClassifier(
        n_estimators=4, max_depth=3, **CLF), "bin")
    add("extra-trees-reg", lambda: DPExtraTreesRegressor(
        n_estimators=4, max_depth=3, epsilon=4.0, **REG), "reg")
    add("extra-trees-clf-partition", lambda: DPExtraTreesClassifier(
        n_estimators=4, max_depth=3, partition=True, **CLF3), "cls")
    add("extra-trees-clf-weights", lambda: DPExtraTreesClassifier(
        n_estimators=3, max_depth=3, **CLF), "bin", weights=True)
    add("extra-trees-reg-2-threads", lambda: DPExtraTreesRegressor(
        n_estimators=4, max_depth=3, n_jobs=2, epsilon=4.0, **REG), "reg",
        twin="extra-trees-reg")
    add("partition-forest-clf-blocks", lambda: DPPartitionForestClassifier(
        n_estimators=4, max_depth=3, **CLF), "bin", source="blocks",
        twin="partition-forest-clf")
    add("extra-trees-reg-dask", lambda: DPExtraTreesRegressor(
        n_estimators=4, max_depth=3, epsilon=4.0, **REG), "reg", source="dask",
        twin="extra-trees-reg")
    # The small-budget fallback (the noisy mean; the noisy class frequencies)
    add("tree-reg-fallback", lambda: DPDecisionTreeRegressor(epsilon=0.5, **REG), "reg")
    add("partition-forest-reg-fallback", lambda: DPPartitionForestRegressor(
        epsilon=1.0, **REG), "reg")
    add("gb-reg-fallback", lambda: DPGradientBoostingRegressor(epsilon=0.2, **REG), "reg")
    add("ebm-clf3-fallback", lambda: DPExplainableBoostingClassifier(
        epsilon=0.08, **CLF3), "cls")
    # Gradient boosting
    gb = dict(n_estimators=6, max_depth=3)
    add("gb-clf", lambda: DPGradientBoostingClassifier(**gb, **CLF), "bin")
    add("gb-reg", lambda: DPGradientBoostingRegressor(**gb, **REG), "reg")
    for split in ("random", "guided", "hybrid", "private"):
        add(f"gb-clf-{split}", lambda split=split: DPGradientBoostingClassifier(
            split=split, **gb, **CLF), "bin")
    add("gb-clf-select-2", lambda: DPGradientBoostingClassifier(
        select_depth=2, epsilon=4.0, **gb, **CLF), "bin")
    add("gb-reg-laplace", lambda: DPGradientBoostingRegressor(noise="laplace", **gb, **REG),
        "reg")
    add("gb-reg-laplace-private", lambda: DPGradientBoostingRegressor(
        noise="laplace", split="private", **gb, **REG), "reg")
    add("gb-reg-pld", lambda: DPGradientBoostingRegressor(accounting="pld", **gb, **REG),
        "reg")
    add("gb-clf-subsample", lambda: DPGradientBoostingClassifier(
        subsample=0.3, n_estimators=10, max_depth=3, **CLF), "bin")
    add("gb-clf-multiclass", lambda: DPGradientBoostingClassifier(**gb, **CLF3), "cls")
    add("gb-clf-weights", lambda: DPGradientBoostingClassifier(**gb, **CLF), "bin",
        weights=True)
    add("gb-clf-frame", lambda: DPGradientBoostingClassifier(
        **gb, bounds=SCHEMA, classes=[0, 1], random_state=15), "frame", data="frame")
    add("gb-clf-frame-order", lambda: DPGradientBoostingClassifier(
        **gb, bounds=SCHEMA, classes=[0, 1], category_order="private", random_state=15),
        "frame", data="frame")
    add("gb-clf-frame-order-dask", lambda: DPGradientBoostingClassifier(
        **gb, bounds=SCHEMA, classes=[0, 1], category_order="private", random_state=15),
        "frame", data="frame", source="dask-frame", twin="gb-clf-frame-order")
    add("gb-clf-wide-guided", lambda: DPGradientBoostingClassifier(
        split="guided", **gb, **CLF), "wide", data="wide")
    add("gb-clf-2-threads", lambda: DPGradientBoostingClassifier(n_jobs=2, **gb, **CLF),
        "bin", twin="gb-clf")
    add("gb-clf-blocks", lambda: DPGradientBoostingClassifier(**gb, **CLF), "bin",
        source="blocks", twin="gb-clf")
    add("gb-reg-memmap", lambda: DPGradientBoostingRegressor(**gb, **REG), "reg",
        source="memmap", twin="gb-reg")
    add("gb-clf-parquet", lambda: DPGradientBoostingClassifier(**gb, **CLF), "bin",
        source="parquet", twin="gb-clf")
    add("gb-clf-dask", lambda: DPGradientBoostingClassifier(**gb, **CLF), "bin",
        source="dask", twin="gb-clf")
    add("gb-reg-dask-frame", lambda: DPGradientBoostingRegressor(**gb, **REG), "reg",
        source="dask-frame", twin="gb-reg")
    # Private bin edges: gradient boosting's "auto" above its EDGES_EPS_ROWS (epsilon
    # 16 on 800 rows) and "private" elsewhere, from every source the same model
    add("gb-clf-edges-auto", lambda: DPGradientBoostingClassifier(
        epsilon=16.0, **gb, **CLF), "bin")
    add("gb-clf-edges-auto-dask", lambda: DPGradientBoostingClassifier(
        epsilon=16.0, **gb, **CLF), "bin", source="dask", twin="gb-clf-edges-auto")
    add("gb-clf-edges-auto-blocks", lambda: DPGradientBoostingClassifier(
        epsilon=16.0, **gb, **CLF), "bin", source="blocks", twin="gb-clf-edges-auto")
    # ... the explainable boosting machine's "auto" inside its EDGES_EPS_ROWS (epsilon 4
    # on 800 rows)
    add("ebm-clf-edges-auto", lambda: DPExplainableBoostingClassifier(
        epsilon=4.0, n_cycles=3, **CLF), "bin")
    add("ebm-clf-edges-auto-dask", lambda: DPExplainableBoostingClassifier(
        epsilon=4.0, n_cycles=3, **CLF), "bin", source="dask", twin="ebm-clf-edges-auto")
    add("ebm-reg-edges", lambda: DPExplainableBoostingRegressor(
        n_cycles=3, bin_edges="private", **REG), "reg")
    add("ebm-reg-edges-parquet", lambda: DPExplainableBoostingRegressor(
        n_cycles=3, bin_edges="private", **REG), "reg", source="parquet",
        twin="ebm-reg-edges")
    add("tree-clf-edges-memmap", lambda: DPDecisionTreeClassifier(
        max_depth=4, bin_edges="private", **CLF), "bin", source="memmap")
    # Explainable boosting (cyclic, individual accounting)
    add("ebm-clf", lambda: DPExplainableBoostingClassifier(n_cycles=3, **CLF), "bin")
    add("ebm-reg", lambda: DPExplainableBoostingRegressor(n_cycles=3, **REG), "reg")
    add("ebm-clf-multiclass", lambda: DPExplainableBoostingClassifier(n_cycles=2, **CLF3),
        "cls")
    add("ebm-clf-weights", lambda: DPExplainableBoostingClassifier(n_cycles=3, **CLF),
        "bin", weights=True)
    add("ebm-clf-frame", lambda: DPExplainableBoostingClassifier(
        n_cycles=3, bounds=SCHEMA, classes=[0, 1], random_state=16), "frame",
        data="frame")
    add("ebm-clf-2-threads", lambda: DPExplainableBoostingClassifier(
        n_cycles=3, n_jobs=2, **CLF), "bin", twin="ebm-clf")
    add("ebm-reg-blocks", lambda: DPExplainableBoostingRegressor(n_cycles=3, **REG), "reg",
        source="blocks", twin="ebm-reg")
    add("ebm-clf-dask", lambda: DPExplainableBoostingClassifier(n_cycles=3, **CLF), "bin",
        source="dask", twin="ebm-clf")
    # AdaBoost
    add("ada", lambda: DPAdaBoostClassifier(n_estimators=5, **CLF), "bin")
    add("ada-every-depth-3", lambda: DPAdaBoostClassifier(
        n_estimators=4, max_depth=3, schedule="every", **CLF3), "cls")
    add("ada-weights", lambda: DPAdaBoostClassifier(n_estimators=5, **CLF), "bin",
        weights=True)
    add("ada-memmap", lambda: DPAdaBoostClassifier(n_estimators=5, **CLF), "bin",
        source="memmap", twin="ada")
    # Federated boosting
    fed = dict(n_estimators=3, max_depth=2, noise_multiplier=1.5)
    add("fed-clf-clients", lambda: DPFederatedGradientBoostingClassifier(
        n_clients=50, **fed, **CLF), "bin", clients=True)
    add("fed-clf-records", lambda: DPFederatedGradientBoostingClassifier(
        n_clients=N, **fed, **CLF3), "cls")
    add("fed-reg-adaptive", lambda: DPFederatedGradientBoostingRegressor(
        n_clients=N, clip_norm="adaptive", **fed, **REG), "reg")
    add("fed-clf-pld", lambda: DPFederatedGradientBoostingClassifier(
        n_clients=50, accounting="pld", **fed, **CLF), "bin", clients=True)
    add("fed-clf-weights", lambda: DPFederatedGradientBoostingClassifier(
        n_clients=50, **fed, **CLF), "bin", clients=True, weights=True)
    add("fed-clf-clients-memmap", lambda: DPFederatedGradientBoostingClassifier(
        n_clients=50, **fed, **CLF), "bin", clients=True, source="memmap",
        twin="fed-clf-clients")
    # The private search
    add("search-pure-trees", lambda: DPRandomSearch(
        DPDecisionTreeClassifier(bounds=BOUNDS, classes=[0, 1]),
        {"max_depth": [2, 3, 4], "selection": ["exponential", "permute_and_flip"]},
        epsilon=2.0, mean_trials=3, random_state=17), "bin")
    add("search-renyi-gb", lambda: DPRandomSearch(
        DPGradientBoostingClassifier(n_estimators=4, max_depth=2, bounds=BOUNDS,
                                     classes=[0, 1]),
        {"learning_rate": [0.2, 0.5], "split": ["random", "guided"]},
        epsilon=2.0, delta=1e-6, mean_trials=2, random_state=18), "bin")
    return c


CONFIGS = _configs()
BY_NAME = {c["name"]: c for c in CONFIGS}


# ======================================================================================
# Fitting from each source
# ======================================================================================


@pytest.fixture(scope="module")
def data():
    return arrays()


def _source(kind, X, y, tmp_path, request):
    if kind == "array":
        return X, y
    if kind == "blocks":
        return Blocks(X, block_rows=150), y
    if kind == "memmap":
        mm = np.memmap(tmp_path / "X.f64", dtype=np.float64, mode="w+", shape=X.shape)
        mm[:] = X
        mm.flush()
        return mm, y
    if kind == "parquet":
        pa = pytest.importorskip("pyarrow")
        pq = pytest.importorskip("pyarrow.parquet")
        names = [f"x{j}" for j in range(X.shape[1])]
        table = pa.table({**{n: X[:, j] for j, n in enumerate(names)}, "y": y})
        pq.write_table(table, tmp_path / "rows.parquet", row_group_size=170)
        return Parquet(tmp_path / "rows.parquet", names), Parquet(tmp_path / "rows.parquet",
                                                                  "y")
    request.getfixturevalue("dask_client")
    da = pytest.importorskip("dask.array")
    if kind == "dask":
        return da.from_array(X, chunks=(190, X.shape[1])), da.from_array(y, chunks=500)
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    return dd.from_pandas(pd.DataFrame(X), npartitions=3), y


def fit(config, data, tmp_path, request):
    """The configuration's fitted model and the rows to predict on."""
    est = config["make"]()
    est.set_params(accountant=BudgetAccountant())
    fit_params = {}
    if config["data"] == "frame":
        X, y = frame()
        test = X.iloc[:60]
    elif config["data"] == "wide":
        X, y = wide()
        test = X[:60]
    else:
        X, y = data["X"], data[config["target"]]
        test = TEST_ROWS
        if config["weights"]:
            fit_params["sample_weight"] = data["weights"]
        if config["clients"]:
            fit_params["clients"] = data["clients"]
    X, y = _source(config["source"], X, y, tmp_path, request)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # weak-delta warnings of the small federations
        est.fit(X, y, **fit_params)
    return est, test


# ======================================================================================
# Digests
# ======================================================================================

# Floats are compared at float32 precision and the ledger's at 9 digits: numpy's and
# dp-accounting's transcendental functions (exp in a probability, a Renyi-to-(epsilon,
# delta) conversion) differ by an ulp between the versions the suite supports, which a
# refactoring never causes and a changed model always exceeds.


def _float32(a):
    return np.ascontiguousarray(a, dtype=np.float32 if a.dtype.kind == "f" else a.dtype)


def _rounded(obj):
    if isinstance(obj, float):
        return float(f"{obj:.9g}")
    if isinstance(obj, dict):
        return {k: _rounded(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_rounded(v) for v in obj]
    return obj


_SKIPPED = {"privacy_ledger_", "epsilon_spent_", "delta_spent_", "privacy_leaks_",
            "history_", "feature_names_in_"}


def _leaves(obj, out, seen):
    """Append a canonical string of every number reachable from ``obj``."""
    if isinstance(obj, (str, bytes, type(None), bool)):
        return
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "biuf":
            a = _float32(obj)
            out.append(f"{a.dtype.str}{a.shape}" + hashlib.sha256(a.tobytes()).hexdigest())
        elif obj.dtype.kind == "O":
            for item in obj.ravel():
                _leaves(item, out, seen)
        return
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float):
        out.append(float(np.float32(obj)).hex())
        return
    if isinstance(obj, int):
        out.append(str(obj))
        return
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, dict):
        for value in obj.values():
            _leaves(value, out, seen)
    elif isinstance(obj, (list, tuple)):
        for value in obj:
            _leaves(value, out, seen)
    elif type(obj).__name__ in ("BudgetAccountant", "RDPAccountant", "PLDAccountant"):
        return  # the ledger digest covers what was spent
    elif hasattr(obj, "__dict__"):
        for value in vars(obj).values():
            _leaves(value, out, seen)


def fitted_numbers(est):
    out = []
    for name, value in vars(est).items():
        if name.endswith("_") and not name.startswith("_") and name not in _SKIPPED:
            _leaves(value, out, set())
    return sorted(out)


def _digest(parts):
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() if isinstance(part, str) else part)
        h.update(b"\0")
    return h.hexdigest()[:24]


def digests(est, test):
    outputs = [np.asarray(est.predict(test))]
    if hasattr(est, "predict_proba"):
        outputs.append(np.asarray(est.predict_proba(test), dtype=np.float64))
    predictions = _digest(_float32(o).tobytes() for o in outputs)
    ledger = json.dumps(_rounded(est.privacy_report()["ledger"]), sort_keys=True,
                        default=str)
    spent = f"{float(est.epsilon_spent_):.9g} {float(est.delta_spent_):.9g}"
    return {"predictions": predictions, "arrays": _digest(fitted_numbers(est)),
            "ledger": _digest([ledger, spent])}


# ======================================================================================
# The test
# ======================================================================================


def _stored():
    return json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}


@pytest.mark.parametrize("config", CONFIGS, ids=[c["name"] for c in CONFIGS])
def test_golden_model(config, data, tmp_path, request):
    est, test = fit(config, data, tmp_path, request)
    got = digests(est, test)
    if UPDATE:
        stored = _stored()
        stored[config["name"]] = got
        GOLDEN.write_text(json.dumps(dict(sorted(stored.items())), indent=1) + "\n")
        return
    stored = _stored()
    assert config["name"] in stored, (
        f"{config['name']} has no stored digests: run DPTREES_UPDATE_GOLDEN=1")
    assert got == stored[config["name"]]
    if config["twin"] is not None:  # another source or thread count: the same model
        assert got == stored[config["twin"]]


def test_every_stored_digest_has_its_configuration():
    assert sorted(_stored()) == sorted(BY_NAME)
