"""The documentation builds with Sphinx, warnings as errors, and runs its gallery and the
user guide's code; the API reference lists every public name."""

import importlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

pytestmark = [
    pytest.mark.docs,
    pytest.mark.skipif(not (DOCS / "conf.py").exists(),
                       reason="the documentation sources are not here (installed tests)"),
]

# Everything Sphinx or sphinx-gallery generates inside the source folder.
GENERATED = ("_build", "auto_examples", "generated", "gen_modules", "sg_execution_times.rst")


def test_api_reference_lists_every_public_name():
    api = (DOCS / "api.rst").read_text()
    for block in re.split(r"^\.\. automodule:: ", api, flags=re.M)[1:]:
        module = importlib.import_module(block.split()[0])
        listed = set(re.findall(r"^   (\w+)$", block, flags=re.M))
        listed |= set(re.findall(r":(?:class|func|data):`~?[\w.]*?(\w+)`", block))
        missing = [name for name in module.__all__ if name not in listed
                   and name != "__version__"]
        assert not missing, f"{module.__name__}: not in docs/api.rst: {missing}"


@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path):
    """``sphinx-build -W --keep-going -b html`` on a copy of ``docs/`` (generated files
    stay out of the source tree), with the gallery executed."""
    source = tmp_path / "docs"
    shutil.copytree(DOCS, source, ignore=shutil.ignore_patterns(*GENERATED))
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")  # the install page quotes it
    out = tmp_path / "html"
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-q",
         str(source), str(out)],
        cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-8000:]
    for page in ("index", "api", "install", "user_guide/privacy_model",
                 "auto_examples/index", "generated/dptrees.plot.plot_tree"):
        assert (out / f"{page}.html").exists(), page
    images = {p.name for p in (out / "_images").glob("sphx_glr_plot_*.png")}
    for example in ("plot_1_dp_tree_001", "plot_2_privacy_utility_001", "plot_3_budget_001"):
        assert f"sphx_glr_{example}.png" in images
