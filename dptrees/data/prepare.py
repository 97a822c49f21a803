"""One preparation of ``fit(X, y, sample_weight)``'s rows for every estimator.

:func:`prepare` takes the estimator's public inputs (``bounds``, and ``classes`` or
``y_bounds``) and its data, and gives a :class:`Prepared`: the source of the rows (in
memory, in blocks, on Dask: :mod:`dptrees._sources`), binned over the public bounds,
with the targets encoded, and the public inputs that were read from the data (each with
its ``PrivacyLeakWarning`` already shown). A frame's ``X`` goes estimator -> here ->
:mod:`~dptrees.data.tables` (names, categories) -> :mod:`~dptrees.data.domains` (public
domains, once) -> the source; no estimator reads its rows any other way.

Privacy: nothing is released here. What is read from the data without noise is only
what the user left out of the public inputs, and it is recorded in ``leaks``.
"""

from contextlib import contextmanager
from typing import NamedTuple

from dptrees._parallel import n_threads
from dptrees._sources import (
    RowSource,
    encode_regression_targets,
    open_source,
    public_binner,
)
from dptrees.data.binning import Binner, categorical_features
from dptrees.data.category_order import PendingOrder, pending_order, release_order
from dptrees.data.private_edges import PendingEdges, pending_edges, release_edges
from dptrees.data.tables import fit_columns, public_bounds

__all__ = ["MAX_ROWS", "Prepared", "prepare"]

#: The most rows a fit takes: fixed-point sums of up to 2**31 rows fit in int64.
MAX_ROWS = 2**31 - 1


class Prepared(NamedTuple):
    """The rows of one fit, ready for the estimator's releases.

    Attributes
    ----------
    source : source of rows
        Binned (``source.codes`` or its blocks), targets encoded: for classification the
        class indices, for regression the targets clipped to ``y_bounds`` and rescaled
        to [0, 1].
    binner : Binner
        The public binning of the features.
    leaks : list of str
        The public inputs read from the data (``privacy_leaks_``), bounds first.
    classes : ndarray or None
        The public classes (classification).
    y_bounds : tuple of float or None
        The public target bounds ``(lower, upper)`` (regression).
    edges : PendingEdges or None
        With ``bin_edges="private"``, the exact fine histogram whose release gives the
        edges: the source is not binned yet (:meth:`bin_privately`, after the
        budget is charged), and ``binner`` is the equal-width one of the same bounds.
    order : PendingOrder or None
        With ``category_order="private"`` (or "auto"), the exact per-category class
        counts whose release orders the categorical columns' codes: the source is not
        binned yet, as with pending edges.
    """

    source: RowSource
    binner: Binner
    leaks: list
    classes: object = None
    y_bounds: tuple | None = None
    edges: PendingEdges | None = None
    order: PendingOrder | None = None

    @property
    def n_samples(self):
        return self.source.n_samples

    @property
    def n_features(self):
        return self.source.n_features

    @property
    def pending(self):
        """Whether the rows wait for a private release before they are binned."""
        return self.edges is not None or self.order is not None

    def bin_privately(self, plan, edges_budget, order_budget, rng):
        """Release the private edges, then the category order, through ``plan`` (each
        with its budget reserved by :func:`~dptrees.data.private_edges.reserve_edges`
        and :func:`~dptrees.data.category_order.reserve_order`, after the charge; 0:
        not released) on ``rng``, and bin the source with them; returns these rows with
        the new binner."""
        binner = self.binner
        if self.edges is not None and edges_budget > 0:
            binner = release_edges(plan, edges_budget, self.edges, binner, rng)
        if self.order is not None and order_budget > 0:
            binner = release_order(plan, order_budget, self.order, binner, rng)
        self.source.bin(binner)
        return self._replace(binner=binner, edges=None, order=None)

    def bin_publicly(self):
        """Bin the source over the public bounds after all (the estimator chose not to
        make its pending releases); returns these rows without them."""
        if not self.pending:
            return self
        self.source.bin(self.binner)
        return self._replace(edges=None, order=None)


@contextmanager
def prepare(estimator, X, y, sample_weight=None, *, task, n_bins=None, max_classes=None,
            n_jobs=None):
    """Open, check, bin and encode the rows of ``fit(X, y, sample_weight)``.

    Everything is checked here, before any budget is spent. The source is closed (its
    temporary files removed) when the ``with`` block ends or fails.

    Parameters
    ----------
    estimator : estimator
        Reads its ``bounds`` and ``classes`` (``task="classification"``) or ``y_bounds``
        (``task="regression"``); a frame's column names become its ``feature_names_in_``.
    X, y, sample_weight
        The data of ``fit`` (``sample_weight``: rows in memory only).
    task : {"classification", "regression"}
    n_bins : int, optional
        Bins per feature (default: ``estimator.n_bins``).
    max_classes : int, optional
        The most classes the estimator takes.
    n_jobs : int, optional
        Threads of the source (default: ``estimator.n_jobs``, if it has one).

    Yields
    ------
    Prepared
    """
    X = fit_columns(estimator, X)
    threads = n_threads(getattr(estimator, "n_jobs", None) if n_jobs is None else n_jobs)
    source = open_source(X, y, n_jobs=threads, sample_weight=sample_weight)
    try:
        yield _encode(estimator, source, task, n_bins, max_classes)
    finally:
        source.close()


def _encode(estimator, source, task, n_bins, max_classes):
    n_bins = estimator.n_bins if n_bins is None else n_bins
    names = getattr(estimator, "feature_names_in_", None)
    bounds = public_bounds(estimator)
    if task == "regression":
        source.check_regression_targets()
        binner, leaks = public_binner(source, bounds, n_bins, MAX_ROWS, names)
        y_bounds = encode_regression_targets(source, estimator.y_bounds)
        leaks += [] if y_bounds.leak is None else [y_bounds.leak]
        edges = _bin(estimator, source, binner, categorical_features(bounds))
        return Prepared(source, binner, leaks, y_bounds=(y_bounds.lower, y_bounds.upper),
                        edges=edges)
    classes, class_leak = source.encode_classes(estimator.classes)
    binner, leaks = public_binner(source, bounds, n_bins, MAX_ROWS, names)
    if max_classes is not None and len(classes) > max_classes:
        raise ValueError(f"at most {max_classes} classes are supported, got {len(classes)}")
    leaks += [] if class_leak is None else [class_leak]
    categorical = categorical_features(bounds)
    # a categorical column's bounds are (-0.5, K + 0.5): K + 1 codes (public)
    n_codes = {j: int(round(binner.upper[j] - binner.lower[j])) for j in categorical}
    order = pending_order(estimator, source, categorical, n_codes, len(classes))
    edges = _bin(estimator, source, binner, categorical, keep_unbinned=order is not None)
    return Prepared(source, binner, leaks, classes=classes, edges=edges, order=order)


def _bin(estimator, source, binner, categorical, keep_unbinned=False):
    """Bin the source over the public bounds, or (private edges of the columns not
    ``categorical``) read its exact fine histogram and leave it unbinned until the edges
    are released (as with ``keep_unbinned``: a pending category order)."""
    edges = pending_edges(estimator, source, binner, categorical)
    if edges is None and not keep_unbinned:
        source.bin(binner)
    return edges

