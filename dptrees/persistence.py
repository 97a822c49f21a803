"""Saving and loading fitted models with their privacy state, through ``skops.io``.

A fitted estimator keeps everything an auditor needs next to the model: the privacy
ledger (``privacy_ledger_``), ``epsilon_spent_`` and ``delta_spent_``, the public inputs
and any leaks (``privacy_report()`` reads them). :func:`save` and :func:`load` keep them
together in one ``skops`` file, which, unlike a pickle, is loaded without running
arbitrary code: only the types listed by :func:`trusted_types` (dptrees' own model
classes) and the types skops trusts by default (numpy, scikit-learn) are constructed.
Pickle (``pickle.dump``/``joblib.dump``) works too, for files you trust.

``skops`` is an optional dependency: ``pip install "dptrees[persist]"``.
"""

import os
from collections.abc import Sequence

from sklearn.base import BaseEstimator

from dptrees._optional import optional_import
from dptrees.privacy.report import seeded_parameters
from dptrees.exceptions import PrivacyLeakWarning
from dptrees.validation import warn_user

__all__ = ["load", "save", "trusted_types"]

# Every dptrees type a fitted estimator may hold: the estimators, their tree and binning
# structures, table encodings, losses, accountants and their records, the search and the
# schema encoder of a pipeline.
_TRUSTED = (
    "dptrees.data.binning.Binner",
    "dptrees.data.tables.Numeric",
    "dptrees.data.tables.TableEncoding",
    "dptrees._tree_structure.Tree",
    "dptrees.privacy.budget.BudgetAccountant",
    "dptrees.privacy.budget.SpendRecord",
    "dptrees.privacy.pld.PLDAccountant",
    "dptrees.privacy.rdp.RDPAccountant",
    "dptrees.boosting._adaboost.DPAdaBoostClassifier",
    "dptrees.boosting._cyclic.DPExplainableBoostingClassifier",
    "dptrees.boosting._cyclic.DPExplainableBoostingRegressor",
    "dptrees.boosting._gradient.DPGradientBoostingClassifier",
    "dptrees.boosting._gradient.DPGradientBoostingRegressor",
    "dptrees.boosting._losses.BinaryLogistic",
    "dptrees.boosting._losses.MultinomialLogistic",
    "dptrees.boosting._losses.SquaredError",
    "dptrees.boosting._weak_learners.WeightedTree",
    "dptrees.federated._boosting.DPFederatedGradientBoostingClassifier",
    "dptrees.federated._boosting.DPFederatedGradientBoostingRegressor",
    "dptrees.federated._protocol.AdaptiveClip",
    "dptrees.federated._protocol.FixedClip",
    "dptrees.forest.DPExtraTreesClassifier",
    "dptrees.forest.DPExtraTreesRegressor",
    "dptrees.forest.DPPartitionForestClassifier",
    "dptrees.forest.DPPartitionForestRegressor",
    "dptrees.model_selection.DPRandomSearch",
    "dptrees.preprocessing.PublicSchemaEncoder",
    "dptrees.tree.DPDecisionTreeClassifier",
    "dptrees.tree.DPDecisionTreeRegressor",
)


def trusted_types() -> list[str]:
    """The dptrees types a saved model may contain, for ``skops.io.load(trusted=...)``.

    Returns
    -------
    list of str
        Fully qualified class names.
    """
    return list(_TRUSTED)


def save(estimator: BaseEstimator, file: str | os.PathLike) -> None:
    """Save a fitted estimator, its privacy ledger and report included, to a skops file.

    A model fitted with ``random_state=None`` (the default) carries nothing from which
    its noise can be recomputed. One that stores a user-given seed or generator does:
    whoever reads the file can replay every noise draw of the fit, which voids the
    guarantee against them. Saving such a model warns.

    Parameters
    ----------
    estimator : fitted dptrees estimator
    file : str or path-like
        Where to write (conventionally ``*.skops``).

    Warns
    -----
    PrivacyLeakWarning
        If ``estimator`` (or a step or part of it) stores a ``random_state`` that is
        not None.
    """
    sio = optional_import("skops.io", "persist", "saving a model")
    seeded = seeded_parameters(estimator)
    if seeded:
        warn_user(f"{type(estimator).__name__} stores a user-given seed ({', '.join(seeded)}"
                  "): whoever reads the file can recompute the noise of its fit, so the "
                  "saved model is not differentially private against them. Fit models "
                  "for release with random_state=None, or set_params(random_state=None) "
                  "before saving if the seed was yours alone.", PrivacyLeakWarning)
    sio.dump(estimator, file)


def load(file: str | os.PathLike, *, trusted: Sequence[str] = ()) -> BaseEstimator:
    """Load an estimator saved by :func:`save` (or ``skops.io.dump``).

    Only dptrees' own types (:func:`trusted_types`), the types skops trusts by default
    and those in ``trusted`` are constructed; a file holding any other type is refused
    before anything is built.

    Parameters
    ----------
    file : str or path-like
    trusted : sequence of str, default=()
        More types to trust (fully qualified names), e.g. your own pipeline steps.

    Returns
    -------
    estimator

    Raises
    ------
    ValueError
        If the file holds a type that is not trusted.
    """
    sio = optional_import("skops.io", "persist", "loading a model")
    allowed = set(_TRUSTED) | set(trusted)
    found = sio.get_untrusted_types(file=file)
    refused = sorted(set(found) - allowed)
    if refused:
        raise ValueError(f"{file} holds types that are not trusted: {refused}. Pass them "
                         "as `trusted=` only if you trust the file's author.")
    return sio.load(file, trusted=list(found))
