"""The one fit of every estimator: check, open, plan, charge, release, record.

Every estimator's public ``fit`` is :func:`run_fit` over five hooks of its own; nothing
else reads the training rows or spends budget. The order is the privacy argument:

1. ``_check_params()`` validates the parameters before anything is read.
2. ``_open_fit_data(fit, X, y, sample_weight, **data_params)`` is a context manager
   over the rows (:func:`dptrees.data.prepare.prepare`): validation, public domains,
   recorded leaks. It is closed at the end, whatever happens.
3. ``_plan_fit(fit)`` fixes every release's budget and noise from public values and
   checks each can be realised; it returns the plan (a
   :class:`~dptrees.privacy.release_plan.ReleasePlan`, or the federated aggregator's).
4. ``plan.charge(accountant, name)`` spends the fit's budget once, before the first
   release: a ``BudgetExceededError`` leaves nothing spent and nothing released. With
   private bin edges (``bin_edges="private"``) or a private category order
   (``category_order="private"``) the rows are binned only now, from those releases
   (``data.bin_privately``: :meth:`dptrees.data.prepare.Prepared.bin_privately`),
   whose budgets ``_plan_fit`` reserved (:func:`dptrees.data.private_edges.reserve_edges`,
   :func:`dptrees.data.category_order.reserve_order`). An estimator with ``"auto"``
   first decides from released values whether to make each (its optional hooks
   ``_keeps_private_edges(fit)`` and ``_keeps_private_order(fit)``, which may make
   releases through the plan); a release declined gives its reserved budget back to
   the plan, and with none made the rows are binned over the public bounds.
5. ``_release(fit)`` makes the releases, each through the plan, which records it in
   the ledger as it happens; ``_record(fit)`` then sets the fitted attributes from what
   was released and the public inputs only.

The fit's random generator is made here, once, from ``random_state``
(:func:`~dptrees._random.check_random_state`): this is the only seed handling. It lives
in the :class:`Fit` record, which no fitted attribute keeps, so no model carries a
generator the user did not give.
"""

from dptrees._random import check_random_state

__all__ = ["Fit", "run_fit"]


class Fit:
    """What one call to ``fit`` carries from hook to hook (and no further).

    Attributes
    ----------
    params : object
        The checked parameters (``_check_params``'s return value).
    rng : numpy.random.Generator
        The fit's generator; hooks ``spawn`` from it.
    accountant : BudgetAccountant
        Where the fit's budget is charged.
    data : object
        The open rows (``_open_fit_data``'s value), until the fit returns.
    plan : object
        The release plan (``_plan_fit``'s value).

    Hooks may add what their estimator needs between the steps (a budget split, a
    builder, the released trees).
    """

    def __init__(self, params, rng, accountant):
        self.params = params
        self.rng = rng
        self.accountant = accountant
        self.data = None
        self.plan = None
        self.edges_budget = 0.0  # the private edges' budget, reserved by _plan_fit
        self.order_budget = 0.0  # the category order's budget, reserved by _plan_fit


def run_fit(estimator, X, y, sample_weight=None, **data_params):
    """Fit ``estimator`` on ``(X, y, sample_weight)`` through its five hooks (see the
    module docstring) and return it; ``data_params`` go to ``_open_fit_data`` (the
    federated ``clients``)."""
    fit = Fit(estimator._check_params(), check_random_state(estimator.random_state),
              estimator._resolve_accountant())
    with estimator._open_fit_data(fit, X, y, sample_weight, **data_params) as data:
        fit.data = data
        fit.plan = estimator._plan_fit(fit)
        fit.plan.charge(fit.accountant, type(estimator).__name__)
        if getattr(data, "pending", False):
            fit.data = _bin_privately(estimator, fit)
        estimator._release(fit)
    estimator._record(fit)
    return estimator


def _bin_privately(estimator, fit):
    """The rows binned with their private edges and category order, released with the
    budgets ``_plan_fit`` reserved for them on a generator of their own (spawned only
    for such fits). A release the estimator's hook (``_keeps_private_edges(fit)``,
    ``_keeps_private_order(fit)``) declines is not made and its reserved budget goes
    back to the plan; with neither made the rows are binned over the public bounds and
    nothing is spawned: the fit is then the one it would have been without them."""
    data = fit.data
    for pending, budget, hook in ((data.edges, "edges_budget", "_keeps_private_edges"),
                                  (data.order, "order_budget", "_keeps_private_order")):
        if pending is None:
            continue
        if not getattr(fit, budget) > 0:
            raise RuntimeError(f"a pending private release needs its {budget} reserved "
                               "by _plan_fit")
        keeps = getattr(estimator, hook, None)
        if keeps is not None and not keeps(fit):
            fit.plan.restore(getattr(fit, budget))
            setattr(fit, budget, 0.0)
    if not (fit.edges_budget > 0 or fit.order_budget > 0):
        return data.bin_publicly()
    return data.bin_privately(fit.plan, fit.edges_budget, fit.order_budget,
                              fit.rng.spawn(1)[0])
