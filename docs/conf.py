"""Sphinx configuration of the dptrees documentation.

Build (from the repository root, with the ``docs`` extra installed)::

    sphinx-build -W --keep-going -b html docs docs/_build/html

The API pages are generated from the docstrings (autosummary + numpydoc) and the gallery
from ``docs/examples`` (sphinx-gallery runs every example); the user guide's code blocks
run too (``docs/_ext/dptrees_run.py``). Nothing needs the network.
"""

import sys
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import dptrees  # noqa: E402

project = "dptrees"
author = "The dptrees developers"
copyright = "The dptrees developers"  # noqa: A001 - Sphinx's name
release = dptrees.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "dptrees_run",
]

templates_path = ["_templates"]
# examples/ is the gallery's source, read by sphinx-gallery (which writes auto_examples/)
exclude_patterns = ["_build", "examples", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.json"]
default_role = "literal"  # `x` is code, as in the docstrings' single backticks

# -- API reference --------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"member-order": "groupwise"}
autodoc_typehints = "none"  # the numpydoc sections already give the types
# numpydoc: members are listed by the autosummary class template instead.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
# Types in "Parameters" are prose ("array-like of shape (n, p)", "BudgetAccountant,
# optional"), not always importable names: do not turn them into cross-references.
numpydoc_xref_param_type = False
# Docstring style is checked by numpydoc's validation only where the docs need it:
# the build itself fails on any docutils or Sphinx warning (-W).
numpydoc_validation_checks = set()



def skip_scikit_learn_members(app, what, name, obj, skip, options):
    """Members the estimators inherit from scikit-learn (``get_params``,
    ``set_output``, the ``set_*_request`` metadata-routing methods ...) are documented
    by scikit-learn; their docstrings refer to its own pages."""
    module = getattr(obj, "__module__", None) or ""
    if what == "class" and module.split(".")[0] == "sklearn":
        return True
    return None


# numpydoc's own section names; it drops any other section of a docstring, with a
# UserWarning only. keep_custom_sections turns such headings into rubrics before numpydoc
# renders the docstring; numpydoc still parses the raw docstring to look for a signature
# (mangle_signature), and the warnings of that parse, which renders nothing, are muted.
NUMPYDOC_SECTIONS = {"Parameters", "Returns", "Yields", "Receives", "Raises", "Warns",
                     "Other Parameters", "Attributes", "Methods", "See Also", "Notes",
                     "Warnings", "References", "Examples"}
for _message in ("Unknown section", "potentially wrong underline length"):
    warnings.filterwarnings("ignore", message=_message, category=UserWarning,
                            module="numpydoc")


def keep_custom_sections(app, what, name, obj, options, lines):
    """Turn a docstring heading numpydoc does not know into a rubric, so that its text
    stays in the page (in the section before it). DPAdaBoostClassifier's docstring has
    two: "Privacy guarantee" and "The algorithm, and what was changed to make the
    guarantee true"."""
    for i in range(len(lines) - 1):
        title, underline = lines[i].strip(), lines[i + 1].strip()
        if not title or not underline or set(underline) != {"-"}:
            continue
        if " ".join(w.capitalize() for w in title.split(" ")) not in NUMPYDOC_SECTIONS:
            lines[i], lines[i + 1] = f".. rubric:: {title}", ""


def setup(app):
    app.connect("autodoc-skip-member", skip_scikit_learn_members)
    app.connect("autodoc-process-docstring", keep_custom_sections, priority=100)


# -- Gallery --------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "backreferences_dir": "gen_modules/backreferences",  # for the API pages' minigallery
    "doc_module": ("dptrees",),
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "reset_modules": ("matplotlib",),
    "image_scrapers": ("matplotlib",),
    "show_memory": False,
    "min_reported_time": 1,
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
}

# -- HTML -----------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"dptrees {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"index": [], "install": []}
html_show_sourcelink = False
