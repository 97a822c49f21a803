"""Turning ``random_state`` into a numpy ``Generator`` the compiled core can draw from.

Privacy note: ``random_state=None`` draws fresh entropy from the operating system, which
is what a private release needs. A fixed seed makes every noise draw recomputable by anyone
who knows it, so seeds are for tests and research, never for a release.
"""

import numbers
from typing import TypeAlias

import numpy as np

__all__ = ["check_random_state", "spawn_generators"]

#: What a ``random_state`` parameter accepts (see :func:`check_random_state`); unlike
#: scikit-learn's, ``numpy.random.RandomState`` is not among them.
RandomStateLike: TypeAlias = (
    int | np.random.SeedSequence | np.random.BitGenerator | np.random.Generator | None
)


def check_random_state(random_state: RandomStateLike) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` for ``random_state``.

    Parameters
    ----------
    random_state : None, int, numpy.random.SeedSequence, numpy.random.BitGenerator or numpy.random.Generator
        ``None`` seeds from OS entropy; an int or ``SeedSequence`` seeds a new PCG64
        generator; a ``BitGenerator`` is wrapped; a ``Generator`` is used as it is (and
        advanced by every draw).

    Returns
    -------
    numpy.random.Generator
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, (np.random.SeedSequence, np.random.BitGenerator)):
        return np.random.default_rng(random_state)
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer, got {random_state}")
        return np.random.default_rng(int(random_state))
    raise TypeError(
        "random_state must be None, a non-negative int, a numpy SeedSequence, BitGenerator "
        f"or Generator; got {type(random_state).__name__}. (numpy.random.RandomState is not "
        "accepted: its bit generator cannot be shared with the compiled core.)"
    )


def spawn_generators(random_state: RandomStateLike, n: int) -> list[np.random.Generator]:
    """``n`` independent generators derived from ``random_state``.

    Each unit of parallel work (a tree, a partition, a client) gets its own stream, so
    results do not depend on thread scheduling and threads never contend for one lock.
    The streams come from ``Generator.spawn``, i.e. ``SeedSequence`` spawning.
    """
    return check_random_state(random_state).spawn(int(n))
