"""The rows of a simulated federation as one source: every client is a block of rows.

Federated boosting (:mod:`dptrees.federated._boosting`) asks, each round, for the vector
of per-leaf sums of every sampled client. :class:`ClientRows` computes those of all the
sampled clients at once with the engine's kernels: the clients' clipped fixed-point
gradients and Hessians (:func:`~dptrees._sources._rows.block_gradient_stats`), each
record's leaf (:func:`dptrees._core._tree.apply`), then exact int64 sums by (client,
leaf) (:func:`dptrees._core._histogram.segment_sums`). Integer sums do not depend on how
the rows are grouped, so a client's vector is the same bit for bit as if it had computed
it alone. Each vector is then clipped and rounded *as the client's own*
(:meth:`~dptrees.federated.FederatedClient.contribute`'s
:func:`~dptrees.federated.clip_update`, one call per client): nothing that leaves a client
depends on another client's records.

The rows come from any source (:func:`dptrees._sources.open_source`): the estimator bins
them where they are (blocks of a memmap, Dask partitions) and gathers only their
one-byte bin codes and encoded targets (``rows_in_memory``), never the features.

What is released and its sensitivity (client-level, after clipping) is stated in
:mod:`dptrees.federated._boosting`; this module only computes exact sums.
"""

import math

import numpy as np

from dptrees._core import _histogram, _tree
from dptrees._sources import _rows
from dptrees.boosting._trees import heap_children
from dptrees.federated._protocol import clip_update

__all__ = ["ClientRows"]


class ClientRows:
    """Every client's records, kept sorted by client, and the raw scores the public model
    gives them.

    Parameters
    ----------
    codes : uint8 array of shape (n, n_features)
        Bin codes of all records.
    targets : array of shape (n,)
        Class indices (classification) or targets rescaled to [0, 1] (regression).
    client_ids : intp array of shape (n,)
        Each record's client, in ``0 .. n_clients - 1``.
    n_clients : int
    weights : float array of shape (n,) or None
        Each record's sample weight in [0, 1] (None: 1 each); it scales the record in
        its client's vectors.
    """

    def __init__(self, codes, targets, client_ids, n_clients, weights=None):
        order = np.argsort(client_ids, kind="stable")
        self.cuts = np.searchsorted(client_ids[order], np.arange(n_clients + 1))
        self.codes = np.ascontiguousarray(codes[order])
        self.targets = np.asarray(targets)[order]
        self.weights = None if weights is None else weights[order]
        self._raw = None  # (n_outputs, n): the public model's raw scores of every record
        self._synced = 0

    def n_records(self, clients):
        """Records of each of ``clients``."""
        return self.cuts[clients + 1] - self.cuts[clients]

    def _rows_of(self, clients):
        """The records of ``clients``, client after client, and each one's position in
        ``clients``."""
        lengths = self.n_records(clients)
        position = np.repeat(np.arange(len(clients)), lengths)
        first = np.repeat(self.cuts[clients] - np.cumsum(lengths) + lengths, lengths)
        return first + np.arange(position.shape[0]), position

    def sync(self, model):
        """Add the trees ``model`` released since the last call to every record's scores
        (the public model every client downloads)."""
        if self._raw is None:
            self._raw = _rows.start_scores(self.codes, model.init_score)
        for round_trees in model.trees[self._synced:]:
            for k, tree in enumerate(round_trees):
                _rows.block_add_values(self.codes, tree, model.step, self._raw[k])
        self._synced = len(model.trees)

    def init_updates(self, clients, init_kind, n_classes):
        """Each client's initial-score vector: its class counts, or ``[sum of its
        targets, its number of records]`` (regression); None for a client without
        records (it takes no part, as if absent)."""
        out = []
        for c in clients:
            rows = slice(self.cuts[c], self.cuts[c + 1])
            targets = self.targets[rows]
            weight = None if self.weights is None else self.weights[rows]
            if targets.shape[0] == 0:
                out.append(None)
            elif init_kind == "regression":
                out.append(np.array([math.fsum(targets), float(targets.shape[0])])
                           if weight is None else
                           np.array([math.fsum(targets * weight), math.fsum(weight)]))
            else:
                out.append(_rows.block_class_counts(targets, n_classes, weight)
                           .astype(np.float64))
        return out

    def tree_updates(self, clients, structures, loss, fixed, hessian_weight):
        """Each client's vector of per-leaf sums of one round's trees
        ``[G (all leaves of all trees), hessian_weight * H (same order)]``, shape
        ``(len(clients), 2 * n_trees * n_leaves)``, from exact per-(client, leaf) sums.
        Call :meth:`sync` first."""
        n_trees = len(structures)
        n_internal = structures[0][0].shape[0] // 2
        n_leaves = n_internal + 1
        left, right = heap_children(n_leaves.bit_length() - 1)
        rows, position = self._rows_of(np.asarray(clients, dtype=np.intp))
        codes = self.codes[rows]
        targets = self.targets[rows]
        raw = np.ascontiguousarray(self._raw[:, rows])
        weights = None if self.weights is None else self.weights[rows]
        n_slots = len(clients) * n_leaves
        out = np.zeros((len(clients), 2 * n_trees * n_leaves))
        leaf = np.empty(rows.shape[0], dtype=np.int64)
        for k, (feature, bin_threshold) in enumerate(structures):
            stats = _rows.block_gradient_stats(targets, raw, _rows.GradientSpec(loss, fixed, k),
                                               weight=weights)
            _tree.apply(codes, feature, bin_threshold, left, right, leaf)
            slot = position * n_leaves + (leaf - n_internal)
            by_slot = np.argsort(slot, kind="stable")
            starts = np.searchsorted(slot[by_slot], np.arange(n_slots + 1))
            sums = np.empty((n_slots, 2), dtype=np.int64)
            _histogram.segment_sums(by_slot, stats, starts, sums)
            sums = sums.reshape(len(clients), n_leaves, 2)
            out[:, k * n_leaves:(k + 1) * n_leaves] = sums[..., 0] / fixed.g_scale
            j = (n_trees + k) * n_leaves
            out[:, j:j + n_leaves] = hessian_weight * (sums[..., 1] / fixed.h_scale)
        return out

    def contributions(self, clients, updates, clip_norm, frac_bits, norm_ord=2):
        """What each of ``clients`` sends: its own vector clipped to ``clip_norm`` (in
        the norm ``norm_ord``) and rounded (:func:`~dptrees.federated.clip_update`), or
        None without records."""
        n = self.n_records(np.asarray(clients, dtype=np.intp))
        return [None if n[i] == 0 or update is None
                else clip_update(update, clip_norm, frac_bits, norm_ord=norm_ord)
                for i, update in enumerate(updates)]
