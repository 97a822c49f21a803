"""Client-level differentially private federated training.

Many data holders (clients) train one model together; the released model hides whether
any one client, with all its records, took part (Geyer, Klein & Nabi 2017). The protocol
(:class:`DPAggregator`, :func:`clip_update`, :func:`run_federated`) is independent of the
model: it drives parametric models (:class:`NumpyMLP`) and tree ensembles
(:class:`DPFederatedGradientBoostingClassifier` / ``Regressor``) alike, in one process
or, through :mod:`dptrees.federated.flower`, across machines.
"""

from dptrees.federated._boosting import (
    DPFederatedGradientBoostingClassifier,
    DPFederatedGradientBoostingRegressor,
)
from dptrees.federated._laplace import LaplaceAggregator
from dptrees.federated._mlp import MLPClient, NumpyMLP
from dptrees.federated._protocol import (
    INTEGER_ORDERS,
    AdaptiveClip,
    ClientContribution,
    DPAggregator,
    FixedClip,
    clip_update,
)
from dptrees.federated._simulation import FederatedClient, run_federated

__all__ = [
    "INTEGER_ORDERS",
    "AdaptiveClip",
    "ClientContribution",
    "DPAggregator",
    "DPFederatedGradientBoostingClassifier",
    "DPFederatedGradientBoostingRegressor",
    "FederatedClient",
    "FixedClip",
    "LaplaceAggregator",
    "MLPClient",
    "NumpyMLP",
    "clip_update",
    "run_federated",
]
