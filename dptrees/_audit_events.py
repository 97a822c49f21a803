"""The candidate events and the sampling of :mod:`dptrees.audit`: events over a
statistic of the outputs (thresholds, equalities, user predicates), drawing outputs in
batches, and turning them into the statistic."""

from dataclasses import dataclass

import numpy as np

__all__ = []


# --------------------------------------------------------------------------------------
# Candidate events
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Event:
    kind: str  # "gt", "lt", "eq" on the statistic, or "user"
    value: object  # threshold / level, or index of the user predicate
    negate: bool
    name: str = ""

    def describe(self):
        if self.kind == "user":
            base = self.name
            return f"not ({base})" if self.negate else base
        op = {("gt", False): ">", ("gt", True): "<=", ("lt", False): "<",
              ("lt", True): ">=", ("eq", False): "==", ("eq", True): "!="}[self.kind, self.negate]
        return f"stat {op} {self.value!r}"

    def evaluate(self, outputs, stat, predicates):
        if self.kind == "user":
            hit = _apply_predicate(predicates[self.value], outputs, len(outputs))
        elif self.kind == "gt":
            hit = stat > self.value
        elif self.kind == "lt":
            hit = stat < self.value
        else:
            hit = stat == self.value
        return ~hit if self.negate else hit


def _normalise_events(events):
    """``events`` -> list of (name, predicate)."""
    if events is None:
        return []
    if callable(events):
        events = [events]
    if isinstance(events, dict):
        items = list(events.items())
    else:
        items = []
        for i, pred in enumerate(events):
            name = getattr(pred, "__name__", None)
            if not name or name == "<lambda>":
                name = f"event[{i}]"
            items.append((name, pred))
    for name, pred in items:
        if not callable(pred):
            raise TypeError(f"event {name!r} is not callable")
    if not items:
        raise ValueError("events is empty")
    return [(str(name), pred) for name, pred in items]


def _apply_predicate(predicate, outputs, n):
    hit = np.asarray(predicate(outputs))
    if n is None:
        n = len(outputs)
    if hit.shape != (n,):
        raise ValueError(
            f"an event predicate must return a boolean array of shape ({n},) for a batch "
            f"of {n} outputs, got shape {hit.shape}"
        )
    if hit.dtype != np.bool_:
        if not np.all((hit == 0) | (hit == 1)):
            raise ValueError("an event predicate must return booleans")
        hit = hit.astype(bool)
    return hit


def _threshold_candidates(pooled, n_thresholds, min_count):
    """Thresholds over the pooled calibration statistics.

    All distinct values if there are at most ``n_thresholds`` of them; otherwise sample
    quantiles on a grid that is uniform in the bulk and geometric in both tails, where
    pure-DP violations tend to live (but not beyond ``min_count`` observations).
    """
    uniq = np.unique(pooled)
    if uniq.size <= n_thresholds:
        return uniq
    m = pooled.size
    tail = min(max(min_count / m, 1.0 / m), 0.25)
    n_bulk = n_thresholds // 2
    n_tail = (n_thresholds - n_bulk) // 2
    levels = np.concatenate(
        [
            np.linspace(0.0, 1.0, n_bulk),
            np.geomspace(tail, 0.5, n_tail),
            1.0 - np.geomspace(tail, 0.5, n_tail),
        ]
    )
    levels = np.unique(np.clip(levels, 0.0, 1.0))
    return np.unique(np.quantile(pooled, levels, method="inverted_cdf"))


# --------------------------------------------------------------------------------------
# Running the mechanism
# --------------------------------------------------------------------------------------


def _stack(outputs):
    """A list of per-call outputs as one batch (object array if they do not stack)."""
    try:
        arr = np.asarray(outputs)
    except (ValueError, TypeError):
        arr = None
    if arr is None or arr.ndim == 0 or arr.shape[0] != len(outputs):
        arr = np.empty(len(outputs), dtype=object)
        for i, out in enumerate(outputs):
            arr[i] = out
    return arr


def _draw(sampler, n, rng, batch, chunk_size):
    """``n`` outputs from ``sampler`` as one batch (a list of chunks when chunked)."""
    if not batch:
        return _stack([sampler(rng) for _ in range(n)])
    chunks = []
    remaining = n
    while remaining > 0:
        m = remaining if chunk_size is None else min(remaining, chunk_size)
        out = sampler(m, rng)
        if not hasattr(out, "__len__") or len(out) != m:
            got = type(out).__name__
            if hasattr(out, "__len__"):
                got += f" of length {len(out)}"
            raise ValueError(
                f"a batched mechanism must return {m} outputs when asked for n={m}, got {got}"
            )
        chunks.append(np.asarray(out) if not isinstance(out, np.ndarray) else out)
        remaining -= m
    if len(chunks) == 1:
        return chunks[0]
    try:
        return np.concatenate(chunks)
    except ValueError:
        return _stack([o for c in chunks for o in c])


def _compute_stat(outputs, statistic, required):
    """Statistic as a float array, or ``None`` when there is none and it is optional."""
    n = len(outputs)
    if statistic is not None:
        stat = np.asarray(statistic(outputs), dtype=np.float64)
        if stat.shape != (n,):
            raise ValueError(
                f"statistic must map a batch of {n} outputs to an array of shape ({n},), "
                f"got shape {stat.shape}"
            )
    else:
        arr = np.asarray(outputs) if not isinstance(outputs, np.ndarray) else outputs
        numeric = arr.dtype == np.bool_ or np.issubdtype(arr.dtype, np.number)
        if arr.ndim != 1 or not numeric or np.issubdtype(arr.dtype, np.complexfloating):
            if required:
                raise ValueError(
                    "the mechanism's outputs are not real scalars (got a batch of shape "
                    f"{arr.shape}, dtype {arr.dtype}); pass statistic= to map a batch of "
                    "outputs to one real number each, or events= with predicates"
                )
            return None
        stat = arr.astype(np.float64)
    if np.isnan(stat).any():
        raise ValueError("the statistic contains NaN")
    return stat
