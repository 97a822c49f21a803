"""No released artefact carries a seed the user did not give, and no copy spends twice.

* Every estimator, the private search and the federated objects, fitted with
  ``random_state=None``: nothing in ``get_params()``, a pickle or a skops file is a numpy
  generator, bit generator or seed sequence (from which the noise could be recomputed).
* The search's seed-replay attack (rebuild the search's root seed from the winner's
  generator, replay the search on a candidate dataset, compare the models) is audited
  in quick mode: it replays nothing now, and the broken variant (the winner keeps its
  trial's generator) is flagged.
* The federated aggregator's copy attack (a checkpoint's copy shares the noise stream,
  so the difference of two releases cancels the noise) likewise; a copy also pays again
  and a detached accountant is refused every round.
* A model that stores a user-given seed says so in its report, and saving it warns.
"""

import copy
import io
import pickle
import warnings
import zipfile

import numpy as np
import pytest
from sklearn.base import clone

from dptrees import (
    BudgetAccountant,
    DPDecisionTreeClassifier,
    DPDecisionTreeRegressor,
    PrivacyLeakWarning,
)
from dptrees.privacy.report import SEEDED
from dptrees.audit import audit_pair
from dptrees.exceptions import DetachedAccountantError
from dptrees.federated import DPAggregator
from dptrees.federated._protocol import ClientContribution, FixedClip
from dptrees.model_selection import DPRandomSearch
from support import ALPHA, ESTIMATORS, IDS, fit_quietly, small_table

RANDOM_TYPES = (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence,
                np.random.RandomState)


class _RandomStateFinder(pickle.Pickler):
    """A pickler that records every numpy random object it is asked to pickle."""

    def __init__(self, file):
        super().__init__(file)
        self.found = []

    def reducer_override(self, obj):
        if isinstance(obj, RANDOM_TYPES):
            self.found.append(type(obj).__name__)
        return NotImplemented


def random_objects_in_pickle(obj):
    finder = _RandomStateFinder(io.BytesIO())
    finder.dump(obj)
    return finder.found


def assert_carries_no_seed(obj):
    if hasattr(obj, "get_params"):
        held = {k: type(v).__name__ for k, v in obj.get_params(deep=True).items()
                if isinstance(v, RANDOM_TYPES) or (k.endswith("random_state") and v is not None)}
        assert not held, held
    assert random_objects_in_pickle(obj) == []


@pytest.mark.parametrize("est", ESTIMATORS, ids=IDS)
def test_a_fit_without_a_seed_releases_nothing_the_noise_can_be_recomputed_from(est, tmp_path):
    X, y = small_table()
    est = fit_quietly(clone(est), X, y)
    assert_carries_no_seed(est)
    if isinstance(est, DPRandomSearch):
        assert_carries_no_seed(est.best_estimator_)
        assert est.best_estimator_.accountant is None  # the user's, never the trial's
    report = est.privacy_report()
    assert report["seed"] is None and "Seed:" not in str(report)
    sio = pytest.importorskip("skops.io")
    from dptrees.persistence import save, trusted_types

    path = tmp_path / "model.skops"
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        save(est, path)
    with zipfile.ZipFile(path) as archive:
        schema = archive.read("schema.json").decode()
    for name in ("Generator", "SeedSequence", "PCG64", "BitGenerator", "RandomState"):
        assert name not in schema
    assert set(sio.get_untrusted_types(file=path)) <= set(trusted_types())


def test_a_federated_aggregator_pickles_without_its_generators():
    agg = DPAggregator(100, 0.5, 2.0, FixedClip(1.0), 2.0, 1e-5,
                       accountant=BudgetAccountant(10.0, 1e-3))
    assert random_objects_in_pickle(agg) == []


# ======================================================================================
# A user-given seed is reported, and saving it warns
# ======================================================================================


def test_a_model_with_a_user_given_seed_says_so_and_saving_it_warns(tmp_path):
    pytest.importorskip("skops.io")
    from dptrees.persistence import save

    X, y = small_table()
    for seed in (0, np.random.default_rng(0)):
        est = DPDecisionTreeClassifier(bounds=(0, 1), classes=[0, 1], random_state=seed)
        report = est.fit(X, y).privacy_report()
        assert report["seed"] == SEEDED
        assert "noise reproducible from the seed" in str(report)
        with pytest.warns(PrivacyLeakWarning, match="user-given seed"):
            save(est, tmp_path / "seeded.skops")


def test_a_pipeline_with_a_seeded_step_warns_when_saved(tmp_path):
    pytest.importorskip("skops.io")
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    from dptrees.persistence import save

    X, y = small_table()
    pipe = make_pipeline(FunctionTransformer(),
                         DPDecisionTreeClassifier(bounds=(0, 1), classes=[0, 1],
                                                  random_state=3)).fit(X, y)
    with pytest.warns(PrivacyLeakWarning, match="dpdecisiontreeclassifier__random_state"):
        save(pipe, tmp_path / "pipe.skops")


# ======================================================================================
# The search: no seed, the user's accountant, its own leaks and report
# ======================================================================================


def _search(random_state=None):
    return DPRandomSearch(DPDecisionTreeClassifier(bounds=(0, 1), classes=[0, 1]),
                          {"max_depth": [1, 2]}, epsilon=0.5, mean_trials=1,
                          random_state=random_state)


def test_a_seeded_search_stays_reproducible_and_releases_the_users_seed_only():
    X, y = small_table()
    a, b = _search(5).fit(X, y), _search(5).fit(X, y)
    np.testing.assert_array_equal(a.best_estimator_.predict_proba(X),
                                  b.best_estimator_.predict_proba(X))
    assert a.best_estimator_.random_state is None  # the base estimator's
    assert a.privacy_report()["seed"] == SEEDED  # the search's own seed


def test_the_winner_refits_and_clones_from_the_users_budget():
    """Finding 2: the winner carried the trial's unlimited accountant, so a refit or a
    cross-validation of it inside a budget spent outside it."""
    from sklearn.model_selection import cross_val_score

    X, y = small_table()
    search = _search().fit(X, y)
    with BudgetAccountant(1.2, 1e-5) as acc:
        clone(search.best_estimator_).fit(X, y)
        cross_val_score(search.best_estimator_, X, y, cv=2)
    assert acc.spent == pytest.approx((3 * search.trial_epsilon_, 0.0))
    mine = BudgetAccountant(10.0)
    search = _search().set_params(accountant=mine).fit(X, y)
    assert search.best_estimator_.accountant is mine


def test_a_search_whose_trials_read_public_inputs_reports_no_guarantee():
    """Finding 3: trials with ``bounds=None`` leaked; the search claimed (epsilon, 0)."""
    X, y = small_table()
    search = DPRandomSearch(DPDecisionTreeClassifier(classes=[0, 1]), {"max_depth": [1, 2]},
                            mean_trials=2)
    with pytest.warns(PrivacyLeakWarning):
        search.fit(X, y)
    assert search.privacy_leaks_ and "bounds" in search.privacy_leaks_[0]
    assert str(search.privacy_report()).splitlines()[1].startswith("Guarantee: NONE")
    clean = _search().fit(X, y)
    assert clean.privacy_leaks_ == []
    report = clean.privacy_report()
    assert report["epsilon_spent"] == 0.5
    assert [e["epsilon"] for e in report["ledger"]] == pytest.approx([0.5, 0.5 / 3, 0.5 / 3])


def test_the_search_has_only_the_methods_of_its_estimator():
    X, y = small_table()
    reg = DPRandomSearch(DPDecisionTreeRegressor(bounds=(0, 1), y_bounds=(0, 1)),
                         {"max_depth": [1, 2]}, scoring="neg_mean_absolute_error",
                         error_bound=1.0, mean_trials=1)
    assert not hasattr(reg, "predict_proba")
    reg.fit(X, y.astype(float))
    for name in ("predict_proba", "predict_log_proba", "decision_function"):
        assert not hasattr(reg, name)
    assert hasattr(_search(), "predict_proba")


# --------------------------------------------------------------------------------------
# Finding 1 as an audit: the seed-replay attack
# --------------------------------------------------------------------------------------


def _replay_matches(model, search, X, y):
    """The attack: rebuild the search's root seed from the released winner's generator
    (its ``get_params()``; a pickle carries it too on numpy 2, whose bit generators
    pickle their seed sequence), replay the search on the candidate data ``(X, y)`` and
    compare the models. 1 if the replay gives the released model exactly, 0 if it cannot
    (no generator) or does not."""
    generator = model.get_params().get("random_state")
    if not isinstance(generator, np.random.Generator):
        return 0.0
    root = np.random.SeedSequence(generator.bit_generator.seed_seq.entropy)
    replay = clone(search).set_params(random_state=np.random.default_rng(root))
    replay.fit(X, y)
    # the candidate's records (the one a neighbour lacks among them) and a public grid
    grid = np.vstack([X, np.random.default_rng(1).random((50, X.shape[1]))])
    return float(np.array_equal(replay.best_estimator_.predict_proba(grid),
                                model.predict_proba(grid)))


def _seed_replay_audit():
    X0, y0 = small_table(n=120)
    X1, y1 = X0[1:], y0[1:]  # the neighbour: the first record removed
    search = _search()

    def sampler(X, y):
        def draw(rng):
            fitted = clone(search).fit(X, y)
            return _replay_matches(fitted.best_estimator_, search, X0, y0)  # guess: D0
        return draw

    return audit_pair(sampler(X0, y0), sampler(X1, y1), n_calibration=40, n_test=160,
                      batch=False, alpha=ALPHA, min_count=10, random_state=0)


def test_audit_the_search_releases_no_seed_to_replay(record_audit):
    result = record_audit(_seed_replay_audit(), 0.5)
    assert result.check(0.5), result


def test_control_a_winner_that_keeps_its_trial_generator_is_flagged(monkeypatch,
                                                                    record_audit):
    """The broken variant (today's main before the fix): trials spawned from the root
    and the winner released with its trial's generator."""
    def keep_trial_generator(self, est_rng, seeded):
        return est_rng.spawn(1)[0]

    monkeypatch.setattr(DPRandomSearch, "_trial_random_state", keep_trial_generator)
    monkeypatch.setattr(DPRandomSearch, "_release", lambda self, model, params: None)
    result = record_audit(_seed_replay_audit(), 0.5)
    assert not result.check(0.5), result


# ======================================================================================
# The federated aggregator: a copy neither replays the noise nor spends unseen
# ======================================================================================

Q, N_CLIENTS = 0.05, 1000


def _aggregator(accountant):
    return DPAggregator(N_CLIENTS, Q, 5.0, FixedClip(1.0), 4.0, 1e-5, accountant=accountant)


def _updates(k):
    return [ClientContribution(np.array([0.5]), 1)] * k


def test_a_copy_pays_again_and_an_unpickled_one_refuses_every_round():
    """Finding 4: a copy made after round 1 ran every later round unaccounted."""
    acc = BudgetAccountant(10.0, 1e-3)
    agg = _aggregator(acc)
    agg.aggregate(_updates(50), 1)
    twin = copy.deepcopy(agg)
    twin.aggregate(_updates(49), 1)
    assert acc.spent == pytest.approx((8.0, 2e-5))  # the copy charged the shared budget
    unpickled = pickle.loads(pickle.dumps(agg))
    with pytest.raises(DetachedAccountantError):
        unpickled.aggregate(_updates(49), 1)
    unpickled.accountant = BudgetAccountant(4.0, 1e-5)  # a budget of its own: it runs
    unpickled.aggregate(_updates(49), 1)
    agg.accountant = pickle.loads(pickle.dumps(acc))  # detached after round 1: refused
    with pytest.raises(DetachedAccountantError):
        agg.aggregate(_updates(50), 1)


def _copy_attack_audit():
    """Output: the attacker's denoised round 2, ``(original - copy on D minus the target)
    * qK``: exactly the target's update (0.5) on D if the copy shares the noise."""
    def sampler(n_clients_taking_part):
        def draw(rng):
            agg = _aggregator(BudgetAccountant(float("inf"), 1.0))
            agg.aggregate(_updates(50), 1)
            checkpoint = copy.deepcopy(agg)
            released = agg.aggregate(_updates(n_clients_taking_part), 1)
            return float((released - checkpoint.aggregate(_updates(49), 1))[0]
                         * agg.expected_clients)
        return draw

    return audit_pair(sampler(50), sampler(49), n_calibration=150, n_test=300,
                      batch=False, alpha=ALPHA, random_state=0)


def test_audit_a_copied_aggregator_does_not_replay_the_noise(record_audit):
    result = record_audit(_copy_attack_audit(), 1.0)
    # one round of multiplier 5 is about 0.2-DP; the attack must not do better than that
    assert result.check(1.0), result


def test_control_a_copy_that_shares_the_generators_is_flagged(monkeypatch, record_audit):
    monkeypatch.setattr(DPAggregator, "__getstate__", lambda self: dict(self.__dict__))
    monkeypatch.setattr(DPAggregator, "__setstate__",
                        lambda self, state: self.__dict__.update(state))
    result = record_audit(_copy_attack_audit(), 1.0)
    assert not result.check(1.0), result
