"""asv benchmarks of dptrees; see ``benchmarks/README.md``."""

import importlib.util
from pathlib import Path


def load_script(name):
    """The speed script ``benchmarks/<name>.py`` as a module, so that an asv suite reuses
    its data and model helpers (one definition of each)."""
    path = Path(__file__).resolve().parents[2] / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_dptrees_{name}_script", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
