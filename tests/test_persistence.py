"""Saved and loaded models keep their predictions and their privacy state.

Every estimator family, in the configurations that change what a fitted model holds
(tables with categories, Renyi and PLD accounting, federated clipping rules, an
accountant of its own), round-trips through ``dptrees.persistence`` (skops, with only
dptrees' listed types trusted) and through pickle: same predictions, same
``privacy_report()``, same ledger. A file with a type outside the list is refused.
"""

import pickle

import numpy as np
import pytest

from dptrees import (
    BudgetAccountant,
    DPAdaBoostClassifier,
    DPDecisionTreeClassifier,
    DPDecisionTreeRegressor,
    DPExplainableBoostingClassifier,
    DPExplainableBoostingRegressor,
    DPExtraTreesRegressor,
    DPGradientBoostingClassifier,
    DPGradientBoostingRegressor,
    DPPartitionForestClassifier,
)
from dptrees.federated import (
    DPFederatedGradientBoostingClassifier,
    DPFederatedGradientBoostingRegressor,
)
from dptrees.persistence import load, save, trusted_types

pd = pytest.importorskip("pandas")
skops_io = pytest.importorskip("skops.io")

DOMAIN = {"x0": (0.0, 1.0), "x1": (0.0, 1.0), "colour": ["red", "green", "blue"]}


def table(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"x0": rng.random(n), "x1": rng.random(n),
                      "colour": rng.choice(["red", "green", "blue", None], n)})
    y = (X["x0"] + (X["colour"] == "red") > 0.8).astype(int).to_numpy()
    return X, y


def models():
    clf = dict(bounds=DOMAIN, classes=[0, 1], random_state=0)
    reg = dict(bounds=DOMAIN, y_bounds=(0, 1), random_state=0)
    yield DPDecisionTreeClassifier(**clf)
    yield DPDecisionTreeRegressor(accountant=BudgetAccountant(50.0), **reg)
    yield DPPartitionForestClassifier(n_estimators=3, **clf)
    yield DPExtraTreesRegressor(n_estimators=3, **reg)
    yield DPGradientBoostingClassifier(n_estimators=5, **clf)
    yield DPGradientBoostingRegressor(n_estimators=5, accounting="pld", **reg)
    yield DPExplainableBoostingClassifier(**clf)
    yield DPExplainableBoostingRegressor(**reg)
    yield DPAdaBoostClassifier(n_estimators=4, **clf)
    yield DPFederatedGradientBoostingClassifier(n_estimators=3, n_clients=400,
                                                clip_norm="adaptive", noise_multiplier=2.0, **clf)
    yield DPFederatedGradientBoostingRegressor(n_estimators=3, n_clients=400, **reg)


MODELS = list(models())
IDS = [f"{type(m).__name__}-{i}" for i, m in enumerate(MODELS)]


def fitted(est):
    X, y = table()
    if est.get_params().get("accountant") is None:
        est.set_params(accountant=BudgetAccountant(1e6, 1.0))
    return est.fit(X, y.astype(float) if "y_bounds" in est.get_params() else y), X


def _outputs(est, X):
    return est.predict_proba(X) if hasattr(est, "predict_proba") else est.predict(X)


@pytest.mark.parametrize("est", MODELS, ids=IDS)
def test_skops_round_trip_keeps_predictions_and_privacy_state(est, tmp_path):
    est, X = fitted(est)
    path = tmp_path / "model.skops"
    save(est, path)
    assert set(skops_io.get_untrusted_types(file=path)) <= set(trusted_types())
    loaded = load(path)
    np.testing.assert_array_equal(_outputs(loaded, X), _outputs(est, X))
    assert loaded.privacy_report() == est.privacy_report()
    assert loaded.privacy_report().to_json() == est.privacy_report().to_json()
    assert loaded.epsilon_spent_ == est.epsilon_spent_
    assert loaded.delta_spent_ == est.delta_spent_
    np.testing.assert_array_equal(loaded.feature_importances_, est.feature_importances_)
    with pytest.raises(ValueError, match="feature names should match"):
        loaded.predict(X[["x1", "x0", "colour"]])


@pytest.mark.parametrize("est", MODELS, ids=IDS)
def test_pickle_round_trip_keeps_predictions_and_privacy_state(est):
    est, X = fitted(est)
    loaded = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(_outputs(loaded, X), _outputs(est, X))
    assert loaded.privacy_report() == est.privacy_report()


class Unlisted:
    """A type dptrees does not list as trusted."""


def test_a_file_with_an_unlisted_type_is_refused(tmp_path):
    est, _ = fitted(DPDecisionTreeClassifier(bounds=DOMAIN, classes=[0, 1], random_state=0))
    est.extra_ = Unlisted()
    path = tmp_path / "model.skops"
    save(est, path)
    with pytest.raises(ValueError, match="not trusted.*Unlisted"):
        load(path)
    name = f"{Unlisted.__module__}.Unlisted"
    assert isinstance(load(path, trusted=[name]).extra_, Unlisted)


def test_a_pipeline_with_the_schema_encoder_round_trips(tmp_path):
    """The library's own encoder is a trusted type: a Pipeline(PublicSchemaEncoder,
    DPGradientBoostingClassifier) saves and loads with nothing else trusted."""
    from sklearn.pipeline import make_pipeline

    from dptrees.preprocessing import PublicSchemaEncoder

    X, y = table()
    X = X.assign(colour=X["colour"].fillna("red"))
    encoder = PublicSchemaEncoder(schema=[(0.0, 1.0), (0.0, 1.0), ["red", "green", "blue"]])
    pipe = make_pipeline(encoder, DPGradientBoostingClassifier(
        n_estimators=3, bounds=(-0.5, 2.5), classes=[0, 1],
        accountant=BudgetAccountant(10.0, 1e-5))).fit(X, y)
    save(pipe, tmp_path / "pipe.skops")
    loaded = load(tmp_path / "pipe.skops")
    np.testing.assert_array_equal(loaded.predict_proba(X), pipe.predict_proba(X))
    assert str(loaded[-1].privacy_report()) == str(pipe[-1].privacy_report())
