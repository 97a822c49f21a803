"""Rows in memory: the fast path, with the statistics of every other source.

The features are validated and binned at once; a tree's rows are kept as one index
array, partitioned in place node by node (stable), so the leaves' sums and a small
node's histogram read only its own rows. Below the root a node's rows are spread over
the whole array, so the histograms of a level's larger nodes are read in one pass over
all rows in order, each routed to its node, and a node whose parent's histogram is known
is its parent's minus its smaller sibling's
(:class:`~dptrees._sources._heap.SiblingHistograms`). Partitions, leaf sums and score
updates of different nodes run on the executor's threads. The statistics are the same exact
integers the blockwise sources compute by routing (:mod:`dptrees._sources._blockwise`),
so the fitted model is the same bit for bit.
"""

import numpy as np

from dptrees._core import _histogram
from dptrees._sources import _rows
from dptrees._sources._blocks import map_blocks
from dptrees._sources._blockwise import add_up
from dptrees._sources._heap import SiblingHistograms, level_nodes
from dptrees.data.domains import check_classes
from dptrees.validation import check_features, check_sample_weight, check_targets_regression

__all__ = ["ArraySource", "ArrayBoostingRows"]

# Below this many rows a histogram of a node, or a block of rows, is not worth a thread.
_THREAD_MIN_ROWS = 50_000


class ArraySource:
    """All rows of ``X`` and ``y`` in memory (``X`` validated as C-contiguous float64).

    For the estimators that read per-record state block by block (the interface of
    :class:`~dptrees._sources._blockwise.BlockwiseSource`: ``code_blocks``,
    ``label_blocks``, ``keep_blocks``, ``gather_blocks``, ``sum_blocks``), the rows are ``n_jobs`` blocks of
    consecutive rows, views of the arrays, run on ``n_jobs`` threads.

    ``sample_weight``: each record's weight in [0, 1] (None: 1 each), which scales the
    record in every statistic (:func:`~dptrees.validation.check_sample_weight`); kept as
    ``weights``.
    """

    inplace = True

    def __init__(self, X, y, *, n_jobs=1, sample_weight=None):
        self.X = check_features(X)
        self.n_samples, self.n_features = self.X.shape
        self.weights = check_sample_weight(sample_weight, self.n_samples)
        self.y = y
        self.codes = None
        self.labels = None
        self.n_jobs = int(n_jobs)
        n_blocks = max(1, min(self.n_jobs, self.n_samples // _THREAD_MIN_ROWS))
        cuts = np.linspace(0, self.n_samples, n_blocks + 1).astype(np.intp)
        self.row_blocks = list(zip(cuts[:-1].tolist(), cuts[1:].tolist()))
        self.lengths = [b - a for a, b in self.row_blocks]

    # -- the blockwise interface, over views of the arrays -----------------------------

    @property
    def code_blocks(self):
        return [self.codes[a:b] for a, b in self.row_blocks]

    @property
    def label_blocks(self):
        return [self.labels[a:b] for a, b in self.row_blocks]

    @property
    def weight_blocks(self):
        """Per-block sample weights (None when every record weighs 1)."""
        if self.weights is None:
            return None
        return [self.weights[a:b] for a, b in self.row_blocks]

    def keep_blocks(self, fn, columns, spill=False, **common):
        return list(map_blocks(fn, columns, common, self.n_jobs))

    gather_blocks = keep_blocks

    def sum_blocks(self, fn, columns, **common):
        return add_up(map_blocks(fn, columns, common, self.n_jobs))

    def close(self):
        self.X = self.y = self.codes = None

    def feature_minmax(self):
        return _rows.block_minmax(self.X, self.n_features)

    def fine_counts(self, lower, upper, n_cells, missing):
        blocks = [self.X[a:b] for a, b in self.row_blocks]
        return self.sum_blocks(_rows.fine_counts, [blocks], lower=lower, upper=upper,
                               n_cells=n_cells, missing=missing)

    def category_counts(self, features, n_codes, n_classes):
        blocks = [self.X[a:b] for a, b in self.row_blocks]
        starts = [a for a, _ in self.row_blocks]
        return self.sum_blocks(_rows.category_counts, [blocks, self.label_blocks, starts],
                               features=features, n_codes=n_codes, n_classes=n_classes)

    def check_regression_targets(self):
        self.y = check_targets_regression(self.y, self.n_samples)

    def target_minmax(self):
        return _rows.block_target_minmax(self.y)

    def encode_regression(self, lower, upper):
        self.labels = _rows.y01(self.y, lower, upper)  # y checked by check_regression_targets

    def encode_classes(self, classes, name="classes"):
        if self.y is None:
            raise ValueError("requires y to be passed, but the target y is None")
        encoding = check_classes(classes, self.y, n_samples=self.n_samples, name=name)
        self.labels = np.asarray(encoding.y, dtype=np.intp)
        return encoding.classes, encoding.leak

    def bin(self, binner):
        self.codes = binner.transform(self.X, self.n_jobs)

    def class_counts(self, n_classes):
        return _rows.block_class_counts(self.labels, n_classes, self.weights)

    def target_fixed_sum(self, scale):
        targets = self.labels if self.weights is None else self.labels * self.weights
        return _rows.block_fixed_units(targets, scale)

    def rows_in_memory(self):
        """``(codes, labels)`` of every row (after :meth:`bin` and the labels' encoding)."""
        return self.codes, self.labels

    def record_count(self):
        """The number of records, or the sum of their weights (exact: grid multiples)."""
        return self.n_samples if self.weights is None else float(self.weights.sum())

    def boosting_rows(self, loss, fixed, init, n_bins, n_jobs=1, executor=None):
        return ArrayBoostingRows(self, loss, fixed, init, n_bins, n_jobs, executor)


class ArrayBoostingRows:
    """Gradient boosting's view of in-memory rows; the interface every source's rows
    implement for the grower in :mod:`dptrees.boosting._gradient`:

    * ``start_batch()``: gradients read the scores as they are now, until ``end_batch``;
    * ``start_tree(k, feature, bin_threshold, sample_rng, probability)``: a tree for
      output ``k`` whose heap arrays will be filled level by level; with ``sample_rng``,
      a Poisson sample of the rows (rate ``probability``) drawn from it in row order;
    * ``histograms(level, nodes, active_clip=None)``: exact ``(len(nodes), n_features,
      n_bins, 2)`` sums of fixed-point ``(g, h)`` of those nodes of ``level`` (heap ids);
      with ``active_clip``, of each row's ``(g, h)`` scaled by
      :func:`~dptrees._sources._rows.clip_active`. Here a node whose parent's histogram
      was taken at the level above is its parent's minus its sibling's where the
      sibling has fewer rows (exact integers: the same sums, for fewer rows read);
    * ``split(level)``: the nodes of ``level`` have their split now;
    * ``leaf_sums()``: exact ``(n_leaves, 2)`` sums of the complete tree's leaves;
    * ``add_tree(k, tree, values, step)``: add ``step`` times the leaf values to output
      ``k``'s pending scores; ``end_batch()`` adds the pending scores.
    """

    def __init__(self, source, loss, fixed, init, n_bins, n_jobs=1, executor=None):
        n = source.n_samples
        self.loss, self.fixed, self.n_bins = loss, fixed, n_bins
        self.codes = source.codes  # row-major: histograms read a row's codes together
        # feature-major: a split reads one feature of the node's rows
        self.codes_by_feature = np.ascontiguousarray(source.codes.T)
        self.n_features = source.n_features
        self.targets = _rows.loss_targets(source.labels, loss)
        self.weights = source.weights
        self.n_jobs, self.executor = n_jobs, executor
        self.row_blocks = source.row_blocks  # (start, stop) of the source's blocks of rows
        self.stats = np.empty((2, n), dtype=np.int64)
        if loss.constant_hessian:
            self.stats[1].fill(1)
        self.raw = _rows.start_scores(source.codes, init)
        self.all_rows = np.arange(n, dtype=np.intp)  # the rows every tree starts from

    def start_batch(self):
        self.state = self.loss.round_state(self.raw.T)
        self.pending = np.zeros_like(self.raw)

    def start_tree(self, k, feature, bin_threshold, sample_rng=None, probability=None):
        n = self.raw.shape[1]
        self.sampled = sample_rng is not None
        if self.sampled:  # each row independently w.p. probability, in row order
            self.all_rows = _rows.poisson_sample(n, probability, sample_rng)
        _rows.gradient_stats(self.loss, self.fixed, self.targets, self.state, k, self.stats,
                             self.weights)
        self.feature, self.bin_threshold = feature, bin_threshold
        # Rows in increasing order: every node's slice is then sorted (the partition is
        # stable), so histograms read the codes nearly sequentially.
        self.rows = self.all_rows.copy()
        n_nodes = feature.shape[0]
        self.starts = np.zeros(n_nodes + 1, dtype=np.intp)
        self.stops = np.zeros(n_nodes + 1, dtype=np.intp)
        self.stops[0] = self.rows.shape[0]
        self.exact = SiblingHistograms()  # the last histograms, for the level below

    def _threaded(self):
        """Whether to spread a tree's per-node work over the executor's threads."""
        return self.executor is not None and self.rows.shape[0] >= _THREAD_MIN_ROWS

    def _run(self, fn, jobs):
        """``[fn(*job) for job in jobs]``, on the executor's threads where worth it (the
        jobs write to disjoint rows or cells, with the GIL released)."""
        if self._threaded() and len(jobs) > 1:
            return [f.result() for f in [self.executor.submit(fn, *job) for job in jobs]]
        return [fn(*job) for job in jobs]

    def split(self, level):
        nodes = level_nodes(level)
        n_left = self._run(_histogram.partition, [
            (self.codes_by_feature, self._node_rows(node), int(self.feature[node]),
             int(self.bin_threshold[node])) for node in nodes])
        for node, count in zip(nodes, n_left):
            start, stop = self.starts[node], self.stops[node]
            self.starts[2 * node + 1], self.stops[2 * node + 1] = start, start + count
            self.starts[2 * node + 2], self.stops[2 * node + 2] = start + count, stop

    def _histogram(self, rows, stats):
        out = np.zeros((self.n_features, self.n_bins, 2), dtype=np.int64)
        if self.executor is None or rows.shape[0] < _THREAD_MIN_ROWS:
            _histogram.node_histogram(self.codes, rows, stats, out)
            return out
        cuts = np.linspace(0, self.n_features, self.n_jobs + 1).astype(int)
        jobs = [self.executor.submit(_histogram.node_histogram, self.codes, rows,
                                     stats, out, int(a), int(b))
                for a, b in zip(cuts[:-1], cuts[1:]) if b > a]
        for job in jobs:
            job.result()
        return out

    def histograms(self, level, nodes, active_clip=None):
        if active_clip is not None:
            stats = _rows.clip_active(self.stats.copy(), self.codes, active_clip)
            return np.stack([self._histogram(self._node_rows(v), stats) for v in nodes])
        measured = self.exact.to_measure(nodes, self._smaller_child)
        return self.exact.complete(nodes, measured, self._measure(level, measured))

    def _node_rows(self, node):
        return self.rows[self.starts[node]:self.stops[node]]

    def _smaller_child(self, node):
        """The child of ``node`` with fewer rows (the left on ties): the one measured."""
        left, right = 2 * node + 1, 2 * node + 2
        n_rows = self.stops - self.starts
        return right if n_rows[right] < n_rows[left] else left

    def _measure(self, level, nodes):
        """Exact histograms of ``nodes`` (of ``level``) from their rows: node by node
        where they hold few rows, else in one pass over all rows in order, each routed
        to its node (a node's rows are spread over the whole array below the root, so
        reading them node by node would read most of it once per node)."""
        n_rows = int(sum(self.stops[v] - self.starts[v] for v in nodes))
        if not nodes:
            return np.zeros((0, self.n_features, self.n_bins, 2), dtype=np.int64)
        if level == 0 or self.sampled or 8 * n_rows < self.rows.shape[0]:
            return np.stack([self._histogram(self._node_rows(v), self.stats) for v in nodes])
        routing = _rows.heap_routing(self.feature, self.bin_threshold, level, nodes)
        parts = self._run(_rows.block_histogram, [
            (self.codes[a:b], np.ascontiguousarray(self.stats[:, a:b]), routing, self.n_bins)
            for a, b in self.row_blocks])
        return sum(parts[1:], parts[0])

    def leaf_sums(self):
        n_internal = (self.feature.shape[0] - 1) // 2
        leaves = np.arange(n_internal, 2 * n_internal + 1)
        seg = np.append(self.starts[leaves], self.stops[leaves[-1]])
        # Consecutive groups of leaves, one per thread with about as many rows each: each
        # group's rows, its segments' starts within them, and its leaves (first, stop).
        n_groups = min(self.n_jobs, leaves.shape[0]) if self._threaded() else 1
        cuts = np.unique(np.concatenate([
            [0], np.searchsorted(seg, np.linspace(0, seg[-1], n_groups + 1)[1:-1]),
            [leaves.shape[0]]]).astype(np.intp)).tolist()
        self.leaf_groups = [(self.rows[seg[a]:seg[b]], seg[a:b + 1] - seg[a], a, b)
                            for a, b in zip(cuts[:-1], cuts[1:])]
        sums = np.empty((leaves.shape[0], 2), dtype=np.int64)
        self._run(_histogram.segment_sums, [(rows, self.stats, starts, sums[a:b])
                                            for rows, starts, a, b in self.leaf_groups])
        return sums

    def add_tree(self, k, tree, values, step):
        if not self.sampled:
            self._run(_histogram.add_segment_values, [
                (rows, starts, values[a:b], step, self.pending[k])
                for rows, starts, a, b in self.leaf_groups])
        else:  # rows outside the sample are routed through the tree
            _histogram.add_leaf_values(self.codes, tree.feature, tree.bin_threshold,
                                       tree.left, tree.right, tree.value, step,
                                       self.pending[k])

    def end_batch(self):
        self.raw += self.pending
        self.pending = None

    def close(self):
        self.stats = self.raw = self.rows = self.codes_by_feature = None
