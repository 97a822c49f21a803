from libc.stdint cimport int64_t

cdef int64_t to_fixed(double x, double lower, double upper, double scale) noexcept nogil
