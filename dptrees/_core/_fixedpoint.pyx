"""Fixed-point (int64) accumulation of clipped values.

Floating-point sums of clipped values can move by more than the clipping bound when one
record is added or removed (Casacuberta et al., CCS 2022), because rounding depends on the
order and size of the other terms. Here each value is clipped to ``[lower, upper]`` and
rounded to a multiple of ``2**-frac_bits`` *once*, as an integer; sums of integers are
exact, so adding or removing one record moves the sum by exactly that record's integer,
at most ``max(|lower|, |upper|) * 2**frac_bits`` (rounded up) in absolute value.
"""

from libc.math cimport rint
from libc.stdint cimport int64_t


cdef int64_t to_fixed(double x, double lower, double upper, double scale) noexcept nogil:
    """``rint(clip(x, lower, upper) * scale)``; the caller guarantees the result fits."""
    if x < lower:
        x = lower
    elif x > upper:
        x = upper
    return <int64_t>rint(x * scale)


def to_fixed_array(const double[::1] x, double lower, double upper, double scale,
                   int64_t[::1] out):
    """Clip ``x`` to ``[lower, upper]`` and write ``rint(x * scale)`` into ``out``."""
    cdef Py_ssize_t i
    if out.shape[0] != x.shape[0]:
        raise ValueError("out must have the shape of x")
    with nogil:
        for i in range(x.shape[0]):
            out[i] = to_fixed(x[i], lower, upper, scale)


def fixed_sum(const double[::1] x, double lower, double upper, double scale):
    """Exact int64 sum of ``rint(clip(x, lower, upper) * scale)``.

    The caller checks ``len(x) * max(|lower|, |upper|) * scale < 2**62`` so no overflow.
    """
    cdef Py_ssize_t i
    cdef int64_t total = 0
    with nogil:
        for i in range(x.shape[0]):
            total += to_fixed(x[i], lower, upper, scale)
    return total
