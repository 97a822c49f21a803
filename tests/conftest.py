"""Fixtures shared by the test modules (plain helpers live in ``support.py``).

Also makes the source tree's ``experiments`` package (the paper reproductions and
comparisons, not part of the installed dptrees) importable by the tests of its modules:
the repository root is *appended* to ``sys.path``, after the installed packages. Put
first (as a ``conftest.py`` at the root would be, under pytest's default import mode),
it would make ``import dptrees`` find the source folder ``dptrees/``, which has no
compiled core, instead of the installed package: the reason the README's test command
runs ``python -P -m pytest``. Where ``experiments/`` is absent (tests run from a wheel's
test sources) nothing is added and those tests skip (``support.import_experiment``).
"""

import math
import sys
from pathlib import Path

import pytest

import dptrees.tree as tree_module

_ROOT = Path(__file__).resolve().parents[1]
if (_ROOT / "experiments" / "__init__.py").is_file() and str(_ROOT) not in sys.path:
    sys.path.append(str(_ROOT))


@pytest.fixture
def record_audit(record_property):
    """``record_audit(res, claim) -> res``: attach an audit's numbers (the lower bound,
    the claimed epsilon, the event) to the test report (e.g. ``--junitxml``)."""

    def record(res, claim):
        record_property("eps_lb", res.epsilon_lower_bound)
        record_property("claimed_epsilon", claim)
        record_property("event", res.event)
        return res

    return record


@pytest.fixture
def inject(monkeypatch):
    """Inject a bug: ``inject(edit)`` makes ``est._builder`` pass ``edit(kwargs)``'s
    modified noise parameters to the compiled builder (everything else unchanged)."""
    real = tree_module.TreeBuilder

    def apply(edit):
        def factory(**kwargs):
            edit(kwargs)
            return real(**kwargs)
        monkeypatch.setattr(tree_module, "TreeBuilder", factory)

    return apply


@pytest.fixture(autouse=True)
def fresh_default_accountant():
    """Every test starts with a fresh process-wide default accountant, so that what one
    test spends (and the default's one CompositionWarning) does not reach another."""
    from dptrees.accounting import BudgetAccountant

    saved = BudgetAccountant._process_default
    BudgetAccountant._process_default = None
    yield
    BudgetAccountant._process_default = saved


@pytest.fixture(scope="session")
def dask_client():
    """A ``distributed`` client on a ``LocalCluster`` of two single-threaded worker
    processes, shared by the tests of the Dask sources."""
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("dask.array")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


@pytest.fixture
def no_fallback(monkeypatch):
    """Boosting without the small-budget fallback (``falls_back``): tests that audit or
    count the trees' releases fit tiny neighbouring data sets, where ``epsilon`` times
    the record count is far below the threshold and the fit would keep only its
    starting score."""
    from dptrees.boosting import _common

    monkeypatch.setattr(_common, "FALLBACK_EPS_ROWS", -math.inf)  # counts may be < 0


@pytest.fixture
def no_tree_fallback(monkeypatch):
    """Trees and forests without the small-budget fallback
    (:mod:`dptrees._tree_fallback`): for tests of the trees' own budget split, streams
    and replays, which the fallback's count (a share of the budget, one more draw) and
    its depth-0 tree on small data would change."""
    from dptrees.forest import _RegressionForest
    from dptrees.tree import _ClassificationTreeMixin, _RegressionTreeMixin

    monkeypatch.setattr(_RegressionTreeMixin, "_fallback_threshold", None)
    monkeypatch.setattr(_RegressionForest, "_fallback_threshold", None)
    monkeypatch.setattr(_ClassificationTreeMixin, "_fallback_rule", lambda self, data: None)
