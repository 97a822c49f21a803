"""Parquet files as a source of rows: read row group by row group, the same model.

* ``Parquet(path, columns)`` slices like an array (only the row groups a slice touches
  are read) and its row groups are the blocks of a fit;
* a DP tree, a partition forest and DP gradient boosting fitted on ``Parquet`` features
  and labels (or labels in memory) equal, bit for bit, the fits on the same values in
  arrays; the explainable boosting machine reads the file into memory;
* a null in a row group, an unknown column and a non-slice index are refused clearly,
  and a null raises before anything is spent.
"""

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from dptrees import (  # noqa: E402
    BudgetAccountant,
    DPDecisionTreeClassifier,
    DPExplainableBoostingClassifier,
    DPGradientBoostingClassifier,
    DPPartitionForestRegressor,
    Parquet,
)

N, P, GROUP = 3000, 4, 700
FEATURES = [f"x{j}" for j in range(P)]


def write(path, X, label, target, group=GROUP, nulls=()):
    columns = {name: pa.array(X[:, j]) for j, name in enumerate(FEATURES)}
    if nulls:
        values = X[:, 1].tolist()
        for i in nulls:
            values[i] = None
        columns["x1"] = pa.array(values, type=pa.float64())
    columns["label"] = pa.array(label.astype(np.int64))
    columns["target"] = pa.array(target)
    pq.write_table(pa.table(columns), path, row_group_size=group)
    return path


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rng = np.random.default_rng(0)
    X = rng.random((N, P))
    label = (X[:, 0] + X[:, 1] + 0.3 * rng.normal(size=N) > 1).astype(int)
    target = 3 * X[:, 0] - X[:, 2] + 0.2 * rng.normal(size=N)
    path = write(tmp_path_factory.mktemp("parquet") / "train.parquet", X, label, target)
    return path, X, label, target


def test_slices_read_only_the_row_groups_they_need(data):
    path, X, label, _ = data
    features = Parquet(path, FEATURES)
    assert features.shape == (N, P) and len(features) == N
    assert features.block_bounds() == [(a, min(a + GROUP, N)) for a in range(0, N, GROUP)]
    np.testing.assert_array_equal(features[650:1500], X[650:1500])
    np.testing.assert_array_equal(features[:], X)
    np.testing.assert_array_equal(np.asarray(Parquet(path, "label")), label)
    assert Parquet(path, "label").shape == (N,)
    assert features[10:10].shape == (0, P)
    with pytest.raises(TypeError, match="row slices"):
        features[[1, 2]]
    with pytest.raises(ValueError, match=r"\['nope'\] are not in"):
        Parquet(path, ["x0", "nope"])


def test_fits_on_parquet_equal_the_fits_on_arrays(data):
    path, X, label, target = data
    Xp, yp = Parquet(path, FEATURES), Parquet(path, "label")
    common = dict(bounds=(0.0, 1.0), random_state=3)
    tree = DPDecisionTreeClassifier(epsilon=2.0, max_depth=5, classes=[0, 1], **common)
    expected = tree.fit(X, label)
    for labels in (yp, label):
        got = DPDecisionTreeClassifier(**tree.get_params()).fit(Xp, labels)
        for name in ("feature", "bin_threshold", "left", "value"):
            np.testing.assert_array_equal(getattr(got.tree_, name),
                                          getattr(expected.tree_, name))
    forest = DPPartitionForestRegressor(n_estimators=3, y_bounds=(-2.0, 4.0), **common)
    np.testing.assert_array_equal(forest.fit(Xp, Parquet(path, "target")).predict(X),
                                  forest.fit(X, target).predict(X))
    gb = DPGradientBoostingClassifier(n_estimators=3, max_depth=3, split="private",
                                      classes=[0, 1], **common)
    expected_raw = gb.fit(X, label)._raw(X)
    np.testing.assert_array_equal(gb.set_params(n_jobs=2).fit(Xp, yp)._raw(X), expected_raw)
    ebm = DPExplainableBoostingClassifier(classes=[0, 1], **common)
    np.testing.assert_array_equal(ebm.fit(Xp, yp).decision_function(X),
                                  ebm.fit(X, label).decision_function(X))


def test_a_null_in_a_row_group_raises_before_anything_is_spent(tmp_path, data):
    _, X, label, target = data
    path = write(tmp_path / "nulls.parquet", X, label, target, nulls=[2222])
    acc = BudgetAccountant(epsilon=10.0)
    est = DPDecisionTreeClassifier(bounds=(0, 1), classes=[0, 1], accountant=acc)
    with pytest.raises(ValueError, match="NaN.*starting at row 2100"):
        est.fit(Parquet(path, FEATURES), Parquet(path, "label"))
    assert acc.spent == (0.0, 0.0)


def test_a_parquet_fit_keeps_the_column_names(data):
    pd = pytest.importorskip("pandas")
    path, X, label, _ = data
    named_bounds = {name: (0.0, 1.0) for name in FEATURES}
    tree = DPDecisionTreeClassifier(epsilon=2.0, max_depth=3, classes=[0, 1],
                                    bounds=named_bounds, random_state=0)
    tree.fit(Parquet(path, FEATURES), Parquet(path, "label"))
    assert list(tree.feature_names_in_) == FEATURES
    frame = pd.DataFrame(X, columns=FEATURES)
    expected = DPDecisionTreeClassifier(**tree.get_params()).fit(frame, label)
    np.testing.assert_array_equal(tree.predict(frame), expected.predict(frame))
    with pytest.raises(ValueError, match="feature names"):
        tree.predict(frame.rename(columns={"x0": "other"}))
    reordered = DPDecisionTreeClassifier(**tree.get_params()).fit(
        Parquet(path, FEATURES[::-1]), Parquet(path, "label"))
    assert list(reordered.feature_names_in_) == FEATURES[::-1]


def test_a_dask_frame_fit_keeps_the_column_names(data, dask_client):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    _, X, label, _ = data
    frame = pd.DataFrame(X, columns=FEATURES)
    Xd = dd.from_pandas(frame, npartitions=3)
    yd = dd.from_pandas(pd.Series(label), npartitions=3)
    gb = DPGradientBoostingClassifier(n_estimators=3, max_depth=2, classes=[0, 1],
                                      bounds={name: (0.0, 1.0) for name in FEATURES},
                                      random_state=0)
    gb.fit(Xd, yd)
    assert list(gb.feature_names_in_) == FEATURES
    expected = DPGradientBoostingClassifier(**gb.get_params()).fit(frame, label)
    np.testing.assert_array_equal(gb.predict_proba(frame), expected.predict_proba(frame))
