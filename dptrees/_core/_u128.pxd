# Portable unsigned 128-bit arithmetic for the exact samplers.
#
# Only what the samplers need: products of two 64-bit words, 128-by-64-bit products,
# comparison and subtraction. Written without `__int128` so that MSVC builds the core
# too.

from libc.stdint cimport uint64_t


cdef struct u128:
    uint64_t hi
    uint64_t lo


cdef inline u128 u128_from64(uint64_t x) noexcept nogil:
    cdef u128 r
    r.hi = 0
    r.lo = x
    return r


cdef inline u128 mul64(uint64_t a, uint64_t b) noexcept nogil:
    """Full 128-bit product of two 64-bit words (schoolbook on 32-bit halves)."""
    cdef uint64_t a_lo = a & 0xFFFFFFFFu, a_hi = a >> 32
    cdef uint64_t b_lo = b & 0xFFFFFFFFu, b_hi = b >> 32
    cdef uint64_t p0 = a_lo * b_lo
    cdef uint64_t p1 = a_lo * b_hi
    cdef uint64_t p2 = a_hi * b_lo
    cdef uint64_t p3 = a_hi * b_hi
    cdef uint64_t mid = (p0 >> 32) + (p1 & 0xFFFFFFFFu) + (p2 & 0xFFFFFFFFu)
    cdef u128 r
    r.lo = (mid << 32) | (p0 & 0xFFFFFFFFu)
    r.hi = p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32)
    return r


cdef inline bint mul128_64(u128 a, uint64_t b, u128* out) noexcept nogil:
    """out = a * b; returns False when the product does not fit in 128 bits."""
    cdef u128 lo = mul64(a.lo, b)
    cdef u128 hi = mul64(a.hi, b)
    if hi.hi != 0:
        return False
    out.lo = lo.lo
    out.hi = lo.hi + hi.lo
    return out.hi >= hi.lo  # no carry out of the top word


cdef inline int u128_cmp(u128 a, u128 b) noexcept nogil:
    if a.hi != b.hi:
        return -1 if a.hi < b.hi else 1
    if a.lo != b.lo:
        return -1 if a.lo < b.lo else 1
    return 0


cdef inline u128 u128_sub(u128 a, u128 b) noexcept nogil:
    """a - b for a >= b."""
    cdef u128 r
    r.lo = a.lo - b.lo
    r.hi = a.hi - b.hi - (1 if a.lo < b.lo else 0)
    return r

