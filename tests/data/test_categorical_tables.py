"""Tables with string, categorical, boolean columns and missing values, without hand encoding.

* A frame with a public domain in ``bounds`` (a dict by column: bounds or categories)
  gives the same model, bit for bit, as the same table encoded by hand with
  :class:`~dptrees.preprocessing.PublicSchemaEncoder` (missing values listed last), for
  every estimator family; predictions re-encode the frame the same way.
* A missing value in a categorical column is a category of its own, present whatever the
  data: it costs no privacy, and a missing value at predict time follows its route.
* Categories not given are read from the data with a ``PrivacyLeakWarning`` recorded in
  ``privacy_leaks_``; values outside the public categories, undeclared missing numbers
  and memmaps or Blocks with categories are clear errors, raised before anything is
  spent. A Dask dataframe or a Parquet file with the same schema dict gives the frame's
  model, bit for bit.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone, is_regressor

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
from dptrees.exceptions import PrivacyLeakWarning
from dptrees.federated import (
    DPFederatedGradientBoostingClassifier,
    DPFederatedGradientBoostingRegressor,
)
from dptrees.preprocessing import PublicSchemaEncoder

pd = pytest.importorskip("pandas")

COLOURS = ["red", "green", "blue"]
SIZES = ["S", "M", "L", "XL"]
DOMAIN = {"age": (0.0, 100.0), "colour": COLOURS, "size": SIZES, "member": (0.0, 1.0)}


def table(n=600, seed=0, missing=True):
    """A frame of a numeric, a string, a pandas categorical and a boolean column, with
    missing values in the two categorical ones; a target that depends on all four."""
    rng = np.random.default_rng(seed)
    colour = rng.choice(COLOURS, n).astype(object)
    size = rng.choice(SIZES, n).astype(object)
    if missing:
        colour[rng.random(n) < 0.1] = None
        size[rng.random(n) < 0.1] = np.nan
    X = pd.DataFrame({
        "age": rng.uniform(0, 100, n),
        "colour": colour,
        "size": pd.Categorical(size, categories=SIZES),
        "member": rng.random(n) < 0.5,
    })
    score = (X["age"] / 100 + (X["colour"] == "red") + (X["size"] == "XL")
             + X["member"] + X["colour"].isna())
    return X, score.to_numpy()


def by_hand(X):
    """The same table through PublicSchemaEncoder, missing values as a last category."""
    encoder = PublicSchemaEncoder(schema=[DOMAIN["age"], COLOURS + ["?"], SIZES + ["?"], (0.0,
                                                                                          1.0)])
    filled = X.astype({"size": object}).fillna({"colour": "?", "size": "?"})
    filled["member"] = filled["member"].astype(float)
    return encoder.fit_transform(filled), encoder.bounds_


def classifiers():
    common = dict(classes=[0, 1], random_state=0)
    yield DPDecisionTreeClassifier(**common)
    yield DPExtraTreesClassifier(n_estimators=3, **common)
    yield DPGradientBoostingClassifier(n_estimators=5, **common)
    yield DPAdaBoostClassifier(**common)
    yield DPExplainableBoostingClassifier(**common)


def regressors():
    common = dict(y_bounds=(0.0, 4.0), random_state=0)
    yield DPDecisionTreeRegressor(**common)
    yield DPPartitionForestRegressor(n_estimators=3, **common)
    yield DPGradientBoostingRegressor(n_estimators=5, **common)
    yield DPExplainableBoostingRegressor(**common)


ESTIMATORS = [(e, "classifier") for e in classifiers()] + [(e, "regressor") for e in regressors()]
IDS = [type(e).__name__ for e, _ in ESTIMATORS]


def fit(est, X, y, **fit_kw):
    est.set_params(accountant=BudgetAccountant(1e6, 1.0))
    return est.fit(X, y, **fit_kw)


def target(y, kind):
    return (y > 1.5).astype(int) if kind == "classifier" else y


DEFAULT_CLASSES = [DPDecisionTreeClassifier, DPDecisionTreeRegressor, DPExtraTreesClassifier,
                   DPExtraTreesRegressor, DPPartitionForestClassifier,
                   DPPartitionForestRegressor, DPGradientBoostingClassifier,
                   DPGradientBoostingRegressor, DPExplainableBoostingClassifier,
                   DPExplainableBoostingRegressor, DPAdaBoostClassifier,
                   DPFederatedGradientBoostingClassifier,
                   DPFederatedGradientBoostingRegressor]
# The federations calibrate their noise by bisection on the accountants, seconds at eps
# 0.002: their smallest budgets are tested in tests/privacy/test_small_budgets.py.
DEFAULT_CASES = [(cls, epsilon) for cls in DEFAULT_CLASSES for epsilon in (0.002, 0.05, 20.0)
                 if epsilon > 0.01 or "Federated" not in cls.__name__]


@pytest.mark.parametrize("cls, epsilon", DEFAULT_CASES,
                         ids=[f"{cls.__name__}-{eps:g}" for cls, eps in DEFAULT_CASES])
def test_defaults_fit_a_mixed_frame_within_budget_at_any_epsilon(cls, epsilon):
    # Every automatic choice on a table of numeric and categorical columns with missing
    # values: rounds, selection, fallbacks, and the private edges and category order,
    # reserved, then released or given back (at eps 0.05 giving both back once failed).
    X, score = table()
    kind = "regressor" if is_regressor(cls()) else "classifier"
    params = {"y_bounds": (0.0, 4.0)} if kind == "regressor" else {"classes": [0, 1]}
    est = cls(epsilon=epsilon, bounds=DOMAIN, random_state=0, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the federations' clients read from the data
        fit(est, X, target(score, kind))
    assert est.epsilon_spent_ <= epsilon * (1 + 1e-12)
    prediction = est.predict(X)
    assert prediction.shape == (len(X),) and np.isfinite(prediction.astype(float)).all()


@pytest.mark.parametrize("est, kind", ESTIMATORS, ids=IDS)
def test_a_frame_with_a_public_domain_gives_the_hand_encoded_model(est, kind):
    X, score = table()
    y = target(score, kind)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        fit(est.set_params(bounds=DOMAIN), X, y)
    codes, bounds = by_hand(X)
    twin = fit(est.__class__(**{**est.get_params(), "bounds": bounds}), codes, y)
    np.testing.assert_array_equal(est.predict(X), twin.predict(codes))
    assert est.privacy_leaks_ == []
    assert est.categories_ == {"colour": COLOURS, "size": SIZES}
    assert list(est.feature_names_in_) == list(DOMAIN)
    np.testing.assert_array_equal(est.bounds_[0], bounds[0])
    np.testing.assert_array_equal(est.bounds_[1], bounds[1])
    public = est.privacy_report()["public_inputs"]
    assert public["categories"] == est.categories_
    # numeric columns' bounds by name; the categorical ones only as their categories
    numeric = [name for name in DOMAIN if name not in est.categories_]
    assert list(public["bounds"]) == numeric
    for name in numeric:
        j = list(DOMAIN).index(name)
        assert public["bounds"][name] == [bounds[0][j], bounds[1][j]]


def test_federated_boosting_takes_a_frame_with_categories():
    X, score = table()
    y = (score > 1.5).astype(int)
    est = DPFederatedGradientBoostingClassifier(classes=[0, 1], bounds=DOMAIN, n_clients=60,
                                                n_estimators=3, random_state=0)
    clients = np.arange(len(y)) % 60
    fit(est, X, y, clients=clients)
    codes, bounds = by_hand(X)
    twin = fit(est.__class__(**{**est.get_params(), "bounds": bounds}), codes, y,
               clients=clients)
    np.testing.assert_array_equal(est.predict_proba(X), twin.predict_proba(codes))


def test_a_missing_category_follows_its_route_at_predict_time():
    X, score = table(2000)
    est = fit(DPDecisionTreeRegressor(bounds=DOMAIN, y_bounds=(0, 4), epsilon=50.0,
                                      max_depth=4, random_state=0), X, score)
    probe = X.iloc[:50].copy()
    as_none, as_nan, as_na = probe.copy(), probe.copy(), probe.copy()
    as_none["colour"] = None
    as_nan["colour"] = np.nan
    as_na["colour"] = pd.array([pd.NA] * 50, dtype="string")
    expected = est.predict(as_none)
    np.testing.assert_array_equal(est.predict(as_nan), expected)
    np.testing.assert_array_equal(est.predict(as_na), expected)
    # the missing code is the one after the public categories
    codes = est._table_encoding.transform(as_none)
    assert (codes[:, 1] == len(COLOURS)).all()


def test_the_encoding_depends_on_the_public_domain_only():
    """With or without missing values in the data, the same bins and the same codes."""
    with_missing, _ = table(seed=1)
    without, _ = table(seed=1, missing=False)
    a = fit(DPDecisionTreeClassifier(bounds=DOMAIN, classes=[0, 1]), with_missing,
            np.arange(600) % 2)
    b = fit(DPDecisionTreeClassifier(bounds=DOMAIN, classes=[0, 1]), without,
            np.arange(600) % 2)
    np.testing.assert_array_equal(a.bounds_[0], b.bounds_[0])
    np.testing.assert_array_equal(a.bounds_[1], b.bounds_[1])
    np.testing.assert_array_equal(a.bounds_[1], [100, 3.5, 4.5, 1])


def test_categories_read_from_the_data_are_a_recorded_leak():
    X, score = table()
    y = (score > 1.5).astype(int)
    domain = {"age": (0, 100), "member": (0, 1)}  # no categories
    with pytest.warns(PrivacyLeakWarning, match="categories of column 'colour', column 'size'"):
        est = fit(DPGradientBoostingClassifier(bounds=domain, classes=[0, 1], n_estimators=3,
                                               random_state=0), X, y)
    assert est.privacy_leaks_ == [
        "bounds: categories of column 'colour', column 'size' read from the training data"]
    # the string column's distinct values, sorted; the categorical dtype's own categories
    assert est.categories_ == {"colour": sorted(COLOURS), "size": SIZES}
    assert est.privacy_report()["privacy_leaks"] == est.privacy_leaks_


def test_no_bounds_at_all_reads_numbers_and_categories_with_warnings():
    X, score = table()
    with pytest.warns(PrivacyLeakWarning) as record:
        est = fit(DPDecisionTreeRegressor(y_bounds=(0, 4)), X, score)
    messages = " ".join(str(w.message) for w in record)
    assert "categories of column 'colour', column 'size'" in messages
    assert len(est.privacy_leaks_) == 1
    assert "bounds of ['feature 0'" in est.privacy_leaks_[0]
    assert est.bounds_[0][3] == 0 and est.bounds_[1][3] == 1  # boolean: public (0, 1)
    assert est.bounds_[0][0] == X["age"].min()


def test_an_object_array_takes_categories_by_column_index():
    X, score = table(missing=False)
    objects = X.astype(object).to_numpy()
    domain = {0: (0, 100), 1: COLOURS, 2: SIZES, 3: (0, 1)}
    est = fit(DPDecisionTreeRegressor(bounds=domain, y_bounds=(0, 4), random_state=0),
              objects, score)
    twin = fit(DPDecisionTreeRegressor(bounds=DOMAIN, y_bounds=(0, 4), random_state=0),
               X, score)
    np.testing.assert_array_equal(est.predict(objects), twin.predict(X))
    assert est.categories_ == {1: COLOURS, 2: SIZES}


@pytest.mark.parametrize("change, bounds, match", [
    (lambda X: X.assign(colour="purple"), DOMAIN, "outside its public categories"),
    (lambda X: X.assign(age=np.nan), DOMAIN, "contains NaN"),
    (lambda X: X, (0, 100), "give `bounds` as a dict by column"),
    (lambda X: X, {**DOMAIN, "colour": ["red", "red"]}, "without repeats"),
    (lambda X: X, {**DOMAIN, "nope": COLOURS}, "unknown column 'nope'"),
])
def test_bad_tables_raise_before_anything_is_spent(change, bounds, match):
    X, score = table()
    acc = BudgetAccountant(10.0)
    est = DPDecisionTreeRegressor(bounds=bounds, y_bounds=(0, 4), accountant=acc)
    with pytest.raises((ValueError, TypeError), match=match):
        est.fit(change(X), score)
    assert acc.spent == (0.0, 0.0)


def test_unknown_categories_and_columns_at_predict_time_are_errors():
    X, score = table()
    est = fit(DPDecisionTreeRegressor(bounds=DOMAIN, y_bounds=(0, 4), random_state=0),
              X, score)
    with pytest.raises(ValueError, match="outside its public categories") as error:
        est.predict(X.assign(colour="purple"))
    assert "purple" not in str(error.value)  # private values stay out of logs
    with pytest.raises(ValueError, match="feature names should match"):
        est.predict(X[["colour", "age", "size", "member"]])


def test_tables_read_in_blocks_must_be_numeric(tmp_path):
    from dptrees import Blocks

    X = np.memmap(tmp_path / "x.dat", dtype=np.float64, mode="w+", shape=(100, 2))
    est = DPDecisionTreeRegressor(bounds={0: ["a", "b"], 1: (0, 1)}, y_bounds=(0, 1),
                                  accountant=BudgetAccountant(10.0))
    with pytest.raises(ValueError, match="categorical columns and Numeric domains"):
        est.fit(Blocks(X), np.zeros(100))


def test_a_dict_may_leave_one_numeric_feature_to_the_data_with_a_warning():
    rng = np.random.default_rng(0)
    X = rng.random((200, 2)) * [1, 10]
    with pytest.warns(PrivacyLeakWarning, match=r"bounds of \['feature 1'\]"):
        est = fit(DPDecisionTreeRegressor(bounds={0: (0, 1), 1: None}, y_bounds=(0, 1)),
                  X, X[:, 0])
    assert est.bounds_[1][1] == X[:, 1].max()
    assert est.privacy_leaks_ == [
        "bounds: bounds of ['feature 1'] read from the training data"]


def test_a_polars_frame_gives_the_pandas_frames_model():
    pl = pytest.importorskip("polars")
    X, score = table(missing=False)
    frame = pl.from_pandas(X.astype({"size": str}))
    frame = frame.with_columns(pl.when(pl.col("age") < 10).then(None)
                               .otherwise(pl.col("colour")).alias("colour"))
    as_pandas = frame.to_pandas()
    est = fit(DPDecisionTreeRegressor(bounds=DOMAIN, y_bounds=(0, 4), random_state=0),
              frame, score)
    twin = fit(DPDecisionTreeRegressor(bounds=DOMAIN, y_bounds=(0, 4), random_state=0),
               as_pandas, score)
    np.testing.assert_array_equal(est.predict(frame), twin.predict(as_pandas))
    assert list(est.feature_names_in_) == list(DOMAIN)
    assert est.categories_ == {"colour": COLOURS, "size": SIZES}
    with pytest.raises(ValueError, match="feature names should match"):
        est.predict(frame.select(["colour", "age", "size", "member"]))


def _in_blocks(X, kind, tmp_path):
    """The frame ``X`` read in blocks: a Dask dataframe of 3 partitions, a Parquet file
    of row groups of 150 rows, or ``Blocks`` of 150 rows of the frame."""
    if kind == "blocks":
        from dptrees import Blocks

        return Blocks(X, block_rows=150)
    if kind == "dask":
        dd = pytest.importorskip("dask.dataframe")
        return dd.from_pandas(X, npartitions=3)
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    from dptrees import Parquet

    path = tmp_path / "table.parquet"
    pq.write_table(pa.Table.from_pandas(X, preserve_index=False), path, row_group_size=150)
    return Parquet(path, list(X.columns))


@pytest.mark.parametrize("kind", ["dask", "parquet", "blocks"])
@pytest.mark.parametrize("est", [DPDecisionTreeClassifier(classes=[0, 1], random_state=0),
                                 DPGradientBoostingClassifier(n_estimators=5, classes=[0, 1],
                                                              random_state=0)],
                         ids=["tree", "boosting"])
def test_a_table_read_in_blocks_gives_the_frames_model(est, kind, tmp_path, request):
    if kind == "dask":
        request.getfixturevalue("dask_client")
    X, y = table()
    labels = (y > 1.5).astype(int)
    in_memory = fit(clone(est).set_params(bounds=DOMAIN), X, labels)
    blocks = fit(clone(est).set_params(bounds=DOMAIN), _in_blocks(X, kind, tmp_path), labels)
    assert list(blocks.feature_names_in_) == list(X.columns)
    np.testing.assert_array_equal(blocks.predict_proba(X), in_memory.predict_proba(X))
    assert blocks.privacy_ledger_ == in_memory.privacy_ledger_
    assert blocks.privacy_leaks_ == in_memory.privacy_leaks_ == []
    with pytest.raises(ValueError, match="feature names should match"):
        blocks.predict(X[["colour", "age", "size", "member"]])


def test_categories_of_a_table_in_blocks_must_be_given(tmp_path):
    X, y = table()
    pytest.importorskip("pyarrow")
    est = DPDecisionTreeClassifier(classes=[0, 1], bounds={"age": (0.0, 100.0),
                                                           "colour": COLOURS,
                                                           "member": (0.0, 1.0)})
    with pytest.raises((TypeError, ValueError), match="size"):
        fit(est, _in_blocks(X, "parquet", tmp_path), (y > 1.5).astype(int))


def test_a_numeric_missing_bin_in_a_parquet_file_gives_the_frames_model(tmp_path):
    from dptrees import Numeric

    rng = np.random.default_rng(0)
    age = rng.uniform(0, 100, 800)
    age[rng.random(800) < 0.1] = np.nan
    X = pd.DataFrame({"age": age, "colour": rng.choice(COLOURS, 800)})
    y = ((np.nan_to_num(age, nan=50.0) > 50) | (X["colour"] == "red")).astype(int)
    domain = {"age": Numeric(0.0, 100.0, missing=True), "colour": COLOURS}
    est = DPDecisionTreeClassifier(bounds=domain, classes=[0, 1], random_state=0)
    in_memory = fit(clone(est), X, y)
    blocks = fit(clone(est), _in_blocks(X, "parquet", tmp_path), y)
    np.testing.assert_array_equal(blocks.predict_proba(X), in_memory.predict_proba(X))
