"""asv benchmarks for training on rows outside memory (:mod:`dptrees._sources`).

Data: 1,000,000 x 20 float32 features and labels in ``.npy`` files (written once per
process by ``benchmarks/bench_scale.py``'s ``write_data``), read through memmaps. A
10-round ``DPGradientBoostingClassifier`` (depth 4, per ``split``) is fitted:

* ``BlocksFit``: on ``dptrees.Blocks`` of the memmap (read and binned block by block);
  ``peakmem_`` shows that the float64 features are never held as a whole;
* ``InMemoryFit``: on the same rows loaded as a float64 array, for comparison;
* ``BlocksRatios.track_blocks_over_memory``: the two fit times' ratio, in the same process.

Every DP fit uses its own unlimited ``BudgetAccountant``.
"""

import tempfile
import time

import numpy as np

from . import load_script

_script = load_script("bench_scale")
N_SAMPLES = 1_000_000
N_FEATURES = 20
ROUNDS = 10
_DATA = {}


def _data():
    if not _DATA:
        directory = tempfile.mkdtemp(prefix="dptrees-asv-scale-")
        _DATA["X"], _DATA["y"] = _script.write_data(directory, N_SAMPLES, N_FEATURES)
    return _DATA["X"], _DATA["y"]


def _fit(split, X, y):
    from dptrees import BudgetAccountant

    est = _script.boosting(split, ROUNDS, 2, N_SAMPLES)
    return est.set_params(accountant=BudgetAccountant()).fit(X, y)


class BlocksFit:
    params = [["random", "private"]]
    param_names = ["split"]
    timeout = 120

    def setup(self, split):
        from dptrees import Blocks

        X, self.y = _data()
        self.blocks = Blocks(X, block_rows=2**17)

    def time_fit_blocks(self, split):
        _fit(split, self.blocks, self.y)

    def peakmem_fit_blocks(self, split):
        _fit(split, self.blocks, self.y)


class InMemoryFit:
    params = [["random", "private"]]
    param_names = ["split"]
    timeout = 120

    def setup(self, split):
        X, y = _data()
        self.X, self.y = np.asarray(X, dtype=np.float64), np.asarray(y)

    def time_fit_in_memory(self, split):
        _fit(split, self.X, self.y)


class BlocksRatios:
    params = [["random", "private"]]
    param_names = ["split"]
    timeout = 240
    unit = "ratio"

    def setup(self, split):
        from dptrees import Blocks

        X, self.y = _data()
        self.blocks = Blocks(X, block_rows=2**17)
        self.X = np.asarray(X, dtype=np.float64)

    def track_blocks_over_memory(self, split):
        times = []
        for data in (self.blocks, self.X):
            start = time.perf_counter()
            _fit(split, data, self.y)
            times.append(time.perf_counter() - start)
        return times[0] / times[1]
