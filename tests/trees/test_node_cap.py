"""The builder's node cap: growth stops, whatever the noise does, once the cap is reached.

At small epsilon empty nodes can split (their noisy counts pass the thresholds), so a deep
tree could otherwise grow towards 2**(max_depth + 1) nodes. With the cap, only the first
``(max_nodes - 1) // (2 max_depth)`` nodes of each depth (left to right) that may split
try to, so a tree has at most ``max_nodes`` nodes. The rule reads only released counts
and public numbers, so stopping there is post-processing.
"""

import numpy as np

from dptrees import BudgetAccountant, DPDecisionTreeRegressor


def deep_tree():
    return DPDecisionTreeRegressor(
        epsilon=1e6, max_depth=64, min_samples_split=0, min_samples_leaf=0, n_bins=256,
        bounds=(0, 1), y_bounds=(0, 1), accountant=BudgetAccountant(), random_state=0)


def test_growth_stops_at_the_node_cap(inject):
    inject(lambda kw: kw.update(max_nodes=501))
    rng = np.random.default_rng(0)
    X, y = rng.random((2000, 3)), rng.random(2000)
    tree = deep_tree().fit(X, y).tree_
    assert 300 < tree.node_count <= 501
    splits_per_depth = np.bincount(tree.depth[tree.left != -1])
    assert splits_per_depth.max() == (501 - 1) // (2 * 64)  # 3 per depth, all used
    assert tree.max_depth == 64
    leaves = tree.left == -1
    assert np.all(np.isfinite(tree.value[leaves]))
    assert np.all((tree.left[~leaves] > np.flatnonzero(~leaves)))


def test_empty_nodes_splitting_at_depth_64_still_finish():
    # with min_samples_split=0 every node may split: only the default cap ends the growth
    rng = np.random.default_rng(1)
    X, y = rng.random((50, 2)), rng.random(50)
    tree = deep_tree().fit(X, y).tree_
    assert tree.node_count <= 2**20 + 2
