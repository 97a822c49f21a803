"""Noise schedules of DP AdaBoost (Zhang, Dong, Xu & Wang; ``shared/seeds.md`` section 3).

A schedule says in which boosting rounds the largest and smallest sample weights are
released with Laplace noise (the paper's ``DPweight_dynamic``). Every function here is a
pure function of the number of rounds ``m`` and, for the randomised schedules, of a
random generator: **no data is read**. The estimator draws its schedule at the very start
of ``fit``, so the number of noisy rounds ``R`` is fixed before any release and the
privacy budget can be split up front; the schedule itself costs no privacy.

Schedules are boolean arrays of length ``m``; entry ``i`` is round ``i + 1``. Round 1 is
never noisy (all weights still equal 1, a public fact; the paper adds noise "from the
second round on").

* ``"every"`` (DPAda): rounds 2, 3, ..., m.
* ``"swing"`` (DPAda_Swing): the swing sequence 0, 1, 0, 1, ... with ``a = 0, b = 1``,
  i.e. rounds 2, 4, 6, ...
* ``"random"`` (DPAda_Random, random response): an independent fair coin for every round
  from round 2, so ``R ~ Binomial(m - 1, 1/2)``.
* ``"improved"`` (DPAda_Improved, the paper's definition 7): the same coins, then within
  every run of ``b`` (noisy) rounds that follows an ``a`` every round after the first
  ``b`` is reset to ``a``. Round 1 is ``a``, so every run is preceded by an ``a`` and only
  its first round stays noisy. Definition 7 closes a run with the next ``a``; we also
  close a run at the last round (otherwise a trailing run would keep consecutive noisy
  rounds, against the definition's stated purpose). Hence no two consecutive rounds are
  noisy, and ``R <= floor(m / 2)``, the count of ``"swing"``, which is ``<= m - 1``, the
  count of ``"every"`` (the paper's theorem 1).
"""

import numpy as np

from dptrees._random import check_random_state

__all__ = [
    "SCHEDULES",
    "draw_schedule",
    "every_schedule",
    "improve_schedule",
    "improved_schedule",
    "random_schedule",
    "swing_schedule",
]

SCHEDULES = ("every", "swing", "random", "improved")


def _check_rounds(n_rounds):
    n_rounds = int(n_rounds)
    if n_rounds < 0:
        raise ValueError(f"n_rounds must be >= 0, got {n_rounds}")
    return n_rounds


def every_schedule(n_rounds):
    """DPAda: noise in every round from the second. ``R = m - 1``."""
    n_rounds = _check_rounds(n_rounds)
    out = np.ones(n_rounds, dtype=bool)
    out[:1] = False
    return out


def swing_schedule(n_rounds):
    """DPAda_Swing: the swing sequence 0, 1, 0, 1, ...: rounds 2, 4, ... ``R = floor(m/2)``."""
    n_rounds = _check_rounds(n_rounds)
    return np.arange(n_rounds) % 2 == 1


def random_schedule(n_rounds, random_state=None):
    """DPAda_Random: a fair coin for each round from the second; ``R ~ Binomial(m-1, 1/2)``."""
    n_rounds = _check_rounds(n_rounds)
    rng = check_random_state(random_state)
    out = np.zeros(n_rounds, dtype=bool)
    if n_rounds > 1:
        out[1:] = rng.integers(0, 2, size=n_rounds - 1).astype(bool)
    return out


def improve_schedule(draws):
    """Definition 7 (improved random response) applied to a 0/1 sequence.

    Every run of 1s keeps its first element; the rest of the run is reset to 0. A run
    that starts at index 0 (no preceding ``a``) or reaches the end is treated the same
    way. The result never has two consecutive 1s and has exactly one 1 per run of the
    input.
    """
    draws = np.asarray(draws, dtype=bool)
    if draws.ndim != 1:
        raise ValueError("draws must be a 1-D sequence")
    previous = np.concatenate([[False], draws[:-1]])
    return draws & ~previous


def improved_schedule(n_rounds, random_state=None):
    """DPAda_Improved: :func:`random_schedule`'s coins, improved by :func:`improve_schedule`."""
    return improve_schedule(random_schedule(n_rounds, random_state))


def draw_schedule(name, n_rounds, random_state=None):
    """The schedule called ``name`` (one of :data:`SCHEDULES`) for ``n_rounds`` rounds."""
    if name == "every":
        return every_schedule(n_rounds)
    if name == "swing":
        return swing_schedule(n_rounds)
    if name == "random":
        return random_schedule(n_rounds, random_state)
    if name == "improved":
        return improved_schedule(n_rounds, random_state)
    raise ValueError(f"schedule must be one of {', '.join(map(repr, SCHEDULES))}; got {name!r}")
