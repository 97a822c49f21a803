"""Tests of :class:`dptrees.preprocessing.PublicSchemaEncoder`.

What is checked
---------------
* Ordinal and one-hot encodings of categorical columns, numeric columns passed through,
  the public ``bounds_`` and feature names of each.
* ``fit`` learns nothing from the data: the encoding (bounds, the mapping itself) is a
  function of the schema alone, whatever ``X`` it is fitted on; ``X`` is checked as
  ``transform`` checks it, and a frame names the output columns (``column=category``).
* scikit-learn's estimator checks, the width-dependent ones named as expected failures.
* Input forms: lists of rows, object arrays, pandas DataFrames (if pandas is installed);
  white space stripped (or not, with ``strip=False``).
* Errors: unknown categories (naming the column, never the private values), non-numeric values in
  a numeric column, wrong column counts, malformed schemas and encodings.
* Use in a ``Pipeline`` with a DP classifier that takes its public bounds from the
  encoder: no ``PrivacyLeakWarning``, and each ordinal category gets a bin of its own.

Bugs these tests found are fixed; their tests stay as regression tests.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.pipeline import Pipeline, make_pipeline

from dptrees import BudgetAccountant, DPDecisionTreeClassifier, PrivacyLeakWarning
from dptrees.preprocessing import PublicSchemaEncoder

import support

SCHEMA = [["red", "green", "blue"], (0.0, 100.0), ["?", "yes", "no"]]
ROWS = [["red", 5, "yes"], ["blue", 7.5, "?"], ["green", 200, "no"], ["red", -3, "no"]]
ORDINAL = np.array([[0, 5, 1], [2, 7.5, 0], [1, 200, 2], [0, -3, 2]], dtype=float)
ONEHOT = np.array([
    [1, 0, 0, 5, 0, 1, 0],
    [0, 0, 1, 7.5, 1, 0, 0],
    [0, 1, 0, 200, 0, 0, 1],
    [1, 0, 0, -3, 0, 0, 1],
], dtype=float)


def encoder(**params):
    return PublicSchemaEncoder(schema=SCHEMA, **params)


# ======================================================================================
# Encodings
# ======================================================================================


def test_ordinal_encoding_bounds_and_names():
    enc = encoder().fit(ROWS)
    out = enc.transform(ROWS)
    assert out.dtype == np.float64 and out.flags.c_contiguous
    np.testing.assert_array_equal(out, ORDINAL)  # numbers outside bounds are kept as is
    np.testing.assert_array_equal(enc.bounds_[0], [-0.5, 0.0, -0.5])
    np.testing.assert_array_equal(enc.bounds_[1], [2.5, 100.0, 2.5])
    assert enc.get_feature_names_out().tolist() == ["x0", "x1", "x2"]
    assert enc.n_features_in_ == 3
    # every ordinal code is inside its public bounds
    cat = [0, 2]
    assert np.all((out[:, cat] > enc.bounds_[0][cat]) & (out[:, cat] < enc.bounds_[1][cat]))


def test_onehot_encoding_bounds_and_names():
    enc = encoder(encoding="onehot").fit()
    out = enc.transform(ROWS)
    np.testing.assert_array_equal(out, ONEHOT)
    np.testing.assert_array_equal(enc.bounds_[0], np.zeros(7))
    np.testing.assert_array_equal(enc.bounds_[1], [1, 1, 1, 100, 1, 1, 1])
    assert enc.get_feature_names_out().tolist() == [
        "x0=red", "x0=green", "x0=blue", "x1", "x2=?", "x2=yes", "x2=no"]
    # exactly one indicator per categorical column
    np.testing.assert_array_equal(out[:, :3].sum(axis=1), 1)
    np.testing.assert_array_equal(out[:, 4:].sum(axis=1), 1)


def test_numeric_strings_and_numpy_scalars_are_numbers():
    enc = PublicSchemaEncoder(schema=[(0, 10), [1, 2, 3]]).fit()
    rows = np.array([["2.5", np.int64(3)], [np.float32(4.0), 1], [7, np.int64(2)]],
                    dtype=object)
    np.testing.assert_array_equal(enc.transform(rows), [[2.5, 2], [4.0, 0], [7, 1]])


def test_missing_values_are_a_category_when_the_schema_lists_them():
    enc = PublicSchemaEncoder(schema=[["?", "a", "b"]], encoding="onehot").fit()
    np.testing.assert_array_equal(enc.transform([["?"], ["b"]]), [[1, 0, 0], [0, 0, 1]])


def test_a_listed_none_is_the_category_of_every_missing_value():
    pd = pytest.importorskip("pandas")
    enc = PublicSchemaEncoder(schema=[["a", None, "b"], (0, 1)]).fit()
    rows = pd.DataFrame({"c": ["b", None, np.nan, pd.NA, "a"], "x": [0.5] * 5})
    np.testing.assert_array_equal(enc.transform(rows)[:, 0], [2, 1, 1, 1, 0])
    with pytest.raises(ValueError, match="list a missing-value category"):
        PublicSchemaEncoder(schema=[["a", "b"]]).fit().transform([["a"], [None]])


@pytest.mark.parametrize("encoding", ["ordinal", "onehot"])
def test_fit_reads_no_data(encoding):
    rng = np.random.default_rng(0)
    colours, answers = np.array(SCHEMA[0]), np.array(SCHEMA[2])
    tables = [
        ROWS,
        [["blue", 99.0, "?"]],  # one row, other categories
        [[c, float(v), a] for c, v, a in zip(rng.choice(colours, 50), rng.normal(0, 1e6, 50),
                                            rng.choice(answers, 50))],
        None,
    ]
    fits = [encoder(encoding=encoding).fit(X) for X in tables]
    for other in fits[1:]:
        np.testing.assert_array_equal(other.bounds_[0], fits[0].bounds_[0])
        np.testing.assert_array_equal(other.bounds_[1], fits[0].bounds_[1])
        assert other.get_feature_names_out().tolist() == fits[0].get_feature_names_out().tolist()
        np.testing.assert_array_equal(other.transform(ROWS), fits[0].transform(ROWS))
    # and fitting without a table gives the same encoding
    np.testing.assert_array_equal(encoder(encoding=encoding).fit().transform(ROWS),
                                  fits[0].transform(ROWS))
    assert encoder(encoding=encoding).fit().get_feature_names_out().tolist() == \
        fits[0].get_feature_names_out().tolist()


def test_fit_transform_equals_fit_then_transform():
    np.testing.assert_array_equal(encoder().fit_transform(ROWS), ORDINAL)
    np.testing.assert_array_equal(encoder(encoding="onehot").fit_transform(ROWS), ONEHOT)


# ======================================================================================
# Input forms and white space
# ======================================================================================


def test_list_of_rows_object_array_and_tuples_agree():
    as_object = np.array(ROWS, dtype=object)
    as_tuples = [tuple(r) for r in ROWS]
    for X in (as_object, as_tuples):
        np.testing.assert_array_equal(encoder().fit().transform(X), ORDINAL)
        np.testing.assert_array_equal(encoder(encoding="onehot").fit().transform(X), ONEHOT)


def test_all_string_table_as_read_from_a_csv_file():
    rows = [[str(v) for v in r] for r in ROWS]
    np.testing.assert_array_equal(encoder().fit().transform(rows), ORDINAL)
    np.testing.assert_array_equal(encoder().fit().transform(np.array(rows)), ORDINAL)


def test_pandas_dataframe():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(ROWS, columns=["colour", "size", "answer"])
    np.testing.assert_array_equal(encoder().fit().transform(frame), ORDINAL)
    np.testing.assert_array_equal(encoder(encoding="onehot").fit().transform(frame), ONEHOT)
    frame["colour"] = frame["colour"].astype("category")
    np.testing.assert_array_equal(encoder().fit().transform(frame), ORDINAL)


def test_white_space_is_stripped():
    rows = [[" red", 5, "yes  "], ["\tblue\n", " 7.5 ", " ?"]]
    np.testing.assert_array_equal(encoder().fit().transform(rows), ORDINAL[:2])
    with pytest.raises(ValueError, match="column 0 has values outside its public categories"):
        encoder(strip=False).fit().transform(rows)
    np.testing.assert_array_equal(encoder(strip=False).fit().transform(ROWS), ORDINAL)


def test_empty_table_is_refused_as_scikit_learn_does():
    for method in ("fit", "transform"):
        with pytest.raises(ValueError, match=r"0 sample\(s\)"):
            getattr(encoder(encoding="onehot").fit(), method)(np.empty((0, 3), dtype=object))


# ======================================================================================
# Errors
# ======================================================================================


def test_unknown_categories_raise_naming_the_column_not_the_values():
    rows = [["red", 5, "yes"], ["purple", 5, "maybe"], ["pink", 1, "yes"]]
    with pytest.raises(ValueError, match=r"column 0 .*outside its public categories") as error:
        encoder().fit().transform(rows)
    assert "pink" not in str(error.value) and "purple" not in str(error.value)
    with pytest.raises(ValueError, match=r"column 2 .*outside") as error:
        encoder().fit().transform([["red", 5, "maybe"]])
    assert "maybe" not in str(error.value)
    with pytest.raises(ValueError, match="column 2"):  # None is not a listed category
        encoder(encoding="onehot").fit().transform([["red", 5, None]])
    with pytest.raises(ValueError, match="column 0"):  # matching is case-sensitive
        encoder().fit().transform([["Red", 5, "yes"]])


@pytest.mark.parametrize("value", ["abc", "5 kg", "", [1, 2]])
def test_non_numeric_value_in_numeric_column_is_a_clear_error(value):
    rows = [["red", 5, "yes"], ["red", value, "no"]]
    with pytest.raises(ValueError, match="column 1 is numeric in the schema"):
        encoder().fit().transform(np.array(rows, dtype=object))


@pytest.mark.parametrize("value", [None, "nan"])
def test_missing_value_in_numeric_column_is_a_clear_error(value):
    try:
        out = encoder().fit().transform([["red", 5, "yes"], ["red", value, "no"]])
    except ValueError as exc:
        assert "column 1" in str(exc)
        return
    raise AssertionError(f"no error; encoded as {out[1, 1]!r}")


@pytest.mark.parametrize("X", [
    [["red", 5]],
    [["red", 5, "yes", "extra"]],
    np.array([["red", 5]], dtype=object),
])
def test_wrong_column_count_is_an_error(X):
    with pytest.raises(ValueError, match="X has [0-9] features, but PublicSchemaEncoder is "
                                         "expecting 3"):
        encoder().fit().transform(X)
    with pytest.raises(ValueError, match="X has [0-9] features, but PublicSchemaEncoder is "
                                         "expecting 3"):
        encoder().fit(X)


@pytest.mark.parametrize("X", [
    ["red", 5, "yes"],  # one row, not a table
    [["red", 5, "yes"], ["red", 5]],  # ragged rows
    np.array("red"),
])
def test_non_tables_are_an_error(X):
    with pytest.raises(ValueError, match="2-D table"):
        encoder().fit().transform(X)


BAD_SCHEMAS = [
    ([], "non-empty list"),
    (None, "schema must be a non-empty list"),
    ("abc", "The 'schema' parameter of PublicSchemaEncoder must be an instance of 'list',"),
    ([(1.0, 0.0)], "column 0: bounds must be finite with lower <= upper"),
    ([(0.0, float("nan"))], "column 0: bounds"),
    ([(0.0, float("inf"))], "column 0: bounds"),
    ([["a", "b"], ["x", "x"]], "column 1: categories must be a non-empty list without repeats"),
    ([["a"], []], "column 1: categories"),
]


@pytest.mark.parametrize("schema,match", BAD_SCHEMAS, ids=[repr(s) for s, _ in BAD_SCHEMAS])
def test_bad_schemas_are_errors(schema, match):
    with pytest.raises(ValueError, match=match):
        PublicSchemaEncoder(schema=schema).fit()


def test_bad_encoding_is_an_error():
    with pytest.raises(ValueError, match="encoding"):
        encoder(encoding="dummy").fit()
    with pytest.raises(ValueError, match="encoding"):
        encoder(encoding="dummy").fit().transform(ROWS)


@pytest.mark.parametrize("spec", ["abc", 5])
def test_a_schema_entry_that_is_neither_categories_nor_bounds_is_rejected(spec):
    try:
        enc = PublicSchemaEncoder(schema=[["a", "b"], spec]).fit()
    except (TypeError, ValueError) as exc:
        assert "column 1" in str(exc), f"unclear message: {exc}"
        return
    raise AssertionError(f"accepted; bounds {enc.bounds_}")


def test_one_category_and_tuple_of_three_are_categories():
    # a 2-tuple of numbers is bounds; anything else iterable lists categories
    enc = PublicSchemaEncoder(schema=[["only"], (1, 2, 3), [0.0, 1.0]]).fit()
    np.testing.assert_array_equal(enc.bounds_[0], [-0.5, -0.5, -0.5])
    np.testing.assert_array_equal(enc.bounds_[1], [0.5, 2.5, 1.5])
    np.testing.assert_array_equal(enc.transform([["only", 3, 1.0]]), [[0, 2, 1]])


# ======================================================================================
# scikit-learn usage
# ======================================================================================


def _labels(rows):
    """A label that is a function of the colour (so a tree can learn it)."""
    return np.array(["warm" if r[0] == "red" else "cold" for r in rows])


def _table(n, seed=0):
    rng = np.random.default_rng(seed)
    return [[str(c), float(v), str(a)] for c, v, a in zip(
        rng.choice(SCHEMA[0], n), rng.uniform(0, 100, n), rng.choice(SCHEMA[2], n))]


@pytest.mark.parametrize("encoding", ["ordinal", "onehot"])
def test_pipeline_with_a_dp_classifier_using_the_encoder_bounds(encoding):
    enc = encoder(encoding=encoding).fit()  # bounds from the schema only: public
    tree = DPDecisionTreeClassifier(epsilon=30.0, max_depth=2,
                                    n_bins=3 if encoding == "ordinal" else 2,
                                    bounds=enc.bounds_, classes=["cold", "warm"],
                                    accountant=BudgetAccountant(), random_state=0)
    pipe = Pipeline([("encode", enc), ("tree", tree)])
    rows = _table(3_000)
    y = _labels(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        pipe.fit(rows, y)
    fitted = pipe.named_steps["tree"]
    assert fitted.privacy_leaks_ == []
    test_rows = _table(500, seed=1)
    assert pipe.score(test_rows, _labels(test_rows)) > 0.97
    assert set(pipe.predict(test_rows)) <= {"cold", "warm"}
    if encoding == "ordinal":
        # bounds (-0.5, K - 0.5) and n_bins = K: category k falls in bin k
        codes = fitted.binner_.transform(pipe.named_steps["encode"].transform(
            [["red", 0, "?"], ["green", 0, "yes"], ["blue", 0, "no"]]))
        np.testing.assert_array_equal(codes[:, 0], [0, 1, 2])
        np.testing.assert_array_equal(codes[:, 2], [0, 1, 2])


def test_make_pipeline_clone_and_params():
    enc = encoder(encoding="onehot", strip=False)
    assert enc.get_params() == {"schema": SCHEMA, "encoding": "onehot", "strip": False}
    twin = clone(enc)
    assert twin.get_params()["schema"] == SCHEMA and not hasattr(twin, "bounds_")
    pipe = make_pipeline(encoder(), DPDecisionTreeClassifier(
        epsilon=5.0, bounds=encoder().fit().bounds_, classes=["cold", "warm"],
        accountant=BudgetAccountant(), random_state=0))
    rows = _table(300)
    assert pipe.fit(rows, _labels(rows)).predict(rows).shape == (300,)
    # the encoder's output feature names follow through the pipeline
    assert pipe[:-1].get_feature_names_out().tolist() == ["x0", "x1", "x2"]


# ======================================================================================
# Validation at fit, names, scikit-learn's checks
# ======================================================================================


@pytest.mark.parametrize("bad, match", [
    (np.nan, "Input contains NaN or infinity: column 1"),
    (np.inf, "Input contains NaN or infinity: column 1"),
    (2 + 1j, "Complex data not supported: column 1"),
])
def test_fit_refuses_what_transform_refuses(bad, match):
    rows = [list(r) for r in ROWS]
    rows[0][1] = bad
    for method in ("fit", "fit_transform"):
        with pytest.raises(ValueError, match=match):
            getattr(encoder(), method)(np.array(rows, dtype=object))


def test_sparse_input_is_a_clear_type_error():
    sparse = pytest.importorskip("scipy.sparse")
    est = PublicSchemaEncoder(schema=[(0.0, 1.0)] * 2)
    with pytest.raises(TypeError, match="not a sparse matrix"):
        est.fit(sparse.csr_matrix(np.eye(2)))


def test_output_names_are_column_equals_category():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(ROWS, columns=["colour", "size", "answer"])
    est = encoder(encoding="onehot").fit(frame)
    assert list(est.feature_names_in_) == ["colour", "size", "answer"]
    assert list(est.get_feature_names_out()) == [
        "colour=red", "colour=green", "colour=blue", "size", "answer=?", "answer=yes",
        "answer=no"]
    assert list(encoder().fit(frame).get_feature_names_out()) == ["colour", "size", "answer"]
    assert list(encoder(encoding="onehot").fit(ROWS).get_feature_names_out(
        ["a", "b", "c"]))[:3] == ["a=red", "a=green", "a=blue"]
    with pytest.raises(ValueError, match="feature names"):  # reordered columns
        est.transform(frame[["size", "colour", "answer"]])


def test_unfitted_encoder_refuses_to_transform():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        encoder().transform(ROWS)


def _width_reason():
    return ("BY DESIGN: a public schema fixes the table's width (3 columns here), and "
            "this check fits a table of another width")


_WIDTH_CHECKS = [
    "check_estimators_overwrite_params", "check_estimators_fit_returns_self",
    "check_readonly_memmap_input", "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit", "check_estimators_dtypes", "check_complex_data",
    "check_dtype_object", "check_fit2d_1sample", "check_fit2d_1feature",
    "check_fit_idempotent", "check_fit_check_is_fitted", "check_n_features_in",
]


def _expected_failures(estimator):
    return {name: _width_reason() for name in _WIDTH_CHECKS}


@support.parametrize_with_checks([PublicSchemaEncoder(schema=[(-1e6, 1e6)] * 3)],
                                 expected_failed_checks=_expected_failures)
def test_sklearn_checks(estimator, check):
    check(estimator)
