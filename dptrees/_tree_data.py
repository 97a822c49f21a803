"""The training rows of a DP tree or forest, as the compiled builder sums them.

:class:`TreeData` wraps the rows :func:`dptrees.data.prepare.prepare` gives every
estimator: for rows in memory it keeps the arrays the compiled builder reads (bin codes
by row and by feature, fixed-point targets, target bins or class indices, weights in
grid units); for rows left where they are (blocks of a memmap, Parquet, Dask
partitions) trees grow from their exact statistics, one pass over the rows per level
(:func:`dptrees._tree_growth.grow_from_statistics`), the same trees bit for bit.

Nothing here is released: the public bounds and classes are parsed by
:mod:`dptrees.data.domains`, and every value that reaches a release is clipped to them.
"""

import numpy as np

from dptrees._core import _binning, _fixedpoint
from dptrees._sources._array import ArraySource
from dptrees._sources._rows import TreeTargets, assign_partitions
from dptrees._tree_growth import grow_from_statistics
from dptrees.data.prepare import MAX_ROWS
from dptrees.validation import weight_units

__all__ = ["FIXED_BITS", "MAX_ROWS", "TreeData"]

# Targets are rescaled to [0, 1] and held as rint(y * 2**31): int64 sums of up to 2**31
# rows cannot overflow, and a leaf sum moves by at most 2**31 units per record.
FIXED_BITS = 31


class TreeData:
    """The rows of one tree or forest fit.

    Attributes
    ----------
    binner, leaks, n_features, n_samples
        From the prepared rows.
    n_labels : int
        Classes, or target bins (regression).
    fixed_scale : float
        Fixed-point scale of the summed targets (``2**31`` for regression, 1 for
        classification, whose targets are zero).
    classes or y_lower, y_upper
        The public classes, or the public target bounds.
    codes, codes_by_feature, y_fixed, labels, weights
        Rows in memory only: bin codes by row and by feature, fixed-point targets,
        target bins or class indices, and sample weights in grid units (None:
        unweighted).
    """

    weights = None
    parts = None
    part_index = None

    def __init__(self, estimator, prepared):
        source = prepared.source
        self.source = source
        self.prepared = prepared
        self.binner, self.leaks = prepared.binner, list(prepared.leaks)
        self.n_features, self.n_samples = source.n_features, source.n_samples
        self.n_bins = estimator.n_bins
        regression = prepared.classes is None
        if regression:
            self.y_lower, self.y_upper = prepared.y_bounds
            self.fixed_scale = 2.0**FIXED_BITS
            self.n_labels = estimator.n_target_bins
            mse = estimator.leaf == "mean"
            self.spec = TreeTargets(mse, self.fixed_scale, 0 if mse else self.n_labels,
                                    2 if mse else 1 + self.n_labels)
        else:
            self.classes = prepared.classes
            self.fixed_scale = 1.0
            self.n_labels = len(self.classes)
            self.spec = TreeTargets(False, self.fixed_scale, 0, 1 + self.n_labels)
        self.in_memory = isinstance(source, ArraySource)
        self.regression = regression
        if self.in_memory and prepared.edges is None:
            self._keep_arrays(regression)

    @property
    def edges(self):
        """The pending private edges (the rows are not binned yet), or None."""
        return self.prepared.edges

    @property
    def order(self):
        """The pending category order (the trees have none), or None."""
        return self.prepared.order

    @property
    def pending(self):
        return self.prepared.pending

    def bin_privately(self, plan, edges_budget, order_budget, rng):
        """Release the private edges and bin the rows with them
        (:meth:`dptrees.data.prepare.Prepared.bin_privately`); returns these rows."""
        self.prepared = self.prepared.bin_privately(plan, edges_budget, order_budget, rng)
        self.binner = self.prepared.binner
        if self.in_memory:
            self._keep_arrays(self.regression)
        return self

    def _keep_arrays(self, regression):
        source = self.source
        self.codes = source.codes
        self.codes_by_feature = np.ascontiguousarray(self.codes.T)  # for split tests
        if regression:
            y01 = source.labels  # clipped to the public bounds, rescaled to [0, 1]
            # rint(y01 * fixed_scale) as int64, in one pass without temporaries
            self.y_fixed = np.empty(y01.shape[0], dtype=np.int64)
            _fixedpoint.to_fixed_array(y01, 0.0, 1.0, self.fixed_scale, self.y_fixed)
            self.labels = np.empty(y01.shape[0], dtype=np.uint8)
            _binning.bin_values(y01, 0.0, 1.0, self.n_labels, self.labels)
        else:
            self.labels = np.ascontiguousarray(source.labels, dtype=np.uint8)
            self.y_fixed = np.zeros(self.n_samples, dtype=np.int64)
        if source.weights is not None:
            self.weights = weight_units(source.weights)

    def grow_nodes(self, builder, noise_rng, candidate_rng, n_threads=1):
        """The node arrays of ``builder``'s tree on these rows (in memory, the
        statistics of large nodes on ``n_threads`` threads; in blocks, on the source's
        own threads: the same tree)."""
        if self.in_memory:
            return builder.build(noise_rng, candidate_rng, self.codes, self.y_fixed,
                                 self.labels, self.codes_by_feature, n_threads=n_threads,
                                 weights=self.weights)
        rows = self.source.tree_rows(self.spec, self.n_bins, self.parts, self.part_index)
        return grow_from_statistics(builder, rows, noise_rng, candidate_rng)

    def partition(self, n_parts, rng):
        """Assign every row to one of ``n_parts`` parts, independently record by record
        (:func:`~dptrees._sources._rows.assign_partitions`)."""
        if self.in_memory:
            self.parts = assign_partitions(self.n_samples, n_parts, rng)
        else:
            self.parts = self.source.assign_partitions(n_parts, rng)

    def part(self, k):
        """The rows of part ``k`` (after :meth:`partition`)."""
        if self.in_memory:
            return self.subset(np.flatnonzero(self.parts == k))
        view = object.__new__(type(self))
        view.__dict__.update(self.__dict__)
        view.part_index = k
        return view

    def subset(self, rows):
        """The same rows in memory restricted to ``rows`` (contiguous copies)."""
        part = object.__new__(type(self))
        part.__dict__.update(self.__dict__)
        part.codes = np.ascontiguousarray(self.codes[rows])
        part.codes_by_feature = np.ascontiguousarray(self.codes_by_feature[:, rows])
        part.y_fixed = np.ascontiguousarray(self.y_fixed[rows])
        part.labels = np.ascontiguousarray(self.labels[rows])
        if self.weights is not None:
            part.weights = np.ascontiguousarray(self.weights[rows])
        part.n_samples = len(rows)
        return part
