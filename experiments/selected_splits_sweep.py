"""DP gradient boosting: the top levels of each tree selected by the exponential
mechanism, on validation rows.

The rule of ``select_depth="auto"`` (``dptrees.boosting._gradient.SELECT_LEVEL_EPS_ROWS``)
and the choice of random rather than guided trees for ``split="auto"`` are made here.
Every setting is called as a user would: only ``epsilon``, the public ``bounds`` and
``classes`` / ``y_bounds``, ``random_state`` and the parameters below are given;
everything else is the library default.

* ``none``: ``select_depth=0``, random trees (the default below the threshold);
* ``root``: ``select_depth=1``, random trees whose root splits are chosen by the
  exponential mechanism on the current gradients with ``split_fraction`` (0.3) of each
  tree's budget (``dptrees/boosting/_split_selection.py``);
* ``guided``: ``split="guided"``, the previous default from ``eps x n >= 10,000``;
* ``guided+root``: both.

With ``--deeper``, the levels below the root instead (the rule's second threshold, and
why "auto" stops at two levels): ``root`` (``select_depth=1``), ``two levels`` (2) and
``three levels`` (3), the paired difference ``two levels - root``. Each selected level
shares the same ``split_fraction`` of a tree's budget with the others and costs one more
pass over the rows per tree.

Data, seeds, the paired difference (here ``root - none``) and ``--test-folds``: as in
``experiments/guided_splits_sweep.py``, whose machinery this script reuses; and, as a
cross-check on data the rule was not chosen on, UCI Mushroom and Nursery (one-hot, a
fixed 80/20 split of their rows, validation accuracy, 6 seeds).

Usage::

    python -m experiments.selected_splits_sweep           # eps 0.05-4, Adult 5 seeds,
                                                          # California 3 folds x 3 seeds,
                                                          # Mushroom, Nursery 6 seeds
    python -m experiments.selected_splits_sweep --quick   # eps {0.1, 2}, 1 seed, 1 fold
    python -m experiments.selected_splits_sweep --test-folds --eps 0.25 0.5 1 2
    python -m experiments.selected_splits_sweep --deeper --models adult \
        california_housing mushroom nursery adult_age   # the second and third levels
    python -m experiments.selected_splits_sweep --noise laplace --eps 0.5 1 2 4 \
        --models adult california_housing   # why "auto" selects nothing with Laplace
                                            # noise (split="auto" is then guided from
                                            # 10,000: "none" and "root" are guided trees)

``main(argv)`` returns the results as a dict. Fixed seeds make the noise recomputable:
they are for research, never for a release.
"""

import argparse

from experiments import guided_splits_sweep as sweep

SETTINGS = {"none": {"select_depth": 0}, "root": {"select_depth": 1},
            "guided": {"split": "guided"}, "guided+root": {"split": "guided", "select_depth": 1}}
COMPARED = ("none", "root")
NOTE = ("select_depth='auto' selects each tree's root (split='auto': random trees) when "
        "eps x (noisy) n >= 1,000 (4,000 before the defaults noise_reg=8 for the regressor "
        "and gradient_clip='auto' for the classifier).")
DEEPER_SETTINGS = {"root": {"select_depth": 1}, "two levels": {"select_depth": 2},
                   "three levels": {"select_depth": 3}}
DEEPER_COMPARED = ("root", "two levels")
DEEPER_NOTE = ("select_depth='auto' selects the second level too from eps x (noisy) n >= "
               "10,000, and no third level (one more pass over the rows per tree).")


def main(argv=None):
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--deeper", action="store_true")
    args, rest = parser.parse_known_args(argv)
    if args.deeper:
        return sweep.cli(rest, __doc__, DEEPER_SETTINGS, DEEPER_COMPARED, DEEPER_NOTE,
                         datasets=sweep.ALL_DATASETS + (sweep.ADULT_AGE,))
    return sweep.cli(rest, __doc__, SETTINGS, COMPARED, NOTE, datasets=sweep.ALL_DATASETS)


if __name__ == "__main__":
    main()
