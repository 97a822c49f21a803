"""Tables read in blocks and encoded as they are read: a Dask dataframe, a
:class:`~dptrees.Parquet` source or :class:`~dptrees.Blocks` of a data frame, whose
columns have public domains (categories, a missing bin) in a schema dict.

The encoding (:class:`dptrees.data.tables.TableEncoding`) is fitted from the public
domains alone, before any row is read, and is the one ``predict`` applies to a frame in
memory; each block is encoded by it as it is read, so every block of a fit, and every
source, gives the codes the in-memory frame gives, and the same model bit for bit.
"""

import numpy as np

__all__ = ["EncodedBlocks", "encode_blocks"]


class EncodedBlocks:
    """Row blocks of ``table`` (read by row slices; a data frame by position), encoded
    to float64 features by ``encoding`` as they are read."""

    ndim = 2

    def __init__(self, table, encoding):
        self.table = table
        self.encoding = encoding
        self.shape = table.shape

    def __len__(self):
        return self.shape[0]

    def block_bounds(self):
        return self.table.block_bounds()

    def __getitem__(self, rows):
        table = self.table.iloc if hasattr(self.table, "iloc") else self.table
        return self.encoding.transform(table[rows])

    def __array__(self, dtype=None, copy=None):
        out = self[:]
        return out if dtype is None else out.astype(dtype)


def _encode_partition(part, encoding):
    """One partition of a Dask dataframe, encoded (runs where the partition lives)."""
    import pandas as pd

    return pd.DataFrame(encoding.transform(part), index=part.index, columns=part.columns)


def encode_blocks(X, encoding):
    """``X`` (a Dask dataframe, a :class:`~dptrees.Parquet` source or
    :class:`~dptrees.Blocks` of a data frame) with each block encoded by the fitted
    ``encoding`` as it is read; nothing is read here."""
    from dptrees._sources import Blocks

    if isinstance(X, Blocks):
        return Blocks(EncodedBlocks(X.X, encoding), block_rows=X.block_rows,
                      cache_dir=X.cache_dir)
    if hasattr(X, "map_partitions"):
        import pandas as pd

        meta = pd.DataFrame({name: pd.Series(dtype=np.float64) for name in X.columns})
        return X.map_partitions(_encode_partition, encoding, meta=meta)
    return EncodedBlocks(X, encoding)
