"""DP gradient boosting: the regressor's ``noise_reg`` and the classifier's ``gradient_clip``.

The sweep behind two defaults, on validation rows only (the machinery of
``experiments/guided_splits_sweep.py``: every setting fitted with the same seeds per
cell, the paired difference of the two compared settings printed with twice its
standard error). Each setting is called as a user would: only ``epsilon``, the public
bounds and classes, ``random_state`` and the swept parameter are given.

``--param noise_reg`` (regression): ``DPGradientBoostingRegressor`` with ``noise_reg`` 3
(the classifier's value, the regressor's default until then) against 8 (its default
now), on California Housing (the training rows of the first 3 of the seed's folds, each
split 80/20) and on Adult-age (a person's age from the other Adult columns, validation
split of ``adult.data``). MAE in units of the target range. The regressor's Hessians
are 1 per record, against at most 1/4 for log-loss, so the same ``noise_reg`` shrinks
its noisy leaves several times less.

``--param gradient_clip`` (classification): ``DPGradientBoostingClassifier`` with
``gradient_clip`` 1 (no clipping of ``p - y``, the default until then) against 0.5, on
Adult (one-hot; ROC AUC), Mushroom and Nursery (accuracy). ``gradient_clip="auto"``, the
default now, is 0.5 up to epsilon 4 and rises to 1 at 8; run ``--eps ... 8`` to see why.

Usage::

    python -m experiments.boosting_defaults_sweep --param noise_reg
    python -m experiments.boosting_defaults_sweep --param gradient_clip --eps 0.05 0.1 1 4 8
    python -m experiments.boosting_defaults_sweep --param noise_reg --quick

``main(argv)`` returns the results as a dict. Fixed seeds make the noise recomputable:
they are for research, never for a release.
"""

import argparse

from experiments import guided_splits_sweep as sweep

#: For each swept parameter: (settings, compared (baseline, challenger), data sets, note).
SWEEPS = {
    "noise_reg": (
        {"noise_reg 3": {"noise_reg": 3.0}, "noise_reg 8": {"noise_reg": 8.0}},
        ("noise_reg 3", "noise_reg 8"),
        ("california_housing", sweep.ADULT_AGE),
        "The regressor's default noise_reg is 8 (the classifier keeps 3).",
    ),
    "gradient_clip": (
        {"clip 1": {"gradient_clip": 1.0}, "clip 0.5": {"gradient_clip": 0.5}},
        ("clip 1", "clip 0.5"),
        ("adult", "mushroom", "nursery"),
        "The classifier's gradient_clip='auto' is 0.5 up to eps 4, rising to 1 at eps 8.",
    ),
}


def main(argv=None):
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--param", choices=tuple(SWEEPS), default="noise_reg")
    args, rest = parser.parse_known_args(argv)
    settings, compared, datasets, note = SWEEPS[args.param]
    return sweep.cli(rest, __doc__, settings, compared, note, datasets=datasets)


if __name__ == "__main__":
    main()
