"""Progress of a fit's rounds (``verbose``): rounds done, budget spent, time left.

With ``verbose >= 1`` the boosting, forest and federated estimators report each round
(tree, cycle) they finish on standard error: as a ``tqdm`` progress bar when tqdm is
installed, else as plain lines (about ten per fit with ``verbose=1``, one per round with
``verbose >= 2``). A report reads only public values (round counts, the budget the
accountant has charged, clock time), never the data.
"""

import sys
import threading
import time

__all__ = ["Progress"]


def _tqdm():
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm


class Progress:
    """Report ``total`` steps named ``unit`` of ``estimator``'s fit.

    Use as a context manager; call :meth:`step` after each step with the public status
    to show (e.g. ``epsilon="0.31 of 1"``). Does nothing when ``estimator.verbose`` is 0.
    Thread-safe (forests grow trees on threads).
    """

    def __init__(self, estimator, total, unit):
        self.level = int(getattr(estimator, "verbose", 0) or 0)
        self.name = type(estimator).__name__
        self.total = int(total)
        self.unit = unit
        self.done = 0
        self._lock = threading.Lock()
        self._start = time.perf_counter()
        self._bar = None
        tqdm = _tqdm() if self.level else None
        if tqdm is not None:
            self._bar = tqdm(total=self.total, desc=self.name, unit=unit, file=sys.stderr,
                             leave=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def step(self, **status):
        """One more step done; ``status`` is shown next to the count."""
        if not self.level:
            return
        with self._lock:
            self.done += 1
            if self._bar is not None:
                self._bar.set_postfix(status, refresh=False)
                self._bar.update(1)
            elif self._should_print():
                print(self._line(status), file=sys.stderr, flush=True)

    def _should_print(self):
        if self.level >= 2 or self.done == self.total:
            return True
        every = max(1, self.total // 10)
        return self.done % every == 0

    def _line(self, status):
        elapsed = time.perf_counter() - self._start
        left = elapsed / self.done * (self.total - self.done)
        shown = "".join(f", {key} {value}" for key, value in status.items())
        return (f"[{self.name}] {self.unit} {self.done}/{self.total}{shown}, "
                f"{elapsed:.1f} s elapsed, about {left:.1f} s left")

    def close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None
