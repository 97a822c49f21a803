# The node arrays a tree builder appends to (_builder.pyx), grown without the GIL and
# copied out as numpy arrays.

from libc.stdint cimport int32_t


cdef enum:
    ERR_MEMORY = -1  # a status: out of memory


cdef struct NodeArrays:
    Py_ssize_t size
    Py_ssize_t capacity
    Py_ssize_t value_width
    int32_t* feature
    int32_t* bin_threshold
    int32_t* left
    int32_t* right
    int32_t* depth
    double* noisy_count
    double* value


cdef int32_t new_node(NodeArrays* a, int32_t depth, double noisy_count, int32_t parent,
                      bint is_left) noexcept nogil
cdef void free_nodes(NodeArrays* a) noexcept nogil
cdef dict node_dict(NodeArrays* a)
