"""Tests for dptrees.federated.flower: the Flower adapter runs the same protocol.

Unit tests drive the client wrapper and the strategy directly (fake client manager and
proxies that call the wrapped clients in-process, through Flower's own NumPyClient
conversion); one test runs a real Flower simulation (``flwr.simulation.run_simulation``,
Ray backend, ~20 s) and checks it releases exactly the model of ``run_federated``.
"""

import subprocess
import sys

import numpy as np
import pytest

flwr = pytest.importorskip("flwr")

from flwr.common import (  # noqa: E402
    Code,
    FitIns,
    FitRes,
    GetPropertiesRes,
    Status,
    ndarrays_to_parameters,
    parameters_to_ndarrays,
)

from dptrees.federated import (  # noqa: E402
    AdaptiveClip,
    DPAggregator,
    FederatedClient,
    FixedClip,
    run_federated,
)
from dptrees.federated.flower import (  # noqa: E402
    DPFedAvgStrategy,
    DPFlowerClient,
    vector_from_ndarrays,
)

D = 3
W_TRUE = np.array([1.0, -2.0, 0.5])


class LinearClient(FederatedClient):
    """Least squares on its own 20 points: update = one gradient step (deterministic)."""

    def __init__(self, index, lr=0.5):
        rng = np.random.default_rng(index)
        self.X = rng.normal(size=(20, D))
        self.y = self.X @ W_TRUE + 0.1 * rng.normal(size=20)
        self.lr = lr

    def update(self, global_vector, round_index):
        grad = self.X.T @ (self.X @ global_vector - self.y) / len(self.y)
        return -self.lr * grad


def make_aggregator(n_clients=5, q=0.6, seed=7, clip=None, max_delta=1e-3):
    return DPAggregator(n_clients, q, 1.0, FixedClip(1.0) if clip is None else clip,
                        epsilon=10.0, max_delta=max_delta, random_state=seed)


# --------------------------------------------------------------------------------------
# In-process fakes of Flower's server-side client manager and proxies
# --------------------------------------------------------------------------------------


class FakeProxy:
    def __init__(self, cid, flower_client, fail=False):
        self.cid = cid
        self.client = flower_client.to_client()  # Flower's own NumPyClient conversion
        self.fail = fail
        self.property_calls = 0

    def get_properties(self, ins, timeout, group_id):
        self.property_calls += 1
        return self.client.get_properties(ins)

    def fit(self, ins):
        if self.fail:
            raise ConnectionError("node lost")
        return self.client.fit(ins)


class FakeManager:
    def __init__(self, proxies):
        self.proxies = {p.cid: p for p in proxies}

    def wait_for(self, num_clients, timeout):
        return len(self.proxies) >= num_clients

    def all(self):
        return dict(self.proxies)


def fake_federation(n_clients, fail=()):
    # Node ids unrelated to the client ids, in shuffled order.
    order = np.random.default_rng(0).permutation(n_clients)
    proxies = [FakeProxy(f"node-{1000 + 7 * i}", DPFlowerClient(LinearClient(int(i)), int(i)),
                         fail=int(i) in fail) for i in order]
    return FakeManager(proxies), proxies


def drive(strategy, manager, n_rounds):
    """What Flower's server does each round, without a server."""
    parameters = strategy.initialize_parameters(manager)
    sent = []
    for server_round in range(1, n_rounds + 1):
        instructions = strategy.configure_fit(server_round, parameters, manager)
        sent.append(instructions)
        if not instructions:
            continue
        results, failures = [], []
        for proxy, ins in instructions:
            try:
                results.append((proxy, proxy.fit(ins)))
            except ConnectionError as exc:
                failures.append(exc)
        new, _ = strategy.aggregate_fit(server_round, results, failures)
        if new is not None:
            parameters = new
    return parameters, sent


# --------------------------------------------------------------------------------------
# The client wrapper
# --------------------------------------------------------------------------------------


def test_client_wrapper_fit_returns_the_clipped_contribution():
    inner = LinearClient(3)
    client = DPFlowerClient(inner, 3)
    assert client.get_properties({}) == {"client_id": 3}
    w = np.array([0.2, 0.1, -0.3])
    config = {"round_index": 4, "clip_norm": 0.25, "frac_bits": 12}
    arrays, n, metrics = client.fit([w[:2], w[2:]], config)  # several arrays: flattened
    expected = inner.contribute(w, 4, 0.25, 12)
    assert len(arrays) == 1 and np.array_equal(arrays[0], expected.vector)
    assert n == 1  # the client's data size is not revealed
    assert metrics == {"within_bound": expected.within_bound, "client_id": 3}
    assert np.linalg.norm(arrays[0]) <= 0.25 + np.sqrt(D) * 2.0**-13
    # Through Flower's conversion (serialisation keeps the grid values exact).
    res = client.to_client().fit(FitIns(ndarrays_to_parameters([w]), config))
    assert np.array_equal(parameters_to_ndarrays(res.parameters)[0], expected.vector)
    assert res.metrics["within_bound"] == expected.within_bound


def test_client_wrapper_errors():
    with pytest.raises(TypeError, match="FederatedClient"):
        DPFlowerClient(object(), 0)
    for bad in (-1, 1.5, True, "0"):
        with pytest.raises(ValueError, match="client_id"):
            DPFlowerClient(LinearClient(0), bad)
    client = DPFlowerClient(LinearClient(0), 0)
    with pytest.raises(ValueError, match="clip_norm"):
        client.fit([np.zeros(D)], {"round_index": 0, "frac_bits": 24})
    with pytest.raises(ValueError, match="clip_norm"):
        client.fit([np.zeros(D)], {"round_index": 0, "clip_norm": -1.0, "frac_bits": 24})
    assert vector_from_ndarrays([]).shape == (0,)


# --------------------------------------------------------------------------------------
# The strategy, driven without a server
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("clip", ["fixed", "adaptive"])
def test_strategy_equals_run_federated(clip):
    def rule():
        return FixedClip(1.0) if clip == "fixed" else AdaptiveClip(0.5, bit_noise_multiplier=1.0)

    n_clients, rounds = 8, 6
    manager, proxies = fake_federation(n_clients)
    strategy = DPFedAvgStrategy(make_aggregator(n_clients, q=0.4, clip=rule()), np.zeros(D),
                                server_learning_rate=0.8)
    parameters, sent = drive(strategy, manager, rounds)
    ref_agg = make_aggregator(n_clients, q=0.4, clip=rule())
    ref, history = run_federated(np.zeros(D), [LinearClient(i) for i in range(n_clients)],
                                 ref_agg, rounds, server_learning_rate=0.8)
    np.testing.assert_array_equal(strategy.vector, ref)
    assert [{k: h[k] for k in ref_h} for h, ref_h in zip(strategy.history, history)] == history
    assert strategy.aggregator.rounds == ref_agg.rounds == rounds
    assert strategy.aggregator.spent() == ref_agg.spent()
    # Each node was asked its client id once; instructions carry the protocol's config.
    assert all(p.property_calls == 1 for p in proxies)
    for r, instructions in enumerate(sent):
        assert len(instructions) == history[r]["n_sampled"]
        for _, ins in instructions:
            assert ins.config["round_index"] == r
            assert ins.config["clip_norm"] == history[r]["clip_norm"]
            assert ins.config["frac_bits"] == ref_agg.frac_bits


def test_strategy_samples_with_the_aggregators_poisson_sampling():
    n_clients = 10
    manager, _ = fake_federation(n_clients)
    strategy = DPFedAvgStrategy(make_aggregator(n_clients, q=0.3, seed=11), np.zeros(D))
    twin = make_aggregator(n_clients, q=0.3, seed=11)
    for server_round in (1, 2, 3):
        instructions = strategy.configure_fit(server_round, None, manager)
        expected = twin.sample_clients()
        got = sorted(strategy._client_of_node[p.cid] for p, _ in instructions)
        assert got == list(expected)
        if instructions:
            strategy.aggregate_fit(server_round, [(p, p.fit(ins)) for p, ins in instructions],
                                   [])
            twin.aggregate([], D)  # keep the twin's noise stream in step


def test_strategy_stops_before_the_delta_bound():
    n_clients = 5
    manager, _ = fake_federation(n_clients)
    # A bound that allows a few rounds only.
    agg = make_aggregator(n_clients, q=1.0, max_delta=1e-5)
    strategy = DPFedAvgStrategy(agg, np.zeros(D))
    _, sent = drive(strategy, manager, 30)
    n_run = agg.rounds
    assert 0 < n_run < 30 and strategy.stopped
    assert all(sent[:n_run]) and not any(sent[n_run:])
    assert agg.spent()[1] <= 1e-5 and not agg.can_run_round()
    ref_agg = make_aggregator(n_clients, q=1.0, max_delta=1e-5)
    ref, history = run_federated(np.zeros(D), [LinearClient(i) for i in range(n_clients)],
                                 ref_agg, 30)
    assert len(history) == n_run
    np.testing.assert_array_equal(strategy.vector, ref)


def test_empty_samples_and_failures_still_release_noise():
    n_clients, rounds = 6, 16
    # q small: some rounds sample nobody; client 2 always fails (one round it alone is
    # sampled, so every sampled client fails).
    manager, _ = fake_federation(n_clients, fail={2})
    strategy = DPFedAvgStrategy(make_aggregator(n_clients, q=0.2, seed=4), np.zeros(D))
    _, sent = drive(strategy, manager, rounds)
    assert strategy.aggregator.rounds == rounds
    assert sum(not s for s in sent) == 3  # empty rounds were still released
    assert [h["round"] for h in strategy.history] == list(range(1, rounds + 1))
    assert sum(h["n_failures"] for h in strategy.history) == 5
    assert any(h["n_failures"] == h["n_sampled"] == 1 for h in strategy.history)
    # The same as the protocol run with client 2 dropping out (contributing nothing).
    agg = make_aggregator(n_clients, q=0.2, seed=4)
    clients = [LinearClient(i) for i in range(n_clients)]
    vector = np.zeros(D)
    for r in range(rounds):
        sampled = agg.sample_clients()
        contributions = [clients[i].contribute(vector, r, agg.clip_norm, agg.frac_bits)
                         for i in sampled if i != 2]
        vector = vector + agg.aggregate(contributions, D)
    np.testing.assert_array_equal(strategy.vector, vector)


def test_strategy_rejects_malformed_results():
    n_clients = 4
    manager, proxies = fake_federation(n_clients)
    strategy = DPFedAvgStrategy(make_aggregator(n_clients, q=1.0), np.zeros(D))
    instructions = strategy.configure_fit(1, None, manager)
    proxy, ins = instructions[0]
    good = proxy.fit(ins)

    def res(arrays, bit=1):
        return FitRes(Status(Code.OK, ""), ndarrays_to_parameters(arrays), 1,
                      {"within_bound": bit})

    rdp = strategy.aggregator.rdp_accountant.rdp
    cases = [
        ([(proxy, good), (proxy, good)], "twice"),
        ([(proxy, res([np.zeros(D + 1)]))], "shape"),
        ([(proxy, res([np.zeros(D), np.zeros(D)]))], "arrays"),
        ([(proxy, res([np.full(D, 1.0 / 3.0)]))], "grid"),
        ([(proxy, res([np.full(D, 4.0)]))], "unclipped"),
        ([(proxy, res([np.zeros(D)], bit=2))], "within_bound"),
    ]
    for results, match in cases:
        with pytest.raises(ValueError, match=match):
            strategy.aggregate_fit(1, results, [])
    # Nothing was released by the rejected rounds.
    assert strategy.aggregator.rounds == 0
    np.testing.assert_array_equal(strategy.aggregator.rdp_accountant.rdp, rdp)


def test_strategy_checks_client_ids_and_parameters():
    class BadId:
        cid = "x"

        def get_properties(self, ins, timeout, group_id):
            return GetPropertiesRes(Status(Code.OK, ""), {"client_id": 99})

    strategy = DPFedAvgStrategy(make_aggregator(4), np.zeros(D))
    with pytest.raises(ValueError, match="client_id 99"):
        strategy.configure_fit(1, None, FakeManager([BadId()]))
    manager, proxies = fake_federation(2)
    clash = FakeProxy("other", DPFlowerClient(LinearClient(0), 0))
    with pytest.raises(ValueError, match="claim client_id"):
        DPFedAvgStrategy(make_aggregator(2), np.zeros(D)).configure_fit(
            1, None, FakeManager(proxies + [clash]))
    with pytest.raises(TypeError, match="DPAggregator"):
        DPFedAvgStrategy(object(), np.zeros(D))
    with pytest.raises(ValueError, match="initial_vector"):
        DPFedAvgStrategy(make_aggregator(2), np.array([]))
    with pytest.raises(ValueError, match="server_learning_rate"):
        DPFedAvgStrategy(make_aggregator(2), np.zeros(D), server_learning_rate=0.0)
    # No evaluation is configured (it would need its own accounting).
    assert strategy.configure_evaluate(1, None, manager) == []
    assert strategy.evaluate(1, None) is None


def test_missing_flwr_gives_a_clear_import_error():
    code = ("import sys; sys.modules['flwr'] = None\n"
            "try:\n    import dptrees.federated.flower\n"
            "except ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert 'pip install "dptrees[flower]"' in out.stdout, out.stderr


# --------------------------------------------------------------------------------------
# A real Flower simulation
# --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_flower_simulation_equals_run_federated(monkeypatch, tmp_path):
    pytest.importorskip("ray")
    # Ray's worker processes are plain interpreters started in the current directory:
    # keep the source tree off their import path (what ``python -P`` does for pytest),
    # so that they import the installed, compiled dptrees.
    monkeypatch.setenv("PYTHONSAFEPATH", "1")
    # the behaviour Ray announces for its next versions, without its FutureWarning
    monkeypatch.setenv("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")
    monkeypatch.chdir(tmp_path)
    from flwr.client import ClientApp
    from flwr.server import ServerApp, ServerAppComponents, ServerConfig
    from flwr.simulation import run_simulation

    n_clients, rounds = 5, 3
    strategy = DPFedAvgStrategy(make_aggregator(n_clients), np.zeros(D))

    def client_fn(context):
        index = int(context.node_config["partition-id"])
        return DPFlowerClient(LinearClient(index), index).to_client()

    def server_fn(context):
        return ServerAppComponents(strategy=strategy, config=ServerConfig(num_rounds=rounds))

    run_simulation(
        server_app=ServerApp(server_fn=server_fn),
        client_app=ClientApp(client_fn=client_fn),
        num_supernodes=n_clients,
        backend_config={"client_resources": {"num_cpus": 1, "num_gpus": 0.0},
                        "init_args": {"num_cpus": 2, "include_dashboard": False}},
    )
    ref_agg = make_aggregator(n_clients)
    ref, history = run_federated(np.zeros(D), [LinearClient(i) for i in range(n_clients)],
                                 ref_agg, rounds)
    assert strategy.aggregator.rounds == rounds
    np.testing.assert_array_equal(strategy.vector, ref)
    assert [h["n_sampled"] for h in strategy.history] == [h["n_sampled"] for h in history]
    assert [h["n_received"] for h in strategy.history] == [h["n_sampled"] for h in history]
    assert strategy.aggregator.spent() == ref_agg.spent()


class EmptyClient(FederatedClient):
    """A client holding no records: it has nothing to send."""

    def update(self, global_vector, round_index):
        return None


def test_client_without_records_takes_no_part():
    """DPFlowerClient sends no array for an empty client, and the strategy aggregates
    it as absent (the neighbouring relation of dptrees.federated)."""
    n_clients = 4
    manager, proxies = fake_federation(n_clients)
    strategy = DPFedAvgStrategy(make_aggregator(n_clients, q=1.0), np.zeros(D))
    instructions = strategy.configure_fit(1, None, manager)
    proxy, ins = instructions[0]
    empty = DPFlowerClient(EmptyClient(), 0)
    arrays, n_examples, metrics = empty.fit([np.zeros(D)], ins.config)
    assert arrays == [] and n_examples == 0 and "within_bound" not in metrics
    res = FitRes(Status(Code.OK, ""), ndarrays_to_parameters(arrays), n_examples, metrics)
    assert strategy._contribution(res, 0) is None
    strategy.aggregate_fit(1, [(proxy, res)], [])
    assert strategy.aggregator.rounds == 1 and strategy.history[-1]["n_received"] == 0
