"""Rows on a Dask cluster: statistics computed where the partitions live.

Each partition of a Dask array or dataframe is validated and binned on the worker that
holds it; its bin codes, encoded targets and boosting scores stay there, as futures of
the running ``distributed.Client``. A request (a level's histograms, a tree's leaf sums)
runs :mod:`dptrees._sources._rows` on every partition and brings back exact integers,
which this process adds up; the noise is added here, once, by the estimator that holds
the generator. No worker sees noise or anything but its own rows and the released model.
Integer sums do not depend on the partitioning, so the model is the same, bit for bit,
as from the rows in memory.

Requires ``dask[array]`` and ``distributed`` (``pip install dptrees[dask]``) and a
running ``distributed.Client``.
"""

import numpy as np

from dptrees._optional import optional_import
from dptrees._sources._blockwise import BlockwiseSource, add_up

__all__ = ["DaskSource"]


def _client():
    get_client = optional_import("distributed", "dask",
                                 "training on Dask collections").get_client
    try:
        return get_client()
    except ValueError as exc:
        raise ValueError("training on Dask collections needs a running distributed.Client "
                         "(e.g. distributed.Client(LocalCluster()))") from exc


def _as_dask_array(X, name):
    import dask.array as da

    if hasattr(X, "to_dask_array"):  # dataframe or series
        X = X.to_dask_array(lengths=True)
    if not isinstance(X, da.Array):
        raise TypeError(f"{name} must be a Dask array or dataframe, got {type(X).__name__}")
    return X


class DaskSource(BlockwiseSource):
    """Rows of a Dask array or dataframe ``X`` (and ``y``: Dask or numpy), one block per
    row partition of ``X`` (columns are gathered into one chunk)."""

    inplace = False

    def __init__(self, X, y):
        self.client = _client()
        X = _as_dask_array(X, "X")
        if X.ndim != 2:
            raise ValueError(f"X must be 2D, got shape {X.shape}")
        if y is None:
            raise ValueError("requires y to be passed, but the target y is None")
        X = X.rechunk({1: -1})
        self.lengths = [int(m) for m in X.chunks[0]]
        self.n_samples, self.n_features = int(sum(self.lengths)), int(X.shape[1])
        if self.n_samples == 0 or self.n_features == 0:
            raise ValueError(f"X: Found array with shape {X.shape}: at least 1 sample and 1 "
                             "feature are required.")
        starts = np.concatenate([[0], np.cumsum(self.lengths)])
        if hasattr(y, "__dask_graph__"):
            y = _as_dask_array(y, "y")
            if y.shape[0] != self.n_samples:
                raise ValueError("Found input variables with inconsistent numbers of samples: "
                                 f"[{self.n_samples}, {y.shape[0]}]")
            y = y.rechunk((tuple(self.lengths),) + tuple((s,) for s in y.shape[1:]))
            self.y_blocks = self.client.compute(list(y.to_delayed().ravel()))
        else:
            y = np.asarray(y)
            if y.shape[0] != self.n_samples:
                raise ValueError("Found input variables with inconsistent numbers of samples: "
                                 f"[{self.n_samples}, {y.shape[0]}]")
            self.y_blocks = self.client.scatter([y[a:b] for a, b in zip(starts[:-1],
                                                                         starts[1:])])
        self.x_blocks = self.client.compute(list(X.to_delayed()[:, 0]))

    def _submit(self, fn, columns, common):
        return [self.client.submit(fn, *args, pure=False, **common) for args in zip(*columns)]

    def keep_blocks(self, fn, columns, spill=False, **common):
        """Per-partition results left on the workers; waited for, so that an error in a
        partition (bad data) is raised here, before anything is released."""
        from distributed import wait

        futures = self._submit(fn, columns, common)
        wait(futures)
        for future in futures:
            if future.status == "error":
                future.result()
        return futures

    def gather_blocks(self, fn, columns, **common):
        return self.client.gather(self._submit(fn, columns, common))

    def sum_blocks(self, fn, columns, **common):
        """The partitions' exact integer results added up on the workers, in a tree of
        fan-in :data:`_FAN_IN`: one result comes back, whatever the partitions."""
        futures = self._submit(fn, columns, common)
        while len(futures) > 1:
            futures = [self.client.submit(_add_all, *futures[i:i + _FAN_IN], pure=False)
                       for i in range(0, len(futures), _FAN_IN)]
        return futures[0].result()

    def close(self):
        self.x_blocks = self.y_blocks = self.codes = self.labels = None


#: Partition results added by one task of the reduction tree.
_FAN_IN = 8


def _add_all(*parts):
    return add_up(parts)
