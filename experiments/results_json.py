"""Results of the benchmark scripts as JSON-ready values (shared by the scripts)."""

from dptrees._report import jsonable

__all__ = ["jsonable"]
