"""Rows of a Parquet file, read one row group at a time (through ``pyarrow``).

A :class:`Parquet` is what ``fit`` takes in place of an array: ``fit(Parquet(path,
features), Parquet(path, "label"))``. Its row groups are the blocks of a
:class:`~dptrees._sources._blocks.BlockSource`: each is read, validated and binned on its
own, so the file's features are never held in memory as a whole, and the fitted model is
the same, bit for bit, as from the same values in an array.
"""

import numpy as np

from dptrees._optional import optional_import

__all__ = ["Parquet"]


def _pyarrow_parquet():
    return optional_import("pyarrow.parquet", "parquet", "reading Parquet files")


class Parquet:
    """Columns of a Parquet file, for ``fit`` to read row group by row group.

    Parameters
    ----------
    path : str or path-like
        A Parquet file.
    columns : list of str, str or None, default=None
        The columns to read, in this order: a list gives a 2-D array-like (features), one
        name (a ``str``) a 1-D one (the labels or targets); None: every column, 2-D.

    Missing values (nulls) are read as NaN and refused by ``fit`` like NaN in an array.

    Examples
    --------
    >>> from dptrees import DPDecisionTreeClassifier, Parquet
    >>> X = Parquet("train.parquet", ["age", "income"])  # doctest: +SKIP
    >>> y = Parquet("train.parquet", "label")            # doctest: +SKIP
    >>> DPDecisionTreeClassifier(bounds=..., classes=[0, 1]).fit(X, y)  # doctest: +SKIP
    """

    def __init__(self, path, columns=None):
        pq = _pyarrow_parquet()
        self.path = path
        metadata = pq.ParquetFile(path).metadata
        names = list(metadata.schema.names)
        self.one_column = isinstance(columns, str)
        self.columns = [columns] if self.one_column else list(names if columns is None
                                                              else columns)
        missing = [c for c in self.columns if c not in names]
        if missing:
            raise ValueError(f"columns {missing} are not in {path!s} (its columns: {names})")
        if not self.columns:
            raise ValueError("no columns to read")
        sizes = [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]
        self.offsets = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
        n = int(self.offsets[-1])
        self.shape = (n,) if self.one_column else (n, len(self.columns))
        self.ndim = len(self.shape)

    def __len__(self):
        return self.shape[0]

    def block_bounds(self):
        """``(start, stop)`` rows of each non-empty row group: the blocks of a fit."""
        return [(int(a), int(b)) for a, b in zip(self.offsets[:-1], self.offsets[1:])
                if b > a]

    def __getitem__(self, rows):
        """Rows ``a:b`` (a slice with step 1) as a numpy array; reads only the row
        groups that hold them."""
        if not isinstance(rows, slice) or rows.step not in (None, 1):
            raise TypeError("a Parquet source is read by row slices only")
        a, b, _ = rows.indices(self.shape[0])
        b = max(a, b)
        first = int(np.searchsorted(self.offsets, a, side="right")) - 1
        last = int(np.searchsorted(self.offsets, b, side="left"))
        groups = list(range(max(first, 0), min(last, len(self.offsets) - 1)))
        if not groups:
            return np.empty((0,) + self.shape[1:])
        table = _pyarrow_parquet().ParquetFile(self.path).read_row_groups(
            groups, columns=self.columns)
        values = [_column(table.column(name)) for name in self.columns]
        out = values[0] if self.one_column else np.column_stack(values)
        start = int(self.offsets[groups[0]])
        return out[a - start:b - start]

    def __array__(self, dtype=None, copy=None):
        """All rows at once (the federated estimators, whose simulated clients hold
        their rows in memory, read it so)."""
        out = self[:]
        return out if dtype is None else out.astype(dtype)

    def __repr__(self):
        return f"Parquet({self.path!r}, columns={self.columns!r}, rows={self.shape[0]})"


def _column(chunked):
    """A Parquet column as a numpy array: numbers as they are, nulls as NaN (refused by
    the validation later), anything else as objects (refused or encoded as labels)."""
    import pyarrow as pa

    if pa.types.is_integer(chunked.type) or pa.types.is_floating(chunked.type) \
            or pa.types.is_boolean(chunked.type):
        if chunked.null_count:
            return chunked.cast(pa.float64()).to_numpy(zero_copy_only=False)
        return chunked.to_numpy()
    return np.asarray(chunked.to_pylist(), dtype=object)
