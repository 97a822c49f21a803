"""The node arrays of a tree being built: appending a node without the GIL, copying the
arrays out, and renumbering them depth first.

A node holds ``feature, bin_threshold, left, right, depth`` (int32), its released
``noisy_count`` and ``value_width`` released values (float64, NaN until it is made a
leaf). Children ids are -1 at leaves. Nothing here reads data or draws noise: these are
the released values, stored.
"""

from libc.math cimport NAN
from libc.stdint cimport int32_t
from libc.stdlib cimport realloc, free

import numpy as np


cdef bint _resize(void** p, size_t nbytes) noexcept nogil:
    cdef void* q = realloc(p[0], nbytes)
    if q == NULL:
        return False
    p[0] = q
    return True


cdef int _grow(NodeArrays* a) noexcept nogil:
    cdef Py_ssize_t cap = 64 if a.capacity == 0 else 2 * a.capacity
    if not (_resize(<void**>&a.feature, cap * sizeof(int32_t))
            and _resize(<void**>&a.bin_threshold, cap * sizeof(int32_t))
            and _resize(<void**>&a.left, cap * sizeof(int32_t))
            and _resize(<void**>&a.right, cap * sizeof(int32_t))
            and _resize(<void**>&a.depth, cap * sizeof(int32_t))
            and _resize(<void**>&a.noisy_count, cap * sizeof(double))
            and _resize(<void**>&a.value, cap * a.value_width * sizeof(double))):
        return ERR_MEMORY
    a.capacity = cap
    return 0


cdef int32_t new_node(NodeArrays* a, int32_t depth, double noisy_count, int32_t parent,
                      bint is_left) noexcept nogil:
    """Append a node (a leaf until split); returns its id, or ERR_MEMORY."""
    cdef Py_ssize_t node = a.size, m
    if a.size == a.capacity and _grow(a) != 0:
        return ERR_MEMORY
    a.size += 1
    a.depth[node] = depth
    a.noisy_count[node] = noisy_count
    a.left[node] = -1
    a.right[node] = -1
    a.feature[node] = -1
    a.bin_threshold[node] = -1
    for m in range(a.value_width):  # only leaves release a value
        a.value[node * a.value_width + m] = NAN
    if parent >= 0:
        if is_left:
            a.left[parent] = <int32_t>node
        else:
            a.right[parent] = <int32_t>node
    return <int32_t>node


cdef void free_nodes(NodeArrays* a) noexcept nogil:
    free(a.feature); free(a.bin_threshold); free(a.left); free(a.right)
    free(a.depth); free(a.noisy_count); free(a.value)


cdef dict node_dict(NodeArrays* a):
    """Copies of the node arrays."""
    size = a.size
    value = np.asarray(<double[:size * a.value_width]>a.value).copy()
    return {
        "feature": np.asarray(<int32_t[:size]>a.feature).copy(),
        "bin_threshold": np.asarray(<int32_t[:size]>a.bin_threshold).copy(),
        "left": np.asarray(<int32_t[:size]>a.left).copy(),
        "right": np.asarray(<int32_t[:size]>a.right).copy(),
        "depth": np.asarray(<int32_t[:size]>a.depth).copy(),
        "noisy_count": np.asarray(<double[:size]>a.noisy_count).copy(),
        "value": value.reshape(size, a.value_width) if a.value_width > 1 else value,
    }


def renumber_depth_first(dict nodes):
    """New node arrays numbered depth first (a node, its left subtree, then its right:
    scikit-learn's order) from arrays numbered in any order where node 0 is the root.

    ``nodes``: ``feature, bin_threshold, left, right, depth`` (int32), ``noisy_count``
    (float64), ``value`` (float64, one row per node); children ids -1 at leaves. Returns
    new arrays; ``value`` is 1-D if it has one column.
    """
    cdef const int32_t[::1] old_left = np.ascontiguousarray(nodes["left"], dtype=np.int32)
    cdef const int32_t[::1] old_right = np.ascontiguousarray(nodes["right"], dtype=np.int32)
    cdef Py_ssize_t size = old_left.shape[0], top = 0, counter = 0, v, u
    old_value = np.ascontiguousarray(nodes["value"], dtype=np.float64).reshape(size, -1)
    new_id = np.full(size, -1, dtype=np.intp)
    stack_arr = np.empty(size + 1, dtype=np.intp)
    cdef Py_ssize_t[::1] new_view = new_id
    cdef Py_ssize_t[::1] stack = stack_arr
    if size:
        stack[0] = 0
        top = 1
    while top > 0:
        top -= 1
        v = stack[top]
        if not 0 <= v < size or new_view[v] != -1 or counter == size:
            raise ValueError("the node arrays are not a tree rooted at node 0")
        new_view[v] = counter
        counter += 1
        if old_left[v] != -1:
            stack[top] = old_right[v]
            stack[top + 1] = old_left[v]
            top += 2
    if counter != size:
        raise ValueError("the node arrays are not a tree rooted at node 0")
    order = np.empty(size, dtype=np.intp)
    order[new_id] = np.arange(size)
    out = {name: np.ascontiguousarray(np.asarray(nodes[name])[order])
           for name in ("feature", "bin_threshold", "depth", "noisy_count")}
    for name in ("left", "right"):
        old = np.asarray(nodes[name])[order]
        out[name] = np.where(old == -1, -1, new_id[np.maximum(old, 0)]).astype(np.int32)
    value = old_value[order]
    out["value"] = value if value.shape[1] > 1 else value[:, 0].copy()
    return out
