"""Smoke and protocol tests of ``experiments/reproduce_geyer2017.py`` (Geyer et al. 2017).

The module lives in the source tree and reads the shared MNIST folder; the tests are
skipped where either is absent. They check the data loading, the non-IID split and the
structure of the ``--quick`` output; they never assert accuracy against the paper's (the
full settings take many minutes).
"""

import math
from pathlib import Path

import numpy as np
import pytest

from support import import_experiment

# A script's quick mode (a reproduction or a benchmark): run by .ci/run after the
# default suite, with the other slow tests.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def repro():
    module = import_experiment("reproduce_geyer2017")
    if not Path(module.DEFAULT_DATA).is_dir():
        pytest.skip(f"MNIST folder not found at {module.DEFAULT_DATA}")
    return module


@pytest.fixture(scope="module")
def quick(repro, tmp_path_factory):
    """The script's --quick mode, run once through main()."""
    folder = tmp_path_factory.mktemp("geyer")
    argv = ["--quick", "--quiet", "--json", str(folder / "quick.json")]
    try:
        import matplotlib  # noqa: F401
        argv += ["--plot", str(folder / "figs")]
    except ImportError:
        pass
    return repro.main(argv), folder


def test_load_mnist(repro):
    X, y, X_test, y_test = repro.load_mnist()
    assert X.shape == (60_000, 784) and X_test.shape == (10_000, 784)
    assert X.dtype == np.float32 and 0.0 <= X.min() and X.max() == 1.0
    np.testing.assert_array_equal(
        np.bincount(y), [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949])
    np.testing.assert_array_equal(
        np.bincount(y_test), [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009])
    assert abs(float(X.mean()) - 0.1307) < 1e-3


def test_missing_data_is_a_clear_error(repro, tmp_path):
    with pytest.raises(FileNotFoundError, match="--data"):
        repro.load_mnist(tmp_path / "nope")
    with pytest.raises(SystemExit):
        repro.main(["--quick", "--data", str(tmp_path / "nope")])


def test_shards_are_non_iid_and_partition_the_rows(repro):
    y = np.repeat(np.arange(10), 600)  # 6,000 rows, label-sorted already
    parts = repro.shard_clients(y, 100, seed=0)
    assert len(parts) == 100
    rows = np.sort(np.concatenate(parts))
    np.testing.assert_array_equal(rows, np.arange(6_000))
    assert all(p.size == 60 for p in parts)
    assert all(len(np.unique(y[p])) <= 2 for p in parts)  # two label-sorted shards
    assert any(len(np.unique(y[p])) == 2 for p in parts)
    again = repro.shard_clients(y, 100, seed=0)
    assert all(np.array_equal(a, b) for a, b in zip(parts, again))


def test_validation_split_is_disjoint(repro):
    X = np.arange(100, dtype=float)[:, None]
    y = np.arange(100) % 10
    X_fit, y_fit, X_val, y_val = repro.validation_split(X, y, n_validation=20)
    assert X_fit.shape[0] == 80 and X_val.shape[0] == 20
    assert not set(X_fit[:, 0]) & set(X_val[:, 0])


def test_rounds_allowed_matches_the_aggregator(repro):
    from dptrees.federated import DPAggregator, FixedClip

    q, z, delta = 0.3, 1.0, 1e-3
    allowed = repro.rounds_allowed(q, z, repro.EPSILON, delta)
    agg = DPAggregator(10, q, z, FixedClip(1.0), repro.EPSILON, delta)
    n = 0
    while agg.can_run_round():
        agg.rdp_accountant.compose_subsampled_discrete_gaussian(q, z)
        n += 1
    assert n == allowed > 0


def test_momentum_is_post_processing(repro):
    from dptrees.federated import FixedClip

    agg = repro.MomentumAggregator(4, 1.0, 1.0, FixedClip(1.0), 8.0, 1e-3, momentum=0.5,
                                   random_state=0)
    first = agg.aggregate([], 3)
    second = agg.aggregate([], 3)
    assert agg.rounds == 2
    assert np.all(np.isfinite(second)) and not np.array_equal(first, second)


def test_cosine_schedule_scales_the_released_step(repro):
    """The server schedule multiplies the step by a function of the public round index
    only: the same noise, scaled by (1 + cos(pi r / R)) / 2."""
    from dptrees.federated import FixedClip

    assert repro.server_step_scale("constant", 10) is None
    scale = repro.server_step_scale("cosine", 4)
    assert [scale(r) for r in (0, 2, 4, 9)] == pytest.approx([1.0, 0.5, 0.0, 0.0])
    with pytest.raises(ValueError, match="unknown server schedule"):
        repro.server_step_scale("step", 4)
    args = (4, 1.0, 1.0, FixedClip(1.0), 8.0, 1e-3)
    plain = repro.MomentumAggregator(*args, random_state=0)
    scaled = repro.MomentumAggregator(*args, step_scale=scale, random_state=0)
    for r in range(3):
        np.testing.assert_allclose(scaled.aggregate([], 5), scale(r) * plain.aggregate([], 5))


def test_layer_clip_keeps_the_sensitivity(repro):
    """Each layer is cut to its share of S, the whole to at most S (plus rounding); the
    adaptive clip's bit still reports the unclipped norm."""
    model = repro.NumpyMLP((6, 5, 4, 3), random_state=0)
    rng = np.random.default_rng(0)
    X, y = rng.random((12, 6)), rng.integers(0, 3, 12)
    v = model.init_vector()
    for shares in (None, (0.8, 0.5, 0.33)):
        client = repro.LayerClipClient(model, X, y, epochs=2, batch_size=4,
                                       learning_rate=1.0, random_state=0, shares=shares)
        u = repro.MLPClient(model, X, y, epochs=2, batch_size=4, learning_rate=1.0,
                            random_state=0).update(v, 0)
        norm = np.linalg.norm(u)
        for S in (norm / 10, norm * 10):
            twin = repro.LayerClipClient(model, X, y, epochs=2, batch_size=4,
                                         learning_rate=1.0, random_state=0, shares=shares)
            c = twin.contribute(v, 0, S, 24)
            assert c.within_bound == int(norm <= S)
            assert np.linalg.norm(c.vector) <= S + np.sqrt(v.size) * 2.0**-25
            for (lo, hi), share in zip(twin.bounds, twin.shares):
                assert np.linalg.norm(c.vector[lo:hi]) <= share * S + 1e-6
        assert client.bounds[-1][1] == model.n_params
    with pytest.raises(ValueError, match="shares"):
        repro.LayerClipClient(model, X, y, shares=(0.9, 0.9, 0.9))


def test_random_shifts_move_whole_images(repro):
    shift = repro.random_shifts(2)
    rng = np.random.default_rng(0)
    X = np.zeros((50, 784), np.float32)
    X[:, 14 * 28 + 14] = 1.0  # one lit pixel in the middle
    out = shift(X, rng)
    assert out.shape == X.shape and out.dtype == np.float32
    where = np.argwhere(out.reshape(50, 28, 28) == 1.0)
    assert where.shape == (50, 3) and np.array_equal(where[:, 0], np.arange(50))
    moves = where[:, 1:] - 14
    assert np.abs(moves).max() == 2 and len({tuple(m) for m in moves}) > 10
    assert out.sum() == 50  # nothing lost or duplicated


def test_quick_structure(repro, quick):
    out, folder = quick
    assert out["settings"]["quick"] and out["settings"]["eval"] == "test"
    (row,) = out["results"]
    for key in ("accuracy", "rounds", "communication", "epsilon", "delta", "wall_time",
                "curve", "delta_per_round", "config", "rounds_allowed", "baseline",
                "train_accuracy", "other_ema_accuracy"):
        assert key in row
    assert 0.0 <= row["accuracy"] <= 1.0 and 0.0 <= row["train_accuracy"] <= 1.0
    assert set(row["other_ema_accuracy"]) == set(repro.EMA_ALTERNATIVES) - {
        row["config"]["ema"]}
    assert 1 <= row["rounds"] <= min(row["config"]["max_rounds"], row["rounds_allowed"])
    assert row["communication"] >= 0 and row["epsilon"] == repro.EPSILON
    assert 0 < row["delta"] <= row["config"]["delta"]
    assert len(row["delta_per_round"]) == row["rounds"]
    assert np.all(np.diff(row["delta_per_round"]) >= 0)
    assert row["curve"][-1]["round"] == row["rounds"]
    assert math.isfinite(row["wall_time"]) and row["wall_time"] >= 0
    base = row["baseline"]
    assert 0.0 <= base["accuracy"] <= 1.0 and base["rounds"] == repro.QUICK["baseline_rounds"]
    assert (folder / "quick.json").stat().st_size > 0
    for path in out.get("figures", []):
        assert Path(path).stat().st_size > 0
