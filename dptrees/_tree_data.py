"""The training data of a DP tree or forest: validated, binned rows in memory
(:class:`_PreparedRegression`, :class:`_PreparedClassification`) or left in a source read
block by block (:class:`_SourceRegression`, :class:`_SourceClassification`), with the
fixed-point targets the compiled builder sums. Nothing here is released: the public
bounds and classes are parsed by :mod:`dptrees.data.domains`, and every value that reaches a
release is clipped to them.
"""

import numpy as np

from dptrees.data.binning import Binner, missing_features
from dptrees._core import _binning
from dptrees.data.domains import check_bounds, check_classes, check_y_bounds
from dptrees._sources import encode_regression_targets, public_binner
from dptrees._sources._rows import TreeTargets, assign_partitions
from dptrees.data.tables import public_bounds
from dptrees._tree_growth import grow_from_statistics
from dptrees.validation import (
    check_features,
    check_sample_weight,
    check_targets_regression,
    clip,
    weight_units,
)

__all__ = ["_PreparedData", "_PreparedRegression", "_PreparedClassification",
           "_SourceData", "_SourceRegression", "_SourceClassification", "FIXED_BITS",
           "MAX_ROWS"]

# Targets are rescaled to [0, 1] and held as rint(y * 2**31): int64 sums of up to 2**31
# rows cannot overflow, and a leaf sum moves by at most 2**31 units per record.
FIXED_BITS = 31
MAX_ROWS = 2**31 - 1


class _PreparedData:
    """Validated, binned training data shared by trees and forests.

    ``codes`` are the feature bin codes; ``labels`` the target bins (regression) or class
    indices (classification); ``y_fixed`` the fixed-point rescaled targets (zeros for
    classification); ``weights`` the sample weights in units of
    :data:`~dptrees.validation.WEIGHT_GRID` (None: unweighted).
    """

    weights = None

    @property
    def n_samples(self):
        return self.codes.shape[0]

    def grow_nodes(self, builder, noise_rng, candidate_rng, n_threads=1):
        """The node arrays of ``builder``'s tree on these rows (the statistics of large
        nodes on ``n_threads`` threads: the same tree)."""
        return builder.build(noise_rng, candidate_rng, self.codes, self.y_fixed, self.labels,
                             self.codes_by_feature, n_threads=n_threads,
                             weights=self.weights)

    def partition(self, n_parts, rng):
        """Assign every row to one of ``n_parts`` parts (:func:`assign_partitions`)."""
        self.parts = assign_partitions(self.n_samples, n_parts, rng)

    def part(self, k):
        """The rows of part ``k`` (after :meth:`partition`)."""
        return self.subset(np.flatnonzero(self.parts == k))

    def subset(self, rows):
        """The same prepared data restricted to ``rows`` (a contiguous copy)."""
        part = object.__new__(type(self))
        part.__dict__.update(self.__dict__)
        part.codes = np.ascontiguousarray(self.codes[rows])
        part.codes_by_feature = np.ascontiguousarray(self.codes_by_feature[:, rows])
        part.y_fixed = np.ascontiguousarray(self.y_fixed[rows])
        part.labels = np.ascontiguousarray(self.labels[rows])
        if self.weights is not None:
            part.weights = np.ascontiguousarray(self.weights[rows])
        return part

    def _set_weights(self, sample_weight):
        weights = check_sample_weight(sample_weight, self.n_samples)
        self.weights = None if weights is None else weight_units(weights)

    def _bin_features(self, estimator, X, n_threads):
        if X.shape[0] > MAX_ROWS:
            raise ValueError(f"at most {MAX_ROWS} rows are supported, got {X.shape[0]}")
        spec = public_bounds(estimator)
        bounds = check_bounds(spec, X, n_features=X.shape[1],
                              feature_names=getattr(estimator, "feature_names_in_", None))
        self.leaks = [] if bounds.leak is None else [bounds.leak]
        self.binner = Binner(bounds.lower, bounds.upper, estimator.n_bins,
                             missing_features(spec))
        self.codes = self.binner.transform(X, n_threads)
        self.codes_by_feature = np.ascontiguousarray(self.codes.T)  # for split tests
        self.n_features = X.shape[1]


class _PreparedRegression(_PreparedData):
    fixed_scale = 2.0**FIXED_BITS

    def __init__(self, estimator, X, y, n_threads=1, sample_weight=None):
        X = check_features(X)
        y = check_targets_regression(y, X.shape[0])
        self._bin_features(estimator, X, n_threads)
        self._set_weights(sample_weight)
        y_bounds = check_y_bounds(estimator.y_bounds, y)
        if y_bounds.leak is not None:
            self.leaks.append(y_bounds.leak)
        self.y_lower, self.y_upper = y_bounds.lower, y_bounds.upper
        y01 = (clip(y, self.y_lower, self.y_upper) - self.y_lower) / (self.y_upper - self.y_lower)
        y01 = np.clip(y01, 0.0, 1.0)  # guards the last ulp of the division
        self.y_fixed = np.rint(y01 * self.fixed_scale).astype(np.int64)
        self.labels = np.empty(y01.shape[0], dtype=np.uint8)
        _binning.bin_values(y01, 0.0, 1.0, estimator.n_target_bins, self.labels)
        self.n_labels = estimator.n_target_bins


class _PreparedClassification(_PreparedData):
    fixed_scale = 1.0

    def __init__(self, estimator, X, y, n_threads=1, sample_weight=None):
        X = check_features(X)
        if y is None:
            raise ValueError("requires y to be passed, but the target y is None")
        encoding = check_classes(estimator.classes, y, n_samples=X.shape[0])
        if len(encoding.classes) > 256:
            raise ValueError(f"at most 256 classes are supported, got {len(encoding.classes)}")
        self._bin_features(estimator, X, n_threads)
        self._set_weights(sample_weight)
        if encoding.leak is not None:
            self.leaks.append(encoding.leak)
        self.classes = encoding.classes
        self.labels = np.ascontiguousarray(encoding.y, dtype=np.uint8)
        self.y_fixed = np.zeros(X.shape[0], dtype=np.int64)
        self.n_labels = len(encoding.classes)


class _SourceData:
    """Validated, binned training rows that stay where they are (blocks of a memmap, Dask
    partitions: :mod:`dptrees._sources`): trees grow from their exact statistics, one
    pass over the rows per level (:func:`dptrees._tree_growth.grow_from_statistics`),
    the same trees as from the rows in memory. The interface of :class:`_PreparedData`.
    """

    part_index = None
    parts = None
    weights = None  # sources read in blocks take no sample weights

    def _bin_features(self, estimator, source):
        self.source = source
        self.binner, self.leaks = public_binner(source, public_bounds(estimator), estimator.n_bins,
                                                MAX_ROWS,
                                                getattr(estimator, "feature_names_in_", None))
        self.n_bins = estimator.n_bins
        self.n_features, self.n_samples = source.n_features, source.n_samples

    def grow_nodes(self, builder, noise_rng, candidate_rng, n_threads=1):
        # the source runs its blocks on its own n_jobs threads
        rows = self.source.tree_rows(self.spec, self.n_bins, self.parts, self.part_index)
        return grow_from_statistics(builder, rows, noise_rng, candidate_rng)

    def partition(self, n_parts, rng):
        self.parts = self.source.assign_partitions(n_parts, rng)

    def part(self, k):
        view = object.__new__(type(self))
        view.__dict__.update(self.__dict__)
        view.part_index = k
        return view


class _SourceRegression(_SourceData):
    fixed_scale = _PreparedRegression.fixed_scale

    def __init__(self, estimator, source):
        source.check_regression_targets()
        self._bin_features(estimator, source)
        y_bounds = encode_regression_targets(source, estimator.y_bounds)
        if y_bounds.leak is not None:
            self.leaks.append(y_bounds.leak)
        self.y_lower, self.y_upper = y_bounds.lower, y_bounds.upper
        source.bin(self.binner)
        self.n_labels = estimator.n_target_bins
        mse = estimator.leaf == "mean"
        self.spec = TreeTargets(mse, self.fixed_scale, 0 if mse else self.n_labels,
                                2 if mse else 1 + self.n_labels)


class _SourceClassification(_SourceData):
    fixed_scale = _PreparedClassification.fixed_scale

    def __init__(self, estimator, source):
        classes, leak = source.encode_classes(estimator.classes)
        if len(classes) > 256:
            raise ValueError(f"at most 256 classes are supported, got {len(classes)}")
        self._bin_features(estimator, source)
        if leak is not None:
            self.leaks.append(leak)
        source.bin(self.binner)
        self.classes = classes
        self.n_labels = len(classes)
        self.spec = TreeTargets(False, self.fixed_scale, 0, 1 + self.n_labels)
