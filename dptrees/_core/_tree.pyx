"""Routing binned records through a flat tree, without the GIL.

A tree is a set of parallel node arrays: ``feature`` and ``bin_threshold`` (the split
sends a record left when its code for ``feature`` is at most ``bin_threshold``),
``left`` and ``right`` (child ids, -1 at a leaf). Node 0 is the root.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t

from dptrees._core._routing cimport leaf_of


def check_tree(const int32_t[::1] feature, const int32_t[::1] bin_threshold,
               const int32_t[::1] left, const int32_t[::1] right, Py_ssize_t n_features):
    """Raise ``ValueError`` unless the arrays form a tree the routing loops can walk.

    Every child id must follow its parent's (so walks end) and be a valid node, every
    split feature must exist: then routing can never index out of bounds.
    """
    cdef Py_ssize_t i, n_nodes = feature.shape[0]
    if not (bin_threshold.shape[0] == left.shape[0] == right.shape[0] == n_nodes) or n_nodes == 0:
        raise ValueError("inconsistent tree arrays")
    for i in range(n_nodes):
        if left[i] == -1:
            continue
        if not (i < left[i] < n_nodes and i < right[i] < n_nodes and 0 <= feature[i] < n_features):
            raise ValueError("corrupt tree: child ids must follow their parent, features must exist")


def check_routing(const uint8_t[:, ::1] codes, Py_ssize_t n_out, str out_name,
                  const int32_t[::1] feature, const int32_t[::1] bin_threshold,
                  const int32_t[::1] left, const int32_t[::1] right):
    """Raise ``ValueError`` unless every row of ``codes`` can be routed through the tree
    (:func:`check_tree`) into an output ``out_name`` of ``n_out`` entries, one per row."""
    if n_out != codes.shape[0]:
        raise ValueError(f"{out_name} must have one entry per row")
    check_tree(feature, bin_threshold, left, right, codes.shape[1])


def apply(const uint8_t[:, ::1] codes, const int32_t[::1] feature,
          const int32_t[::1] bin_threshold, const int32_t[::1] left,
          const int32_t[::1] right, int64_t[::1] out):
    """Leaf id of every row of ``codes``."""
    cdef Py_ssize_t i
    check_routing(codes, out.shape[0], "out", feature, bin_threshold, left, right)
    with nogil:
        for i in range(codes.shape[0]):
            out[i] = leaf_of(&codes[i, 0], &feature[0], &bin_threshold[0], &left[0], &right[0])
