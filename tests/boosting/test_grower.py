"""The one level-wise grower (``dptrees.boosting._grower``) and sibling subtraction
(``dptrees._sources._heap.SiblingHistograms``), on small exact data.

* ``SiblingHistograms``: whichever child is measured, a level's histograms are those of
  its nodes' rows (parent minus sibling, exactly), and only one child per pair is read;
* ``grow`` with ``RandomSplits`` is the structure drawn from the same generator;
* ``SelectedSplits`` asks for each level's nodes once, then splits the level;
* ``PrivateHistogramSplits`` with a release that adds no noise splits every node on its
  best Newton gain, and reads one child of each pair below the root: the one with the
  smaller Hessian mass of its parent's split.
"""

import numpy as np

from dptrees._sources._heap import SiblingHistograms, empty_tree, level_nodes
from dptrees.boosting._grower import (
    PrivateHistogramSplits,
    RandomSplits,
    SelectedSplits,
    grow,
)
from dptrees.boosting._trees import draw_random_structure

N, P, BINS, DEPTH = 400, 3, 6, 3


def node_of_rows(codes, feature, bin_threshold, level):
    """Each row's node at ``level`` of the heap tree (its levels above split)."""
    node = np.zeros(codes.shape[0], dtype=np.intp)
    for _ in range(level):
        right = codes[np.arange(codes.shape[0]), feature[node]] > bin_threshold[node]
        node = 2 * node + 1 + right
    return node


class ExactRows:
    """Rows whose histograms are computed by brute force; records every request."""

    def __init__(self, seed=0):
        rng = np.random.default_rng(seed)
        self.codes = rng.integers(0, BINS, size=(N, P))
        self.stats = np.stack([rng.integers(-50, 50, N), rng.integers(1, 9, N)], axis=1)
        self.requests, self.splits = [], []

    def start_tree(self, feature, bin_threshold):
        self.feature, self.bin_threshold = feature, bin_threshold

    def exact(self, level, nodes):
        at = node_of_rows(self.codes, self.feature, self.bin_threshold, level)
        out = np.zeros((len(nodes), P, BINS, 2), dtype=np.int64)
        for j, v in enumerate(nodes):
            for f in range(P):
                for k in range(2):
                    out[j, f, :, k] = np.bincount(self.codes[at == v, f],
                                                  self.stats[at == v, k], minlength=BINS)
        return out

    def histograms(self, level, nodes):
        self.requests.append((level, list(nodes)))
        return self.exact(level, nodes)

    def split(self, level):
        self.splits.append(level)


def test_sibling_histograms_equal_the_nodes_own():
    rows = ExactRows()
    feature, bin_threshold = draw_random_structure(np.random.default_rng(1), P, BINS, DEPTH)
    rows.start_tree(feature, bin_threshold)
    choice = np.random.default_rng(2)
    siblings = SiblingHistograms()
    for level in range(DEPTH + 1):
        nodes = level_nodes(level)
        measured = siblings.to_measure(nodes, lambda u: 2 * u + 1 + choice.integers(2))
        assert len(measured) == (1 if level == 0 else len(nodes) // 2)
        hist = siblings.complete(nodes, measured, rows.exact(level, measured))
        np.testing.assert_array_equal(hist, rows.exact(level, nodes))
    # asked again at the same level: nothing more to read
    assert siblings.to_measure(level_nodes(DEPTH), None) == []


def test_random_splits_are_the_drawn_structure():
    feature, bin_threshold = grow(*empty_tree(DEPTH), [RandomSplits(
        np.random.default_rng(3), P, BINS, DEPTH)] * DEPTH)
    expected = draw_random_structure(np.random.default_rng(3), P, BINS, DEPTH)
    np.testing.assert_array_equal(feature, expected[0])
    np.testing.assert_array_equal(bin_threshold, expected[1])


def test_selected_splits_read_each_level_once():
    rows = ExactRows()
    feature, bin_threshold = empty_tree(DEPTH)
    rows.start_tree(feature, bin_threshold)
    policy = SelectedSplits(lambda hist: -np.abs(hist[..., :-1, 0]),
                            lambda i, utilities: int(np.argmax(utilities)), BINS)
    grow(feature, bin_threshold, [policy] * DEPTH, rows)
    assert rows.requests == [(level, list(level_nodes(level))) for level in range(DEPTH)]
    assert rows.splits == list(range(DEPTH))
    for level in range(DEPTH):
        nodes = level_nodes(level)
        utilities = -np.abs(rows.exact(level, nodes)[..., :-1, 0])
        best = np.argmax(utilities.reshape(len(nodes), -1), axis=1)
        np.testing.assert_array_equal(feature[nodes.start:nodes.stop], best // (BINS - 1))
        np.testing.assert_array_equal(bin_threshold[nodes.start:nodes.stop],
                                      best % (BINS - 1))


def test_private_histogram_splits_without_noise():
    rows = ExactRows(4)
    feature, bin_threshold = empty_tree(DEPTH)
    rows.start_tree(feature, bin_threshold)
    policy = PrivateHistogramSplits(lambda exact: exact.astype(np.float64), reg_lambda=1.0)
    grow(feature, bin_threshold, [policy] * DEPTH, rows)
    for level, wanted in rows.requests[1:]:
        parents = [(v - 1) // 2 for v in wanted]
        assert len(set(parents)) == len(parents) == 2 ** (level - 1)  # one child each
    for level in range(DEPTH):
        for v, hist in zip(level_nodes(level), rows.exact(level, level_nodes(level))):
            f, b, mass_left, mass_right = policy._best_split(hist.astype(np.float64))
            assert (feature[v], bin_threshold[v]) == (f, b)
            if level + 1 < DEPTH:
                measured = 2 * v + 1 if mass_left <= mass_right else 2 * v + 2
                assert measured in rows.requests[level + 1][1]
