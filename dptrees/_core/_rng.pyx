"""Exact integer samplers driven by a numpy ``BitGenerator``.

The C-level functions (declared in ``_rng.pxd``) are what the rest of the core uses
inside ``nogil`` loops. The ``*_array`` functions below fill numpy arrays and are the
Python entry points; :mod:`dptrees.mechanisms` wraps them with validation.

Exactness
---------
All samplers use only integer arithmetic and unbiased uniform integers, so the output
distribution is exactly the mathematical one (Canonne, Kamath & Steinke 2020). The only
departures are events of probability below ``exp(-1000)`` in which an intermediate
value would overflow 64 bits; those draws are rejected and redrawn. They are documented
where they occur.
"""

from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.stdint cimport uint64_t, int64_t, uint8_t, INT64_MAX
from numpy.random cimport bitgen_t

from dptrees._core._u128 cimport (
    u128, u128_from64, mul64, mul128_64, u128_cmp, u128_sub,
)

import numpy as np


cdef bitgen_t* bitgen_of(object generator) except NULL:
    """The C ``bitgen_t`` behind a ``numpy.random.Generator``."""
    capsule = generator.bit_generator.capsule
    if not PyCapsule_IsValid(capsule, b"BitGenerator"):
        raise ValueError("the generator's bit generator does not expose a valid capsule")
    return <bitgen_t*> PyCapsule_GetPointer(capsule, b"BitGenerator")


cdef inline uint64_t _smear_right(uint64_t x) noexcept nogil:
    """``x`` with every bit below its highest set bit set: the rejection mask for ``x``."""
    x |= x >> 1
    x |= x >> 2
    x |= x >> 4
    x |= x >> 8
    x |= x >> 16
    x |= x >> 32
    return x


cdef uint64_t uniform_below(bitgen_t* bg, uint64_t n) noexcept nogil:
    """Uniform integer in ``[0, n)`` by masked rejection (unbiased); ``n >= 1``."""
    cdef uint64_t mask, x
    if n <= 1:
        return 0
    mask = _smear_right(n - 1)
    while True:
        x = next_u64(bg) & mask
        if x < n:
            return x


cdef bint bernoulli_frac(bitgen_t* bg, uint64_t num, uint64_t den) noexcept nogil:
    """Bernoulli(num / den) for ``0 <= num <= den``, ``den >= 1``."""
    return uniform_below(bg, den) < num


cdef inline bint _bernoulli_exp_neg_le1(bitgen_t* bg, uint64_t num, uint64_t den) noexcept nogil:
    # CKS algorithm 1 for gamma = num/den in [0, 1]: count K until Bernoulli(gamma / K)
    # fails; return K odd. Bernoulli(gamma / K) is drawn as Bernoulli(gamma) AND
    # Bernoulli(1 / K), which avoids the product den * K (and so any overflow).
    cdef uint64_t k = 1
    while bernoulli_frac(bg, num, den) and uniform_below(bg, k) == 0:
        k += 1
    return k & 1


cdef bint bernoulli_exp_neg(bitgen_t* bg, uint64_t num, uint64_t den) noexcept nogil:
    """Bernoulli(exp(-num / den)) for any ``num >= 0``, ``den >= 1`` (CKS algorithm 1)."""
    while num > den:
        # exp(-gamma) = exp(-1) * exp(-(gamma - 1)): one Bernoulli(exp(-1)) per unit.
        if not _bernoulli_exp_neg_le1(bg, 1, 1):
            return False
        num -= den
    return _bernoulli_exp_neg_le1(bg, num, den)


cdef u128 _uniform_below_u128(bitgen_t* bg, u128 n) noexcept nogil:
    """Uniform integer in ``[0, n)`` for a 128-bit ``n >= 1``."""
    cdef u128 x
    cdef uint64_t mask
    if n.hi == 0:
        return u128_from64(uniform_below(bg, n.lo))
    mask = _smear_right(n.hi)
    while True:
        x.hi = next_u64(bg) & mask
        x.lo = next_u64(bg)
        if u128_cmp(x, n) < 0:
            return x


cdef bint bernoulli_exp_neg_u128(bitgen_t* bg, u128 num, u128 den) noexcept nogil:
    """Bernoulli(exp(-num / den)) for 128-bit ``num >= 0`` and ``1 <= den < 2**127``."""
    cdef uint64_t k = 1
    # Integer part: one Bernoulli(exp(-1)) per unit, subtracting den each time; the loop
    # ends at the first failure, after 1.6 rounds on average, so no division is needed
    # (a 128-bit long division cost more than the rest of a discrete Gaussian draw).
    while u128_cmp(num, den) >= 0:
        if not _bernoulli_exp_neg_le1(bg, 1, 1):
            return False
        num = u128_sub(num, den)
    # Fractional part num / den in [0, 1): CKS algorithm 1.
    while u128_cmp(_uniform_below_u128(bg, den), num) < 0 and uniform_below(bg, k) == 0:
        k += 1
    return k & 1


cdef int64_t discrete_laplace(bitgen_t* bg, uint64_t t, uint64_t s) noexcept nogil:
    """Discrete Laplace with scale ``t / s``: ``P[X = x]`` proportional to ``exp(-|x| s / t)``.

    CKS algorithm 2. Requires ``t, s >= 1``. A draw whose intermediate ``u + t v`` would
    pass ``2**63`` is redrawn: that needs ``v >= 2**63 / t`` consecutive Bernoulli(exp(-1))
    successes, probability below ``exp(-1024)`` for the ``t <= 2**53`` the Python layer allows.
    """
    cdef uint64_t u, v, x, y
    cdef bint negative
    while True:
        u = uniform_below(bg, t)
        if not bernoulli_exp_neg(bg, u, t):
            continue
        v = 0
        while _bernoulli_exp_neg_le1(bg, 1, 1):
            v += 1
        if v > (<uint64_t>INT64_MAX - u) // t:
            continue
        x = u + t * v
        y = x // s
        negative = (next_u64(bg) >> 63) != 0
        if negative and y == 0:
            continue
        if y > (<uint64_t>1) << 62:
            continue
        return -<int64_t>y if negative else <int64_t>y


cdef inline uint64_t _isqrt(uint64_t n) noexcept nogil:
    """floor(sqrt(n)) by Newton's method on integers."""
    cdef uint64_t x, y
    if n < 2:
        return n
    x = n
    y = (x + 1) // 2
    while y < x:
        x = y
        y = (x + n // x) // 2
    return x


cdef int64_t discrete_gaussian(bitgen_t* bg, uint64_t n, uint64_t d) noexcept nogil:
    """Discrete Gaussian with variance parameter ``sigma2 = n / d``.

    ``P[X = x]`` proportional to ``exp(-x**2 / (2 sigma2))``. CKS algorithm 3: propose from a
    discrete Laplace of scale ``t = floor(sqrt(sigma2)) + 1``, accept with probability
    ``exp(-(|y| - sigma2/t)**2 / (2 sigma2)) = exp(-(|y| t d - n)**2 / (2 n d t**2))``,
    evaluated exactly in 128-bit integers. The caller keeps ``1 <= n <= 2**53`` and
    ``1 <= d <= 2**32``; then ``2 n d t**2 < 2**127``, and a proposal with ``|y| t d >= 2**63``
    (which is rejected outright) lies beyond ``2**10`` standard deviations, where the
    acceptance probability is below ``exp(-2**18)``.
    """
    cdef uint64_t t = _isqrt(n // d) + 1
    cdef uint64_t td = t * d
    cdef int64_t y
    cdef uint64_t ay, a
    cdef u128 num, den
    mul128_64(mul64(n, td), 2 * t, &den)
    while True:
        y = discrete_laplace(bg, t, 1)
        ay = <uint64_t>(-y if y < 0 else y)
        if ay > (<uint64_t>INT64_MAX) // td:
            continue
        a = ay * td
        a = a - n if a >= n else n - a
        num = mul64(a, a)
        if bernoulli_exp_neg_u128(bg, num, den):
            return y


# --------------------------------------------------------------------------------------
# Array entry points (the GIL is released; the bit generator's lock is held).

def uniform_below_array(generator, uint64_t n, uint64_t[::1] out):
    """Fill ``out`` with uniform integers in ``[0, n)``."""
    cdef bitgen_t* bg = bitgen_of(generator)
    cdef Py_ssize_t i
    if n < 1:
        raise ValueError("n must be at least 1")
    with generator.bit_generator.lock, nogil:
        for i in range(out.shape[0]):
            out[i] = uniform_below(bg, n)


ctypedef int64_t (*integer_sampler)(bitgen_t*, uint64_t, uint64_t) noexcept nogil


cdef void _fill_integers(generator, integer_sampler draw, uint64_t a, uint64_t b,
                         int64_t[::1] out) except *:
    """Fill ``out`` with ``draw(a, b)`` from ``generator``'s stream, under its lock."""
    cdef bitgen_t* bg = bitgen_of(generator)
    cdef Py_ssize_t i
    with generator.bit_generator.lock, nogil:
        for i in range(out.shape[0]):
            out[i] = draw(bg, a, b)


cdef int64_t _bernoulli_exp_neg_draw(bitgen_t* bg, uint64_t num, uint64_t den) noexcept nogil:
    return bernoulli_exp_neg(bg, num, den)


def bernoulli_exp_neg_array(generator, uint64_t num, uint64_t den, int64_t[::1] out):
    """Fill ``out`` with Bernoulli(exp(-num / den)) draws (0 or 1)."""
    if den < 1:
        raise ValueError("den must be at least 1")
    _fill_integers(generator, _bernoulli_exp_neg_draw, num, den, out)


def discrete_laplace_array(generator, uint64_t t, uint64_t s, int64_t[::1] out):
    """Fill ``out`` with discrete Laplace draws of scale ``t / s``."""
    if t < 1 or s < 1:
        raise ValueError("t and s must be at least 1")
    _fill_integers(generator, discrete_laplace, t, s, out)


def discrete_gaussian_array(generator, uint64_t n, uint64_t d, int64_t[::1] out):
    """Fill ``out`` with discrete Gaussian draws of variance parameter ``n / d``."""
    if n < 1 or n > (<uint64_t>1) << 53 or d < 1 or d > (<uint64_t>1) << 32:
        raise ValueError("need 1 <= n <= 2**53 and 1 <= d <= 2**32")
    _fill_integers(generator, discrete_gaussian, n, d, out)
