"""Results of the experiments as JSON (``--json``), shared by every experiment."""

import json
from pathlib import Path

from dptrees.privacy.report import jsonable

__all__ = ["jsonable", "write_json"]


def write_json(path, results):
    """Write ``results`` (made JSON-ready by :func:`jsonable`) to ``path``, creating its
    folder."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(jsonable(results), indent=1))
