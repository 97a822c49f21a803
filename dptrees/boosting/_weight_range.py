"""DP AdaBoost's noisy weight range (the paper's DPweight_dynamic): the largest and
smallest boosting weight, released with exact Laplace noise at sensitivity ``upper -
lower`` each, and guarded by public values (post-processing)."""

import math
from typing import NamedTuple

from dptrees._random import check_random_state
from dptrees.boosting._weak_learners import WEIGHT_GRID
from dptrees.mechanisms import laplace_mechanism

__all__ = ["WeightRange", "noisy_weight_range"]


def _floor_grid(x):
    return math.floor(x / WEIGHT_GRID) * WEIGHT_GRID


def _ceil_grid(x):
    return math.ceil(x / WEIGHT_GRID) * WEIGHT_GRID


# --------------------------------------------------------------------------------------
# DPweight_dynamic: the noisy max / min weight release


class WeightRange(NamedTuple):
    """Outcome of :func:`noisy_weight_range`.

    ``raw_max`` / ``raw_min`` are the Laplace releases; ``high`` / ``low`` the guarded,
    grid-rounded range (post-processing) that the weights are clipped into.
    """

    raw_max: float
    raw_min: float
    high: float
    low: float


def noisy_weight_range(extremes, *, lower, upper, epsilon_max, epsilon_min, mean_reference,
                       random_state=None):
    """Noisy largest and smallest weight (the paper's DPweight_dynamic), guarded.

    Privacy: ``epsilon_max + epsilon_min``-DP for add/remove-one neighbours, provided
    every weight lies in the public range ``[lower, upper]`` and one record's weight does
    not depend on the others (both hold in :class:`DPAdaBoostClassifier`).

    Sensitivity: with the conventions ``max(empty) = lower`` and ``min(empty) = upper``,
    adding a record of weight ``w`` in ``[lower, upper]`` changes the max from ``M`` to
    ``max(M, w)`` and the min from ``m`` to ``min(m, w)``, both in ``[lower, upper]``:
    each moves by at most ``upper - lower``. Each is released with the exact Laplace
    mechanism at sensitivity ``upper - lower`` (for DP AdaBoost ``upper - lower < 1``).
    If ``upper == lower`` every weight is known to equal it and nothing is released.

    Guard (post-processing, public inputs only): ``mean_reference`` is clipped into
    ``[lower, upper]``; the noisy max is raised to at least it and the noisy min lowered
    to at most it, both kept in ``[lower, upper]`` (the paper: the max stays above the
    mean and the min below it), then rounded inwards to the weight grid.

    ``extremes``: the exact ``(largest, smallest)`` weight, None if there are no records.
    """
    lower, upper = float(lower), float(upper)
    sensitivity = upper - lower
    if sensitivity <= 0:
        return WeightRange(upper, lower, upper, lower)
    true_max, true_min = (lower, upper) if extremes is None else map(float, extremes)
    rng = check_random_state(random_state)
    raw_max = laplace_mechanism(true_max, sensitivity=sensitivity, epsilon=epsilon_max,
                                random_state=rng)
    raw_min = laplace_mechanism(true_min, sensitivity=sensitivity, epsilon=epsilon_min,
                                random_state=rng)
    ref = min(max(float(mean_reference), lower), upper)
    high = _floor_grid(min(max(raw_max, ref), upper))
    low = _ceil_grid(max(min(raw_min, ref), lower))
    high = max(high, lower)  # lower is on the grid
    low = min(low, high)
    return WeightRange(float(raw_max), float(raw_min), float(high), float(low))
