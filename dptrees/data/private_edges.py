"""Private bin edges: quantile edges of every numeric feature from one noisy release.

``bin_edges="private"`` replaces the equal-width bins of the numeric features by bins
that hold about equal shares of the records, released with a share ``edges_budget`` of
the fit's budget:

1. **Exact fine histogram** (nothing released): per numeric feature, the count of records
   in each of :data:`FINE_CELLS` equal-width cells of its public bounds (values clipped to
   them; a missing value, of a feature with a missing bin, in no cell). Exact integers,
   computed by every source with the same kernel
   (:func:`dptrees._core._binning.fine_counts`), so any split of the rows into blocks
   gives the same counts and the model stays the same from every source.
2. **One release**: the dyadic sums of those counts (the :data:`N_LEVELS` levels of 1, 2,
   4, ..., :data:`FINE_CELLS` nodes; every node the sum of its cells), with noise of the
   fit's plan (:meth:`dptrees.privacy.release_plan.ReleasePlan.release`, its generator).
   **Sensitivity**, add/remove-one neighbours: one record is in at most one cell of each
   feature, hence in exactly one node per level, and moves it by 1. Over ``p`` numeric
   features the release moves by at most 1 in ``p * N_LEVELS`` values: L2 sensitivity
   ``sqrt(p * N_LEVELS)`` (discrete Gaussian, ``rho``-zCDP for a share ``rho`` of the
   plan) or L1 ``p * N_LEVELS`` (discrete Laplace, ``epsilon``-DP). The proof:
   "Privacy proofs, bin edges" (``docs/proofs/bin_edges.rst``).
3. **Post-processing** (no further cost): the noisy levels are made consistent (the
   least-squares estimate of the cells, Hay et al. 2010), their running sums (made
   non-decreasing) give each feature's noisy distribution, and the edges are its
   ``k / m`` quantiles (``m`` the feature's present bins) snapped to fine-cell
   boundaries and deduplicated: a feature whose mass is concentrated gets fewer bins
   (the others stay empty). Binning then maps each value's fine cell through a lookup
   table (:class:`~dptrees.data.binning.Binner`).

Estimators with ``bin_edges``: gradient boosting, the explainable boosting machine, the DP
trees, forests and AdaBoost (their ``_plan_fit`` calls :func:`reserve_edges`; the federated
estimators do not have it yet). The boosting estimators' default ``"auto"`` decides after
their initial score (``EDGES_EPS_ROWS`` in :mod:`dptrees.boosting._gradient` and
:mod:`dptrees.boosting._cyclic`); gradient boosting places half of its bins at the
quantiles, half equal-width (``quantile_share``), the explainable boosting machine all of
them at the quantiles. Categorical columns keep
their categories (equal-width bins of their codes), and a feature's missing bin stays its
last, data-independent. The edges' budget is reserved from the plan's total before any
other release is planned (:func:`reserve_edges`), so the fit never spends more than its
``epsilon``; the release is one entry of the ledger.
"""

from typing import NamedTuple

import numpy as np

from dptrees._constraints import AUTO, FRACTION, options
from dptrees.data.binning import FINE_CELLS, Binner

__all__ = ["AUTO_EDGES_SHARE", "BIN_EDGES", "BIN_EDGES_AUTO", "EDGES_BUDGET",
           "EDGES_MAX_FEATURES", "EDGES_PARAMS_DOC", "FINE_CELLS", "N_LEVELS",
           "PendingEdges", "consistent_cells", "dyadic_levels", "edges_from_cells",
           "noisy_levels", "pending_edges", "release_edges", "reserve_edges",
           "reserve_share"]

#: Levels of the dyadic release: 1, 2, 4, ..., FINE_CELLS nodes.
N_LEVELS = FINE_CELLS.bit_length()

#: ``edges_budget="auto"``: the share of the budget the private edges take.
AUTO_EDGES_SHARE = 0.1

#: ``bin_edges="auto"`` releases edges for at most this many numeric features: at a fixed
#: share the release's noise on each feature's histogram grows as ``sqrt(p)``, and wide
#: numeric tables are mostly one-hot or binary columns, which equal-width bins already
#: split exactly (the share is then lost to the model: Nursery one-hot, 27 columns, lost
#: 0.006-0.007 accuracy at eps 1 and 4 with gradient boosting; California has 8, Adult's
#: frame 5).
EDGES_MAX_FEATURES = 16

#: The constraints of ``bin_edges`` and ``edges_budget``; :data:`BIN_EDGES_AUTO` for
#: an estimator that chooses between the two itself (the boosting estimators).
BIN_EDGES = [options("uniform", "private")]
BIN_EDGES_AUTO = [options("uniform", "private", "auto")]
EDGES_BUDGET = [FRACTION, AUTO]

EDGES_PARAMS_DOC = """    bin_edges : {"uniform", "private"}, default="uniform"
        Where the bins of the numeric features fall. "uniform": ``n_bins``
        equal-width bins of the public bounds (nothing spent). "private": about equal
        shares of the records in each bin, from one noisy dyadic histogram of
        1,024 fine cells per numeric feature, paid with ``edges_budget`` of the
        budget (one more ledger entry; :mod:`dptrees.data.private_edges`).
        Categorical columns keep their categories, missing bins stay last.
    edges_budget : float or "auto", default="auto"
        Share of the fit's budget (its zCDP ``rho``, or ``epsilon`` with Laplace
        noise) spent on the private edges, in (0, 1); the rest is shared as
        without them. "auto": :data:`~dptrees.data.private_edges.AUTO_EDGES_SHARE`.
        Unused with ``bin_edges="uniform"``.
"""


class PendingEdges(NamedTuple):
    """The exact fine histogram of a fit whose edges are not released yet (private)."""

    counts: np.ndarray  # (n_private, FINE_CELLS) int64
    features: np.ndarray  # the numeric features' indices
    share: float  # edges_budget
    quantile_share: float = 1.0  # of the bins at noisy quantiles (edges_from_cells)


def pending_edges(estimator, source, binner, categorical=()):
    """The exact fine histogram of ``source``'s numeric features (not ``categorical``),
    read before the rows are binned, if ``estimator.bin_edges`` is "private" or "auto"
    (the estimator decides after the charge whether it releases them); else None.
    Nothing is released. The estimator's ``_EDGES_QUANTILE_SHARE`` (default 1) is the
    share of its bins placed at the noisy quantiles."""
    if getattr(estimator, "bin_edges", "uniform") == "uniform":
        return None
    features = np.setdiff1d(np.arange(binner.lower.shape[0]),
                            np.asarray(list(categorical), dtype=np.intp))
    if not features.size:  # every column categorical: nothing to release or pay for
        return None
    counts = source.fine_counts(binner.lower, binner.upper, FINE_CELLS, binner.missing)
    share = estimator.edges_budget
    return PendingEdges(np.ascontiguousarray(counts[features]), features,
                        AUTO_EDGES_SHARE if isinstance(share, str) else float(share),
                        float(getattr(estimator, "_EDGES_QUANTILE_SHARE", 1.0)))


def reserve_edges(plan, data):
    """Take the edges' share off ``plan``'s total (before the estimator splits the rest)
    and check their release can be made; returns its budget (0.0 without private
    edges). Public: the share, the plan and the number of numeric features."""
    pending = getattr(data, "edges", None)
    if pending is None:
        return 0.0
    p = pending.features.size
    return reserve_share(plan, pending.share, p * (2 * FINE_CELLS - 1), p * N_LEVELS,
                         f"edges_budget={pending.share!r}", f"{p} numeric features")


def reserve_share(plan, share, n_values, cells, name, what):
    """Take ``share`` off ``plan``'s total for a release of ``n_values`` counts, a record
    in ``cells`` of them (by 1), made before the estimator's own; check it can be made
    (the error names the parameter ``name`` and ``what`` is released). Returns its
    budget."""
    budget = plan.reserve(share)
    try:
        plan.check(1.0, budget, n_values, cells=cells)
    except ValueError as exc:
        raise ValueError(f"{name} of this fit's budget is out of the exact samplers' range "
                         f"for {what}: {exc}") from exc
    return budget


def dyadic_levels(counts):
    """The dyadic sums of ``counts`` (shape ``(p, FINE_CELLS)``), coarse to fine: level
    ``l`` holds ``2**l`` nodes, each the sum of its ``FINE_CELLS / 2**l`` cells; one
    ``(p, 2 FINE_CELLS - 1)`` array. A record moves one node per level by 1."""
    p = counts.shape[0]
    return np.concatenate([counts.reshape(p, 2**level, -1).sum(axis=2)
                           for level in range(N_LEVELS)], axis=1)


def _split_levels(flat):
    return [flat[:, 2**level - 1:2**(level + 1) - 1] for level in range(N_LEVELS)]


def consistent_cells(noisy):
    """The least-squares consistent estimate of the cells from noisy dyadic levels of
    equal noise (Hay, Rastogi, Miklau & Suciu 2010, for a binary tree): a bottom-up
    weighted average of each node with its children's sum, then a top-down share of each
    parent's surplus between its two children. Post-processing of the release."""
    levels = [np.asarray(level, dtype=np.float64) for level in _split_levels(noisy)]
    z = [None] * N_LEVELS
    z[-1] = levels[-1]
    for level in range(N_LEVELS - 2, -1, -1):
        height = N_LEVELS - level  # leaves have height 1
        children = z[level + 1].reshape(z[level + 1].shape[0], -1, 2).sum(axis=2)
        weight = (2.0**height - 2.0**(height - 1)) / (2.0**height - 1)
        z[level] = weight * levels[level] + (1 - weight) * children
    estimate = z[0]
    for level in range(1, N_LEVELS):
        pairs = z[level].reshape(z[level].shape[0], -1, 2)
        surplus = (estimate - pairs.sum(axis=2)) / 2
        estimate = (pairs + surplus[:, :, None]).reshape(z[level].shape)
    return estimate


def edges_from_cells(cells, n_present, quantile_share=1.0):
    """Per feature, the fine-cell boundaries of ``n_present`` bins of about equal noisy
    mass: the first cell where the non-decreasing running sum of ``cells`` reaches
    ``k / n_present`` of the total ends bin ``k - 1`` (``k = 1 .. n_present - 1``);
    boundaries repeat where the mass is concentrated and are kept once, the bins left
    over are empty (boundary ``FINE_CELLS``). A feature whose noisy total is not positive
    keeps ``n_present`` equal shares of the cells. Returns an int64 array
    ``(p, max(n_present) - 1)``, each row increasing then padded with ``FINE_CELLS``.

    ``quantile_share < 1`` places only ``m_q = max(2, round(quantile_share m))`` of a
    feature's ``m`` bins that way and adds the boundaries of ``m + 1 - m_q`` equal-width
    bins of the bounds (at most ``m - 1`` boundaries in all): bins where the data is,
    and a coarse grid over the tails, where a heavy-tailed feature's few records may
    carry the signal (gradient boosting's choice; ``experiments/RESULTS.md``).
    Post-processing only."""
    cells = np.atleast_2d(np.asarray(cells, dtype=np.float64))
    n_present = np.broadcast_to(np.asarray(n_present, dtype=np.intp), (cells.shape[0],))
    width = int(n_present.max(initial=2)) - 1
    out = np.full((cells.shape[0], width), FINE_CELLS, dtype=np.int64)
    running = np.maximum.accumulate(np.cumsum(cells, axis=1), axis=1)
    for j, m in enumerate(n_present):  # one row per feature, never per record
        n_quantile = m if quantile_share >= 1 else max(2, round(quantile_share * m))
        k = np.arange(1, n_quantile)
        total = running[j, -1]
        if total > 0:
            found = np.searchsorted(running[j], total * k / n_quantile, side="left") + 1
        else:
            found = (k * FINE_CELLS) // n_quantile
        if n_quantile < m:
            n_uniform = m + 1 - n_quantile
            found = np.concatenate([found, (np.arange(1, n_uniform) * FINE_CELLS)
                                    // n_uniform])
        kept = np.unique(found[(found >= 1) & (found < FINE_CELLS)])
        out[j, :kept.size] = kept
    return out


def noisy_levels(plan, budget, counts, rng):
    """The one release of the private edges: the dyadic levels of the exact fine
    ``counts`` (``(p, FINE_CELLS)``) plus ``plan``'s noise of ``budget``, shape
    ``(p, 2 FINE_CELLS - 1)``. A record moves one node per level of each feature by 1:
    L2 sensitivity ``sqrt(p N_LEVELS)``, L1 ``p N_LEVELS`` (``docs/proofs/bin_edges.rst``).
    """
    levels = dyadic_levels(counts).astype(np.float64)
    p = counts.shape[0]
    noisy = plan.release(
        levels.ravel(), 1.0, budget, rng, cells=p * N_LEVELS,
        label=f"bin edges: dyadic histograms of {FINE_CELLS} cells",
        note=f"{p} numeric features x {N_LEVELS} levels, a record in one node of each; "
             "docs/proofs/bin_edges.rst")
    return np.asarray(noisy, dtype=np.float64).reshape(levels.shape)


def release_edges(plan, budget, pending, binner, rng):
    """Release the private edges of ``pending`` through ``plan`` (one ledger entry) and
    return the binner that uses them: its numeric features binned through a lookup table
    of their fine cells, its other features as in ``binner``.

    Guarantee: one discrete Gaussian (``budget``-zCDP) or Laplace (``budget``-DP) release
    of L2 sensitivity ``sqrt(p N_LEVELS)`` / L1 ``p N_LEVELS`` for ``p`` numeric features
    (:func:`dyadic_levels`; ``docs/proofs/bin_edges.rst``); the rest is post-processing.
    """
    features = pending.features
    n_bins = binner.n_bins
    boundaries = np.full((binner.lower.shape[0], n_bins - 1), FINE_CELLS, dtype=np.int64)
    cells = consistent_cells(noisy_levels(plan, budget, pending.counts, rng))
    n_present = n_bins - binner.missing[features].astype(np.intp)
    found = edges_from_cells(cells, n_present, pending.quantile_share)
    boundaries[features, :found.shape[1]] = found
    tabled = np.zeros(binner.lower.shape[0], dtype=np.uint8)
    tabled[features] = 1
    return Binner(binner.lower, binner.upper, n_bins, np.flatnonzero(binner.missing),
                  cells=(FINE_CELLS, tabled, boundaries))

