"""Cyclic boosting's view of a source of rows: per-record scores and filters kept with
the blocks, exact per-feature sums reduced to the caller.

:class:`CyclicRows` holds, with every block of the source (in memory, memmap blocks,
Dask partitions), the block's raw scores and the records' individual Renyi filter
(:class:`~dptrees.privacy.individual_filter.IndividualFilter`). A release asks every block for
the exact int64 fixed-point ``(g, h)`` sums of its *admitted* records (the filter charges
each record its own cost first, per record), and adds them up: integer sums, so the
released statistics, and the fitted model, are the same bit for bit whatever the blocks.
Nothing here adds noise; the estimator does, once, on the total.
"""

import copy
from typing import NamedTuple

import numpy as np

from dptrees._core import _histogram
from dptrees.privacy.individual_filter import IndividualFilter, individual_cost
from dptrees._sources import _rows

__all__ = ["CyclicRows", "ReleaseCost"]


class ReleaseCost(NamedTuple):
    """What a record's cost in one release depends on (all public): the loss, the
    fixed-point scales and sensitivities, the noise multipliers of the ``g`` and ``h``
    sums."""

    loss: object
    fixed: object
    g_multiplier: float
    h_multiplier: float


def _admitted_stats(targets, raw, record_filter, cost, k, in_release, n_values, weight):
    """Fixed-point ``(g, h)`` of output ``k`` of a block's records (scaled by their sample
    ``weight``, None: 1 each) and the indices of those the filter admits to a release of
    ``n_values`` values (it charges them: a lighter record pays less)."""
    loss, fixed = cost.loss, cost.fixed
    stats = np.empty((2, raw.shape[0]), dtype=np.int64)
    if loss.constant_hessian:
        stats[1].fill(1)
    _rows.gradient_stats(loss, fixed, targets, loss.round_state(raw), k, stats, weight)
    costs = (individual_cost(np.abs(stats[0]) / fixed.g_scale, fixed.g_sens,
                             cost.g_multiplier, n_values)
             + individual_cost(stats[1] / fixed.h_scale, fixed.h_sens, cost.h_multiplier,
                               n_values))
    admitted = record_filter.admit(np.where(in_release, costs, 0.0)) & in_release
    return stats, np.flatnonzero(admitted)


# Block functions. Per-block state is changed in place where blocks are views of the
# source's own arrays (``inplace``) and replaced where they are Dask futures.


def _start_scores_by_row(codes, init):
    """``(m, n_outputs)`` starting scores (the layout the losses' ``round_state`` reads)."""
    return np.tile(np.asarray(init, dtype=np.float64), (codes.shape[0], 1))


def _capped_active_features(codes, cap):
    """Sum over a block's records of the number of features outside bin 0, capped."""
    return np.int64(np.minimum(np.count_nonzero(np.asarray(codes), axis=1), cap).sum())


def _new_filter(codes, budget):
    return IndividualFilter(codes.shape[0], budget)


def _feature_release(codes, targets, raw, record_filter, weight=None, *, cost, k, feature,
                     n_bins, inplace):
    """``(filter, (n_bins, 2) sums of the admitted records by bin of feature)``; records
    in bin 0 take no part (their bin is not released). ``weight``: the block's sample
    weights (None: 1 each)."""
    if not inplace:
        record_filter = copy.deepcopy(record_filter)
    column = np.ascontiguousarray(np.asarray(codes)[:, feature])
    stats, admitted = _admitted_stats(targets, raw, record_filter, cost, k, column != 0,
                                      n_bins - 1, weight)
    hist = np.zeros((1, n_bins, 2), dtype=np.int64)
    _histogram.node_histogram(column.reshape(-1, 1), admitted, stats, hist)
    return record_filter, hist[0]


def _intercept_release(targets, raw, record_filter, weight=None, *, cost, k, inplace):
    """``(filter, (2,) sums of the admitted records)``; every record takes part."""
    if not inplace:
        record_filter = copy.deepcopy(record_filter)
    everyone = np.ones(raw.shape[0], dtype=bool)
    stats, admitted = _admitted_stats(targets, raw, record_filter, cost, k, everyone, 1,
                                      weight)
    return record_filter, stats[:, admitted].sum(axis=1)


def _item(pair, i):
    return pair[i]


def _add_feature_scores(codes, raw, feature, updates, inplace):
    """``raw[:, k] += updates[k][bin of feature]`` for every output ``k``."""
    if not inplace:
        raw = raw.copy()
    column = np.asarray(codes)[:, feature]
    for k, update in enumerate(updates):
        raw[:, k] += update[column]
    return raw


def _add_constants(raw, updates, inplace):
    if not inplace:
        raw = raw.copy()
    for k, update in enumerate(updates):
        raw[:, k] += update
    return raw


class CyclicRows:
    """Per-record targets as ``loss`` reads them, raw scores (``(m, n_outputs)`` per
    block, starting at ``init``) and filters, kept with the blocks of ``source`` (classes
    or targets encoded, features binned)."""

    def __init__(self, source, loss, init, n_bins):
        self.source = source
        self.n_bins = n_bins
        self.targets = source.keep_blocks(_rows.loss_targets, [source.label_blocks], loss=loss)
        self.raw = source.keep_blocks(_start_scores_by_row, [source.code_blocks], init=init)
        self.filters = None

    def capped_active_features(self, cap):
        """Exact sum over records of the features outside bin 0, each capped at ``cap``."""
        return int(self.source.sum_blocks(_capped_active_features, [self.source.code_blocks],
                                    cap=cap))

    def start_cycle(self, budget):
        """Every record gets a fresh filter with zCDP budget ``budget``."""
        self.filters = self.source.keep_blocks(_new_filter, [self.source.code_blocks],
                                         budget=budget)

    def _release(self, fn, columns, **common):
        src = self.source
        if src.weight_blocks is not None:  # rows in memory with sample weights
            columns = columns + [src.weight_blocks]
        pairs = src.keep_blocks(fn, columns, inplace=src.inplace, **common)
        self.filters = src.keep_blocks(_item, [pairs], i=0)
        return src.sum_blocks(_item, [pairs], i=1)

    def feature_sums(self, cost, k, feature):
        """Exact ``(n_bins, 2)`` int64 sums of output ``k``'s ``(g, h)`` of the records the
        filter admits, by bin of ``feature`` (bin 0: not released, always 0)."""
        src = self.source
        return self._release(_feature_release, [src.code_blocks, self.targets, self.raw,
                                                self.filters],
                             cost=cost, k=k, feature=feature, n_bins=self.n_bins)

    def intercept_sums(self, cost, k):
        """Exact ``(2,)`` int64 sums of output ``k``'s ``(g, h)`` of the admitted records."""
        return self._release(_intercept_release, [self.targets, self.raw, self.filters],
                             cost=cost, k=k)

    def add_feature_scores(self, feature, updates):
        """Add ``updates[k][b]`` to output ``k``'s score of the records in bin ``b``."""
        src = self.source
        self.raw = src.keep_blocks(_add_feature_scores, [src.code_blocks, self.raw],
                             feature=feature, updates=updates, inplace=src.inplace)

    def add_constants(self, updates):
        """Add ``updates[k]`` to every record's output ``k``."""
        self.raw = self.source.keep_blocks(_add_constants, [self.raw], updates=updates,
                                     inplace=self.source.inplace)
