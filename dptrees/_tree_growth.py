"""Growing a DP tree from exact statistics summed wherever the rows are.

:meth:`TreeBuilder.build <dptrees._core._builder.TreeBuilder.build>` grows a tree from
rows in memory. :func:`grow_from_statistics` grows the same tree, bit for bit, from a
*tree rows* object that only answers "what are the exact integer statistics of these
nodes?" -- summed over the blocks of a memmap or the partitions of a Dask collection
(:class:`dptrees._sources._blockwise.BlockwiseTreeRows`). It asks one pass over the rows
per level, and lets the compiled builder decide the level (:meth:`TreeBuilder.decide_level`)
with the level's own noise stream: the draws of the depth-first build in memory, which
meets a level's nodes in the same left-to-right order, from the same integers.

Privacy: nothing here reads a row or draws noise. What is released, with which
sensitivity, is the builder's (see :mod:`dptrees._core._builder`); the statistics passed
to it are the exact sums the in-memory build computes. Which child is measured and which
is taken as parent minus sibling follows the released noisy counts only.
"""

import numpy as np

from dptrees._core._builder import renumber_depth_first
from dptrees._sources._heap import SiblingHistograms
from dptrees._sources._rows import Routing

__all__ = ["grow_from_statistics"]

#: Histograms measured in one pass over the rows; more are measured in further passes,
#: and parents' histograms past this are not kept for subtraction (the same tree).
MAX_HISTOGRAM_BYTES = 2**28


class _Nodes:
    """The tree so far, in creation (level) order; children ids follow their parent."""

    def __init__(self, width):
        self.feature, self.bin_threshold, self.left, self.right = [], [], [], []
        self.depth, self.noisy_count, self.value, self.parent = [], [], [], []
        self.width = width

    def add(self, depth, noisy_count, parent=-1):
        self.feature.append(-1)
        self.bin_threshold.append(-1)
        self.left.append(-1)
        self.right.append(-1)
        self.depth.append(depth)
        self.noisy_count.append(noisy_count)
        self.value.append(np.full(self.width, np.nan))
        self.parent.append(parent)
        return len(self.feature) - 1

    def sibling(self, v):
        u = self.parent[v]
        return self.left[u] + self.right[u] - v

    def smaller_child(self, u):
        """The child of ``u`` with the smaller released count (the left on ties)."""
        left, right = self.left[u], self.right[u]
        return left if self.noisy_count[left] <= self.noisy_count[right] else right

    def __len__(self):
        return len(self.feature)

    def routing(self, wanted):
        """Routing through the tree so far; slot ``j`` for node ``wanted[j]``."""
        slot = np.full(len(self), -1, dtype=np.intp)
        slot[np.asarray(wanted, dtype=np.intp)] = np.arange(len(wanted))
        return Routing(np.asarray(self.feature, dtype=np.int32),
                       np.asarray(self.bin_threshold, dtype=np.int32),
                       np.asarray(self.left, dtype=np.int32),
                       np.asarray(self.right, dtype=np.int32), slot)

    def arrays(self):
        return renumber_depth_first({
            "feature": np.asarray(self.feature, dtype=np.int32),
            "bin_threshold": np.asarray(self.bin_threshold, dtype=np.int32),
            "left": np.asarray(self.left, dtype=np.int32),
            "right": np.asarray(self.right, dtype=np.int32),
            "depth": np.asarray(self.depth, dtype=np.int32),
            "noisy_count": np.asarray(self.noisy_count, dtype=np.float64),
            "value": np.asarray(self.value, dtype=np.float64),
        })


def _histogram_bytes(rows):
    """Bytes of one node's histograms."""
    return rows.n_features * rows.n_bins * rows.width * 8


def _measure(rows, nodes, measured, totals_of):
    """Exact histograms of ``measured`` and totals of ``totals_of`` (node ids), in as
    many passes as :data:`MAX_HISTOGRAM_BYTES` needs (totals in the first)."""
    group = max(1, MAX_HISTOGRAM_BYTES // _histogram_bytes(rows))
    hist = np.empty((len(measured), rows.n_features, rows.n_bins, rows.width), np.int64)
    if not len(measured) and not len(totals_of):
        return hist, np.empty((0, rows.width), np.int64)
    totals = None
    for start in range(0, max(len(measured), 1), group):
        part = measured[start:start + group]
        h, t = rows.statistics(nodes.routing(part),
                               nodes.routing(totals_of if totals is None else []))
        hist[start:start + len(part)] = h
        totals = t if totals is None else totals
    return hist, totals


def grow_from_statistics(builder, rows, noise_rng, candidate_rng):
    """Grow ``builder``'s tree from ``rows``' exact statistics; the node arrays of
    :meth:`TreeBuilder.build` (numbered depth first), bit-identical to building from
    the same rows in memory with the same generators.

    ``rows`` has ``n_rows`` (exact), ``n_features``, ``n_bins``, ``width`` and
    ``statistics(hist_routing, totals_routing) -> (hist, totals)``: the exact
    ``(n_slots, n_features, n_bins, width)`` histograms and ``(n_slots, width)`` totals
    of the rows reaching each wanted node.
    """
    greedy = builder.greedy
    noise = builder.level_streams(noise_rng)
    candidate_streams = None if greedy else builder.level_streams(candidate_rng)
    nodes = _Nodes(builder.value_width)
    root = nodes.add(0, builder.noisy_root_count(noise[0], rows.n_rows))
    level = np.array([root])
    # The histograms kept from the previous level, of its nodes that split.
    kept = SiblingHistograms(nodes.parent.__getitem__, nodes.sibling)
    depth = 0
    while len(level):
        counts = np.array([nodes.noisy_count[v] for v in level])
        splittable = builder.plan_level(depth, counts)
        split_nodes = level[splittable].tolist()
        candidates = (None, None)
        if not greedy:
            candidates = builder.draw_candidates(candidate_streams[depth], len(split_nodes),
                                                 rows.n_features)
        # Of two children one of which is splittable, measure the one with the smaller
        # released count (the left on ties) and take the other as parent minus it, if
        # the parent's histograms were kept; measure every other splittable node.
        measured = kept.to_measure(split_nodes, nodes.smaller_child)
        hist, totals_of_leaves = _measure(rows, nodes, measured, level[~splittable])
        level_hist = kept.complete(split_nodes, measured, hist)
        del hist
        totals = np.zeros((len(level), rows.width), dtype=np.int64)
        totals[~splittable] = totals_of_leaves
        feature, bin_threshold, left_count, right_count, value = builder.decide_level(
            noise[depth], depth, counts, totals, level_hist, *candidates)
        following = []
        for i, v in enumerate(level.tolist()):
            if feature[i] < 0:
                nodes.value[v] = np.atleast_1d(value[i])
                continue
            nodes.feature[v], nodes.bin_threshold[v] = int(feature[i]), int(bin_threshold[i])
            a = nodes.add(depth + 1, float(left_count[i]), v)
            b = nodes.add(depth + 1, float(right_count[i]), v)
            nodes.left[v], nodes.right[v] = a, b
            following += [a, b]
        split = [j for j, v in enumerate(split_nodes) if nodes.left[v] != -1]
        if len(split) * _histogram_bytes(rows) <= MAX_HISTOGRAM_BYTES:
            kept.keep(zip([split_nodes[j] for j in split], level_hist[split]))
        else:
            kept.keep({})
        del level_hist
        level = np.array(following, dtype=np.intp)
        depth += 1
    return nodes.arrays()
