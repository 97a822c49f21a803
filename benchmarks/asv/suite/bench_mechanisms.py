"""asv benchmarks for :mod:`dptrees.mechanisms`.

The exact samplers are compared with numpy's floating-point ``Generator.laplace`` /
``Generator.normal`` on the same array sizes. Those are the *unsafe* baselines (their
outputs leak the input through the set of reachable doubles, Mironov 2012); they show
what exactness costs per sample.

The ``track_*`` suites report the cost of our exact samplers per sample divided by the
cost of ``Generator.laplace`` per sample, measured in the same process; the project's
target is that exact discrete Laplace and grid Laplace each stay at or below 15 on large
arrays.
"""

import time

import numpy as np

from dptrees import mechanisms

SIZES = [10_000, 1_000_000]

# Discrete Laplace scale, in integer units. The exact sampler's cost depends on the exact
# ratio t / s of the scale (a 2**40 denominator costs ~2.5x more than an integer scale);
# 1000 is a plain integer scale, as for a count released at epsilon = 0.001.
LAPLACE_SCALE = 1000.0
# Variance parameter of the discrete Gaussian, in integer units (sigma = 1000).
GAUSSIAN_SIGMA2 = 1.0e6
SEED = 20240501

N_CANDIDATES = 1_000
N_SELECTIONS = 100


def _rng():
    return np.random.default_rng(SEED)


class NumpyFloatBaseline:
    """numpy's float samplers: the unsafe baselines."""

    params = [SIZES]
    param_names = ["n"]

    def setup(self, n):
        self.rng = _rng()

    def time_numpy_laplace(self, n):
        self.rng.laplace(0.0, LAPLACE_SCALE, n)

    def time_numpy_normal(self, n):
        self.rng.normal(0.0, 1000.0, n)


class DiscreteLaplace:
    """Exact discrete Laplace draws, and noisy counts (integers + discrete Laplace)."""

    params = [SIZES]
    param_names = ["n"]

    def setup(self, n):
        self.rng = _rng()
        self.counts = self.rng.integers(0, 1_000, n)

    def time_discrete_laplace(self, n):
        mechanisms.discrete_laplace(LAPLACE_SCALE, n, self.rng)

    def time_noisy_count(self, n):
        mechanisms.noisy_count(self.counts, epsilon=1.0, random_state=self.rng)


class GridLaplace:
    """Grid Laplace: round to a power-of-two grid, add exact discrete Laplace noise."""

    params = [SIZES]
    param_names = ["n"]

    def setup(self, n):
        self.rng = _rng()
        self.values = self.rng.normal(size=n)

    def time_laplace_mechanism(self, n):
        mechanisms.laplace_mechanism(
            self.values, sensitivity=1.0, epsilon=1.0, random_state=self.rng
        )


class DiscreteGaussian:
    params = [SIZES]
    param_names = ["n"]

    def setup(self, n):
        self.rng = _rng()
        self.values = self.rng.normal(size=n)

    def time_discrete_gaussian(self, n):
        mechanisms.discrete_gaussian(GAUSSIAN_SIGMA2, n, self.rng)

    def time_gaussian_mechanism(self, n):
        mechanisms.gaussian_mechanism(
            self.values, sensitivity=1.0, noise_multiplier=1.0, random_state=self.rng
        )


class BernoulliExp:
    """Exact Bernoulli(exp(-gamma)) coins, the building block of the samplers above."""

    params = [SIZES, [0.5, 4.0]]
    param_names = ["n", "gamma"]

    def setup(self, n, gamma):
        self.rng = _rng()

    def time_bernoulli_exp(self, n, gamma):
        mechanisms.bernoulli_exp(gamma, n, self.rng)


def _utilities(profile, rng):
    """Utilities of ``N_CANDIDATES`` candidates, in units of the sensitivity (1.0).

    ``spread``: uniform over 100 sensitivity units, a typical split-selection profile.
    ``peaked``: one candidate 1000 units above all others, the worst case for both exact
    samplers (nearly every coin of the other candidates fails).
    """
    if profile == "spread":
        return rng.uniform(0.0, 100.0, N_CANDIDATES)
    if profile == "peaked":
        u = np.zeros(N_CANDIDATES)
        u[rng.integers(N_CANDIDATES)] = 1000.0
        return u
    raise ValueError(profile)


class Selection:
    """Private selection over 1,000 candidates, ``N_SELECTIONS`` selections per call."""

    params = [["spread", "peaked"]]
    param_names = ["utilities"]

    def setup(self, profile):
        self.rng = _rng()
        self.utilities = _utilities(profile, self.rng)

    def time_permute_and_flip(self, profile):
        mechanisms.permute_and_flip(
            self.utilities, sensitivity=1.0, epsilon=1.0, size=N_SELECTIONS,
            random_state=self.rng,
        )

    def time_exponential_mechanism(self, profile):
        mechanisms.exponential_mechanism(
            self.utilities, sensitivity=1.0, epsilon=1.0, size=N_SELECTIONS,
            random_state=self.rng,
        )

    def time_numpy_float_gumbel_max(self, profile):
        # The unsafe floating-point exponential mechanism (Gumbel-max trick), same work.
        noise = self.rng.gumbel(size=(N_SELECTIONS, N_CANDIDATES))
        np.argmax(self.utilities * 0.5 + noise, axis=1)


def _best_ratio(ours, baseline, n):
    """Best-of time per call of ``ours`` divided by that of ``baseline``.

    The two are timed alternately in the same process so that frequency scaling and
    background load affect both alike.
    """
    repeat = max(5, min(50, 10_000_000 // n))
    ours()
    baseline()  # warm-up
    best_ours = best_base = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        baseline()
        t1 = time.perf_counter()
        ours()
        t2 = time.perf_counter()
        best_base = min(best_base, t1 - t0)
        best_ours = min(best_ours, t2 - t1)
    return best_ours / best_base


class CostRatioVsNumpyLaplace:
    """Per-sample cost of our exact Laplace samplers / numpy ``Generator.laplace``.

    Target: at most 15 on large arrays for both.
    """

    params = [SIZES]
    param_names = ["n"]
    unit = "ratio"
    timeout = 300

    def setup(self, n):
        self.rng = _rng()
        self.values = self.rng.normal(size=n)

    def track_discrete_laplace_ratio(self, n):
        return _best_ratio(
            lambda: mechanisms.discrete_laplace(LAPLACE_SCALE, n, self.rng),
            lambda: self.rng.laplace(0.0, LAPLACE_SCALE, n),
            n,
        )

    def track_laplace_mechanism_ratio(self, n):
        return _best_ratio(
            lambda: mechanisms.laplace_mechanism(
                self.values, sensitivity=1.0, epsilon=1.0, random_state=self.rng
            ),
            lambda: self.rng.laplace(0.0, LAPLACE_SCALE, n),
            n,
        )
