"""The work one block of rows does for the engine: binning, targets, exact statistics.

Every function here reads one block of rows (a slice of a memmap, a Dask partition, an
in-memory array) and returns exact integers, or updates per-row state of that block only.
The block sources (:mod:`dptrees._sources._blocks`, :mod:`dptrees._sources._dask`) call
them block by block, or partition by partition on Dask workers, and add the integer
results up: integer sums do not depend on how the rows are split or in which order the
parts are added, so every source gives the same statistics, bit for bit, as the rows
taken at once. Nothing here adds noise: the one process that holds the generator does.
"""

from typing import NamedTuple

import numpy as np

from dptrees._core import _binning, _histogram
from dptrees.mechanisms import fixed_point_sum
from dptrees.data.domains import check_classes
from dptrees.validation import check_features, check_targets_regression, clip

__all__ = [
    "GradientSpec",
    "TreeTargets",
    "assign_partitions",
    "block_part_count",
    "block_tree_statistics",
    "Routing",
    "bin_block",
    "block_add_values",
    "block_category_counts",
    "block_class_counts",
    "block_fixed_units",
    "block_gradient_stats",
    "gradient_stats",
    "block_head",
    "block_histogram",
    "block_label_codes",
    "block_fine_counts",
    "block_minmax",
    "category_counts",
    "block_sums",
    "block_target_minmax",
    "block_unique",
    "block_y01",
    "fine_counts",
    "y01",
    "heap_routing",
    "label_dtype",
    "clip_active",
    "poisson_sample",
    "start_scores",
    "unpack_mask",
]


class Routing(NamedTuple):
    """A partially grown tree as routing arrays, and which nodes' statistics to take.

    ``slot_of_node[v]`` is the slot (index into the output) of node ``v``, -1 for nodes
    whose rows are not wanted. Nodes not yet split have ``left == -1``.
    """

    feature: np.ndarray
    bin_threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    slot_of_node: np.ndarray

    @property
    def n_slots(self):
        return int(self.slot_of_node.max()) + 1


def heap_routing(feature, bin_threshold, level, wanted):
    """Routing of a complete (heap-ordered) tree whose levels above ``level`` are split.

    ``feature``, ``bin_threshold``: the heap arrays (children of ``i`` are ``2i + 1`` and
    ``2i + 2``); ``wanted``: heap ids of nodes of ``level``, slot ``j`` for ``wanted[j]``.
    """
    n_nodes = feature.shape[0]
    n_split = 2**level - 1
    left = np.full(n_nodes, -1, dtype=np.int32)
    right = np.full(n_nodes, -1, dtype=np.int32)
    internal = np.arange(n_split, dtype=np.int32)
    left[:n_split], right[:n_split] = 2 * internal + 1, 2 * internal + 2
    slot_of_node = np.full(n_nodes, -1, dtype=np.intp)
    slot_of_node[np.asarray(wanted, dtype=np.intp)] = np.arange(len(wanted))
    return Routing(np.ascontiguousarray(feature, dtype=np.int32),
                   np.ascontiguousarray(bin_threshold, dtype=np.int32), left, right,
                   slot_of_node)


# -- preparation ---------------------------------------------------------------------------


def _checked_block(X_block, start, n_features):
    """One block of features validated (finite, numeric, ``n_features`` columns) and
    converted to float64; ``start``, the block's first row, is named in an error."""
    try:
        return check_features(X_block, n_features=n_features)
    except ValueError as exc:
        raise ValueError(f"{exc} (in the block of rows starting at row {start})") from None


def bin_block(X_block, start, binner, n_features):
    """Validate one block of features and return its uint8 bin codes; the block is
    converted to float64 one block at a time only. ``start``: the block's first row, for
    messages."""
    return binner.transform(_checked_block(X_block, start, n_features))


def fine_counts(X, lower, upper, n_cells, missing):
    """Exact per-feature counts of ``X``'s rows (C-contiguous float64, validated) in
    ``n_cells`` equal-width fine cells of the public bounds
    (:func:`dptrees._core._binning.fine_counts`): the input of the private edges."""
    out = np.zeros((X.shape[1], n_cells), dtype=np.int64)
    _binning.fine_counts(X, lower, upper, n_cells, missing, out)
    return out


def block_fine_counts(X_block, start, lower, upper, n_cells, missing, n_features):
    """:func:`fine_counts` of one block of features, validated as :func:`bin_block` does."""
    return fine_counts(_checked_block(X_block, start, n_features), lower, upper, n_cells,
                       missing)


def category_counts(X, labels, start, features, n_codes, n_classes):
    """Exact counts of every ``(code, class)`` pair of the categorical ``features`` of
    ``X``'s rows (float64, validated): an int64 array ``(len(features), n_codes,
    n_classes)``, the input of the private category order
    (:mod:`dptrees.data.category_order`; not released here). A record adds 1 to exactly
    one cell of each feature's table, whatever its weight. The codes are those of the
    table encoding (``0 .. K``); anything else is an error that names ``start``, the
    block's first row."""
    labels = np.asarray(labels, dtype=np.intp)
    out = np.zeros((len(features), n_codes, n_classes), dtype=np.int64)
    for t, j in enumerate(features):  # one pass of numpy per categorical column
        codes = X[:, j].astype(np.intp)
        if not (np.array_equal(codes, X[:, j]) and (codes >= 0).all()
                and (codes < n_codes).all()):
            raise ValueError(f"feature {j} is not the codes 0 .. {n_codes - 1} of a "
                             f"categorical column (in the block starting at row {start})")
        out[t] = np.bincount(codes * n_classes + labels,
                             minlength=n_codes * n_classes).reshape(n_codes, n_classes)
    return out


def block_category_counts(X_block, labels, start, features, n_codes, n_classes,
                          n_features):
    """:func:`category_counts` of one block of features, validated as :func:`bin_block`
    does."""
    return category_counts(_checked_block(X_block, start, n_features), labels, start,
                           features, n_codes, n_classes)


def block_minmax(X_block, n_features):
    """Per-feature ``[min, max]`` of a validated block (reading bounds from data: a leak
    the caller reports)."""
    X = check_features(X_block, n_features=n_features)
    return np.stack([X.min(axis=0), X.max(axis=0)])


def block_unique(y_block):
    """The distinct labels of a block (reading classes from data: a leak the caller
    reports)."""
    return np.unique(np.asarray(y_block))


def block_head(y_block, n=1024):
    """The first labels of a block, to validate a public class list against."""
    return np.asarray(y_block[:n])


def label_dtype(n_classes):
    """The smallest unsigned integer type that holds ``n_classes`` class indices."""
    return np.uint8 if n_classes <= 256 else (np.uint16 if n_classes <= 65536 else np.intp)


def block_label_codes(y_block, classes):
    """Class indices of a block of labels against the public (sorted) ``classes``; the
    validation and messages of :func:`dptrees.data.domains.check_classes`."""
    codes = check_classes(classes, y_block, n_samples=len(y_block)).y
    return codes.astype(label_dtype(len(classes)))


def block_y01(y_block, lower, upper):
    """Regression targets of a block clipped to the public bounds and rescaled to [0, 1]
    (exactly the in-memory path's arithmetic)."""
    return y01(check_targets_regression(y_block, len(y_block)), lower, upper)


def y01(y, lower, upper):
    """Validated regression targets ``y`` clipped to the public bounds and rescaled to
    [0, 1]: ``clip((clip(y, lower, upper) - lower) / (upper - lower), 0, 1)``, in one new
    array (the same operations, in place)."""
    out = clip(y, lower, upper)  # a new array: y is not modified
    np.subtract(out, lower, out=out)
    np.divide(out, upper - lower, out=out)
    return np.clip(out, 0.0, 1.0, out=out)


def block_target_minmax(y_block):
    """``[min, max]`` of a block of regression targets (reading the target bounds from
    data: a leak the caller reports)."""
    y = check_targets_regression(y_block, len(y_block))
    return np.array([y.min(), y.max()])


def block_class_counts(labels, n_classes, weight=None):
    """Exact class counts of a block of class indices; with ``weight`` (multiples of
    :data:`~dptrees.validation.WEIGHT_GRID`, so float64 sums of fewer than ``2**33`` of
    them are exact), the sums of the weights by class."""
    labels = np.asarray(labels, dtype=np.intp)
    if weight is not None:
        return np.bincount(labels, weights=weight, minlength=n_classes)
    return np.bincount(labels, minlength=n_classes).astype(np.int64)


def block_fixed_units(y01, scale):
    """Exact fixed-point sum (integer units of ``1 / scale``) of targets in [0, 1]."""
    return fixed_point_sum(np.asarray(y01), bounds=(0.0, 1.0), scale=scale)[0]


# -- boosting ------------------------------------------------------------------------------


class GradientSpec(NamedTuple):
    """What turns a block's raw scores and targets into fixed-point ``(g, h)`` for output
    ``k``: the loss, the public clipping and fixed-point scales (``_FixedPoint``)."""

    loss: object
    fixed: object
    k: int


def loss_targets(labels, loss):
    """The targets ``loss.gradients`` reads, from stored labels or rescaled targets."""
    if loss.n_outputs > 1:
        return np.asarray(labels, dtype=np.intp)
    return np.asarray(labels, dtype=np.float64)


def gradient_stats(loss, fixed, targets, state, k, stats, weight=None):
    """Write output ``k``'s clipped fixed-point gradients (and Hessians, unless constant:
    then ``stats[1]`` already holds them) into the int64 rows of ``stats``, from the
    loss's ``state`` of the scores.

    ``weight``: each record's sample weight in [0, 1] (None: 1 each), which scales its
    clipped gradient and Hessian (a record of weight 1/2 counts half); a constant Hessian
    (1) becomes the weight itself, so ``fixed`` must then have a fixed-point Hessian
    scale. Scaled by at most 1, each value stays in its public clipping range and every
    sensitivity is unchanged.
    """
    g, h = loss.gradients(targets, state, k)
    if weight is None:
        fixed.to_stats(g, None if loss.constant_hessian else h, stats)
        return
    if loss.constant_hessian and fixed.h_scale == 1.0:
        raise ValueError("weighted constant Hessians need a fixed-point Hessian scale")
    g = np.clip(g, -fixed.g_clip, fixed.g_clip) * weight
    h = weight if loss.constant_hessian else np.clip(h, 0.0, fixed.h_clip) * weight
    fixed.to_stats(g, h, stats)


def block_gradient_stats(targets, raw, spec, mask=None, weight=None):
    """int64 ``(2, m)`` clipped fixed-point gradients and Hessians of a block.

    ``raw``: the block's scores, shape ``(n_outputs, m)`` (those of the current batch's
    start); ``mask``: the rows of the tree's Poisson sample (others get 0, so they add
    nothing to any sum); ``weight``: the rows' sample weights (see
    :func:`gradient_stats`).
    """
    loss, fixed, k = spec
    stats = np.empty((2, raw.shape[1]), dtype=np.int64)
    if loss.constant_hessian:
        stats[1].fill(1)
    gradient_stats(loss, fixed, loss_targets(targets, loss), loss.round_state(raw.T), k,
                   stats, weight)
    if mask is not None:
        stats[:, ~mask] = 0
    return stats


def clip_active(stats, codes, active_clip):
    """Scale each row's int64 ``stats`` (in place) so that its contributions to the
    cells of a histogram without first bins have a norm of at most ``max_active``
    times their bound (L1), or ``sqrt(max_active)`` times (L2).

    ``active_clip`` is ``(max_active, norm, h_unit)``, ``norm`` "l1" or "l2". The
    Hessian row is first multiplied by the power of two ``h_unit`` (a finer grid for
    whole-number Hessians, the counts of squared error). A row's *active* features are
    those whose code is not 0 (not in the first bin); a row with ``k > max_active`` of
    them has its statistics multiplied by ``max_active / k`` (L1) or
    ``sqrt(max_active / k)`` (L2), truncated towards zero on the fixed-point grid (so
    their absolute values never grow). Reads the row's own codes only: the same integers
    from every source.
    """
    max_active, norm, h_unit = active_clip
    stats[1] *= h_unit
    active = np.count_nonzero(codes, axis=1)
    over = active > max_active
    if over.any():
        scale = max_active / active[over]
        if norm == "l2":
            scale = np.sqrt(scale)
        stats[:, over] = np.trunc(stats[:, over] * scale).astype(np.int64)
    return stats


def poisson_sample(n, probability, rng):
    """Indices of a Poisson sample of ``range(n)``: each independently w.p. ``probability``
    (the sampling the subsampled accounting assumes), drawn from ``rng`` alone. Blocks
    draw ``rng.random(m) < probability`` in row order: the same stream, the same sample."""
    return np.flatnonzero(rng.random(n) < probability)


def unpack_mask(packed, m):
    """A block's Poisson sample from its packed bits (None: every row)."""
    if packed is None:
        return None
    return np.unpackbits(packed, count=m).view(bool)


def block_histogram(codes, stats, routing, n_bins):
    """Exact ``(n_slots, n_features, n_bins, n_stats)`` sums of the block's rows by node."""
    out = np.zeros((routing.n_slots, codes.shape[1], n_bins, stats.shape[0]), dtype=np.int64)
    _histogram.routed_histogram(codes, stats, *routing, out)
    return out


def block_sums(codes, stats, routing):
    """Exact ``(n_slots, n_stats)`` sums of the block's rows by node (the histogram of
    one feature, summed over its bins)."""
    out = np.zeros((routing.n_slots, 1, 256, stats.shape[0]), dtype=np.int64)
    _histogram.routed_histogram(codes, stats, *routing, out)
    return out.sum(axis=(1, 2))


def start_scores(codes, init):
    """Every row's starting raw scores: ``init`` (one per output), shape ``(n_outputs,
    m)``, one contiguous row per output (the kernels add a tree's values to a row)."""
    return np.repeat(np.asarray(init, dtype=np.float64)[:, None], codes.shape[0], axis=1)


def block_add_values(codes, tree, step, out):
    """``out[i] += step * value[leaf(i)]`` for the rows of a block (a fitted tree)."""
    _histogram.add_leaf_values(codes, tree.feature, tree.bin_threshold, tree.left,
                               tree.right, tree.value, step, out)


# -- DP trees ------------------------------------------------------------------------------


def assign_partitions(n_samples, n_parts, rng):
    """Part of each record: independent and uniform over ``n_parts``, record by record.

    Each record's part depends on its own draw only, so adding or removing one record
    leaves every other record where it was: the parts are disjoint under add/remove-one
    neighbours and parallel composition applies. (Shuffling and cutting into equal chunks
    would not do: one record more moves the cut points and so other records' parts.)
    One uniform double per record (``floor(u * n_parts)``): blocks drawing their parts in
    row order from the same ``rng`` get the parts of all rows drawn at once.

    Parameters
    ----------
    n_samples : int
        Number of records.
    n_parts : int
        Number of parts.
    rng : numpy.random.Generator
        Source of the draws.

    Returns
    -------
    ndarray of intp of shape (n_samples,)
    """
    parts = (rng.random(n_samples) * n_parts).astype(np.intp)
    return np.minimum(parts, n_parts - 1, out=parts)


def block_part_count(parts, part):
    """Rows of a block in partition ``part``."""
    return np.int64(np.count_nonzero(parts == part))


class TreeTargets(NamedTuple):
    """How a block's stored targets become a DP tree's per-row statistics.

    ``mse``: ``[1, rint(y01 * fixed_scale)]`` from targets rescaled to [0, 1]; otherwise a
    weight of 1 and a label: the stored class index (``n_target_bins == 0``) or the
    target's bin among ``n_target_bins`` (median leaves). ``width``: statistics per cell,
    as :class:`dptrees._core._builder.TreeBuilder` counts them.
    """

    mse: bool
    fixed_scale: float
    n_target_bins: int
    width: int


def tree_stats(targets, spec, weight=None):
    """``(stats, labels)`` of a block for :func:`_histogram.routed_histogram`: exactly the
    integers the in-memory tree builder adds up. ``weight``: each row's integer weight
    (0/1 for a partition's rows, fixed-point units for DP AdaBoost), or None (1 each)."""
    m = len(targets)
    w = np.ones(m, dtype=np.int64) if weight is None else weight.astype(np.int64)
    if spec.mse:
        y_fixed = np.rint(np.asarray(targets, dtype=np.float64) * spec.fixed_scale)
        return np.stack([w, y_fixed.astype(np.int64) * w]), None
    if spec.n_target_bins:
        labels = np.empty(m, dtype=np.uint8)
        _binning.bin_values(np.ascontiguousarray(targets, dtype=np.float64), 0.0, 1.0,
                            spec.n_target_bins, labels)
    else:
        labels = np.ascontiguousarray(targets, dtype=np.uint8)
    return w[None, :], labels


def block_tree_statistics(codes, targets, weight, spec, routing, totals_routing, n_bins,
                          part=None):
    """Exact histograms (slots of ``routing``) and totals (slots of ``totals_routing``)
    of a block's rows by node, flattened into one int64 vector (so that blocks add up):
    ``(n_slots, n_features, n_bins, width)`` then ``(n_totals, width)``.

    ``weight``: each row's integer weight (None: 1 each); with ``part``, ``weight`` holds
    the rows' partition ids instead, and a row weighs 1 in partition ``part``, else 0.
    """
    if part is not None:
        weight = weight == part
    stats, labels = tree_stats(targets, spec, weight)
    codes = np.asarray(codes)
    hist = np.zeros((routing.n_slots, codes.shape[1], n_bins, spec.width), dtype=np.int64)
    if routing.n_slots:
        _histogram.routed_histogram(codes, stats, *routing, hist, labels)
    totals = np.zeros((totals_routing.n_slots, 1, n_bins, spec.width), dtype=np.int64)
    if totals_routing.n_slots:
        _histogram.routed_histogram(codes, stats, *totals_routing, totals, labels)
    return np.concatenate([hist.ravel(), totals.sum(axis=(1, 2)).ravel()])
