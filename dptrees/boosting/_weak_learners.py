"""Weighted differentially private decision trees: the weak learners of DP AdaBoost.

:func:`fit_weighted_tree` grows a complete tree level by level on binned features and
weighted records (weights in a public ``[0, weight_bound]``, none depending on another
record), from exact integer sums of any source. Guarantee, for add/remove-one
neighbours: each split choice (permute-and-flip on minus the weighted misclassification
error) has utility sensitivity ``weight_bound``; each level's choices are on disjoint
records; the leaf totals move by at most ``weight_bound`` in L1. The proof: "Privacy
proofs, DP AdaBoost" in the documentation (``docs/proofs/adaboost.rst``).
"""

from functools import partial
import math

import numpy as np

from dptrees._sources._blockwise import BlockwiseTreeRows
from dptrees._sources._heap import empty_tree, level_nodes
from dptrees._sources._rows import TreeTargets, heap_routing
from dptrees._tree_structure import Tree
from dptrees.boosting._grower import SelectedSplits, grow
from dptrees.boosting._trees import heap_children
from dptrees.mechanisms import laplace_mechanism, permute_and_flip
from dptrees.validation import (  # weights are multiples of the grid (see above)
    WEIGHT_BITS,
    WEIGHT_GRID,
    weight_units,
)

__all__ = ["WEIGHT_GRID", "WeightedRows", "WeightedTree", "fit_weighted_tree", "learner_budget"]

#: Largest total weight for which float64 sums of grid multiples stay exact.
MAX_TOTAL_WEIGHT = 2.0**53 * WEIGHT_GRID


def learner_budget(epsilon, max_depth, split_weight=1.0, leaf_weight=1.0):
    """Per-release budgets of one weak learner of total ``epsilon``.

    A record meets ``max_depth`` split choices (one per level) and one leaf release;
    with relative weights ``split_weight`` and ``leaf_weight`` the unit is
    ``epsilon / (max_depth * split_weight + leaf_weight)``. (``dptrees.tree.split_tree_budget``
    also budgets noisy node counts, which this learner does not release.)

    Returns
    -------
    dict with keys ``"split"`` (per level) and ``"leaf"``
    """
    unit = epsilon / (max_depth * split_weight + leaf_weight)
    return {"split": unit * split_weight, "leaf": unit * leaf_weight}


class WeightedTree(Tree):
    """A weak learner: the complete tree of depth ``max_depth`` (heap layout) as the
    library's one :class:`~dptrees._tree_structure.Tree`, its leaves holding the released
    noisy weighted class totals.

    Internal node ``j`` (``0 <= j < 2**max_depth - 1``) sends a record with
    ``code[feature[j]] <= bin_threshold[j]`` to ``2 j + 1`` and others to ``2 j + 2``;
    leaf ``l`` is node ``2**max_depth - 1 + l``.

    Parameters
    ----------
    feature, bin_threshold : array of int, shape (2**max_depth - 1,)
        The internal nodes' splits, in heap order.
    noisy_totals : array of float64, shape (2**max_depth, n_classes)
        The leaves' released noisy weighted class totals.
    binner : Binner, optional
        Gives the splits' ``threshold`` in feature units (NaN without it).

    Attributes
    ----------
    value : ndarray of float64, shape (node_count, n_classes)
        The noisy totals at the leaves, NaN at internal nodes.
    noisy_totals : ndarray of float64, shape (2**max_depth, n_classes)
        The leaves' rows of ``value``.
    leaf_label : ndarray of int64, shape (2**max_depth,)
        ``argmax`` of the noisy totals (post-processing), or the fallback label
        (:meth:`fall_back_to`).
    """

    def __init__(self, feature, bin_threshold, noisy_totals, binner=None):
        noisy_totals = np.asarray(noisy_totals, dtype=np.float64)
        n_internal = len(feature)
        max_depth = int(round(math.log2(n_internal + 1)))
        heap_feature, heap_bin = empty_tree(max_depth)
        heap_feature[:n_internal], heap_bin[:n_internal] = feature, bin_threshold
        left, right = heap_children(max_depth)
        n_nodes = left.shape[0]
        value = np.full((n_nodes, noisy_totals.shape[1]), np.nan)
        value[n_internal:] = noisy_totals
        threshold = np.full(n_nodes, np.nan)
        if binner is not None and n_internal:
            threshold[:n_internal] = binner.thresholds(heap_feature[:n_internal],
                                                       heap_bin[:n_internal])
        super().__init__(feature=heap_feature, bin_threshold=heap_bin, threshold=threshold,
                         left=left, right=right,
                         depth=np.floor(np.log2(np.arange(n_nodes) + 1)).astype(np.int32),
                         value=value, noisy_count=np.full(n_nodes, np.nan))
        self.leaf_label = np.argmax(noisy_totals, axis=1).astype(np.int64)

    @property
    def n_internal(self):
        return self.node_count // 2

    @property
    def noisy_totals(self):
        return self.value[self.n_internal:]

    def leaf_index(self, codes):
        """Leaf index (``0 .. 2**max_depth - 1``) of every row of ``codes``."""
        return self.apply(np.ascontiguousarray(codes)) - self.n_internal

    def fall_back_to(self, label, margin):
        """Leaves whose two largest noisy totals differ by less than ``margin`` (a
        public multiple of the noise) predict ``label`` instead (post-processing)."""
        top2 = np.sort(self.noisy_totals, axis=1)[:, -2:]
        unsure = top2[:, 1] - top2[:, 0] < margin
        self.leaf_label = np.where(unsure, int(label), self.leaf_label).astype(np.int64)

    def leaf_weights_and_means(self):
        """For :mod:`dptrees._importances`: each leaf weighs its clipped noisy total and
        holds its vote (the one-hot of its label); internal rows are unused."""
        n_classes = self.value.shape[1]
        weight = np.zeros(self.node_count)
        weight[self.n_internal:] = np.maximum(self.noisy_totals, 0.0).sum(axis=1)
        vote = np.zeros((self.node_count, n_classes))
        vote[self.n_internal + np.arange(self.leaf_label.shape[0]), self.leaf_label] = 1.0
        return weight, vote

    def predict(self, codes):
        """Class index predicted for every row of ``codes``."""
        return self.leaf_label[self.leaf_index(codes)]

    def weighted_error(self):
        """Weighted training error estimated from the noisy totals (post-processing).

        Negative noisy totals count as 0; returns ``(error, correct_total, error_total)``
        with ``error = error_total / (correct_total + error_total)``, NaN if the clipped
        totals sum to 0.
        """
        totals = np.maximum(self.noisy_totals, 0.0)
        correct = float(totals[np.arange(totals.shape[0]), self.leaf_label].sum())
        wrong = float(totals.sum() - correct)
        total = correct + wrong
        return (wrong / total if total > 0 else float("nan")), correct, wrong


# Block functions of :class:`WeightedRows` (run where a block lives: a thread, a Dask
# worker). Weights are int64 units of WEIGHT_GRID; the float arithmetic of an update is
# per record, so it gives the same units in every block split.


def _constant_units(codes, weight):
    return np.full(codes.shape[0], int(round(weight / WEIGHT_GRID)), dtype=np.int64)


def _weighted_units(units, user):
    """Each record's boosting weight times its sample weight, rounded down to the grid:
    at most the boosting weight (a sample weight of 1 leaves it as it is)."""
    return (units * user) >> WEIGHT_BITS


def _units_extremes(units, user=None):
    """``[max, min]`` of a block's weights over its records of positive sample weight
    (all of them without sample weights); ``[-inf, inf]`` if there are none."""
    if user is not None:
        units = units[user > 0]
    if units.shape[0] == 0:
        return np.array([-np.inf, np.inf])
    return np.array([units.max(), units.min()], dtype=np.float64) * WEIGHT_GRID


def _to_units(weights, lower, upper):
    """Round float weights to the grid, clip them to ``[lower, upper]``, as units."""
    np.rint(weights / WEIGHT_GRID, out=weights)
    weights *= WEIGHT_GRID
    np.clip(weights, lower, upper, out=weights)
    return np.rint(weights / WEIGHT_GRID).astype(np.int64)


def _rescaled_units(units, low, high, lower, upper):
    weights = np.clip(units * WEIGHT_GRID, low, high)
    weights /= high
    return _to_units(weights, lower, upper)


def _reweighted_units(codes, labels, units, tree, factor, lower, upper):
    weights = units * WEIGHT_GRID
    weights[tree.predict(codes) == labels] *= factor
    return _to_units(weights, lower, upper)


class WeightedRows:
    """Every record's weight, kept with the blocks of a source of rows, and the exact
    weighted class statistics the weak learners release.

    ``source``: an :class:`~dptrees._sources._array.ArraySource` or a blockwise source,
    with classes encoded and features binned. Weights start at ``initial_weight`` and
    change only by per-record functions of the record and of public values
    (:meth:`rescale`, :meth:`reweight`), as the weak learners' sensitivity requires.

    With the source's sample weights ``u`` (in [0, 1]), a record counts in the learners'
    statistics with ``u`` times its boosting weight (rounded down to the grid), never
    more than the boosting weight; records of weight 0 take no part in anything
    (statistics, extremes, total), exactly as if absent.
    """

    def __init__(self, source, n_classes, n_bins, initial_weight=1.0):
        if n_classes > 256:
            raise ValueError(f"at most 256 classes are supported, got {n_classes}")
        self.source = source
        self.n_classes = n_classes
        self.n_bins = n_bins
        self._spec = TreeTargets(mse=False, fixed_scale=1.0, n_target_bins=0,
                                 width=1 + n_classes)
        self.units = source.keep_blocks(_constant_units, [source.code_blocks],
                                  weight=initial_weight)
        self.user = (None if source.weight_blocks is None
                     else source.keep_blocks(weight_units, [source.weight_blocks]))

    def extremes(self):
        """``(largest, smallest)`` weight of the records of positive sample weight (exact;
        for the noisy weight range only)."""
        columns = [self.units] if self.user is None else [self.units, self.user]
        parts = np.stack(self.source.gather_blocks(_units_extremes, columns))
        return float(parts[:, 0].max()), float(parts[:, 1].min())

    def total_units(self):
        """The records' total sample weight in grid units (``n * 2**20`` without sample
        weights): an exact integer, moved by at most ``2**20`` by one record."""
        return int(round(self.source.record_count() / WEIGHT_GRID))

    def rescale(self, low, high, lower, upper):
        """Clip every weight into ``[low, high]``, divide by ``high``, round to the grid and
        clip into ``[lower, upper]`` (public numbers)."""
        self.units = self.source.keep_blocks(_rescaled_units, [self.units], low=low, high=high,
                                       lower=lower, upper=upper)

    def reweight(self, tree, factor, lower, upper):
        """Multiply the weights of the records ``tree`` classifies correctly by ``factor``,
        round to the grid and clip into ``[lower, upper]``."""
        src = self.source
        self.units = src.keep_blocks(_reweighted_units, [src.code_blocks, src.label_blocks,
                                                   self.units],
                               tree=tree, factor=factor, lower=lower, upper=upper)

    # -- the rows interface of :func:`dptrees.boosting._grower.grow` ---------------------

    def start_tree(self, feature, bin_threshold):
        """A weak learner whose heap arrays will be filled level by level: its records
        count with their current weights."""
        units = (self.units if self.user is None else
                 self.source.keep_blocks(_weighted_units, [self.units, self.user]))
        self.feature, self.bin_threshold = feature, bin_threshold
        self._tree_rows = BlockwiseTreeRows(self.source, self._spec, self.n_bins, units)

    def histograms(self, level, nodes):
        """Exact weighted class histograms of ``nodes`` of ``level``, shape
        ``(len(nodes), n_features, n_bins, n_classes)``: float64, exact."""
        hist, _ = self._statistics(level, nodes, [])
        return hist[..., 1:] * WEIGHT_GRID

    def split(self, level):
        """The nodes of ``level`` have their splits (the statistics route through them)."""

    def leaf_sums(self):
        """Exact weighted class totals of the tree's leaves, shape ``(2**depth,
        n_classes)``: float64, exact."""
        depth = int(np.log2(self.feature.shape[0] + 1)) - 1
        _, totals = self._statistics(depth, [], level_nodes(depth))
        return totals[:, 1:] * WEIGHT_GRID

    def _statistics(self, level, hist_nodes, total_nodes):
        """Exact weighted ``(histograms, totals)`` of nodes of ``level``."""
        route = partial(heap_routing, self.feature, self.bin_threshold, level)
        return self._tree_rows.statistics(route(hist_nodes), route(total_nodes))


def _best_split_utilities(hist):
    """Utilities ``-(E_left + E_right)`` of every (node, feature, threshold).

    ``hist`` has shape (n_nodes, n_features, n_bins, n_classes); threshold ``t`` sends
    bins ``<= t`` left, ``t = 0 .. n_bins - 2``. Exact on grid weights.
    """
    left = np.cumsum(hist, axis=2)[:, :, :-1, :]
    total = hist.sum(axis=2, keepdims=True)
    right = total - left
    err_left = left.sum(axis=3) - left.max(axis=3)
    err_right = right.sum(axis=3) - right.max(axis=3)
    return -(err_left + err_right)


def fit_weighted_tree(rows, *, max_depth, weight_bound, epsilon_split, epsilon_leaf,
                      random_state, binner=None):
    """Grow one DP weak learner; ``max_depth * epsilon_split + epsilon_leaf``-DP.

    Parameters
    ----------
    rows : WeightedRows
        The records, their class indices and their weights: multiples of
        :data:`WEIGHT_GRID` in ``[0, weight_bound]``; one record's weight must not depend
        on the other records (proof: ``docs/proofs/adaboost.rst``).
    max_depth : int
        Public.
    weight_bound : float
        Public bound ``W`` on one record's weight: the sensitivity of every split utility
        and the L1 sensitivity of the leaf totals.
    epsilon_split : float
        Budget of one split choice (each level; nodes of a level are disjoint).
    epsilon_leaf : float
        Budget of the leaf release.
    random_state : numpy Generator
    binner : Binner, optional
        For the learner's split thresholds in feature units.

    Returns
    -------
    WeightedTree
    """
    def select(i, utilities):
        return permute_and_flip(utilities.ravel(), sensitivity=weight_bound,
                                epsilon=epsilon_split, monotonic=True,
                                random_state=random_state)

    feature, bin_threshold = empty_tree(max_depth)
    rows.start_tree(feature, bin_threshold)
    grow(feature, bin_threshold,
         [SelectedSplits(_best_split_utilities, select, rows.n_bins)] * max_depth, rows)
    noisy = laplace_mechanism(rows.leaf_sums(), sensitivity=weight_bound,
                              epsilon=epsilon_leaf, random_state=random_state)
    n_internal = 2**max_depth - 1
    return WeightedTree(feature[:n_internal], bin_threshold[:n_internal], noisy, binner)
