"""Privacy budgets and their composition (the public names of :mod:`dptrees.privacy`).

Throughout, two datasets are *neighbours* when one is obtained from the other by adding
or removing one record (add/remove-one, also called unbounded DP). In federated use the
"record" is a whole client: neighbouring federations differ by the presence of one
client and all of its data. Every guarantee stated here is with respect to that relation.

* :class:`BudgetAccountant`, :class:`AccountantMixin`, :func:`check_accountant`,
  :func:`sequential_composition`, :func:`parallel_composition`: a total ``(epsilon,
  delta)`` paid for by sequential composition (:mod:`dptrees.privacy.budget`);
* :class:`RDPAccountant`: Renyi-DP accounting of many (subsampled) Gaussian and pure-DP
  releases (:mod:`dptrees.privacy.rdp`, curves proved in
  :mod:`dptrees.privacy.rdp_curves`);
* :class:`PLDAccountant`: privacy-loss-distribution accounting of discrete Gaussian
  releases, through a coupling (:mod:`dptrees.privacy.pld`);
* :func:`gaussian_rho`, :func:`zcdp_to_approx_dp`, :func:`zcdp_budget`,
  :func:`best_of_zcdp_budget`: zero-concentrated DP (:mod:`dptrees.privacy.zcdp`).
"""

from dptrees.privacy.budget import (
    AccountantMixin,
    BudgetAccountant,
    SpendRecord,
    check_accountant,
    parallel_composition,
    sequential_composition,
)
from dptrees.privacy.pld import PLDAccountant
from dptrees.privacy.rdp import RDPAccountant
from dptrees.privacy.rdp_curves import INTEGER_ORDERS
from dptrees.privacy.zcdp import (
    best_of_zcdp_budget,
    gaussian_rho,
    zcdp_budget,
    zcdp_to_approx_dp,
)

__all__ = [
    "INTEGER_ORDERS",
    "AccountantMixin",
    "BudgetAccountant",
    "PLDAccountant",
    "RDPAccountant",
    "SpendRecord",
    "best_of_zcdp_budget",
    "check_accountant",
    "gaussian_rho",
    "parallel_composition",
    "sequential_composition",
    "zcdp_to_approx_dp",
    "zcdp_budget",
]
