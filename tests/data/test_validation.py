"""Tests for dptrees.validation: error paths, privacy-leak warnings, clipping, conversions."""

import fractions
import warnings

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.exceptions import DataConversionWarning

from dptrees.exceptions import PrivacyLeakWarning
from dptrees.data.domains import (
    Bounds,
    ClassEncoding,
    TargetBounds,
    check_bounds,
    check_classes,
    check_y_bounds,
)
from dptrees.validation import (
    check_delta,
    check_epsilon,
    check_features,
    check_in,
    check_positive_int,
    check_targets_regression,
    clip,
    clip_to_bounds,
    warn_privacy_leak,
)


@pytest.fixture
def no_warnings():
    """Turn every warning into an error inside the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def _is_c_float64(a):
    return isinstance(a, np.ndarray) and a.dtype == np.float64 and a.flags.c_contiguous


# --------------------------------------------------------------------------- epsilon / delta


@pytest.mark.parametrize("value", [1, 0.5, np.float32(2.0), np.int64(3), fractions.Fraction(1, 3), np.array(0.25)])
def test_check_epsilon_accepts_positive_reals(value, no_warnings):
    out = check_epsilon(value)
    assert type(out) is float
    assert out == pytest.approx(float(value))


@pytest.mark.parametrize(
    "value, exc, match",
    [
        (0, ValueError, r"epsilon must be > 0, got 0"),
        (-1.0, ValueError, r"epsilon must be > 0"),
        (float("nan"), ValueError, r"epsilon must be finite, got nan"),
        (float("inf"), ValueError, r"epsilon must be finite, got inf"),
        (5e-324, ValueError, r"too small: 1/epsilon overflows"),
        (True, TypeError, r"epsilon must be a real number, got True of type bool"),
        (np.True_, TypeError, r"epsilon must be a real number"),
        ("1.0", TypeError, r"epsilon must be a real number, got '1.0' of type str"),
        (None, TypeError, r"epsilon must be a real number"),
        (1 + 0j, TypeError, r"must be a real number"),
        ([1.0], TypeError, r"must be a real number"),
        (10**400, ValueError, r"must be finite"),
    ],
)
def test_check_epsilon_rejects(value, exc, match):
    with pytest.raises(exc, match=match):
        check_epsilon(value)


def test_check_epsilon_uses_name():
    with pytest.raises(ValueError, match=r"learning_rate must be > 0"):
        check_epsilon(0.0, name="learning_rate")


@pytest.mark.parametrize("value", [0, 0.0, 1e-9, 0.999999])
def test_check_delta_accepts(value, no_warnings):
    out = check_delta(value)
    assert type(out) is float and out == value


@pytest.mark.parametrize(
    "value, exc, match",
    [
        (1, ValueError, r"delta must be in \[0, 1\), got 1\.0"),
        (1.5, ValueError, r"delta must be in \[0, 1\)"),
        (-1e-9, ValueError, r"delta must be in \[0, 1\)"),
        (float("nan"), ValueError, r"delta must be in \[0, 1\), got nan"),
        (False, TypeError, r"delta must be a real number"),
        ("0", TypeError, r"delta must be a real number"),
    ],
)
def test_check_delta_rejects(value, exc, match):
    with pytest.raises(exc, match=match):
        check_delta(value)


# --------------------------------------------------------------------------- small helpers


def test_check_positive_int():
    assert check_positive_int(3, "n_estimators") == 3
    assert type(check_positive_int(np.int32(3), "n_estimators")) is int
    assert check_positive_int(0, "max_depth", minimum=0) == 0
    assert check_positive_int(5, "k", maximum=5) == 5
    with pytest.raises(ValueError, match=r"n_estimators must be >= 1, got 0"):
        check_positive_int(0, "n_estimators")
    with pytest.raises(ValueError, match=r"max_bins must be <= 256, got 300"):
        check_positive_int(300, "max_bins", maximum=256)
    with pytest.raises(TypeError, match=r"n_estimators must be an integer, got 3.0 of type float"):
        check_positive_int(3.0, "n_estimators")
    with pytest.raises(TypeError, match=r"max_depth must be an integer, got True of type bool"):
        check_positive_int(True, "max_depth")
    with pytest.raises(TypeError, match=r"must be an integer, got '3'"):
        check_positive_int("3", "max_depth")
    with pytest.raises(TypeError, match=r"must be an integer, got None"):
        check_positive_int(None, "max_depth")


def test_check_in():
    assert check_in("gini", "criterion", ["gini", "entropy"]) == "gini"
    assert check_in(None, "max_features", [None, "sqrt"]) is None
    with pytest.raises(ValueError, match=r"criterion must be one of 'gini', 'entropy'; got 'gni'\. Did you mean 'gini'\?"):
        check_in("gni", "criterion", ["gini", "entropy"])
    with pytest.raises(ValueError, match=r"criterion must be one of 'gini', 'entropy'; got 'GINI'"):
        check_in("GINI", "criterion", ("gini", "entropy"))
    # booleans must not match integers and strings must not match numbers
    with pytest.raises(ValueError, match=r"must be one of 1, 2; got True"):
        check_in(True, "n", [1, 2])
    with pytest.raises(ValueError, match=r"must be one of 1, 2; got '1'"):
        check_in("1", "n", [1, 2])
    # unhashable / array values give the clear error, not a numpy ambiguity error
    with pytest.raises(ValueError, match=r"criterion must be one of"):
        check_in(np.array([1, 2]), "criterion", ["gini"])
    with pytest.raises(ValueError, match=r"got \['gini'\]"):
        check_in(["gini"], "criterion", ["gini"])


def test_warn_privacy_leak_message_and_record():
    with pytest.warns(PrivacyLeakWarning) as record:
        leak = warn_privacy_leak("feature bounds", param="bounds")
    assert len(record) == 1
    message = str(record[0].message)
    assert "feature bounds" in message
    assert "NOT differentially private" in message
    assert "`bounds`" in message
    assert leak == "bounds: feature bounds read from the training data"
    # the warning is attributed to the caller outside dptrees (this file)
    assert record[0].filename == __file__


def test_leak_warning_points_at_user_code_through_nested_calls():
    with pytest.warns(PrivacyLeakWarning) as record:
        check_bounds(None, np.ones((2, 2)))
    assert record[0].filename == __file__


# --------------------------------------------------------------------------- features


@pytest.mark.parametrize(
    "X",
    [
        [[1, 2], [3, 4]],
        np.array([[1, 2], [3, 4]], dtype=np.int32),
        np.array([[1, 2], [3, 4]], dtype=np.uint8),
        np.array([[1, 2], [3, 4]], dtype=np.float32),
        np.asfortranarray(np.array([[1.0, 2.0], [3.0, 4.0]])),
        np.array([[1.0, 9.0, 2.0], [3.0, 9.0, 4.0]])[:, ::2],  # non-contiguous view
        np.array([[1, 2], [3, 4]], dtype=object),
        [[1.0, 2.0], [3.0, 4.0]],
    ],
    ids=["list-int", "int32", "uint8", "float32", "fortran", "strided", "object", "list-float"],
)
def test_check_features_converts_to_c_float64(X, no_warnings):
    out = check_features(X)
    assert _is_c_float64(out)
    assert_array_equal(out, [[1.0, 2.0], [3.0, 4.0]])


def test_check_features_bool():
    out = check_features([[True, False], [False, True]])
    assert _is_c_float64(out)
    assert_array_equal(out, [[1.0, 0.0], [0.0, 1.0]])


def test_check_features_copy_semantics():
    X = np.ones((3, 2))
    assert check_features(X) is X  # already C float64: no needless copy
    out = check_features(X, copy=True)
    assert out is not X and not np.shares_memory(out, X)
    assert_array_equal(out, X)


def test_check_features_array_protocol():
    class Frame:
        def __array__(self, dtype=None, copy=None):
            return np.array([[1, 2], [3, 4]], dtype=np.int64)

    assert_array_equal(check_features(Frame()), [[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize(
    "X, exc, match",
    [
        ([[1.0, np.nan], [2.0, 3.0]], ValueError, r"Input X contains NaN \(first at index \(0, 1\)\)"),
        ([[1.0, 2.0], [np.inf, 3.0]], ValueError, r"Input X contains infinity .*\(first at index \(1, 0\)\)"),
        ([[1.0, 2.0], [3.0, -np.inf]], ValueError, r"X contains infinity"),
        (np.array([[1.0, None]], dtype=object), ValueError, r"X contains NaN"),
        ([1.0, 2.0, 3.0], ValueError, r"got a 1D array of shape \(3,\).*Reshape your data.*reshape\(-1, 1\)"),
        (5.0, ValueError, r"got a scalar instead.*Reshape your data"),
        (np.zeros((2, 2, 2)), ValueError, r"got an array with 3 dimensions, shape \(2, 2, 2\)"),
        (np.zeros((0, 3)), ValueError, r"Found array with 0 sample\(s\) \(shape=\(0, 3\)\) while a minimum of 1"),
        (np.zeros((12, 0)), ValueError, r"0 feature\(s\) \(shape=\(\d*, 0\)\) while a minimum of \d* is required\."),
        ([], ValueError, r"got a 1D array of shape \(0,\)"),
        ([["a", "b"]], TypeError, r"X has a string dtype \(<U1\); dptrees needs numbers.*OrdinalEncoder"),
        ([["1.5", "2"]], TypeError, r"string dtype"),  # numeric strings are not silently parsed
        (np.array([[1.0, "x"]], dtype=object), TypeError, r"X contains strings \(first at index \(0, 1\)\)"),
        (np.array([[1.0, {"foo": "bar"}]], dtype=object), TypeError, r"argument must be .* string.* number"),
        ([[1 + 2j, 3]], ValueError, r"Complex data not supported"),
        (np.array([[1 + 2j]], dtype=np.complex64), ValueError, r"Complex data not supported"),
        (np.array([["2020-01-01"]], dtype="datetime64[D]"), TypeError, r"X must be numeric, got an array of dtype datetime64"),
        ([[1, 2], [3]], ValueError, r"X is ragged"),
        (None, TypeError, r"X must be array-like, got None"),
        ("abc", TypeError, r"X must be array-like, got str"),
        (np.array([[10**400]], dtype=object), TypeError, r"not real numbers"),
    ],
)
def test_check_features_rejects(X, exc, match):
    with pytest.raises(exc, match=match):
        check_features(X)


def test_check_features_name_in_messages():
    with pytest.raises(ValueError, match=r"Input X_test contains NaN"):
        check_features([[np.nan]], name="X_test")


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dok", "lil"])
def test_sparse_rejected(fmt):
    sparse = pytest.importorskip("scipy.sparse")
    X = sparse.random(4, 3, density=0.5, format=fmt, random_state=0)
    with pytest.raises(TypeError, match=r"Sparse data was passed for X.*not supported.*toarray"):
        check_features(X)
    with pytest.raises(TypeError, match=r"Sparse data was passed for y"):
        check_targets_regression(sparse.random(4, 1, density=0.5, format=fmt, random_state=0))


def test_check_features_n_features():
    X = np.ones((4, 3))
    assert check_features(X, n_features=3) is X
    with pytest.raises(ValueError, match=r"^X has 3 features, but the fitted model is expecting 5 features as input"):
        check_features(X, n_features=5)
    # sklearn's estimator check looks for r"X has 1 features, but \w+ is expecting"
    with pytest.raises(ValueError, match=r"X has 3 features, but \w+ is expecting 5 features as input"):
        check_features(X, n_features=5, estimator="DPTree")
    with pytest.raises(ValueError, match=r"X has 3 features, but DPDecisionTreeClassifier is expecting 5"):
        check_features(X, n_features=5, estimator="DPDecisionTreeClassifier")

    class MyEstimator:
        pass

    with pytest.raises(ValueError, match=r"but MyEstimator is expecting 2 features"):
        check_features(X, n_features=2, estimator=MyEstimator())
    with pytest.raises(TypeError, match=r"n_features must be an integer"):
        check_features(X, n_features=3.0)


def test_check_features_pandas(no_warnings):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1, 2, 3], "b": np.array([0.5, 1.5, 2.5], dtype=np.float32)})
    out = check_features(df)
    assert _is_c_float64(out)
    assert_array_equal(out, [[1, 0.5], [2, 1.5], [3, 2.5]])
    with pytest.raises(TypeError, match=r"strings|string dtype"):
        check_features(pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}))
    with pytest.raises((ValueError, TypeError), match=r"NaN|Missing values"):
        check_features(pd.DataFrame({"a": pd.array([1, None], dtype="Int64")}))


# --------------------------------------------------------------------------- regression target


@pytest.mark.parametrize(
    "y", [[1, 2, 3], np.array([1, 2, 3], dtype=np.float32), np.array([1, 2, 3], dtype=object), (1.0, 2.0, 3.0)]
)
def test_check_targets_regression_converts(y, no_warnings):
    out = check_targets_regression(y, 3)
    assert _is_c_float64(out) and out.ndim == 1
    assert_array_equal(out, [1.0, 2.0, 3.0])


def test_check_targets_regression_strided_view_is_made_contiguous():
    y = np.arange(6.0)[::2]
    out = check_targets_regression(y)
    assert _is_c_float64(out)
    assert_array_equal(out, [0.0, 2.0, 4.0])


def test_check_targets_regression_column_vector_warns_like_sklearn():
    with pytest.warns(DataConversionWarning, match=r"A column-vector y was passed when a 1d array was expected"):
        out = check_targets_regression(np.array([[1.0], [2.0]]), 2)
    assert out.shape == (2,) and _is_c_float64(out)


@pytest.mark.parametrize(
    "y, n, exc, match",
    [
        ([1.0, np.nan], 2, ValueError, r"Input y contains NaN \(first at index \(1,\)\)"),
        ([np.inf, 1.0], 2, ValueError, r"Input y contains infinity"),
        ([1.0, 2.0], 3, ValueError, r"y has 2 samples, but X has 3.*inconsistent numbers of samples: \[3, 2\]"),
        ([], None, ValueError, r"Found array with 0 sample"),
        (np.ones((3, 2)), 3, ValueError, r"y must be a 1D array of shape \(n_samples,\), got an array of shape \(3, 2\)\. Multi-output"),
        (np.ones((2, 1, 1)), 2, ValueError, r"y must be a 1D array"),
        (3.0, None, ValueError, r"y must be a 1D array of shape \(n_samples,\), got a scalar"),
        (["a", "b"], 2, TypeError, r"y has a string dtype"),
        (np.array([1.0, "b"], dtype=object), 2, TypeError, r"y contains strings"),
        ([1 + 1j, 2], 2, ValueError, r"Complex data not supported"),
        (None, 2, ValueError, r"requires y to be passed, but the target y is None"),
    ],
)
def test_check_targets_regression_rejects(y, n, exc, match):
    with pytest.raises(exc, match=match):
        check_targets_regression(y, n)


# --------------------------------------------------------------------------- feature bounds


X3 = np.array([[0.0, -5.0, 10.0], [2.0, 5.0, 20.0], [1.0, 0.0, 15.0]])


def test_check_bounds_given_scalars_broadcast(no_warnings):
    b = check_bounds((-1, 3), X3)
    assert isinstance(b, Bounds)
    assert_array_equal(b.lower, [-1.0, -1.0, -1.0])
    assert_array_equal(b.upper, [3.0, 3.0, 3.0])
    assert b.leak is None and not b.inferred
    assert _is_c_float64(b.lower) and _is_c_float64(b.upper)


def test_check_bounds_given_arrays(no_warnings):
    lower = np.array([0, -10, 0], dtype=np.int32)
    upper = [1.0, 10.0, 100.0]
    b = check_bounds((lower, upper), X3)
    assert_array_equal(b.lower, [0.0, -10.0, 0.0])
    assert_array_equal(b.upper, upper)
    assert b.lower.dtype == np.float64 and b.lower.shape == (3,)
    b.lower[0] = 99.0  # returned arrays are new: the caller's input is untouched
    assert lower[0] == 0
    # mixed scalar / array, a (2, n_features) array, and no X at all
    assert_array_equal(check_bounds((0, upper), X3).lower, [0, 0, 0])
    assert_array_equal(check_bounds(np.array([[0, 0, 0], [1, 2, 3]]), X3).upper, [1, 2, 3])
    assert_array_equal(check_bounds((0, 1), None, n_features=2).upper, [1, 1])


def test_check_bounds_given_does_not_look_at_values_outside(no_warnings):
    # public bounds narrower than the data are fine: data will be clipped, never an error
    b = check_bounds((0.5, 1.0), X3)
    assert_array_equal(b.upper, [1.0, 1.0, 1.0])


def test_check_bounds_inferred_warns_and_records_leak():
    with pytest.warns(PrivacyLeakWarning, match=r"feature bounds not given.*NOT differentially private.*`bounds`") as record:
        b = check_bounds(None, X3)
    assert len(record) == 1
    assert b.inferred
    assert b.leak == "bounds: feature bounds read from the training data"
    assert_array_equal(b.lower, [0.0, -5.0, 10.0])
    assert_array_equal(b.upper, [2.0, 5.0, 20.0])


def test_check_bounds_leak_record_uses_param_name():
    with pytest.warns(PrivacyLeakWarning, match=r"`feature_bounds`"):
        b = check_bounds(None, X3, name="feature_bounds")
    assert b.leak.startswith("feature_bounds:")


def test_check_bounds_zero_width_is_widened(no_warnings):
    b = check_bounds(([0.0, 2.0, 1e12], [1.0, 2.0, 1e12]), None, n_features=3)
    assert_array_equal(b.lower[:2], [0.0, 1.5])
    assert_array_equal(b.upper[:2], [1.0, 2.5])
    assert b.lower[2] < 1e12 < b.upper[2]
    assert np.all(b.upper - b.lower > 0)


def test_check_bounds_inferred_constant_column_is_widened():
    X = np.array([[1.0, 7.0], [2.0, 7.0]])
    with pytest.warns(PrivacyLeakWarning):
        b = check_bounds(None, X)
    assert_array_equal(b.lower, [1.0, 6.5])
    assert_array_equal(b.upper, [2.0, 7.5])


@pytest.mark.parametrize(
    "bounds, exc, match",
    [
        ((0, [1, 2]), ValueError, r"bounds: upper has 2 values, but there are 3 features"),
        (([0, 0, 0, 0], 1), ValueError, r"bounds: lower has 4 values, but there are 3 features"),
        ((0, np.ones((3, 1))), ValueError, r"upper must be a scalar or a 1D array of length n_features=3, got shape \(3, 1\)"),
        ((1, 0), ValueError, r"lower bound exceeds upper bound for \['feature 0: lower=1\.0 > upper=0\.0'"),
        (([0, 5, 0], [1, 1, 1]), ValueError, r"lower bound exceeds upper bound for \['feature 1: lower=5\.0 > upper=1\.0'\]"),
        ((np.nan, 1), ValueError, r"bounds must be finite; got non-finite bounds for \['feature 0', 'feature 1', 'feature 2'\]"),
        (([0, 0, -np.inf], 1), ValueError, r"bounds must be finite; got non-finite bounds for \['feature 2'\]"),
        ((-1e308, 1e308), ValueError, r"too wide"),
        ((0, 1, 2), TypeError, r"bounds must be None or a pair \(lower, upper\)"),
        (5.0, TypeError, r"bounds must be None or a pair \(lower, upper\).*got float"),
        ("ab", TypeError, r"bounds must be None or a pair"),
        ([(0, 1)] * 4, TypeError, r"bounds must be None or a pair \(lower, upper\).*shape \(4, 2\)"),
        (("0", 1), TypeError, r"bounds: lower must be a number or an array of numbers, got '0'"),
        ((None, 1), TypeError, r"bounds: lower must be a number"),
        ((0, ["a", "b", "c"]), TypeError, r"upper must be a number or an array of numbers, got dtype <U1"),
        ((0, 1 + 1j), TypeError, r"upper must be a number or an array of numbers, got dtype complex"),
    ],
)
def test_check_bounds_rejects(bounds, exc, match):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no privacy warning on the way
        with pytest.raises(exc, match=match):
            check_bounds(bounds, X3)


def test_check_bounds_needs_data_or_n_features():
    with pytest.raises(ValueError, match=r"bounds is None and no data X was given"):
        check_bounds(None, None, n_features=3)
    with pytest.raises(ValueError, match=r"needs X or n_features"):
        check_bounds((0, 1), None)
    with pytest.raises(ValueError, match=r"X has 3 features, but n_features=2"):
        check_bounds((0, 1), X3, n_features=2)
    with pytest.raises(ValueError, match=r"X must be a 2D array"):
        check_bounds(None, [1.0, 2.0])


def test_check_bounds_inferred_from_non_finite_data_is_an_error():
    with pytest.raises(ValueError, match=r"must be finite"):
        check_bounds(None, np.array([[np.nan, 1.0], [2.0, 3.0]]))


# --------------------------------------------------------------------------- target bounds


def test_check_y_bounds_given(no_warnings):
    yb = check_y_bounds((np.int64(-2), 3.5), [100.0])
    assert isinstance(yb, TargetBounds)
    assert (yb.lower, yb.upper, yb.leak, yb.inferred) == (-2.0, 3.5, None, False)
    assert type(yb.lower) is float and type(yb.upper) is float
    assert check_y_bounds([0, 1], None)[:2] == (0.0, 1.0)


def test_check_y_bounds_inferred():
    with pytest.warns(PrivacyLeakWarning, match=r"target bounds not given.*`y_bounds`") as record:
        yb = check_y_bounds(None, np.array([3.0, -1.0, 2.0]))
    assert len(record) == 1
    assert (yb.lower, yb.upper) == (-1.0, 3.0)
    assert yb.inferred and yb.leak == "y_bounds: target bounds read from the training data"


def test_check_y_bounds_zero_width_widened(no_warnings):
    yb = check_y_bounds((4.0, 4.0), None)
    assert (yb.lower, yb.upper) == (3.5, 4.5)


@pytest.mark.parametrize(
    "y_bounds, exc, match",
    [
        ((1.0, 0.0), ValueError, r"y_bounds: lower bound exceeds upper bound for \['the target: lower=1\.0 > upper=0\.0'\]"),
        ((0.0, np.inf), ValueError, r"y_bounds must be finite"),
        ((np.nan, 1.0), ValueError, r"y_bounds must be finite"),
        ((0.0, "1"), TypeError, r"y_bounds: upper must be a real number, got '1'"),
        ((True, 2.0), TypeError, r"y_bounds: lower must be a real number"),
        (([0.0], 1.0), TypeError, r"lower must be a real number"),
        (1.0, TypeError, r"y_bounds must be None or a pair \(lower, upper\) of real numbers"),
        ((0.0, 1.0, 2.0), TypeError, r"y_bounds must be None or a pair"),
    ],
)
def test_check_y_bounds_rejects(y_bounds, exc, match):
    with pytest.raises(exc, match=match):
        check_y_bounds(y_bounds, [0.5])


def test_check_y_bounds_needs_y_when_inferring():
    with pytest.raises(ValueError, match=r"y_bounds is None and no target y"):
        check_y_bounds(None, None)
    with pytest.raises(ValueError, match=r"y is empty"):
        check_y_bounds(None, [])


# --------------------------------------------------------------------------- classes


def test_check_classes_given_strings(no_warnings):
    enc = check_classes(["dog", "cat", "bird"], ["cat", "dog", "cat"])
    assert isinstance(enc, ClassEncoding)
    assert_array_equal(enc.classes, ["bird", "cat", "dog"])  # sorted, like sklearn's classes_
    assert enc.y.dtype == np.int64
    assert_array_equal(enc.y, [1, 2, 1])
    assert_array_equal(enc.classes[enc.y], ["cat", "dog", "cat"])
    assert enc.leak is None and not enc.inferred


def test_check_classes_given_ints_and_mixed_numeric_dtypes(no_warnings):
    enc = check_classes([2, 0, 1], np.array([1.0, 2.0, 0.0]))
    assert_array_equal(enc.classes, [0, 1, 2])
    assert_array_equal(enc.y, [1, 2, 0])
    enc = check_classes(np.array([5, 7], dtype=np.uint8), np.array([7, 7, 5], dtype=np.int64))
    assert_array_equal(enc.y, [1, 1, 0])


def test_check_classes_object_labels(no_warnings):
    y = np.array(["b", "a", "b"], dtype=object)
    enc = check_classes(["a", "b"], y)
    assert_array_equal(enc.y, [1, 0, 1])
    enc = check_classes(np.array(["a", "b"], dtype=object), ["b", "b", "a"])
    assert_array_equal(enc.y, [1, 1, 0])


def test_check_classes_given_may_be_absent_from_y(no_warnings):
    # a public class list can contain classes the data lacks, and y may hold one class only:
    # whether a class occurs in the data is private, so this must not be an error
    enc = check_classes(["a", "b", "c"], ["b", "b"])
    assert_array_equal(enc.classes, ["a", "b", "c"])
    assert_array_equal(enc.y, [1, 1])


def test_check_classes_inferred_warns():
    with pytest.warns(PrivacyLeakWarning, match=r"class labels not given.*NOT differentially private.*`classes`") as record:
        enc = check_classes(None, ["b", "a", "b", "c"])
    assert len(record) == 1
    assert enc.inferred and enc.leak == "classes: class labels read from the training data"
    assert_array_equal(enc.classes, ["a", "b", "c"])
    assert_array_equal(enc.y, [1, 0, 1, 2])


def test_check_classes_inferred_ints_and_object():
    with pytest.warns(PrivacyLeakWarning):
        enc = check_classes(None, np.array([3, 1, 3], dtype=object))
    assert_array_equal(enc.classes, [1, 3])
    assert enc.classes.dtype.kind == "i"
    assert_array_equal(enc.y, [1, 0, 1])


def test_check_classes_object_numbers_against_given_classes(no_warnings):
    enc = check_classes([0, 1, 2], np.array([2, 0, 1, 1], dtype=object))
    assert_array_equal(enc.y, [2, 0, 1, 1])


def test_check_classes_inferred_one_class_is_an_error():
    with pytest.raises(ValueError, match=r"only one class is present: y contains one class \('a'\)"):
        check_classes(None, ["a", "a", "a"])


def test_check_classes_column_vector_warns():
    with pytest.warns(DataConversionWarning, match=r"A column-vector y was passed"):
        enc = check_classes([0, 1], np.array([[0], [1], [1]]))
    assert_array_equal(enc.y, [0, 1, 1])


@pytest.mark.parametrize(
    "classes, y, exc, match",
    [
        (["a", "b"], ["a", "c", "d", "c"], ValueError, r"y contains labels that are not in classes: \['c', 'd'\].*cannot be clipped"),
        ([0, 1], [0, 1, 2], ValueError, r"y contains labels that are not in classes: \[2\]"),
        ([0, 1], ["0", "1"], ValueError, r"not in classes: \['0', '1'\]"),
        (["a"], ["a", "a"], ValueError, r"classes must list at least two classes, got 1 \(\['a'\]\)"),
        ([], ["a"], ValueError, r"classes must list at least two classes, got 0"),
        (["a", "b", "a"], ["a"], ValueError, r"classes contains duplicates: \['a'\]"),
        ("ab", ["a"], TypeError, r"classes must be a list of labels, got the string 'ab'"),
        ([[0, 1], [2, 3]], [0], ValueError, r"classes must be a 1D list of labels, got shape \(2, 2\)"),
        ([0.0, np.nan], [0.0], ValueError, r"Input classes contains NaN"),
        ([0, 1], [0.0, np.nan], ValueError, r"Input y contains NaN"),
        ([0, 1], [0.0, np.inf], ValueError, r"Input y contains infinity"),
        (["a", "b"], np.array(["a", None], dtype=object), ValueError, r"Input y contains missing values"),
        ([0, 1], [0.5, 1.5], ValueError, r"Unknown label type: continuous"),
        ([0, 1], np.array([0.5, 1.5], dtype=object), ValueError, r"Unknown label type: continuous"),
        (None, [0.5, 1.5], ValueError, r"Unknown label type: continuous"),
        (None, np.array(["a", 1], dtype=object), TypeError, r"y mixes label types that cannot be sorted \(int, str\)"),
        (np.array(["a", 1], dtype=object), ["a"], TypeError, r"classes mixes label types"),
        ([0, 1], [0, 1, 1], ValueError, r"y has 3 samples, but X has 2"),
        ([0, 1], [], ValueError, r"Found array with 0 sample"),
        ([0, 1], np.zeros((3, 2)), ValueError, r"y must be a 1D array.*Multi-output"),
        ([0, 1], [1 + 1j], ValueError, r"Complex data not supported"),
        ([0, 1], None, ValueError, r"requires y to be passed, but the target y is None"),
    ],
)
def test_check_classes_rejects(classes, y, exc, match):
    n = 2 if match.startswith("y has 3") else None
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # errors come before any leak warning
        with pytest.raises(exc, match=match):
            check_classes(classes, y, n_samples=n)


# --------------------------------------------------------------------------- clipping


def test_clip_to_bounds_clips_columnwise_without_modifying_input(no_warnings):
    X = np.array([[-5.0, 0.5, 100.0], [0.5, -3.0, 2.0]])
    X_before = X.copy()
    out = clip_to_bounds(X, np.array([0.0, -1.0, 1.0]), np.array([1.0, 1.0, 10.0]))
    assert_array_equal(out, [[0.0, 0.5, 10.0], [0.5, -1.0, 2.0]])
    assert_array_equal(X, X_before)
    assert not np.shares_memory(out, X)
    assert _is_c_float64(out)


def test_clip_to_bounds_fortran_int_and_scalar_bounds():
    X = np.asfortranarray(np.array([[-5, 5], [1, 2]], dtype=np.int16))
    X_before = X.copy()
    out = clip_to_bounds(X, 0, 3)
    assert _is_c_float64(out)
    assert_array_equal(out, [[0.0, 3.0], [1.0, 2.0]])
    assert_array_equal(X, X_before)


def test_clip_to_bounds_with_check_bounds_output():
    b = check_bounds((0.0, 1.0), X3)
    out = clip_to_bounds(X3, b.lower, b.upper)
    assert out.min() >= 0.0 and out.max() <= 1.0
    assert out.shape == X3.shape  # nothing dropped


def test_clip_to_bounds_rejects():
    X = np.zeros((2, 3))
    with pytest.raises(ValueError, match=r"lower must be a scalar or have one value per feature \(3\), got shape \(2,\)"):
        clip_to_bounds(X, [0, 0], 1)
    with pytest.raises(ValueError, match=r"lower bound exceeds upper bound"):
        clip_to_bounds(X, 1, 0)
    with pytest.raises(ValueError, match=r"X must be a 2D array, got shape \(3,\)"):
        clip_to_bounds(np.zeros(3), 0, 1)


def test_clip_does_not_modify_input(no_warnings):
    y = np.array([-2.0, 0.5, 7.0])
    y_before = y.copy()
    out = clip(y, 0.0, 1.0)
    assert_array_equal(out, [0.0, 0.5, 1.0])
    assert_array_equal(y, y_before)
    assert not np.shares_memory(out, y)
    assert _is_c_float64(out)
    assert_array_equal(clip([1, 5, -5], -1, 1), [1.0, 1.0, -1.0])
    yb = check_y_bounds((0.0, 1.0), None)
    assert_array_equal(clip(y, yb.lower, yb.upper), [0.0, 0.5, 1.0])


def test_clip_rejects_bad_bounds():
    with pytest.raises(ValueError, match=r"lower bound must be <= upper bound, got lower=1\.0, upper=0\.0"):
        clip([0.0], 1.0, 0.0)
    with pytest.raises(ValueError, match=r"lower bound must be <= upper bound"):
        clip([0.0], np.nan, 1.0)


# ======================================================================================
# Warnings point at the user's line
# ======================================================================================


def _estimators_reading_bounds():
    import dptrees
    from dptrees import federated

    names = [n for n in dptrees.__all__ if n.startswith("DP")]
    makers = [getattr(dptrees, n) for n in names]
    makers += [federated.DPFederatedGradientBoostingClassifier,
               federated.DPFederatedGradientBoostingRegressor]
    return makers


@pytest.mark.parametrize("make", _estimators_reading_bounds(), ids=lambda c: c.__name__)
def test_every_estimators_warnings_point_at_the_users_line(make):
    """A PrivacyLeakWarning (bounds read from the data) is attributed to the line that
    called ``fit``, for every estimator, whatever runs between (context managers,
    threads): one helper, ``warn_user``."""
    rng = np.random.default_rng(0)
    X = rng.random((200, 2))
    classifier = "Classifier" in make.__name__
    y = (X[:, 0] > 0.5).astype(int) if classifier else X[:, 0]
    public = {"classes": [0, 1]} if classifier else {"y_bounds": (0.0, 1.0)}
    est = make(**public)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    leaks = [w for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    assert leaks
    assert {w.filename for w in leaks} == {__file__}
