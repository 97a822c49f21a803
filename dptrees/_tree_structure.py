"""The fitted tree: flat node arrays that numpy, pickle and the compiled core all read."""

import numpy as np

from dptrees._core import _tree

__all__ = ["Tree"]


class Tree:
    """A fitted tree as parallel node arrays (node 0 is the root).

    Attributes
    ----------
    feature : ndarray of int32
        Split feature of each internal node, -1 at leaves.
    bin_threshold : ndarray of int32
        A record goes left when its bin code of ``feature`` is at most this.
    threshold : ndarray of float64
        The same split in feature units: left when ``x < threshold`` (NaN at leaves).
    left, right : ndarray of int32
        Child ids, -1 at leaves.
    depth : ndarray of int32
    value : ndarray of float64, shape (node_count,) or (node_count, n_outputs)
        Released leaf values (only leaves' entries are meaningful).
    noisy_count : ndarray of float64
        The released noisy number of training records of each node.
    """

    def __init__(self, *, feature, bin_threshold, threshold, left, right, depth, value,
                 noisy_count):
        self.feature = np.ascontiguousarray(feature, dtype=np.int32)
        self.bin_threshold = np.ascontiguousarray(bin_threshold, dtype=np.int32)
        self.threshold = np.asarray(threshold, dtype=np.float64)
        self.left = np.ascontiguousarray(left, dtype=np.int32)
        self.right = np.ascontiguousarray(right, dtype=np.int32)
        self.depth = np.asarray(depth, dtype=np.int32)
        self.value = np.asarray(value, dtype=np.float64)
        self.noisy_count = np.asarray(noisy_count, dtype=np.float64)

    @property
    def node_count(self):
        return self.feature.shape[0]

    @property
    def n_leaves(self):
        return int((self.left == -1).sum())

    @property
    def max_depth(self):
        return int(self.depth.max())

    def apply(self, codes):
        """Leaf id of every row of the bin codes ``codes`` (n, p) uint8."""
        out = np.empty(codes.shape[0], dtype=np.int64)
        _tree.apply(codes, self.feature, self.bin_threshold, self.left, self.right, out)
        return out

    def predict(self, codes):
        """Leaf values of every row of ``codes``."""
        return self.value[self.apply(codes)]
