"""Sources of rows for the tree engine: in memory, in blocks from disk, on Dask.

A source holds the training rows wherever they are and computes, on request, the exact
int64 statistics the estimators release (class counts, target sums, per-node gradient
histograms and leaf sums). Bins are data-independent and every statistic is an exact
integer sum, so the statistics of any split of the rows (into blocks on disk, Dask
partitions) add up to those of all rows at once, bit for bit: the estimator adds the
noise once, to the total, in the process that holds the generator, and the fitted model
is the same from every source. No source adds noise or releases anything.

* :class:`~dptrees._sources._array.ArraySource`: rows in memory (the fast path);
* :class:`~dptrees._sources._blocks.BlockSource`: a ``numpy.memmap`` or any array too
  large to copy, read block by block (:class:`Blocks` chooses the block size);
* :class:`~dptrees._sources._dask.DaskSource`: Dask arrays and dataframes, statistics
  computed on the workers.

Each is a :class:`~dptrees._sources._protocol.RowSource` (the block sources also a
:class:`~dptrees._sources._protocol.BlockwiseRowSource`): the methods an estimator may
call on its rows, with public names.
"""

import numpy as np

from dptrees.data.binning import Binner, missing_features
from dptrees.data.domains import check_bounds, check_y_bounds

from dptrees._sources._array import ArraySource
from dptrees._sources._blocks import DEFAULT_BLOCK_ROWS, BlockSource
from dptrees._sources._encoded import EncodedBlocks, encode_blocks
from dptrees._sources._parquet import Parquet
from dptrees._sources._protocol import BlockwiseRowSource, RowSource

__all__ = ["ArraySource", "BlockSource", "Blocks", "BlockwiseRowSource", "Parquet",
           "RowSource", "encode_blocks", "encode_regression_targets", "is_blockwise",
           "open_source", "public_binner"]


class Blocks:
    """Train on ``X`` block by block instead of copying it into memory.

    ``fit(Blocks(X), y)`` reads ``block_rows`` rows of ``X`` at a time, validates and bins
    them, and keeps only their bin codes (one byte per value, in a temporary file under
    ``cache_dir``); the features are never held as float64 as a whole. A ``numpy.memmap``
    passed to ``fit`` directly is read this way too. The model is the same as from
    the array in memory.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Anything that slices into numpy arrays by rows: ``numpy.memmap``, HDF5, Zarr.
    block_rows : int, default=131072
        Rows per block.
    cache_dir : str or None, default=None
        Directory for the temporary bin codes (None: the system's temporary directory).
    """

    def __init__(self, X, *, block_rows=DEFAULT_BLOCK_ROWS, cache_dir=None):
        self.X = X
        self.block_rows = block_rows
        self.cache_dir = cache_dir

    @property
    def shape(self):
        return self.X.shape

    def __len__(self):
        return self.X.shape[0]


def _is_dask(obj):
    return hasattr(obj, "__dask_graph__") and obj.__dask_graph__() is not None


def is_blockwise(X, y=None):
    """Whether ``fit(X, y)`` reads its rows block by block (Dask, memmaps,
    :class:`Blocks`) rather than from an array in memory."""
    return _is_dask(X) or _is_dask(y) or isinstance(X, (Blocks, Parquet, EncodedBlocks,
                                                           np.memmap))


def public_binner(source, bounds, n_bins, max_rows, feature_names=None):
    """The binning of ``source``'s features over the public ``bounds``, and the leaks
    of public inputs read from data: ``(binner, leaks)``. ``bounds=None``, or a dict
    that leaves features out, reads them from the data (per-block min/max), with a
    ``PrivacyLeakWarning``; a dict of bounds may name the columns ``feature_names``."""
    if source.n_samples > max_rows:
        raise ValueError(f"at most {max_rows} rows are supported, got {source.n_samples}")
    # the data's minima and maxima are read only for the bounds not given (a leak)
    checked = check_bounds(bounds, source.feature_minmax, n_features=source.n_features,
                           feature_names=feature_names)
    leaks = [] if checked.leak is None else [checked.leak]
    return Binner(checked.lower, checked.upper, n_bins, missing_features(bounds)), leaks


def encode_regression_targets(source, y_bounds):
    """Check the public target bounds ``y_bounds`` (read from the data if None, with a
    ``PrivacyLeakWarning``) and have ``source`` keep its targets clipped to them and
    rescaled to [0, 1]; returns the checked bounds (``lower``, ``upper``, ``leak``)."""
    checked = check_y_bounds(y_bounds, source.target_minmax() if y_bounds is None else None)
    source.encode_regression(checked.lower, checked.upper)
    return checked


def open_source(X, y, *, n_jobs=1, sample_weight=None) -> RowSource:
    """The source of rows for ``fit(X, y)``: Dask collections on Dask, memmaps,
    :class:`Blocks` and :class:`Parquet` files in blocks on ``n_jobs`` threads, anything
    else in memory (``n_jobs`` blocks of rows for the estimators that run on blocks).
    ``sample_weight`` (rows in memory only) is checked by the source."""
    if sample_weight is not None and is_blockwise(X, y):
        raise ValueError(
            "sample_weight is supported for data in memory only; this X is read in "
            "blocks (Dask, numpy.memmap, Blocks or Parquet). Load it into memory, or "
            "fit without weights.")
    if _is_dask(X) or _is_dask(y):
        from dptrees._sources._dask import DaskSource

        return DaskSource(X, y)
    if isinstance(X, Blocks):
        return BlockSource(X.X, y, block_rows=X.block_rows, cache_dir=X.cache_dir,
                           n_jobs=n_jobs)
    if isinstance(X, (Parquet, EncodedBlocks)):
        return BlockSource(X, y, block_bounds=X.block_bounds(), n_jobs=n_jobs)
    if isinstance(X, np.memmap):
        return BlockSource(X, y, n_jobs=n_jobs)
    return ArraySource(X, y, n_jobs=n_jobs, sample_weight=sample_weight)
