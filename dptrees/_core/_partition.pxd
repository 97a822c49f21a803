# The stable, branch-free partition of a node's rows, shared by the tree builder
# (_builder.pyx) and the boosting kernels (_histogram.partition).

from libc.string cimport memcpy


cdef inline Py_ssize_t stable_partition(const unsigned char* column, Py_ssize_t* idx,
                                        Py_ssize_t start, Py_ssize_t end, long b,
                                        Py_ssize_t* scratch) noexcept nogil:
    """Reorder ``idx[start:end]`` so that rows with ``column[row] <= b`` (the split
    feature's codes) come first, both sides in their old order; returns the cut.
    ``scratch`` holds ``end - start`` entries. Every row is written to both sides and
    one cursor advances: no branch on the (random) outcome. The caller checks that
    every ``idx`` entry indexes ``column``."""
    cdef Py_ssize_t i, row, n_left = start, n_right = 0
    cdef Py_ssize_t goes_left
    for i in range(start, end):
        row = idx[i]
        goes_left = column[row] <= b
        idx[n_left] = row  # n_left <= i: this never overwrites a row still to be read
        scratch[n_right] = row
        n_left += goes_left
        n_right += 1 - goes_left
    memcpy(idx + n_left, scratch, n_right * sizeof(Py_ssize_t))
    return n_left
