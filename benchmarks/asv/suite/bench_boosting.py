"""asv benchmarks for DP gradient boosting (:mod:`dptrees.boosting`).

Data: 200,000 x 20 Friedman #1 (exact public bounds: features [0, 1], targets [-3, 33]),
the data of ``benchmarks/bench_boosting.py``, smaller so every benchmark stays under
~10 s. Depth 6, 32 bins for ours and for scikit-learn's ``HistGradientBoostingRegressor``.

* ``BoostingFit``: a 20-round fit of ``DPGradientBoostingRegressor`` per ``split`` mode,
  and of scikit-learn's ``HistGradientBoostingRegressor`` (early stopping off);
* ``BoostingRatios``: ``track_round_cost_vs_sklearn``, our cost per round over
  scikit-learn's, timed in the same process as ``(t(21 rounds) - t(1 round)) / 20``
  (project target on 1,000,000 x 20: at most 1.5).

Every DP fit uses its own unlimited ``BudgetAccountant``.
"""

from . import load_script

_script = load_script("bench_boosting")
make_data, ours, round_cost, sklearn_hgb = (
    _script.make_data, _script.ours, _script.round_cost, _script.sklearn_hgb)

N_SAMPLES = 200_000
N_FEATURES = 20
DEPTH = 6
N_BINS = 32
ROUNDS = 20


class BoostingFit:
    """Fit time of 20 rounds."""

    params = [["random", "hybrid", "private"]]
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

    params = [["random", "hybrid", "private"]]
    param_names = ["split"]
    unit = "ratio"
    number = 1
    repeat = 1
    warmup_time = 0.0
    timeout = 300

    def setup(self, split):
        self.X, self.y = make_data(N_SAMPLES, N_FEATURES)

    def track_round_cost_vs_sklearn(self, split):
        theirs, _ = round_cost(lambda k: sklearn_hgb(k, DEPTH, N_BINS), self.X, self.y,
                               ROUNDS, 2)
        mine, _ = round_cost(lambda k: ours(k, split, DEPTH, N_BINS, 2), self.X, self.y,
                             ROUNDS, 2)
        return mine / theirs
