# The one kernel that adds a row's statistics to its histogram cells, shared by the DP
# tree builder's statistics (_stats.pyx) and the boosting / blockwise histograms
# (_histogram.pyx).

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

    The shape is chosen so that the inlined loop compiles to the hand-written one
    (the tree builder's histograms: the same instructions, GCC 12 -O3):

    * constant arguments fold: ``cell[offset]`` becomes ``cell[1]``, and the clamp
      vanishes for ``last_bin = 255`` (``uint8`` codes never exceed it: callers whose
      codes are checked below their number of bins pass it). A clamp left in the
      builder's loop costs about 5 % of a 1M x 20 tree fit;
    * ``second`` is read through a ``restrict`` pointer, in the loop after the cell:
      the compiler hoists the load (nothing written here can change it) and, for
      ``[count, sum]``, pairs ``cell[0] += 1`` and ``cell[1] += y`` into one 16-byte
      vector addition. Passed by value, ``y`` comes first in the second addition and
      GCC's pairing fails: two scalar read-modify-writes, which made the loop alone
      (rows in order, in cache) 18 % slower.

    The caller checks that ``hist`` holds every cell this can reach, and that
    ``second`` does not point into ``hist``.
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
