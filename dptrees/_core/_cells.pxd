# The one kernel that adds a row's statistics to its histogram cells, shared by the DP
# tree builder (_builder.pyx) and the boosting / blockwise histograms (_histogram.pyx).

from libc.stdint cimport int64_t, uint8_t

cdef extern from *:
    # a pointer the kernel reads through and nothing else writes through (C99 restrict)
    ctypedef const int64_t* const_int64_restrict "const int64_t* CYTHON_RESTRICT"


cdef inline void add_row(int64_t* hist, Py_ssize_t feature_stride, Py_ssize_t width,
                         const uint8_t* codes, Py_ssize_t f_start, Py_ssize_t f_stop,
                         Py_ssize_t last_bin, int64_t first, Py_ssize_t offset,
                         const_int64_restrict second) noexcept nogil:
    """Add one row to the cell of its bin in each feature ``f_start .. f_stop - 1``.

    The cell of feature ``f`` starts at ``hist + f * feature_stride + bin * width``, with
    ``bin = min(codes[f], last_bin)`` (``codes``: the row's codes, row-major); the row
    adds ``first`` to ``cell[0]`` and ``second`` to ``cell[offset]``. Every layout of the
    statistics is two additions per cell:

    * ``[count, sum]`` (squared error): ``first = 1, offset = 1, second = y``;
    * ``[count, n_0 .. n_{L-1}]`` (one-hot labels): ``first = w, offset = 1 + label,
      second = w`` (``w``: the row's weight, 1 in memory);
    * explicit ``stats[k]`` (boosting's ``(g, h)``): ``first = stats[0], offset = 1,
      second = stats[1]``; more statistics are added two at a time from ``hist + k``.

    Each cell is an exact int64 sum, independent of the order of the rows: histograms
    of blocks, threads or processes add up to the same integers as all rows at once.

    The statistics are passed by value and the arguments are constants at most call
    sites, so that the inlined loop is the hand-written one: each row's values stay in
    registers (loads through ``hist`` could alias a statistics array and would be
    reloaded per feature otherwise), ``cell[offset]`` folds to ``cell[1]``, and the clamp
    vanishes for ``last_bin = 255`` (callers whose codes are checked below their number
    of bins: ``uint8`` codes never exceed 255). The caller checks that ``hist`` holds
    every cell this can reach.
    """
    cdef Py_ssize_t f, b
    cdef int64_t* cell
    for f in range(f_start, f_stop):
        b = codes[f]
        if b > last_bin:
            b = last_bin
        cell = hist + f * feature_stride + b * width
        cell[0] += first
        cell[offset] += second[0]
