"""The privacy core's accounting: budgets (:mod:`~dptrees.privacy.budget`), Renyi DP
(:mod:`~dptrees.privacy.rdp`, its curves in :mod:`~dptrees.privacy.rdp_curves`),
privacy loss distributions (:mod:`~dptrees.privacy.pld`) and zero-concentrated DP
(:mod:`~dptrees.privacy.zcdp`). Their public names are imported from
:mod:`dptrees.accounting`."""
