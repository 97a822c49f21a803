"""DP gradient boosting: the regressor's ``noise_reg``, ``gradient_clip`` and ``n_bins``, and
the classifier's ``gradient_clip``.

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

``--param regressor_clip`` and ``--param regressor_bins`` (regression, issue 36's
California target): the regressor's ``gradient_clip`` 0.1, 0.15 (its default now), 0.2,
0.3 (its default until then) and 0.5, and its ``n_bins`` 32 (the default) against 64, on
the same two regression tasks; RMSE is printed beside the MAE. ``--param
classifier_clip``: the classifier's ``gradient_clip`` 0.25 and 0.35 against 0.5 (its
``"auto"`` value up to epsilon 4). ``--param ebm_regressor_clip``: the explainable
boosting regressor's ``gradient_clip`` 0.15 against its 0.3, and ``--param
federated_regressor_clip`` the federated regressor's 0.15, 0.3 (its default until then),
0.5 (its default now) and 0.75 (fitted without ``clients``: every record a client of its
own, their number read from the rows, a leak alike for every setting); a setting's ``"estimator"`` key picks the estimator,
``experiments/guided_splits_sweep.py``.

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
    "classifier_clip": (
        {"clip 0.25": {"gradient_clip": 0.25}, "clip 0.35": {"gradient_clip": 0.35},
         "clip 0.5": {"gradient_clip": 0.5}},
        ("clip 0.5", "clip 0.35"),
        ("adult", "mushroom", "nursery"),
        "The classifier's gradient_clip='auto' (see experiments/RESULTS.md).",
    ),
    "regressor_clip": (
        {"clip 0.1": {"gradient_clip": 0.1}, "clip 0.15": {"gradient_clip": 0.15},
         "clip 0.2": {"gradient_clip": 0.2}, "clip 0.3": {"gradient_clip": 0.3},
         "clip 0.5": {"gradient_clip": 0.5}},
        ("clip 0.3", "clip 0.2"),
        ("california_housing", sweep.ADULT_AGE),
        "The regressor's gradient_clip is 0.15 (was 0.3; see experiments/RESULTS.md).",
    ),
    "ebm_regressor_clip": (
        {"EBM clip 0.15": {"estimator": "ebm", "gradient_clip": 0.15},
         "EBM clip 0.3": {"estimator": "ebm", "gradient_clip": 0.3}},
        ("EBM clip 0.3", "EBM clip 0.15"),
        ("california_housing", sweep.ADULT_AGE),
        "The explainable boosting regressor's gradient_clip (see experiments/RESULTS.md).",
    ),
    "federated_regressor_clip": (
        {"federated clip 0.15": {"estimator": "federated", "gradient_clip": 0.15},
         "federated clip 0.3": {"estimator": "federated", "gradient_clip": 0.3},
         "federated clip 0.5": {"estimator": "federated", "gradient_clip": 0.5},
         "federated clip 0.75": {"estimator": "federated", "gradient_clip": 0.75}},
        ("federated clip 0.3", "federated clip 0.5"),
        ("california_housing", sweep.ADULT_AGE),
        "The federated regressor's gradient_clip is 0.5 (was 0.3; see experiments/RESULTS.md).",
    ),
    "regressor_bins": (
        {"32 bins": {"n_bins": 32}, "64 bins": {"n_bins": 64}},
        ("32 bins", "64 bins"),
        ("california_housing", sweep.ADULT_AGE),
        "The regressor's n_bins stays 32 (see experiments/RESULTS.md).",
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
