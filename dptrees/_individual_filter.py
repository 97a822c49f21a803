"""Individual privacy accounting: a per-record Renyi filter for Gaussian releases.

Standard accounting charges every record, in every release, as if it moved the released
sums by the full sensitivity ``S``. A record whose clipped gradient is small, or that
falls in a cell that is not released at all, moves them by less. Feldman & Zrnic (2021,
"Individual privacy accounting via a Renyi filter", theorem 4.5) let each record pay for
what it actually contributes and stop it once its own budget is spent:

**Guarantee.** Releases ``t = 1, 2, ...`` are Gaussian (here: exact discrete Gaussian on a
grid, :func:`dptrees.mechanisms.gaussian_mechanism`) with public noise, chosen adaptively.
Before release ``t`` each record ``x`` is charged its *individual* zCDP cost
``rho_t(x) = ||c_t(x)||**2 / (2 sigma_t**2)``, where ``c_t(x)`` is the change of the
released vector (in grid units, rounding included) caused by adding or removing ``x``. The
cost is computed from ``x`` and the previous releases only. If ``x``'s running total would
pass the budget ``rho``, ``x`` contributes nothing to release ``t`` and to every later
release. Then the whole sequence of releases is ``(alpha, alpha rho)``-Renyi DP for every
``alpha > 1`` with respect to adding or removing any one record, that is ``rho``-zCDP: the
Gaussian's individual Renyi loss at order ``alpha`` is ``alpha rho_t(x)`` for every
``alpha`` at once, so the filter's condition ``sum_t rho_t(x) <= rho`` is theorem 4.5's
condition at every order. (For add/remove neighbours the divergence between the two
outputs of a Gaussian release depends only on the shift ``c_t(x)``, in either direction.)

**Cost of one record in one release** (:func:`individual_cost`). The released values are
exact fixed-point sums rounded to the noise grid. A record that moves the exact sums by
``c`` (L2) moves the rounded sums by at most ``c / grid + sqrt(n_values)`` grid units, and
:func:`~dptrees.mechanisms.gaussian_grid` sets the variance to at least
``(noise_multiplier (S / grid + sqrt(n_values)))**2``; hence

    rho_t(x) <= ((c + r) / (S + r))**2 / (2 noise_multiplier**2),   r = sqrt(n_values) grid.

A record that moves no released value (``c = 0`` exactly: it sits in a cell that is not
released) leaves both exact sums, hence both rounded sums, equal, and pays nothing.

The per-record totals are private: they are never released or stored on a fitted model.
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
