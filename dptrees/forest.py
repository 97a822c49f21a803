"""Differentially private forests.

:class:`DPPartitionForestRegressor` is the DP partition forest of Hoang & Nguyen (2020):
disjoint parts of the data, one DP tree per part with the full budget, averaged.
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from sklearn.utils.validation import check_is_fitted

from dptrees._random import check_random_state
from dptrees.accounting import check_accountant
from dptrees.tree import DPDecisionTreeRegressor, _PreparedRegression
from dptrees.validation import check_positive_int

__all__ = ["DPPartitionForestRegressor", "assign_partitions"]


def assign_partitions(n_samples, n_parts, rng):
    """Part of each record: independent and uniform over ``n_parts``, record by record.

    Each record's part depends on its own draw only, so adding or removing one record
    leaves every other record where it was: the parts are disjoint under add/remove-one
    neighbours and parallel composition applies. (Shuffling and cutting into equal chunks
    would not do: one record more moves the cut points and so other records' parts.)
    """
    return rng.integers(0, n_parts, size=n_samples)


def _n_threads(n_jobs, n_tasks):
    if n_jobs is None:
        return 1
    if n_jobs < 0:
        import os
        return max(1, min(n_tasks, (os.cpu_count() or 1) + 1 + n_jobs))
    return max(1, min(n_tasks, n_jobs))


class DPPartitionForestRegressor(DPDecisionTreeRegressor):
    """Differentially private partition forest (Hoang & Nguyen 2020).

    Assigns every record to one of ``n_estimators`` disjoint parts (independently, record
    by record), grows one :class:`~dptrees.tree.DPDecisionTreeRegressor` on each part with
    the full ``epsilon``, and predicts the average of the trees.

    Privacy guarantee: ``epsilon``-DP for add/remove-one neighbours, given public
    ``bounds`` and ``y_bounds``: a record lands in exactly one part, so it influences one
    tree, which is ``epsilon``-DP (parallel composition). The fit spends ``epsilon`` once.

    Parameters
    ----------
    n_estimators : int, default=25
        Number of parts and trees (the paper's ``tau``).
    epsilon : float, default=1.0
    n_jobs : int, optional
        Threads that grow trees in parallel (the compiled builder releases the GIL).
        ``None`` means 1, -1 all cores. Results do not depend on it: every tree has its
        own random stream.
    **tree parameters
        As :class:`~dptrees.tree.DPDecisionTreeRegressor`: ``max_depth``,
        ``min_samples_split``, ``min_samples_leaf``, ``n_bins``, ``leaf``, ``selection``,
        ``budget_weights``, ``n_target_bins``, ``bounds``, ``y_bounds``, ``accountant``,
        ``random_state``.

    Attributes
    ----------
    estimators_ : list of Tree
        One fitted tree per part.
    epsilon_spent_, budget_, privacy_leaks_, n_features_in_, bounds_, y_bounds_
        As for the single tree; ``budget_`` is each tree's.
    """

    def __init__(self, n_estimators=25, epsilon=1.0, *, max_depth=5, min_samples_split=20,
                 min_samples_leaf=10, n_bins=40, leaf="mean", selection="exponential",
                 budget_weights=(1.0, 1.0, 1.0), n_target_bins=64, bounds=None, y_bounds=None,
                 accountant=None, n_jobs=None, random_state=None):
        super().__init__(
            epsilon, max_depth=max_depth, min_samples_split=min_samples_split,
            min_samples_leaf=min_samples_leaf, n_bins=n_bins, leaf=leaf, selection=selection,
            budget_weights=budget_weights, n_target_bins=n_target_bins, bounds=bounds,
            y_bounds=y_bounds, accountant=accountant, random_state=random_state,
        )
        self.n_estimators = n_estimators
        self.n_jobs = n_jobs

    def fit(self, X, y):
        """Fit one DP tree per part, spending ``epsilon`` once (parallel composition).

        Returns
        -------
        self
        """
        epsilon, budget = self._check_params()
        n_parts = check_positive_int(self.n_estimators, "n_estimators")
        if self.n_jobs is not None:
            check_positive_int(abs(self.n_jobs), "n_jobs")
        accountant = check_accountant(self.accountant)
        data = _PreparedRegression(self, X, y)
        rng = check_random_state(self.random_state)
        parts = assign_partitions(data.codes.shape[0], n_parts, rng)
        streams = rng.spawn(n_parts)
        accountant.spend(epsilon, label=type(self).__name__)

        def grow(k):
            return self._grow(data.subset(np.flatnonzero(parts == k)), budget, streams[k])

        with ThreadPoolExecutor(max_workers=_n_threads(self.n_jobs, n_parts)) as pool:
            self.estimators_ = list(pool.map(grow, range(n_parts)))
        self._record_fit(data, epsilon, budget)
        return self

    def predict(self, X):
        """Average of the trees' predictions (post-processing: no privacy cost)."""
        check_is_fitted(self, "estimators_")
        codes = self._codes(X)
        return np.mean([tree.predict(codes) for tree in self.estimators_], axis=0)

    def apply(self, X):
        """Leaf index of each sample in each tree, shape (n_samples, n_estimators)."""
        check_is_fitted(self, "estimators_")
        codes = self._codes(X)
        return np.column_stack([tree.apply(codes) for tree in self.estimators_])

    def get_depth(self):
        check_is_fitted(self, "estimators_")
        return max(tree.max_depth for tree in self.estimators_)

    def get_n_leaves(self):
        check_is_fitted(self, "estimators_")
        return sum(tree.n_leaves for tree in self.estimators_)
