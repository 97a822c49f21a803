"""``verbose``: progress of boosting, forests and federated training on standard error.

Plain lines without tqdm (about ten per fit with ``verbose=1``, one per round with
``verbose=2``, each with the budget and the time left); a tqdm bar when tqdm is
importable; nothing at ``verbose=0``; the fitted model never depends on ``verbose``.
"""

import re
import sys
import types

import numpy as np
import pytest

from dptrees import (
    BudgetAccountant,
    DPExplainableBoostingClassifier,
    DPExtraTreesClassifier,
    DPGradientBoostingClassifier,
    DPPartitionForestClassifier,
)
from dptrees.federated import DPFederatedGradientBoostingClassifier

X = np.random.default_rng(0).random((600, 3))
Y = (X[:, 0] > 0.5).astype(int)
COMMON = dict(bounds=(0, 1), classes=[0, 1], random_state=0)


def estimators():
    yield DPGradientBoostingClassifier(n_estimators=20, **COMMON), 20, "round", "epsilon"
    yield DPExplainableBoostingClassifier(n_cycles=20, **COMMON), 20, "cycle", "budget"
    yield DPPartitionForestClassifier(n_estimators=20, **COMMON), 20, "tree", "epsilon"
    yield DPExtraTreesClassifier(n_estimators=20, **COMMON), 20, "tree", "epsilon"
    yield (DPFederatedGradientBoostingClassifier(n_estimators=20, n_clients=600,
                                                 sampling_probability=1.0, epsilon=100,
                                                 **COMMON), 20, "round", "delta")


ESTIMATORS = list(estimators())
IDS = [type(e).__name__ for e, *_ in ESTIMATORS]


@pytest.fixture
def no_tqdm(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)


def fit(est, **params):
    est = est.set_params(accountant=BudgetAccountant(1e6, 1.0), **params)
    return est.fit(X, Y)


@pytest.mark.parametrize("est, total, unit, budget", ESTIMATORS, ids=IDS)
def test_plain_lines_report_rounds_budget_and_time_left(est, total, unit, budget, no_tqdm,
                                                        capsys):
    quiet = fit(est, verbose=0).predict_proba(X)
    assert capsys.readouterr().err == ""
    loud = fit(est, verbose=1).predict_proba(X)
    lines = capsys.readouterr().err.strip().splitlines()
    np.testing.assert_array_equal(loud, quiet)
    name = type(est).__name__
    assert len(lines) == 10
    for k, line in enumerate(lines, start=1):
        assert re.fullmatch(rf"\[{name}\] {unit} {2 * k}/{total}, (.*, )?{budget} .*, "
                            r"[\d.]+ s elapsed, about [\d.]+ s left", line), line
    fit(est, verbose=2)
    assert len(capsys.readouterr().err.strip().splitlines()) == total


def test_a_tqdm_bar_when_tqdm_is_installed(monkeypatch):
    bars = []

    class FakeBar:
        def __init__(self, total, desc, unit, file, leave):
            self.total, self.desc, self.unit, self.n, self.postfix = total, desc, unit, 0, None
            self.closed = False
            bars.append(self)

        def set_postfix(self, status, refresh):
            self.postfix = dict(status)

        def update(self, n):
            self.n += n

        def close(self):
            self.closed = True

    fake = types.ModuleType("tqdm.auto")
    fake.tqdm = FakeBar
    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", fake)
    fit(DPGradientBoostingClassifier(n_estimators=7, **COMMON), verbose=1)
    (bar,) = bars
    assert (bar.total, bar.n, bar.unit, bar.closed) == (7, 7, "round", True)
    assert bar.desc == "DPGradientBoostingClassifier"
    assert set(bar.postfix) == {"epsilon", "delta"}


@pytest.mark.parametrize("bad", [-1, 1.5, "yes"])
def test_bad_verbose_is_refused(bad):
    with pytest.raises((ValueError, TypeError), match="verbose"):
        fit(DPPartitionForestClassifier(n_estimators=2, **COMMON), verbose=bad)
