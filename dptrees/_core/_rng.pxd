# Exact samplers over a numpy BitGenerator, for use from Cython without the GIL.
#
# Every sampler uses integer arithmetic only (Canonne, Kamath & Steinke, "The Discrete
# Gaussian for Differential Privacy", NeurIPS 2020, algorithms 1-3), so its output
# distribution is exactly the stated one: no floating-point rounding can leak the input
# (Mironov, CCS 2012). Rational parameters are passed as (numerator, denominator).

from libc.stdint cimport uint64_t, int64_t
from numpy.random cimport bitgen_t

from dptrees._core._u128 cimport u128


cdef inline uint64_t next_u64(bitgen_t* bg) noexcept nogil:
    return bg.next_uint64(bg.state)

cdef uint64_t uniform_below(bitgen_t* bg, uint64_t n) noexcept nogil
cdef bint bernoulli_frac(bitgen_t* bg, uint64_t num, uint64_t den) noexcept nogil
cdef bint bernoulli_exp_neg(bitgen_t* bg, uint64_t num, uint64_t den) noexcept nogil
cdef bint bernoulli_exp_neg_u128(bitgen_t* bg, u128 num, u128 den) noexcept nogil
cdef int64_t discrete_laplace(bitgen_t* bg, uint64_t t, uint64_t s) noexcept nogil
cdef int64_t discrete_gaussian(bitgen_t* bg, uint64_t n, uint64_t d) noexcept nogil

cdef bitgen_t* bitgen_of(object generator) except NULL
