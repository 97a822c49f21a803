"""Sources whose rows come in blocks: what they share, whatever runs the blocks.

A blockwise source holds its rows as an ordered list of blocks (row slices of a memmap,
partitions of a Dask collection). It never gathers the rows: every step is a function of
:mod:`dptrees._sources._rows` run on each block where the block lives, either *kept*
(per-block state such as bin codes or scores stays with the block) or *reduced* (exact
integer results are added up on the caller's side). Subclasses say only how to run a
function on every block (:meth:`keep_blocks`, :meth:`gather_blocks`); the statistics, and so the
fitted model, are the same bit for bit whatever the blocks and wherever they run.
"""

import numpy as np

from dptrees._sources import _rows
from dptrees._sources._heap import level_nodes
from dptrees.data.domains import check_classes

__all__ = ["add_up", "BlockwiseSource", "BlockwiseBoostingRows", "BlockwiseTreeRows"]


def add_up(parts):
    """The sum of an iterable of exact integer results (arrays or numbers)."""
    total = None
    for part in parts:
        total = part if total is None else total + part
    return total


class BlockwiseSource:
    """Rows in ordered blocks; see the module docstring.

    Subclasses set ``n_samples``, ``n_features``, ``lengths`` (rows per block),
    ``x_blocks`` and ``y_blocks`` (handles of the raw blocks), and implement
    ``keep_blocks(fn, columns, spill=False, **common)`` -> per-block handles (``spill``: large
    per-row results that a local source keeps on disk rather than in memory) and
    ``gather_blocks(fn, columns, **common)`` -> list of local results, in block order, where
    ``columns`` is a list of per-block argument lists.
    """

    codes = None
    labels = None
    weights = None  # sample weights are for rows in memory (see open_source)
    weight_blocks = None

    @property
    def code_blocks(self):
        """Per-block bin codes (after :meth:`bin`)."""
        return self.codes

    @property
    def label_blocks(self):
        """Per-block encoded labels or targets (after encoding them)."""
        return self.labels

    def sum_blocks(self, fn, columns, **common):
        return add_up(self.gather_blocks(fn, columns, **common))

    # -- preparation ---------------------------------------------------------------------

    def feature_minmax(self):
        parts = self.gather_blocks(_rows.block_minmax, [self.x_blocks], n_features=self.n_features)
        stacked = np.stack(parts)
        return np.stack([stacked[:, 0].min(axis=0), stacked[:, 1].max(axis=0)])

    def fine_counts(self, lower, upper, n_cells, missing):
        return self.sum_blocks(_rows.block_fine_counts, [self.x_blocks, self._starts()],
                               lower=lower, upper=upper, n_cells=n_cells, missing=missing,
                               n_features=self.n_features)

    def category_counts(self, features, n_codes, n_classes):
        return self.sum_blocks(_rows.block_category_counts,
                               [self.x_blocks, self.labels, self._starts()],
                               features=features, n_codes=n_codes, n_classes=n_classes,
                               n_features=self.n_features)

    def _starts(self):
        """Each block's first row (for error messages)."""
        return np.cumsum([0] + list(self.lengths[:-1])).tolist()

    def encode_classes(self, classes, name="classes"):
        """Encode the labels against the public ``classes`` (or those found, with a
        ``PrivacyLeakWarning``); returns ``(classes, leak)``."""
        if classes is None:
            found = np.unique(np.concatenate(self.gather_blocks(_rows.block_unique,
                                                          [self.y_blocks])))
            encoding = check_classes(None, found, name=name)
        else:  # validates the public list (and a first block of labels against it)
            first = self.gather_blocks(_rows.block_head, [self.y_blocks[:1]])[0]
            encoding = check_classes(classes, first, name=name)
        self.labels = self.keep_blocks(_rows.block_label_codes, [self.y_blocks], spill=True,
                                 classes=encoding.classes)
        return encoding.classes, encoding.leak

    def check_regression_targets(self):
        """Targets are validated block by block when they are encoded."""

    def target_minmax(self):
        parts = np.stack(self.gather_blocks(_rows.block_target_minmax, [self.y_blocks]))
        return np.array([parts[:, 0].min(), parts[:, 1].max()])

    def encode_regression(self, lower, upper):
        """Store the targets clipped to ``[lower, upper]`` and rescaled to [0, 1]."""
        self.labels = self.keep_blocks(_rows.block_y01, [self.y_blocks], spill=True, lower=lower,
                                 upper=upper)

    def bin(self, binner):
        self.codes = self.keep_blocks(_rows.bin_block, [self.x_blocks, self._starts()],
                                      spill=True, binner=binner, n_features=self.n_features)
        self.x_blocks = None  # the codes are all the fit reads from now on

    def class_counts(self, n_classes):
        return self.sum_blocks(_rows.block_class_counts, [self.labels], n_classes=n_classes)

    def target_fixed_sum(self, scale):
        return int(self.sum_blocks(_rows.block_fixed_units, [self.labels], scale=scale))

    def record_count(self):
        return self.n_samples

    def rows_in_memory(self):
        """``(codes, labels)`` of every row, gathered into this process in row order:
        for the federated simulation, which keeps its records sorted by client. Only
        the one-byte bin codes and the encoded labels are gathered, never the
        float64 features."""
        return tuple(np.concatenate(self.gather_blocks(np.array, [blocks]))
                     for blocks in (self.codes, self.labels))

    def boosting_rows(self, loss, fixed, init, n_bins, n_jobs=1, executor=None):
        return BlockwiseBoostingRows(self, loss, fixed, init, n_bins)

    def assign_partitions(self, n_parts, rng):
        """Each row's partition, drawn block by block in row order (the same draws as
        :func:`~dptrees._sources._rows.assign_partitions` on all rows at once)."""
        return [_rows.assign_partitions(m, n_parts, rng).astype(np.uint16 if n_parts
                                                                 <= 65536 else np.intp)
                for m in self.lengths]

    def tree_rows(self, spec, n_bins, parts=None, part=None):
        return BlockwiseTreeRows(self, spec, n_bins, parts, part)


def _histogram_of_block(codes, labels, raw, packed, spec, routing, n_bins, active_clip):
    stats = _rows.block_gradient_stats(labels, raw, spec,
                                       _rows.unpack_mask(packed, codes.shape[0]))
    if active_clip is not None:
        _rows.clip_active(stats, codes, active_clip)
    return _rows.block_histogram(codes, stats, routing, n_bins)


def _sums_of_block(codes, labels, raw, packed, spec, routing):
    stats = _rows.block_gradient_stats(labels, raw, spec,
                                       _rows.unpack_mask(packed, codes.shape[0]))
    return _rows.block_sums(codes, stats, routing)


# Per-block state is updated in place where the blocks are views of the source's own
# arrays (``inplace``), and replaced by a new array where they are Dask futures (tasks
# must not change their inputs).


def _add_tree(codes, pending, k, tree, step, inplace):
    if not inplace:
        pending = pending.copy()
    _rows.block_add_values(codes, tree, step, pending[k])
    return pending


def _zeros_like(raw):
    return np.zeros_like(raw)


def _add(raw, pending, inplace):
    if inplace:
        raw += pending
        return raw
    return raw + pending


class BlockwiseBoostingRows:
    """Gradient boosting's view of a blockwise source: per-block scores kept with the
    blocks, exact per-level histograms and leaf sums reduced to the caller.

    Implements the rows interface the boosting grower reads (see
    :class:`dptrees._sources._array.ArrayBoostingRows`).
    """

    def __init__(self, source, loss, fixed, init, n_bins):
        self.source = source
        self.loss = loss
        self.fixed = fixed
        self.n_bins = n_bins
        self.raw = source.keep_blocks(_rows.start_scores, [source.code_blocks], init=init)
        self.pending = None

    def start_batch(self):
        self.pending = self.source.keep_blocks(_zeros_like, [self.raw])

    def start_tree(self, k, feature, bin_threshold, sample_rng=None, probability=None):
        self.spec = _rows.GradientSpec(self.loss, self.fixed, k)
        self.feature, self.bin_threshold = feature, bin_threshold
        if sample_rng is None:
            self.packed = [None] * len(self.source.lengths)
        else:  # drawn block by block in row order: the same stream as all rows at once
            self.packed = [np.packbits(sample_rng.random(m) < probability)
                           for m in self.source.lengths]

    def split(self, level):
        """The nodes of ``level`` are now split (``feature``, ``bin_threshold`` set)."""

    def histograms(self, level, nodes, active_clip=None):
        routing = _rows.heap_routing(self.feature, self.bin_threshold, level, nodes)
        src = self.source
        return src.sum_blocks(_histogram_of_block,
                        [src.code_blocks, src.label_blocks, self.raw, self.packed],
                        spec=self.spec, routing=routing, n_bins=self.n_bins,
                        active_clip=active_clip)

    def leaf_sums(self):
        depth = int(np.log2(self.feature.shape[0] + 1)) - 1
        routing = _rows.heap_routing(self.feature, self.bin_threshold, depth,
                                     level_nodes(depth))
        src = self.source
        return src.sum_blocks(_sums_of_block,
                        [src.code_blocks, src.label_blocks, self.raw, self.packed],
                        spec=self.spec, routing=routing)

    def add_tree(self, k, tree, values, step):
        self.pending = self.source.keep_blocks(_add_tree, [self.source.code_blocks, self.pending],
                                         k=k, tree=tree, step=step,
                                         inplace=self.source.inplace)

    def end_batch(self):
        self.raw = self.source.keep_blocks(_add, [self.raw, self.pending],
                                     inplace=self.source.inplace)
        self.pending = None

    def close(self):
        self.raw = self.pending = None


class BlockwiseTreeRows:
    """A DP tree's view of a source that runs functions on its blocks (any
    :class:`BlockwiseSource`, or :class:`~dptrees._sources._array.ArraySource`'s views):
    exact per-node histograms and totals, one pass over the blocks per request
    (:func:`dptrees._tree_growth.grow_from_statistics`).

    ``weights``: per-block integer row weights (None: every row weighs 1); with ``part``,
    per-block partition ids, and the tree sees only the rows of partition ``part``
    (partition forests). ``n_rows``: the rows the tree sees (with weights, the number of
    rows; the weights' total is a statistic, not a count).
    """

    def __init__(self, source, spec, n_bins, weights=None, part=None):
        self.source = source
        self.spec = spec
        self.n_bins = n_bins
        self.width = spec.width
        self.n_features = source.n_features
        self.part = part
        self.weights = [None] * len(source.lengths) if weights is None else weights
        if part is None:
            self.n_rows = source.n_samples
        else:
            self.n_rows = int(sum(_rows.block_part_count(p, part) for p in self.weights))

    def statistics(self, routing, totals_routing):
        src = self.source
        flat = src.sum_blocks(_rows.block_tree_statistics,
                        [src.code_blocks, src.label_blocks, self.weights], spec=self.spec,
                        part=self.part, routing=routing, totals_routing=totals_routing,
                        n_bins=self.n_bins)
        shape = (routing.n_slots, self.n_features, self.n_bins, self.width)
        n_hist = int(np.prod(shape))
        return (flat[:n_hist].reshape(shape),
                flat[n_hist:].reshape(totals_routing.n_slots, self.width))
