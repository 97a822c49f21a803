"""Results of the benchmark scripts as JSON-ready values (shared by the scripts)."""

from pathlib import Path

import numpy as np


def jsonable(obj):
    """``obj`` with dict keys as strings, tuples as lists, numpy scalars as Python
    numbers and paths as strings, recursively, so that ``json.dumps`` takes it."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, Path):
        return str(obj)
    return obj
