from libc.stdint cimport uint64_t, int64_t
from numpy.random cimport bitgen_t

cdef Py_ssize_t permute_and_flip(bitgen_t* bg, const int64_t* scores, Py_ssize_t n,
                                 uint64_t eps_num, uint64_t den, Py_ssize_t* work) noexcept nogil
cdef Py_ssize_t exponential_mechanism(bitgen_t* bg, const int64_t* scores, Py_ssize_t n,
                                      uint64_t eps_num, uint64_t den) noexcept nogil
