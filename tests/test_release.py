"""The release's version: one number, written once (meson.build's ``project(version:)``).

``dptrees.__version__`` is the installed distribution's version, in every kind of
install (wheel, ``pip install .``, editable). In a source checkout the tests also hold
the installed version to meson.build's (a stale editable install fails here), check that
pyproject.toml takes it from there, and that CHANGELOG.md has its entry; run from a
wheel's test sources (``.ci/wheel``), where those files are absent, they skip.
"""

import importlib.metadata
import re
from pathlib import Path

import pytest
from packaging.version import Version

import dptrees

ROOT = Path(__file__).resolve().parents[1]

source_tree = pytest.mark.skipif(
    not (ROOT / "meson.build").is_file(),
    reason="the source tree is not here (tests run from an installed wheel)")


def test_version_is_the_installed_distributions():
    assert dptrees.__version__ == importlib.metadata.version("dptrees")


def test_version_is_a_normalised_pep440_version():
    assert str(Version(dptrees.__version__)) == dptrees.__version__


@source_tree
def test_meson_build_holds_the_installed_version():
    text = (ROOT / "meson.build").read_text()
    project = re.search(r"project\((.*?)\n\)", text, flags=re.S).group(1)
    (version,) = re.findall(r"\bversion\s*:\s*'([^']+)'", project)
    assert version == dptrees.__version__, (
        f"meson.build says {version}, the installed dptrees is {dptrees.__version__}: "
        "reinstall (pip install .) after changing the version")


@source_tree
def test_pyproject_takes_the_version_from_meson_build():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project
    assert "version" in project["dynamic"]


@source_tree
def test_changelog_has_an_entry_for_the_version():
    changelog = (ROOT / "CHANGELOG.md").read_text()
    version = Version(dptrees.__version__)
    if version.is_devrelease or version.is_prerelease:
        assert re.search(r"^## \[Unreleased\]", changelog, flags=re.M)
    else:
        assert re.search(rf"^## \[{re.escape(str(version))}\] - \d{{4}}-\d\d-\d\d$",
                         changelog, flags=re.M), f"CHANGELOG.md: no entry for {version}"
