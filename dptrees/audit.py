"""Black-box privacy auditing: empirical lower bounds on epsilon.

A mechanism ``M`` is (epsilon, delta)-differentially private if for every pair of
neighbouring inputs ``D0, D1`` and every event ``E`` (set of outputs)

    P[M(D0) in E] <= exp(epsilon) * P[M(D1) in E] + delta,

and the same with ``D0`` and ``D1`` swapped. Rearranged, any single event gives

    epsilon >= ln((P[M(D0) in E] - delta) / P[M(D1) in E]).

This module estimates the two probabilities by running the mechanism many times and turns
them into a *statistically valid lower bound* on the epsilon that the mechanism can
possibly satisfy (the method of Jagielski et al., 2020, "Auditing differentially private
machine learning: how private is private SGD?", and Nasr et al., 2021, "Adversary
instantiation: lower bounds for differentially private machine learning"):

1. **Calibration.** Run the mechanism ``n_calibration`` times on ``D0`` and on ``D1``.
   Map each output to a real *statistic* and consider candidate events: threshold events
   ``{stat > t}``, ``{stat < t}`` (and their complements) for thresholds ``t`` over the
   pooled calibration statistics, equality events ``{stat == v}`` when the statistic takes
   few distinct values, and any user-supplied predicates (and their complements). Pick the
   event whose calibration data give the largest epsilon bound; events seen fewer than
   ``min_count`` times are not eligible.
2. **Test.** Run the mechanism ``n_test`` further times on each input, with randomness
   independent of the calibration phase, and count how often the chosen event occurs.
   Clopper-Pearson intervals for the two probabilities give

       eps_lb = max(ln((p0_lower - delta) / p1_upper), ln((p1_lower - delta) / p0_upper)),

   floored at 0. The four one-sided confidence bounds involved each hold with
   probability at least ``1 - alpha/4`` (Bonferroni), so, whatever event calibration
   picked, the mechanism's true epsilon (at this ``delta``) is at least ``eps_lb`` with
   probability at least ``1 - alpha``.

What the bound means
--------------------
*An empirical lower bound can prove that a mechanism is NOT epsilon-DP; it can never prove
that it is.* If ``eps_lb > claimed_epsilon``, the claim is false with confidence
``1 - alpha`` (a bug, an under-stated sensitivity, a floating-point leak ...). If
``eps_lb <= claimed_epsilon``, all we know is that *this* pair of inputs and *these* events
did not expose a violation with *this* many samples; the worst-case pair, or an event the
search did not consider, might. Auditing is a test that catches mistakes, not a proof.
Two practical consequences:

* choose ``D0, D1`` to be the worst case you can think of (a record that moves the output
  as much as the sensitivity allows, the smallest counts, the boundary of a clipping
  range), and supply a ``statistic`` or ``events`` that capture how the record shows
  in the output;
* a bound of ``epsilon`` needs event probabilities of order ``exp(-epsilon)`` measured to a
  few per cent, so detecting violations of large epsilons needs many runs.

Usage
-----
>>> import numpy as np
>>> from dptrees.audit import audit_epsilon
>>> def laplace_count(data, n, rng):         # counting query, sensitivity 1, epsilon = 1
...     return len(data) + rng.laplace(0.0, 1.0, size=n)
>>> result = audit_epsilon(laplace_count, [1, 2, 3], [1, 2, 3, 4], random_state=0)
>>> result.check(1.0)                       # False would refute epsilon = 1
True
>>> _ = result.assert_within(1.0)            # raises AssertionError if eps_lb > 1

The mechanism is called as ``mechanism(data, n, rng)`` and returns ``n`` outputs (fast,
vectorised); with ``batch=False`` it is called as ``mechanism(data, rng)`` once per output.
:func:`audit_pair` takes two samplers directly, for when the neighbouring inputs are baked
into the callables. :func:`clopper_pearson` and :func:`epsilon_bound_from_counts` are the
statistics underneath, for counts obtained in some other way.

Seeds make audits reproducible; they have no place in a private release (see
``dptrees._random``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Self, TypeAlias

import numpy as np
from numpy.typing import ArrayLike

from dptrees._audit_events import (
    _Event,
    _apply_predicate,
    _compute_stat,
    _draw,
    _normalise_events,
    _threshold_candidates,
)
from dptrees._checks import check_delta, check_epsilon, check_positive_int, check_probability
from dptrees._random import RandomStateLike, spawn_generators

__all__ = [
    "AuditResult",
    "audit_epsilon",
    "audit_pair",
    "clopper_pearson",
    "epsilon_bound_from_counts",
]

#: A user-supplied event: a batch of raw outputs -> a boolean array, one entry per output.
EventPredicate: TypeAlias = Callable[[np.ndarray], ArrayLike]


# --------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------


def clopper_pearson(
    k: ArrayLike, n: ArrayLike, alpha: float = 0.05,
) -> tuple[float, float] | tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson ("exact") two-sided confidence interval for a binomial proportion.

    Parameters
    ----------
    k : int or array_like of int
        Number of successes, ``0 <= k <= n``.
    n : int or array_like of int
        Number of trials, ``n >= 1``.
    alpha : float, default=0.05
        The interval has confidence ``1 - alpha``; each one-sided end fails with
        probability at most ``alpha / 2``. So ``clopper_pearson(k, n, 2 * a)[0]`` is a
        one-sided lower bound at confidence ``1 - a``.

    Returns
    -------
    lower, upper : float or ndarray
        ``lower`` is 0 when ``k == 0`` and ``upper`` is 1 when ``k == n``. Scalars in,
        floats out.

    Notes
    -----
    ``lower = Beta(alpha/2; k, n - k + 1)`` and ``upper = Beta(1 - alpha/2; k + 1, n - k)``
    quantiles; the interval is conservative (coverage is at least ``1 - alpha`` for every
    true proportion).
    """
    from scipy.special import betaincinv

    alpha = check_probability(alpha, "alpha", open_interval=True)
    k_arr = np.asarray(k)
    n_arr = np.asarray(n)
    if not (_is_integral_array(k_arr) and _is_integral_array(n_arr)):
        raise TypeError("k and n must be integers")
    k_arr, n_arr = np.broadcast_arrays(k_arr.astype(np.float64), n_arr.astype(np.float64))
    if np.any(n_arr < 1) or np.any(k_arr < 0) or np.any(k_arr > n_arr):
        raise ValueError("clopper_pearson needs n >= 1 and 0 <= k <= n")
    # Keep the Beta parameters valid where the closed-form end applies (k == 0 or k == n).
    lower = betaincinv(np.maximum(k_arr, 1.0), n_arr - k_arr + 1.0, alpha / 2.0)
    upper = betaincinv(k_arr + 1.0, np.maximum(n_arr - k_arr, 1.0), 1.0 - alpha / 2.0)
    lower = np.where(k_arr == 0, 0.0, lower)
    upper = np.where(k_arr == n_arr, 1.0, upper)
    if lower.ndim == 0:
        return float(lower), float(upper)
    return lower, upper


def _directional_bounds(k0, n0, k1, n1, alpha, delta):
    """Epsilon bounds ``ln((p0_lo - delta)/p1_hi)`` and ``ln((p1_lo - delta)/p0_hi)``.

    Every one of the four one-sided bounds is at level ``alpha / 4``, so both directions
    hold simultaneously with probability ``1 - alpha``. Returns ``-inf`` where the
    numerator is not positive. Vectorised over event counts.
    """
    lo0, hi0 = clopper_pearson(k0, n0, alpha / 2.0)
    lo1, hi1 = clopper_pearson(k1, n1, alpha / 2.0)
    lo0, hi0, lo1, hi1 = (np.asarray(a, dtype=np.float64) for a in (lo0, hi0, lo1, hi1))
    num01 = lo0 - delta
    num10 = lo1 - delta
    # upper bounds are > 0 for any finite n, so only the numerators need guarding.
    eps01 = np.full(num01.shape, -np.inf)
    eps10 = np.full(num10.shape, -np.inf)
    pos = num01 > 0
    eps01[pos] = np.log(num01[pos]) - np.log(hi1[pos])
    pos = num10 > 0
    eps10[pos] = np.log(num10[pos]) - np.log(hi0[pos])
    return eps01, eps10, (lo0, hi0), (lo1, hi1)


def epsilon_bound_from_counts(k0: int, n0: int, k1: int, n1: int, *, alpha: float = 0.05,
                              delta: float = 0.0) -> float:
    """Empirical lower bound on epsilon from counts of one event under ``D0`` and ``D1``.

    The event must have been chosen without looking at these counts (for example on a
    separate calibration run); otherwise the bound is not valid.

    Parameters
    ----------
    k0, n0 : int
        The event occurred ``k0`` times in ``n0`` independent runs on ``D0``.
    k1, n1 : int
        The event occurred ``k1`` times in ``n1`` independent runs on ``D1``.
    alpha : float, default=0.05
        The bound holds with probability at least ``1 - alpha``.
    delta : float, default=0.0
        Bound the epsilon of an (epsilon, delta)-DP guarantee with this ``delta``.

    Returns
    -------
    float
        ``max(ln((p0_lower - delta) / p1_upper), ln((p1_lower - delta) / p0_upper), 0)``
        with Clopper-Pearson bounds, each one-sided at level ``alpha / 4``.
    """
    alpha = check_probability(alpha, "alpha", open_interval=True)
    delta = check_delta(delta)
    for name, value in (("k0", k0), ("n0", n0), ("k1", k1), ("n1", n1)):
        check_positive_int(value, name, minimum=0)
    eps01, eps10, _, _ = _directional_bounds(k0, n0, k1, n1, alpha, delta)
    return max(float(eps01), float(eps10), 0.0)


# --------------------------------------------------------------------------------------
# Result
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditResult:
    """Outcome of an audit.

    Parameters
    ----------
    epsilon_lower_bound : float
        With probability at least ``1 - alpha`` the mechanism is not (epsilon, delta)-DP
        for any epsilon below this value. Never negative.
    event : str
        Description of the distinguishing event chosen on the calibration runs, in terms of
        ``stat`` (the statistic) or the name of a user-supplied predicate; ``None`` if no
        candidate event reached ``min_count`` in calibration (the bound is then 0).
    direction : str
        ``"D0/D1"`` if the bound came from ``ln((p0_lower - delta) / p1_upper)``,
        ``"D1/D0"`` for the other direction, ``None`` if the bound is 0.
    counts : tuple of int
        ``(k0, k1)``: how often the event occurred in the test runs on ``D0`` and ``D1``.
    n_test : int
        Test runs per input.
    p_hat : tuple of float
        ``(k0 / n_test, k1 / n_test)``.
    intervals : tuple of tuple of float
        Clopper-Pearson intervals ``((p0_lower, p0_upper), (p1_lower, p1_upper))``, each at
        confidence ``1 - alpha/2`` (so each end is a one-sided ``1 - alpha/4`` bound).
    epsilon_bounds : tuple of float
        The two directional bounds ``(ln((p0_lower - delta)/p1_upper),
        ln((p1_lower - delta)/p0_upper))`` before flooring (``-inf`` when the numerator
        is not positive).
    delta : float
        The delta the bound refers to.
    alpha : float
        Significance level; the confidence is ``1 - alpha``.
    n_calibration : int
        Calibration runs per input.
    calibration_epsilon : float
        The same bound computed on the calibration runs for the chosen event (optimistic:
        the event was selected on those runs). Use it to judge how much the test phase
        lost, e.g. to decide whether ``n_test`` is large enough.
    n_events : int
        Number of candidate events compared during calibration.
    """

    epsilon_lower_bound: float
    event: str | None
    direction: str | None
    counts: tuple
    n_test: int
    p_hat: tuple
    intervals: tuple
    epsilon_bounds: tuple
    delta: float
    alpha: float
    n_calibration: int
    calibration_epsilon: float
    n_events: int = field(default=0)

    @property
    def confidence(self) -> float:
        """``1 - alpha``: the probability with which the lower bound holds."""
        return 1.0 - self.alpha

    def check(self, claimed_epsilon: float) -> bool:
        """Whether the audit is consistent with the claim.

        Parameters
        ----------
        claimed_epsilon : float
            The epsilon the mechanism claims to satisfy (at the audit's ``delta``).

        Returns
        -------
        bool
            ``False`` if ``epsilon_lower_bound > claimed_epsilon``, i.e. the claim is
            refuted with confidence ``1 - alpha``. ``True`` does not prove the claim.
        """
        claimed_epsilon = check_epsilon(claimed_epsilon, "claimed_epsilon", zero=True, infinite=True)
        return self.epsilon_lower_bound <= claimed_epsilon

    def assert_within(self, claimed_epsilon: float) -> Self:
        """Raise ``AssertionError`` if the audit refutes ``claimed_epsilon``.

        Parameters
        ----------
        claimed_epsilon : float
            As in :meth:`check`.

        Returns
        -------
        AuditResult
            ``self``, so calls can be chained.

        Raises
        ------
        AssertionError
            When ``epsilon_lower_bound > claimed_epsilon``; the message names the event
            and gives the counts and intervals behind the bound.
        """
        if not self.check(claimed_epsilon):
            raise AssertionError(
                f"privacy claim refuted: empirical epsilon lower bound "
                f"{self.epsilon_lower_bound:.4g} > claimed epsilon {claimed_epsilon:g} "
                f"(delta={self.delta:g}, confidence {self.confidence:.4g}).\n"
                + self.summary()
            )
        return self

    def summary(self) -> str:
        """Multi-line human-readable description of the audit."""
        (lo0, hi0), (lo1, hi1) = self.intervals
        k0, k1 = self.counts
        e01, e10 = self.epsilon_bounds
        return (
            f"  epsilon lower bound: {self.epsilon_lower_bound:.4g} "
            f"(direction {self.direction}; D0/D1 {e01:.4g}, D1/D0 {e10:.4g}; "
            f"calibration estimate {self.calibration_epsilon:.4g})\n"
            f"  event: {self.event}  (best of {self.n_events} candidates on "
            f"{self.n_calibration} calibration runs per input)\n"
            f"  D0: {k0}/{self.n_test} = {self.p_hat[0]:.4g}  CI [{lo0:.4g}, {hi0:.4g}]\n"
            f"  D1: {k1}/{self.n_test} = {self.p_hat[1]:.4g}  CI [{lo1:.4g}, {hi1:.4g}]\n"
            f"  (intervals at confidence {1 - self.alpha / 2:.4g} each, delta={self.delta:g})"
        )

    def __str__(self):
        return "AuditResult\n" + self.summary()


# --------------------------------------------------------------------------------------
# The audit
# --------------------------------------------------------------------------------------


def audit_pair(
    sampler0: Callable[..., Any],
    sampler1: Callable[..., Any],
    *,
    n_calibration: int = 20_000,
    n_test: int = 100_000,
    statistic: Callable[[np.ndarray], ArrayLike] | None = None,
    events: EventPredicate | dict[str, EventPredicate] | Iterable[EventPredicate] | None = None,
    auto_events: bool = True,
    delta: float = 0.0,
    alpha: float = 0.05,
    min_count: int = 20,
    n_thresholds: int = 256,
    max_categories: int = 32,
    random_state: RandomStateLike = None,
    batch: bool = True,
    chunk_size: int | None = None,
) -> AuditResult:
    """Empirical lower bound on epsilon from two output distributions.

    Like :func:`audit_epsilon`, but the neighbouring inputs are built into the samplers:
    ``sampler0`` draws outputs of the mechanism on ``D0`` and ``sampler1`` on ``D1``.

    Parameters
    ----------
    sampler0, sampler1 : callable
        With ``batch=True``: ``sampler(n, rng) -> outputs`` with ``len(outputs) == n``.
        With ``batch=False``: ``sampler(rng) -> output``, called once per output.
    n_calibration, n_test, statistic, events, auto_events, delta, alpha, min_count
        As in :func:`audit_epsilon`.
    n_thresholds, max_categories, random_state, batch, chunk_size
        As in :func:`audit_epsilon`.

    Returns
    -------
    AuditResult
    """
    if not (callable(sampler0) and callable(sampler1)):
        raise TypeError("sampler0 and sampler1 must be callable")
    n_calibration = check_positive_int(n_calibration, "n_calibration")
    n_test = check_positive_int(n_test, "n_test")
    min_count = check_positive_int(min_count, "min_count")
    n_thresholds = check_positive_int(n_thresholds, "n_thresholds")
    max_categories = check_positive_int(max_categories, "max_categories", minimum=0)
    if chunk_size is not None:
        chunk_size = check_positive_int(chunk_size, "chunk_size")
    alpha = check_probability(alpha, "alpha", open_interval=True)
    delta = check_delta(delta)
    if statistic is not None and not callable(statistic):
        raise TypeError("statistic must be callable or None")
    predicates = _normalise_events(events)
    if not auto_events and not predicates:
        raise ValueError("auto_events=False needs user-supplied events")
    batch = bool(batch)

    cal_rng0, cal_rng1, test_rng0, test_rng1 = spawn_generators(random_state, 4)

    # ---- calibration -------------------------------------------------------------
    out0 = _draw(sampler0, n_calibration, cal_rng0, batch, chunk_size)
    out1 = _draw(sampler1, n_calibration, cal_rng1, batch, chunk_size)
    stat_required = auto_events and not predicates
    stat0 = _compute_stat(out0, statistic, stat_required) if auto_events else None
    stat1 = _compute_stat(out1, statistic, stat_required) if auto_events else None
    use_stat = stat0 is not None and stat1 is not None

    candidates = []  # _Event without negation; complements are added below
    count_rows = []  # (k0, k1) per candidate
    if use_stat:
        pooled = np.concatenate([stat0, stat1])
        s0 = np.sort(stat0)
        s1 = np.sort(stat1)
        # Equality events first: argmax keeps the first of tied events, and for discrete
        # outputs {stat == v} is the more readable of equivalent descriptions.
        levels = np.unique(pooled)
        if 0 < levels.size <= max_categories:
            eq = np.stack([_count_equal(s0, levels), _count_equal(s1, levels)], axis=1)
            candidates += [_Event("eq", _py(v), False) for v in levels]
            count_rows.append(eq)
        thresholds = _threshold_candidates(pooled, n_thresholds, min_count)
        gt = np.stack(
            [n_calibration - np.searchsorted(s0, thresholds, side="right"),
             n_calibration - np.searchsorted(s1, thresholds, side="right")], axis=1)
        lt = np.stack(
            [np.searchsorted(s0, thresholds, side="left"),
             np.searchsorted(s1, thresholds, side="left")], axis=1)
        candidates += [_Event("gt", _py(t), False) for t in thresholds]
        candidates += [_Event("lt", _py(t), False) for t in thresholds]
        count_rows += [gt, lt]
    for j, (name, pred) in enumerate(predicates):
        k0 = int(np.count_nonzero(_apply_predicate(pred, out0, n_calibration)))
        k1 = int(np.count_nonzero(_apply_predicate(pred, out1, n_calibration)))
        candidates.append(_Event("user", j, False, name))
        count_rows.append(np.array([[k0, k1]]))
    del out0, out1, stat0, stat1

    counts = np.concatenate(count_rows, axis=0).astype(np.int64)
    counts = np.concatenate([counts, n_calibration - counts], axis=0)
    candidates = candidates + [
        _Event(c.kind, c.value, True, c.name) for c in candidates
    ]
    eps01, eps10, _, _ = _directional_bounds(
        counts[:, 0], n_calibration, counts[:, 1], n_calibration, alpha, delta
    )
    eps01 = np.where(counts[:, 0] >= min_count, eps01, -np.inf)
    eps10 = np.where(counts[:, 1] >= min_count, eps10, -np.inf)
    score = np.maximum(eps01, eps10)
    best = int(np.argmax(score))
    n_events = len(candidates)

    if not np.isfinite(score[best]):
        # No event was seen often enough (or every event has p <= delta): nothing to test.
        return AuditResult(
            epsilon_lower_bound=0.0, event=None, direction=None, counts=(0, 0),
            n_test=n_test, p_hat=(0.0, 0.0), intervals=((0.0, 1.0), (0.0, 1.0)),
            epsilon_bounds=(-math.inf, -math.inf), delta=delta, alpha=alpha,
            n_calibration=n_calibration, calibration_epsilon=0.0, n_events=n_events,
        )
    event = candidates[best]
    calibration_epsilon = max(float(score[best]), 0.0)

    # ---- test: fresh runs, one event -------------------------------------------------
    hits = []
    for sampler, rng in ((sampler0, test_rng0), (sampler1, test_rng1)):
        out = _draw(sampler, n_test, rng, batch, chunk_size)
        stat = _compute_stat(out, statistic, True) if event.kind != "user" else None
        hits.append(int(np.count_nonzero(event.evaluate(out, stat, [p for _, p in predicates]))))
        del out, stat
    k0, k1 = hits
    e01, e10, (lo0, hi0), (lo1, hi1) = _directional_bounds(k0, n_test, k1, n_test, alpha, delta)
    e01, e10 = float(e01), float(e10)
    eps_lb = max(e01, e10, 0.0)
    direction = None if eps_lb == 0.0 else ("D0/D1" if e01 >= e10 else "D1/D0")
    return AuditResult(
        epsilon_lower_bound=eps_lb,
        event=event.describe(),
        direction=direction,
        counts=(k0, k1),
        n_test=n_test,
        p_hat=(k0 / n_test, k1 / n_test),
        intervals=((float(lo0), float(hi0)), (float(lo1), float(hi1))),
        epsilon_bounds=(e01, e10),
        delta=delta,
        alpha=alpha,
        n_calibration=n_calibration,
        calibration_epsilon=calibration_epsilon,
        n_events=n_events,
    )


def audit_epsilon(
    mechanism: Callable[..., Any],
    d0: object,
    d1: object,
    *,
    batch: bool = True,
    **options: Any,
) -> AuditResult:
    """Empirical lower bound on the epsilon of ``mechanism`` from neighbouring inputs.

    Runs the mechanism ``n_calibration`` times on each of ``d0`` and ``d1`` to choose a
    distinguishing event, then ``n_test`` fresh times on each to bound the event's
    probabilities with Clopper-Pearson intervals; see the module docstring for the method
    and for what the bound does and does not show.

    Parameters
    ----------
    mechanism : callable
        With ``batch=True`` (default): ``mechanism(data, n, rng)`` returns ``n`` outputs
        (an array whose first axis has length ``n``, or any sized sequence). With
        ``batch=False``: ``mechanism(data, rng)`` returns one output and is called once
        per run; the outputs are gathered with ``numpy.asarray`` (an object array if
        they do not stack). ``rng`` is a ``numpy.random.Generator``; the mechanism must
        draw all its randomness from it for the audit to be reproducible.
    d0, d1 : object
        Neighbouring inputs (differing in one record, in whatever sense the claim is
        made). Passed to ``mechanism`` unchanged.
    n_calibration : int, default=20_000
        Runs per input used to choose the event.
    n_test : int, default=100_000
        Fresh runs per input used for the bound. The bound cannot exceed
        ``ln(n_test / ln(4 / alpha))`` (about ``ln(n_test / 4.4)`` at ``alpha=0.05``),
        reached by an event that never occurs on one input and always on the other.
    statistic : callable, optional
        ``statistic(outputs) -> ndarray of shape (n,)``: maps a batch of outputs to one
        real number each, vectorised. Default: the outputs themselves, which must then be
        real scalars (bools and integers are converted to float).
    events : callable, sequence of callables or dict of str to callable, optional
        User-supplied events: ``predicate(outputs) -> bool ndarray of shape (n,)`` on a
        batch of *raw* outputs (not the statistic). Their complements are considered
        too. Names come from the dict keys or the functions' ``__name__``. When given
        and the outputs are not real scalars (and no ``statistic``), only these events
        are used.
    auto_events : bool, default=True
        Also consider threshold events ``{stat > t}``, ``{stat < t}`` (and complements)
        and, when the statistic takes at most ``max_categories`` distinct values in
        calibration, equality events ``{stat == v}`` (and complements).
    delta : float, default=0.0
        Bound epsilon for (epsilon, delta)-DP: the bound uses
        ``ln((p0_lower - delta) / p1_upper)``. With ``delta > 0`` events with probability
        below ``delta`` cannot show anything.
    alpha : float, default=0.05
        The bound holds with probability at least ``1 - alpha`` (over the test runs,
        whatever event calibration chose).
    min_count : int, default=20
        An event (or its swap) is only eligible if its numerator side occurred at least
        this often in calibration, so that noise does not choose the event.
    n_thresholds : int, default=256
        Maximum number of thresholds ``t`` tried; with more distinct calibration values,
        sample quantiles are used (denser in the tails).
    max_categories : int, default=32
        Equality events are used when the calibration statistic has at most this many
        distinct values; 0 disables them.
    random_state : None, int, numpy.random.SeedSequence, numpy.random.BitGenerator or numpy.random.Generator
        Seeds the audit; four independent streams are spawned (calibration and test, for
        ``D0`` and ``D1``). See ``dptrees._random.check_random_state``.
    batch : bool, default=True
        Whether ``mechanism`` is batched (see above).
    chunk_size : int, optional
        With ``batch=True``, ask the mechanism for at most this many outputs per call
        (bounds memory for large ``n_test``). Results depend on it only if the mechanism's
        draws do (numpy's samplers do not, for a given stream, in most cases).

    Returns
    -------
    AuditResult
        ``epsilon_lower_bound`` and the evidence for it; ``result.assert_within(eps)``
        raises ``AssertionError`` if ``eps`` is refuted.

    See Also
    --------
    audit_pair : the same with two samplers instead of one mechanism and two inputs.
    epsilon_bound_from_counts : the bound from counts obtained elsewhere.

    Examples
    --------
    Randomized response with epsilon = ln 3 is correctly calibrated:

    >>> import numpy as np
    >>> def rr(bit, n, rng):
    ...     keep = rng.random(n) < 0.75
    ...     return np.where(keep, bit, 1 - bit)
    >>> res = audit_epsilon(rr, 0, 1, n_calibration=5_000, n_test=50_000, random_state=1)
    >>> res.check(np.log(3))
    True
    """
    if not callable(mechanism):
        raise TypeError("mechanism must be callable")
    if batch:
        def sampler0(n, rng):
            return mechanism(d0, n, rng)

        def sampler1(n, rng):
            return mechanism(d1, n, rng)
    else:
        def sampler0(rng):
            return mechanism(d0, rng)

        def sampler1(rng):
            return mechanism(d1, rng)

    return audit_pair(sampler0, sampler1, batch=batch, **options)


# --------------------------------------------------------------------------------------
# Validation helpers
# --------------------------------------------------------------------------------------


def _count_equal(sorted_values, levels):
    """How many of ``sorted_values`` equal each level (vectorised)."""
    return (np.searchsorted(sorted_values, levels, side="right")
            - np.searchsorted(sorted_values, levels, side="left"))


def _py(x):
    """numpy scalar -> Python scalar, for readable event descriptions."""
    return x.item() if hasattr(x, "item") else x


def _is_integral_array(a):
    if a.dtype == np.bool_:
        return False
    if np.issubdtype(a.dtype, np.integer):
        return True
    if np.issubdtype(a.dtype, np.floating):
        return bool(np.all(np.isfinite(a)) and np.all(a == np.round(a)))
    return False


