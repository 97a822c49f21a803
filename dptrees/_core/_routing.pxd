# Routing one binned record down a flat tree (see _tree.pyx for the node arrays).
#
# Shared by the loops that walk trees (_tree.apply, _histogram.add_leaf_values). The
# caller validates the tree with _tree.check_tree first: child ids then always follow
# their parent and stay in range, and split features exist, so the walk ends and never
# indexes out of bounds.

from libc.stdint cimport int32_t, uint8_t


cdef inline int32_t leaf_of(const uint8_t* codes, const int32_t* feature,
                            const int32_t* bin_threshold, const int32_t* left,
                            const int32_t* right) noexcept nogil:
    """Leaf id reached by the record whose bin codes start at ``codes``."""
    cdef int32_t node = 0
    while left[node] != -1:
        node = left[node] if codes[feature[node]] <= bin_threshold[node] else right[node]
    return node
