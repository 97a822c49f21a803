"""Individual privacy accounting: a per-record Renyi filter for Gaussian releases.

Feldman & Zrnic (2021, theorem 4.5): before each Gaussian release a record is charged its
individual zCDP cost ``||c_t(x)||**2 / (2 sigma_t**2)`` (its own change of the release, in
grid units) and sits out every later release once its total would pass ``rho``; the whole
sequence is then ``rho``-zCDP for add/remove-one neighbours. The proof: "Privacy proofs,
explainable boosting" in the documentation (``docs/proofs/explainable_boosting.rst``).
"""

import math

import numpy as np

from dptrees.mechanisms import _ROUND_UP, gaussian_grid

__all__ = ["IndividualFilter", "individual_cost"]


def individual_cost(contribution, sensitivity, noise_multiplier, n_values):
    """Upper bound on each record's zCDP cost in one Gaussian release.

    Parameters
    ----------
    contribution : ndarray of float
        The L2 norm by which each record moves the exact released sums (0 for a record
        that moves none of them); at most ``sensitivity``.
    sensitivity : float
        The release's L2 sensitivity ``S``, as passed to
        :func:`~dptrees.mechanisms.gaussian_mechanism`.
    noise_multiplier : float
        The release's noise multiplier (its worst-case cost is ``1 / (2 nm**2)``).
    n_values : int
        Number of released values (sets the rounding slack).

    Returns
    -------
    ndarray of float
        ``((c + r) / (S + r))**2 / (2 nm**2)`` where ``c > 0``, exactly 0 where ``c == 0``.
    """
    contribution = np.asarray(contribution, dtype=float)
    if not np.all((contribution >= 0) & (contribution <= sensitivity)):  # NaN fails too
        raise ValueError("contributions must lie in [0, sensitivity]")
    grid, _ = gaussian_grid(sensitivity, noise_multiplier, n_values)
    slack = math.sqrt(n_values) * _ROUND_UP * grid
    ratio = (contribution + slack) / (sensitivity + slack)
    # Rounded up by a relative 2**-40: the bound is a float computation.
    cost = ratio * ratio / (2.0 * noise_multiplier * noise_multiplier) * (1 + 2.0**-40)
    return np.where(contribution > 0, cost, 0.0)


class IndividualFilter:
    """Each record's running zCDP cost, and which records may still contribute.

    Parameters
    ----------
    n_records : int
    budget : float
        The zCDP ``rho`` every record may spend in the filtered releases.

    Notes
    -----
    A stopped record never contributes again (theorem 4.5 of Feldman & Zrnic needs the
    stopping to be final only in that its later costs count as 0; stopping for good is
    the simplest way to keep every later release's cost 0).
    """

    def __init__(self, n_records, budget):
        if not (isinstance(budget, float) and math.isfinite(budget) and budget > 0):
            raise ValueError(f"budget must be a positive finite float, got {budget!r}")
        self.budget = budget
        self.spent = np.zeros(int(n_records))
        self.active = np.ones(int(n_records), dtype=bool)

    def admit(self, costs):
        """Charge this release's ``costs``; return the mask of records that take part.

        A record takes part if it is still active and its total stays within the budget
        with this release's cost; otherwise it is stopped for good and charged nothing.
        Records with cost 0 are unaffected.
        """
        costs = np.asarray(costs, dtype=float)
        if costs.shape != self.spent.shape:
            raise ValueError(f"costs must have shape {self.spent.shape}, got {costs.shape}")
        if not np.all(costs >= 0):
            raise ValueError("costs must be >= 0")
        charged = self.active & (costs > 0)
        over = charged & (self.spent + costs > self.budget)
        self.active &= ~over
        charged &= ~over
        self.spent[charged] += costs[charged]
        return self.active.copy()
