"""Rows too large to copy: a numpy memmap (or any sliceable array) read block by block.

Each block of ``block_rows`` rows is read, validated and binned on its own, so the
features are never materialised as float64 (one block at a time is). The bin codes and
the encoded targets go to files in a temporary directory, read back through memmaps:
their pages are the operating system's file cache, not the process's anonymous memory,
so a fit's resident memory grows with the scores (8 bytes per row and output), not with
the data. Blocks run on ``n_jobs`` threads (the compiled kernels release the GIL); the
integer results are the same whatever the threads or the block size.
"""

import os
import tempfile
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from dptrees._sources._blockwise import BlockwiseSource, add_up

__all__ = ["BlockSource", "DEFAULT_BLOCK_ROWS", "map_blocks"]

#: Rows per block when none is given: about 10 MB of float64 features for 10 features.
DEFAULT_BLOCK_ROWS = 2**17


def map_blocks(fn, columns, common, n_jobs, load=None):
    """``fn(*block_args, **common)`` for every block, yielded in block order, with at most
    ``2 n_jobs`` blocks in flight on ``n_jobs`` threads. ``columns``: a list of per-block
    argument lists; ``load`` turns a stored item into the argument (e.g. reads a slice)."""
    def run(i):
        args = [column[i] for column in columns]
        return fn(*(args if load is None else map(load, args)), **common)

    n = len(columns[0])
    if n_jobs == 1 or n == 1:
        for i in range(n):
            yield run(i)
        return
    with ThreadPoolExecutor(n_jobs) as pool:
        in_flight = deque()
        for i in range(n):
            in_flight.append(pool.submit(run, i))
            if len(in_flight) >= 2 * n_jobs:
                yield in_flight.popleft().result()
        while in_flight:
            yield in_flight.popleft().result()


class BlockSource(BlockwiseSource):
    """Rows of ``X`` (and ``y``) in blocks of ``block_rows`` rows, processed in order.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Anything that slices into numpy blocks: a ``numpy.memmap``, an HDF5 or Zarr
        array, a large in-memory array (never copied as a whole).
    y : array-like of shape (n_samples,)
    block_rows : int
    n_jobs : int
        Threads processing blocks.
    cache_dir : str or None
        Where the bin codes are kept on disk (a temporary directory inside it, removed
        when the source is closed or garbage-collected); None: the system's temporary
        directory.
    block_bounds : list of (start, stop) or None
        The blocks' rows, when ``X`` has its own (a Parquet file's row groups); None:
        consecutive blocks of ``block_rows``.
    """

    inplace = True

    def __init__(self, X, y, *, block_rows=DEFAULT_BLOCK_ROWS, n_jobs=1, cache_dir=None,
                 block_bounds=None):
        shape = getattr(X, "shape", None)
        if shape is None or len(shape) != 2:
            raise ValueError(f"X must be a 2D array, got shape {shape}")
        self.n_samples, self.n_features = int(shape[0]), int(shape[1])
        if self.n_samples == 0 or self.n_features == 0:
            raise ValueError(f"X: Found array with shape {tuple(shape)}: at least 1 sample "
                             "and 1 feature are required.")
        if y is None:
            raise ValueError("requires y to be passed, but the target y is None")
        if len(y) != self.n_samples:
            raise ValueError(f"Found input variables with inconsistent numbers of samples: "
                             f"[{self.n_samples}, {len(y)}]")
        self.block_rows = int(block_rows)
        if self.block_rows < 1:
            raise ValueError(f"block_rows must be >= 1, got {block_rows!r}")
        self.n_jobs = int(n_jobs)
        if block_bounds is None:
            starts = np.arange(0, self.n_samples, self.block_rows)
            block_bounds = [(int(a), int(min(a + self.block_rows, self.n_samples)))
                            for a in starts]
        self.row_blocks = list(block_bounds)
        self.lengths = [b - a for a, b in self.row_blocks]
        self.x_blocks = [_Slice(X, a, b) for a, b in self.row_blocks]
        self.y_blocks = [_Slice(y, a, b) for a, b in self.row_blocks]
        self._dir = tempfile.TemporaryDirectory(prefix="dptrees-", dir=cache_dir)
        self._files = 0

    def _map(self, fn, columns, common):
        return map_blocks(fn, columns, common, self.n_jobs, load=_load)

    def gather_blocks(self, fn, columns, **common):
        return list(self._map(fn, columns, common))

    def sum_blocks(self, fn, columns, **common):
        return add_up(self._map(fn, columns, common))

    def keep_blocks(self, fn, columns, spill=False, **common):
        if not spill:
            return list(self._map(fn, columns, common))
        store = None
        for (a, b), part in zip(self.row_blocks, self._map(fn, columns, common)):
            if store is None:
                store = self._memmap(part.dtype, (self.n_samples,) + part.shape[1:])
            store[a:b] = part
        return [store[a:b] for a, b in self.row_blocks]

    def _memmap(self, dtype, shape):
        self._files += 1
        path = os.path.join(self._dir.name, f"part{self._files}.bin")
        return np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=shape)

    def close(self):
        self.codes = self.labels = None
        self._dir.cleanup()


class _Slice:
    """Rows ``a:b`` of an array, read when a block is processed."""

    __slots__ = ("array", "a", "b")

    def __init__(self, array, a, b):
        self.array, self.a, self.b = array, a, b

    def load(self):
        return np.asarray(self.array[self.a:self.b])


def _load(item):
    return item.load() if isinstance(item, _Slice) else item
