"""What a source of rows is: the methods every estimator may call on one.

:class:`RowSource` is the contract of :func:`dptrees._sources.open_source`'s result,
whether the rows are in memory (:class:`~dptrees._sources._array.ArraySource`), in
blocks on disk (:class:`~dptrees._sources._blocks.BlockSource`) or on Dask
(:class:`~dptrees._sources._dask.DaskSource`); :class:`BlockwiseRowSource` adds what the
trees need from rows they do not hold. Every statistic a source returns is an exact
integer sum (or a count), so the same rows give the same numbers from every source; no
source adds noise or releases anything.
"""

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["BlockwiseRowSource", "RowSource"]


@runtime_checkable
class RowSource(Protocol):
    """The rows of one fit, wherever they are.

    Attributes
    ----------
    n_samples, n_features : int
    weights : ndarray or None
        Sample weights in [0, 1] (rows in memory only; None: every record weighs 1).
    code_blocks, label_blocks : list
        Per block, the bin codes (after :meth:`bin`) and the encoded targets.
    weight_blocks : list or None
        Per block, the sample weights.
    """

    n_samples: int
    n_features: int
    weights: np.ndarray | None

    # -- preparation, in this order: targets, bounds, binning -----------------------------
    def check_regression_targets(self) -> None:
        """Check the targets as regression targets (finite real numbers)."""

    def encode_classes(self, classes: Any, name: str = "classes") -> tuple[np.ndarray, Any]:
        """Keep the labels as indices of the public ``classes`` (read from the data if
        None); returns ``(classes, leak or None)``."""

    def target_minmax(self) -> np.ndarray:
        """The targets' minimum and maximum (read only when ``y_bounds`` is None)."""

    def encode_regression(self, lower: float, upper: float) -> None:
        """Keep the targets clipped to the public bounds and rescaled to [0, 1]."""

    def feature_minmax(self) -> np.ndarray:
        """Per-feature minima and maxima (read only for bounds not given)."""

    def fine_counts(self, lower: np.ndarray, upper: np.ndarray, n_cells: int,
                    missing: np.ndarray) -> np.ndarray:
        """Exact per-feature counts in ``n_cells`` equal-width cells of the public bounds
        (before :meth:`bin`; the private edges' histogram, not released here)."""

    def category_counts(self, features: np.ndarray, n_codes: int,
                        n_classes: int) -> np.ndarray:
        """Exact counts of every ``(code, class)`` pair of the categorical ``features``,
        shape ``(len(features), n_codes, n_classes)`` (after :meth:`encode_classes`,
        before :meth:`bin`; the private category order's input, not released here)."""

    def bin(self, binner: Any) -> None:
        """Keep every row's bin codes under the public ``binner``."""

    # -- exact statistics ----------------------------------------------------------------
    def class_counts(self, n_classes: int) -> np.ndarray:
        """Per-class record counts (weighted sums of grid multiples with weights)."""

    def target_fixed_sum(self, scale: float) -> int:
        """The sum of the rescaled targets in fixed point of ``scale``."""

    def record_count(self) -> float:
        """The number of records, or the sum of their weights."""

    def rows_in_memory(self) -> tuple[np.ndarray, np.ndarray]:
        """``(codes, labels)`` of every row, gathered (the federated simulation)."""

    def boosting_rows(self, loss: Any, fixed: Any, init: Any, n_bins: int, n_jobs: int = 1,
                      executor: Any = None) -> Any:
        """The per-record state of a boosting fit (scores, gradients, histograms)."""

    # -- running a function on every block -----------------------------------------------
    def keep_blocks(self, fn: Callable, columns: Sequence, spill: bool = False,
                    **common: Any) -> list:
        """``fn`` on every block, its per-block results kept where the block lives."""

    def gather_blocks(self, fn: Callable, columns: Sequence, **common: Any) -> list:
        """``fn`` on every block, the results brought back in block order."""

    def sum_blocks(self, fn: Callable, columns: Sequence, **common: Any) -> Any:
        """The sum of ``fn``'s exact integer results over the blocks."""

    def close(self) -> None:
        """Drop the rows and remove any temporary files."""


@runtime_checkable
class BlockwiseRowSource(RowSource, Protocol):
    """A source whose rows stay in blocks: trees grow from its per-level statistics."""

    def assign_partitions(self, n_parts: int, rng: np.random.Generator) -> list:
        """Each row's part, drawn block by block in row order."""

    def tree_rows(self, spec: Any, n_bins: int, parts: Any = None, part: Any = None) -> Any:
        """The exact per-node statistics of a tree grown level by level."""
