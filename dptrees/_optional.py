"""Importing an optional dependency, with the install command in the error."""

import importlib

__all__ = ["optional_import"]


def optional_import(module, extra, purpose):
    """``module`` imported, or an ``ImportError`` saying that ``purpose`` needs it and
    which extra of ``dptrees`` installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{purpose} needs {module.split('.')[0]}: "
                          f"pip install 'dptrees[{extra}]'") from exc
