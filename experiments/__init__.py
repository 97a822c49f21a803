"""Paper reproductions and comparisons of dptrees on real data (see ``README.md`` here).

Every experiment is a module run from the repository root, ``python -m
experiments.<name> [--quick] ...``; ``main(argv)`` returns its results as a dict. Shared
by them: :mod:`experiments.uci_datasets` (loaders with public schemas),
:mod:`experiments.splits` (the train / validation splits and quick subsets) and
:mod:`experiments.results_json` (results as JSON). Recorded full runs are in
``RESULTS.md``.
"""

from pathlib import Path

#: The shared datasets: ``../shared/data`` relative to the repository root (see the
#: README there). The experiments' ``--data`` / ``--data-dir`` options read them from
#: elsewhere.
DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data"
