"""``n_jobs``: one meaning (joblib's) for every estimator that runs on threads."""

import numbers
import os

__all__ = ["check_n_jobs", "n_threads"]


def check_n_jobs(n_jobs):
    """Raise unless ``n_jobs`` is None or a non-zero int (negative: counted from the
    number of cores, -1 is every core)."""
    if n_jobs is None:
        return
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral):
        raise TypeError(f"n_jobs must be None or a non-zero int, got {n_jobs!r}")
    if n_jobs == 0:
        raise ValueError("n_jobs must be None or a non-zero int, got 0")


def n_threads(n_jobs, n_tasks=None):
    """Threads for ``n_jobs`` (joblib's meaning: None is 1, -1 is every core), at most
    ``n_tasks``."""
    if n_jobs is None:
        return 1
    threads = (os.cpu_count() or 1) + 1 + n_jobs if n_jobs < 0 else n_jobs
    return max(1, threads if n_tasks is None else min(n_tasks, threads))
