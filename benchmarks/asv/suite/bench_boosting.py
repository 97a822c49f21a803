"""asv benchmarks for DP gradient boosting (:mod:`dptrees.boosting`).

Data: 200,000 x 20 Friedman #1 (exact public bounds: features [0, 1], targets [-3, 33]),
the data of ``benchmarks/bench_boosting.py``, smaller so every benchmark stays under
~10 s. Depth 6, 32 bins for ours and for scikit-learn's ``HistGradientBoostingRegressor``.

* ``BoostingFit``: a 20-round fit of ``DPGradientBoostingRegressor`` per ``split`` mode
  (``"auto"``: the defaults, random trees whose roots are selected),
  and of scikit-learn's ``HistGradientBoostingRegressor`` (early stopping off);
* ``BoostingRatios``: ``track_round_cost_vs_sklearn``, our cost per round over
  scikit-learn's, timed in the same process as ``(t(101 rounds) - t(1 round)) / 100``
  after one untimed fit of each (project target on 1,000,000 x 20: at most 1.5); NaN
  ("n/a" in asv) where a round's cost is lost in the timing noise.

Every DP fit uses its own unlimited ``BudgetAccountant``.
"""

import math

from . import load_script

_script = load_script("bench_boosting")
make_data, ours, round_cost, sklearn_hgb = (
    _script.make_data, _script.ours, _script.round_cost, _script.sklearn_hgb)

N_SAMPLES = 200_000
N_FEATURES = 20
DEPTH = 6
N_BINS = 32
ROUNDS = 20
# Rounds of the ratio: their cost must stand well above the noise of one fit (see
# BoostingRatios). At 200,000 rows a round costs ~10 ms for scikit-learn and ~4 ms for
# split="random" on 2 cores, against a one-off cost (validation, binning) of ~0.05-0.2 s.
RATIO_ROUNDS = 100


class BoostingFit:
    """Fit time of 20 rounds."""

    params = [["auto", "random", "guided", "hybrid", "private"]]
    param_names = ["split"]
    timeout = 120

    def setup(self, split):
        self.X, self.y = make_data(N_SAMPLES, N_FEATURES)

    def time_fit_dp_boosting(self, split):
        ours(ROUNDS, split, DEPTH, N_BINS, 2).fit(self.X, self.y)

    def peakmem_fit_dp_boosting(self, split):
        ours(ROUNDS, split, DEPTH, N_BINS, 2).fit(self.X, self.y)


class SklearnBoostingFit:
    """scikit-learn's HistGradientBoostingRegressor, 20 rounds: the baseline."""

    timeout = 120

    def setup(self):
        self.X, self.y = make_data(N_SAMPLES, N_FEATURES)

    def time_fit_sklearn_hgb(self):
        sklearn_hgb(ROUNDS, DEPTH, N_BINS).fit(self.X, self.y)


class BoostingRatios:
    """Same-process ratio of the cost of one round: ours / scikit-learn's."""

    params = [["auto", "random", "guided", "hybrid", "private"]]
    param_names = ["split"]
    unit = "ratio"
    number = 1
    repeat = 1
    warmup_time = 0.0
    timeout = 300

    def setup(self, split):
        self.X, self.y = make_data(N_SAMPLES, N_FEATURES)
        # One untimed fit of each first: asv runs every parameter in a fresh process, whose
        # first scikit-learn fit also imports sklearn.ensemble and starts OpenMP's threads
        # (1-2 s against 0.2 s warm on 2 shared cores); timed, it would leave round_cost's
        # t(1 round), a best of 2, resting on a single warm fit.
        sklearn_hgb(1, DEPTH, N_BINS).fit(self.X, self.y)
        ours(1, split, DEPTH, N_BINS, 2).fit(self.X, self.y)

    def track_round_cost_vs_sklearn(self, split):
        theirs, _ = round_cost(lambda k: sklearn_hgb(k, DEPTH, N_BINS), self.X, self.y,
                               RATIO_ROUNDS, 2)
        mine, _ = round_cost(lambda k: ours(k, split, DEPTH, N_BINS, 2), self.X, self.y,
                             RATIO_ROUNDS, 2)
        # round_cost is (t(1 + k) - t(1)) / k, clipped at 0: a zero says that on this run
        # the k rounds did not show above the noise of the fits (a shared machine), not that
        # a round is free. A ratio with such a zero on either side would be a division by
        # zero (scikit-learn's) or a false 0x (ours; split="random" has the cheapest round):
        # NaN records "not measured", which asv shows as n/a.
        if theirs <= 0.0 or mine <= 0.0:
            return math.nan
        return mine / theirs
