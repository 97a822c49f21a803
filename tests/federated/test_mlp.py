"""Tests of the numpy perceptron of the federated module and its client."""

import numpy as np
import pytest

from dptrees.federated import DPAggregator, FixedClip, run_federated
from dptrees.federated._mlp import MLPClient, NumpyMLP


def _toy(n=200, p=4, classes=3, seed=0):
    """Gaussian blobs: class ``c`` centred at ``2 e_c`` (well separated)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    X = 0.5 * rng.standard_normal((n, p))
    X[np.arange(n), y] += 2.0
    return X, y


def test_layout_and_round_trip():
    model = NumpyMLP((5, 4, 3), random_state=0)
    assert model.n_params == 5 * 4 + 4 + 4 * 3 + 3
    v = model.init_vector()
    assert v.dtype == np.float64 and v.shape == (model.n_params,)
    layers = model.unpack(v)
    assert [(W.shape, b.shape) for W, b in layers] == [((5, 4), (4,)), ((4, 3), (3,))]
    assert all(np.all(b == 0) for _, b in layers)
    np.testing.assert_array_equal(model.pack(layers), v)
    layers[0][0][0, 0] = 7.0  # views into the vector
    assert v[0] == 7.0
    with pytest.raises(ValueError):
        model.unpack(v[:-1])


def test_init_is_seeded():
    a = NumpyMLP((6, 5, 2), random_state=3).init_vector()
    b = NumpyMLP((6, 5, 2), random_state=3).init_vector()
    c = NumpyMLP((6, 5, 2), random_state=4).init_vector()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    W1 = NumpyMLP((400, 300, 10), random_state=0).unpack(
        NumpyMLP((400, 300, 10), random_state=0).init_vector())[0][0]
    assert abs(W1.std() - np.sqrt(2 / 400)) < 0.05 * np.sqrt(2 / 400)  # He
    tanh = NumpyMLP((400, 300, 10), random_state=0, activation="tanh")
    W1 = tanh.unpack(tanh.init_vector())[0][0]
    assert abs(W1.std() - np.sqrt(2 / 700)) < 0.05 * np.sqrt(2 / 700)  # Glorot


def test_unknown_activation_is_rejected():
    with pytest.raises(ValueError, match="activation"):
        NumpyMLP((4, 3, 2), activation="sigmoid")


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_gradient_matches_finite_differences(activation):
    model = NumpyMLP((5, 4, 3, 3), random_state=0, activation=activation)
    rng = np.random.default_rng(1)
    v = model.init_vector() + 0.1 * rng.standard_normal(model.n_params)
    X = rng.random((7, 5))
    y = rng.integers(0, 3, 7)
    loss, grad = model.loss_and_gradient(v, X, y)
    assert grad.shape == v.shape and np.isfinite(loss)
    h = 1e-6
    numeric = np.empty_like(v)
    for i in range(v.size):
        e = np.zeros_like(v)
        e[i] = h
        numeric[i] = (model.loss_and_gradient(v + e, X, y)[0]
                      - model.loss_and_gradient(v - e, X, y)[0]) / (2 * h)
    np.testing.assert_allclose(grad, numeric, atol=1e-7, rtol=1e-5)


def test_probabilities_and_loss_at_uniform():
    model = NumpyMLP((3, 4), random_state=0)
    v = np.zeros(model.n_params)
    X = np.ones((5, 3))
    np.testing.assert_allclose(model.predict_proba(v, X), 0.25)
    loss, _ = model.loss_and_gradient(v, X, np.arange(5) % 4)
    assert loss == pytest.approx(np.log(4))


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_full_batch_sgd_step_is_a_gradient_step(activation):
    model = NumpyMLP((4, 6, 3), random_state=0, compute_dtype=np.float64,
                     activation=activation)
    X, y = _toy(n=12, p=4)
    v = model.init_vector()
    _, grad = model.loss_and_gradient(v, X, y)
    stepped = model.local_sgd(v, X, y, epochs=1, batch_size=12, learning_rate=0.1, rng=0)
    np.testing.assert_allclose(stepped, v - 0.1 * grad, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_local_sgd_decreases_the_loss(dtype):
    model = NumpyMLP((4, 16, 3), random_state=0, compute_dtype=dtype)
    X, y = _toy()
    v = model.init_vector()
    before = model.loss_and_gradient(v, X, y)[0]
    trained = model.local_sgd(v, X, y, epochs=5, batch_size=10, learning_rate=0.1, rng=0)
    assert trained.dtype == np.float64
    assert model.loss_and_gradient(trained, X, y)[0] < 0.5 * before
    assert model.accuracy(trained, X, y) > 0.9
    # seeded: the same shuffling gives the same vector
    again = model.local_sgd(v, X, y, epochs=5, batch_size=10, learning_rate=0.1, rng=0)
    np.testing.assert_array_equal(trained, again)


def test_float32_training_keeps_the_float64_start():
    model = NumpyMLP((4, 8, 3), random_state=0)  # float32 compute
    X, y = _toy(n=20)
    v = model.init_vector() + 1e-12  # not representable in float32
    assert np.array_equal(model.local_sgd(v, X, y, 0, 5, 0.1, 0), v)  # zero epochs: no change


def test_client_update():
    model = NumpyMLP((4, 8, 3), random_state=0)
    X, y = _toy(n=30)
    client = MLPClient(model, X, y, epochs=2, batch_size=5, learning_rate=0.1,
                       random_state=0)
    v = model.init_vector()
    u = client.update(v, 0)
    assert u.shape == v.shape and u.dtype == np.float64 and np.linalg.norm(u) > 0
    twin = MLPClient(model, X, y, epochs=2, batch_size=5, learning_rate=0.1,
                     random_state=0)
    expected = model.local_sgd(v, X, y, 2, 5, 0.1, np.random.default_rng(0)) - v
    np.testing.assert_allclose(twin.update(v, 0), expected, atol=1e-12)
    c = client.contribute(v, 1, clip_norm=1e-3, frac_bits=24)
    assert np.linalg.norm(c.vector) <= 1e-3 + np.sqrt(v.size) * 2.0**-25
    with pytest.raises(ValueError):
        MLPClient(model, X, y[:-1])


def test_client_transform_is_applied_every_epoch():
    """A transform changes the data each local epoch, draws from the client's stream,
    and must keep the feature shape."""
    model = NumpyMLP((4, 8, 3), random_state=0)
    X, y = _toy(n=30)
    seen = []

    def record(Xe, rng):
        seen.append(Xe.copy())
        return Xe + rng.normal(0.0, 0.1, Xe.shape)

    client = MLPClient(model, X, y, epochs=3, batch_size=5, learning_rate=0.1,
                       random_state=0, transform=record)
    v = model.init_vector()
    u = client.update(v, 0)
    assert len(seen) == 3 and all(np.array_equal(a, X.astype(np.float32)) for a in seen)
    plain = MLPClient(model, X, y, epochs=3, batch_size=5, learning_rate=0.1,
                      random_state=0).update(v, 0)
    assert not np.allclose(u, plain)
    identity = MLPClient(model, X, y, epochs=3, batch_size=5, learning_rate=0.1,
                         random_state=0, transform=lambda Xe, rng: Xe).update(v, 0)
    np.testing.assert_array_equal(identity, plain)
    bad = MLPClient(model, X, y, epochs=1, transform=lambda Xe, rng: Xe[:, :2])
    with pytest.raises(ValueError, match="transform changed the feature shape"):
        bad.update(v, 0)


def test_run_federated_improves_accuracy():
    """Non-IID clients (one class each) learn the blobs together under DP-FedAvg."""
    model = NumpyMLP((4, 16, 3), random_state=0)
    X, y = _toy(n=900)
    X_test, y_test = _toy(n=300, seed=1)
    n_clients = 30
    clients = []
    for k in range(n_clients):
        rows = np.flatnonzero(y == k % 3)[k // 3::n_clients // 3]
        clients.append(MLPClient(model, X[rows], y[rows], epochs=1, batch_size=10,
                                 learning_rate=0.1, random_state=k))
    agg = DPAggregator(n_clients, 0.5, 1.0, FixedClip(0.5), epsilon=20.0, max_delta=1e-3,
                       random_state=0)
    v0 = model.init_vector()
    v, history = run_federated(v0, clients, agg, max_rounds=20)
    assert 10 <= len(history) <= 20
    assert history[-1]["delta"] <= 1e-3
    before, after = model.accuracy(v0, X_test, y_test), model.accuracy(v, X_test, y_test)
    assert after > 0.9 and after > before + 0.2, (before, after)
