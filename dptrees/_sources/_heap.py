"""Heap-numbered trees grown level by level, and sibling subtraction, written once.

The complete trees of boosting, AdaBoost and federated rounds are numbered as a heap:
the root is 0, the children of node ``v`` are ``2 v + 1`` and ``2 v + 2``, and level
``l`` holds nodes ``2**l - 1 .. 2**(l + 1) - 2``. A node's histogram is the sum of its
children's (they split its rows), so once a parent's histogram is known only one child's
needs measuring: the other's is the parent's minus it. :class:`SiblingHistograms` keeps
that bookkeeping -- which child is measured, which is derived -- for both kinds of
histograms it is used on:

* exact integer sums (:class:`~dptrees._sources._array.ArrayBoostingRows`): the derived
  histogram is the same sum, read from fewer rows;
* released noisy ones (the private levels of :mod:`dptrees.boosting._grower`): only the
  measured nodes are released, each record in at most one of them, and a derived
  histogram is post-processing of released values (no privacy cost).

Nothing here reads rows or draws noise.
"""

import numpy as np

__all__ = ["SiblingHistograms", "empty_tree", "level_nodes", "parent", "sibling"]


def empty_tree(depth):
    """``feature``, ``bin_threshold``: the int32 heap arrays of a complete tree of
    ``depth`` (``2**(depth + 1) - 1`` nodes), -1 everywhere until the levels are split
    (leaves stay -1)."""
    n_nodes = 2 ** (depth + 1) - 1
    return np.full(n_nodes, -1, dtype=np.int32), np.full(n_nodes, -1, dtype=np.int32)


def level_nodes(level):
    """Heap ids of the nodes of ``level`` (a ``range``)."""
    return range(2**level - 1, 2 ** (level + 1) - 1)


def parent(v):
    """Heap id of the parent of node ``v > 0``."""
    return (v - 1) // 2


def sibling(v):
    """Heap id of the other child of ``v``'s parent (``v > 0``)."""
    return v + 1 if v % 2 else v - 1


class SiblingHistograms:
    """The histograms of the nodes last asked for, and the rule that gets the next ones.

    Ask :meth:`to_measure` which nodes must be measured for the wanted ``nodes``, measure
    (or release) those, and :meth:`complete` gives every wanted node's histogram; those
    are kept for the next request (the level below, or the same level again), or those
    of :meth:`keep`. ``parent`` and ``sibling`` map a node id to its parent's (any id
    not kept for the root) and to its sibling's: the heap's by default.
    """

    def __init__(self, parent=parent, sibling=sibling):
        self.parent, self.sibling = parent, sibling
        self.known = {}  # node -> its histogram, from the last request

    def to_measure(self, nodes, child_to_measure):
        """The nodes whose histograms must be measured to give those of ``nodes``, in
        increasing order: none for a node already known, or whose parent and sibling are;
        for a node whose parent is known, ``child_to_measure(parent)`` (one of its two
        children: the other is the parent's minus it); every other node itself."""
        known = self.known
        measured = set()
        for v in nodes:
            if v in known or v in measured:
                continue
            if self.parent(v) not in known:
                measured.add(v)
            elif self.sibling(v) not in known and self.sibling(v) not in measured:
                measured.add(child_to_measure(self.parent(v)))  # once per parent
        return sorted(measured)

    def complete(self, nodes, measured, histograms):
        """The histograms of ``nodes``, one array ``(len(nodes), ...)``, given the array
        ``histograms`` of ``measured`` (:meth:`to_measure`'s nodes, in its order): each
        known, measured, or its parent's minus its sibling's (``histograms`` itself when
        they are all measured). They are kept for the next request."""
        if list(measured) == list(nodes):  # nothing to derive
            self.known = dict(zip(nodes, histograms))
            return histograms
        known = dict(self.known)
        known.update(zip(measured, histograms))
        out = np.empty((len(nodes),) + histograms.shape[1:], dtype=histograms.dtype)
        for j, v in enumerate(nodes):
            if v in known:
                out[j] = known[v]
            else:
                np.subtract(known[self.parent(v)], known[self.sibling(v)], out=out[j])
        self.known = dict(zip(nodes, out))
        return out

    def keep(self, histograms):
        """Keep ``histograms`` (node -> its histogram) for the next request instead."""
        self.known = dict(histograms)
