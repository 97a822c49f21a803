"""Private category order: a binary classifier's categorical codes sorted by a noisy rate.

A categorical column's ``K`` public categories (and its missing value) become the codes
``0 .. K`` in the order they are listed (:mod:`dptrees.data.tables`), and a tree splits
them as ordinal values, ``code <= t``. Listed in an order unrelated to the target, such a
split cuts the categories anywhere; sorted by the positive rate in each category, every
threshold separates low-rate from high-rate categories, the best split of a binary
target (Fisher 1958; non-private boosting libraries sort categories by their gradients).
``category_order="private"`` sorts them so, from one noisy release:

1. **Exact counts** (nothing released): per categorical column ``j`` with ``K_j + 1``
   codes, the count of records of each ``(code, class)`` pair, a ``(K_j + 1) x 2`` table,
   computed by every source with the same block function
   (:func:`dptrees._sources._rows.block_category_counts`), so the order, and the model,
   are the same from every source. Sample weights play no part: every record counts 1.
2. **One release** of every table at once, with noise of the fit's plan
   (:meth:`dptrees.privacy.release_plan.ReleasePlan.release`). **Sensitivity**,
   add/remove-one neighbours: one record is in exactly one cell of each column's table
   and moves it by 1; over ``c`` categorical columns the release moves by 1 in ``c``
   values: L2 sensitivity ``sqrt(c)`` (discrete Gaussian, ``rho``-zCDP for the share
   ``rho`` of the plan), L1 ``c`` (discrete Laplace, ``epsilon``-DP). The proof:
   "Privacy proofs, category order" (``docs/proofs/category_order.rst``).
3. **Post-processing**: each code's noisy rate ``max(pos, 0) / (max(pos, 0) + max(neg,
   0))`` (1/2 where both are 0), the codes stably sorted by it, and each code binned as
   the equal-width binning bins its rank (:class:`~dptrees.data.binning.Binner`'s
   ``positions``, through a lookup table). A tree's split of the column is then a set
   of categories, which the printed rules show.

Only gradient boosting's binary classifier has the parameter
(:class:`~dptrees.DPGradientBoostingClassifier`); its default ``"auto"`` releases the
order when ``epsilon`` times the initial score's noisy record count is at least
``ORDER_EPS_ROWS`` (:mod:`dptrees.boosting._gradient`), and otherwise gives the reserved
budget back. The budget is reserved before the estimator splits its own
(:func:`reserve_order`, after the private edges'), so the fit never spends more than its
``epsilon``; the release is one entry of the ledger.
"""

from typing import NamedTuple

import numpy as np

from dptrees._constraints import AUTO, FRACTION, options
from dptrees.data.binning import FINE_CELLS, Binner
from dptrees.data.private_edges import reserve_share

__all__ = ["AUTO_ORDER_SHARE", "CATEGORY_ORDER", "MAX_ORDERED_CODES", "ORDER_ATTRIBUTE_DOC",
           "ORDER_BUDGET", "ORDER_PARAMS_DOC", "PendingOrder", "codes_by_rate", "noisy_counts",
           "pending_order", "positions_from_counts", "release_order", "reserve_order"]

#: ``order_budget="auto"``: the share of the budget the category order takes (of what
#: the private edges leave). 5 % gained on Adult's validation rows at eps 1
#: (``experiments/category_order_sweep.py``; figures in ``experiments/RESULTS.md``).
AUTO_ORDER_SHARE = 0.05
#: A column is ordered only if its codes (categories and the missing one) number at most
#: this: each must have a fine cell of its own in the binner's lookup table.
MAX_ORDERED_CODES = FINE_CELLS // 2

CATEGORY_ORDER = [options("listed", "private", "auto")]
ORDER_BUDGET = [FRACTION, AUTO]

ORDER_PARAMS_DOC = """    category_order : {"auto", "listed", "private"}, default="auto"
        The order in which a categorical column's codes are split (binary
        classification with categorical columns in ``bounds`` only). "listed": the
        order of the public categories. "private": sorted by their noisy positive
        rate, from one release of every column's per-category class counts, paid
        with ``order_budget`` of the budget (one more ledger entry;
        :mod:`dptrees.data.category_order`); a split is then a set of categories.
        "auto": "private" when ``epsilon`` times the noisy record count is at least
        ``ORDER_EPS_ROWS`` (see :mod:`dptrees.boosting._gradient`), else "listed".
        ``private_category_order_`` says which was used.
    order_budget : float or "auto", default="auto"
        Share of the fit's budget (its zCDP ``rho``, or ``epsilon`` with Laplace
        noise) spent on the category order, in (0, 1), taken from what the private
        edges leave. "auto": :data:`~dptrees.data.category_order.AUTO_ORDER_SHARE`.
"""
ORDER_ATTRIBUTE_DOC = """    private_category_order_ : bool
        Whether the fit released a private category order (what
        ``category_order="auto"`` resolved to).
"""


class PendingOrder(NamedTuple):
    """The exact per-category class counts of a fit whose order is not released yet."""

    counts: list  # per ordered column, its (K_j + 1, 2) int64 table
    features: np.ndarray  # the ordered columns' indices
    share: float  # order_budget


def pending_order(estimator, source, categorical, n_codes, n_classes):
    """The exact class counts of every categorical column's codes, if
    ``estimator.category_order`` is "private" or "auto" and the table has categorical
    columns of at most :data:`MAX_ORDERED_CODES` codes (``n_codes``: each column's
    number of codes, public); else None. Nothing is released. "private" with other than
    two classes is an error (the order is a binary target's)."""
    order = getattr(estimator, "category_order", "listed")
    if order == "listed":
        return None
    if n_classes != 2:
        if order == "private":
            raise ValueError(f"category_order='private' needs two classes, got "
                             f"{n_classes}; use 'listed' or 'auto'")
        return None
    features = np.array([j for j in sorted(categorical)
                         if n_codes[j] <= MAX_ORDERED_CODES], dtype=np.intp)
    if not features.size:
        return None
    width = max(n_codes[j] for j in features)
    counts = source.category_counts(features, width, n_classes)
    share = estimator.order_budget
    return PendingOrder([np.ascontiguousarray(counts[t, :n_codes[j]])
                         for t, j in enumerate(features)], features,
                        AUTO_ORDER_SHARE if isinstance(share, str) else float(share))


def reserve_order(plan, data):
    """Take the order's share off ``plan``'s total (after the private edges', before the
    estimator splits the rest) and check its release can be made; returns its budget
    (0.0 without a pending order). Public: the share, the plan, the columns' codes."""
    pending = getattr(data, "order", None)
    if pending is None:
        return 0.0
    c = pending.features.size
    return reserve_share(plan, pending.share, sum(t.size for t in pending.counts), c,
                         f"order_budget={pending.share!r}", f"{c} categorical columns")


def noisy_counts(plan, budget, pending, rng):
    """The one release of the category order: every column's ``(code, class)`` counts,
    flattened column after column, plus ``plan``'s noise of ``budget``. A record moves
    one cell of each of the ``c`` tables by 1: L2 sensitivity ``sqrt(c)``, L1 ``c``
    (``docs/proofs/category_order.rst``)."""
    c = pending.features.size
    flat = np.concatenate([t.ravel() for t in pending.counts]).astype(np.float64)
    return np.asarray(plan.release(
        flat, 1.0, budget, rng, cells=c,
        label="category order: per-category class counts",
        note=f"{c} categorical columns, a record in one cell of each; "
             "docs/proofs/category_order.rst"), dtype=np.float64)


def positions_from_counts(noisy, pending):
    """Post-processing of :func:`noisy_counts`: per ordered column, the position of each
    code when the codes are stably sorted by their noisy positive rate ``max(pos, 0) /
    (max(pos, 0) + max(neg, 0))`` (1/2 where both are 0). Returns ``{feature: position
    of each code}``."""
    positions, start = {}, 0
    for j, table in zip(pending.features, pending.counts):
        order = codes_by_rate(noisy[start:start + table.size].reshape(table.shape))
        start += table.size
        position = np.empty(order.size, dtype=np.intp)
        position[order] = np.arange(order.size)
        positions[int(j)] = position
    return positions


def codes_by_rate(table):
    """The codes of a ``(n_codes, 2)`` table of (negative, positive) counts, exact or
    noisy, stably sorted by their positive rate ``max(pos, 0) / (max(pos, 0) + max(neg,
    0))`` (1/2 where both are 0)."""
    neg, pos = np.maximum(np.asarray(table, dtype=np.float64), 0.0).T
    total = neg + pos
    rate = np.divide(pos, total, out=np.full_like(pos, 0.5), where=total > 0)
    return np.argsort(rate, kind="stable")


def release_order(plan, budget, pending, binner, rng):
    """Release the category order of ``pending`` through ``plan`` (one ledger entry) and
    return ``binner`` with its ordered columns binned by their codes' positions.

    Guarantee: one discrete Gaussian (``budget``-zCDP) or Laplace (``budget``-DP) release
    of L2 sensitivity ``sqrt(c)`` / L1 ``c`` for ``c`` ordered columns
    (``docs/proofs/category_order.rst``); the rest is post-processing.
    """
    positions = positions_from_counts(noisy_counts(plan, budget, pending, rng), pending)
    cells = None
    if binner.table is not None:  # keep the private edges' tables
        cells = (binner.n_cells, binner.tabled, binner.boundaries)
    return Binner(binner.lower, binner.upper, binner.n_bins, np.flatnonzero(binner.missing),
                  cells=cells, positions=positions)
