"""Noise on a grid and exact private selection, without the GIL.

Parameters arrive already converted to exact integers by :mod:`dptrees.mechanisms`, which
documents the privacy guarantee of each function. Here:

* grid mechanisms return ``grid * (rint(x / grid) + Z)`` with ``Z`` an exact discrete
  Laplace or discrete Gaussian; outputs lie on the grid whatever ``x`` is, so their
  floating-point representation carries no trace of ``x`` (Mironov 2012);
* selection works on integer *scores* (utilities quantised by the caller). Candidate ``i``
  is weighted by ``exp(-(s* - s_i) * eps_num / den)`` with ``s*`` the best score, and every
  acceptance test is an exact Bernoulli(exp(-gamma)) with rational ``gamma``.
"""

from libc.math cimport rint, fabs
from libc.stdint cimport uint64_t, int64_t, INT64_MIN, UINT64_MAX
from libc.stdlib cimport malloc, free
from numpy.random cimport bitgen_t

from dptrees._core._rng cimport (
    bitgen_of, uniform_below, bernoulli_exp_neg, bernoulli_exp_neg_u128,
    discrete_laplace, discrete_gaussian,
)
from dptrees._core._u128 cimport u128, mul64, u128_from64

# Scores equal to this value mark candidates that may never be chosen.
EXCLUDED = INT64_MIN

# |x / grid| must stay below 2**52 so that rint(x / grid) + noise is exact in a double.
cdef double _MAX_GRID_UNITS = 4503599627370496.0


cdef inline bint _accept(bitgen_t* bg, uint64_t gap, uint64_t eps_num, uint64_t den) noexcept nogil:
    """Bernoulli(exp(-gap * eps_num / den)), exactly."""
    if gap == 0:
        return True
    if gap <= UINT64_MAX // eps_num:
        return bernoulli_exp_neg(bg, gap * eps_num, den)
    return bernoulli_exp_neg_u128(bg, mul64(gap, eps_num), u128_from64(den))


cdef inline int64_t _best(const int64_t* scores, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef int64_t best = INT64_MIN
    for i in range(n):
        if scores[i] > best:
            best = scores[i]
    return best


cdef Py_ssize_t permute_and_flip(bitgen_t* bg, const int64_t* scores, Py_ssize_t n,
                                 uint64_t eps_num, uint64_t den, Py_ssize_t* work) noexcept nogil:
    """Permute-and-flip (McKenna & Sheldon 2020) over ``n`` scores; ``work`` holds ``n`` slots.

    Visits candidates in a uniformly random order (lazy Fisher-Yates) and returns the first
    one whose coin ``Bernoulli(exp(-(s* - s_i) eps_num / den))`` comes up; the best
    candidate's coin always does, so the loop ends within ``n`` steps. Returns -1 if every
    candidate is excluded.
    """
    cdef int64_t best = _best(scores, n)
    cdef Py_ssize_t i, j, k, remaining
    if best == INT64_MIN:
        return -1
    for i in range(n):
        work[i] = i
    remaining = n
    while remaining > 0:
        j = <Py_ssize_t>uniform_below(bg, <uint64_t>remaining)
        k = work[j]
        remaining -= 1
        work[j] = work[remaining]
        if scores[k] == INT64_MIN:
            continue
        if _accept(bg, <uint64_t>(best - scores[k]), eps_num, den):
            return k
    return -1  # unreachable: the best candidate always accepts


cdef Py_ssize_t exponential_mechanism(bitgen_t* bg, const int64_t* scores, Py_ssize_t n,
                                      uint64_t eps_num, uint64_t den) noexcept nogil:
    """Exact exponential mechanism by rejection from a uniform proposal.

    Propose ``i`` uniformly; accept with ``Bernoulli(exp(-(s* - s_i) eps_num / den))``.
    The accepted index has probability proportional to ``exp(s_i eps_num / den)``. The
    expected number of proposals is ``n / sum_i exp(-(s* - s_i) eps_num / den) <= n``.
    Returns -1 if every candidate is excluded.
    """
    cdef int64_t best = _best(scores, n)
    cdef Py_ssize_t k
    if best == INT64_MIN:
        return -1
    while True:
        k = <Py_ssize_t>uniform_below(bg, <uint64_t>n)
        if scores[k] == INT64_MIN:
            continue
        if _accept(bg, <uint64_t>(best - scores[k]), eps_num, den):
            return k


# --------------------------------------------------------------------------------------
# Python entry points.

def grid_noise(generator, const double[::1] x, double grid, str kind, uint64_t a,
               uint64_t b, double[::1] out):
    """``out = grid * (rint(x / grid) + Z)`` with exact discrete noise ``Z``.

    ``kind="laplace"``: ``Z`` discrete Laplace of scale ``a / b``;
    ``kind="gaussian"``: ``Z`` discrete Gaussian of variance ``a / b``.
    Returns the index of the first value too large for the grid, or -1 on success.
    """
    cdef bitgen_t* bg = bitgen_of(generator)
    cdef Py_ssize_t i, n = x.shape[0], bad = -1
    cdef double units
    cdef bint gaussian
    if kind not in ("laplace", "gaussian"):
        raise ValueError(f"unknown noise kind {kind!r}")
    gaussian = kind == "gaussian"
    if out.shape[0] != n:
        raise ValueError("out must have the shape of x")
    if a < 1 or b < 1:
        raise ValueError("noise parameters must be positive")
    if gaussian and (a > (<uint64_t>1) << 53 or b > (<uint64_t>1) << 32):
        raise ValueError("the discrete Gaussian needs a <= 2**53 and b <= 2**32")
    with generator.bit_generator.lock, nogil:
        for i in range(n):
            units = rint(x[i] / grid)
            if not fabs(units) < _MAX_GRID_UNITS:  # also catches NaN
                bad = i
                break
            if gaussian:
                out[i] = grid * (units + <double>discrete_gaussian(bg, a, b))
            else:
                out[i] = grid * (units + <double>discrete_laplace(bg, a, b))
    return bad


def select(generator, const int64_t[::1] scores, uint64_t eps_num, uint64_t den,
           str method, Py_ssize_t size=1):
    """Run ``size`` independent selections over ``scores``; returns an int64 array.

    ``method`` is ``"permute_and_flip"`` or ``"exponential"``.
    """
    import numpy as np
    cdef bitgen_t* bg = bitgen_of(generator)
    cdef Py_ssize_t n = scores.shape[0], r
    cdef bint use_pf
    cdef Py_ssize_t* work = NULL
    result = np.empty(size, dtype=np.int64)
    cdef int64_t[::1] res = result
    if n == 0:
        raise ValueError("no candidates to select from")
    if eps_num == 0 or den == 0:
        raise ValueError("eps_num and den must be positive")
    if method == "permute_and_flip":
        use_pf = True
    elif method == "exponential":
        use_pf = False
    else:
        raise ValueError(f"unknown selection method {method!r}")
    if use_pf:
        work = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t))
        if work == NULL:
            raise MemoryError()
    try:
        with generator.bit_generator.lock, nogil:
            for r in range(size):
                if use_pf:
                    res[r] = permute_and_flip(bg, &scores[0], n, eps_num, den, work)
                else:
                    res[r] = exponential_mechanism(bg, &scores[0], n, eps_num, den)
    finally:
        free(work)
    return result
