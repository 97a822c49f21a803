"""Smoke test of ``experiments/adult_dataframe.py``: Adult read by pandas (strings, "?" as
missing) and fitted with a public domain gives the hand-encoded path's predictions.

Runs the module's ``--quick`` mode (2,000 training rows, 2 epsilons, 1 seed) and checks
that both paths predicted the same on all of ``adult.test`` for every model that released
no private edges, and that the scores are sane. Skipped where the shared UCI data is absent.
"""

import pytest

from support import import_uci_experiment

# A script's quick mode (a reproduction or a benchmark): run by .ci/run after the
# default suite, with the other slow tests.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def quick():
    pytest.importorskip("pandas")
    return import_uci_experiment("adult_dataframe").main(["--quick"])


def test_the_frame_path_gives_the_hand_encoded_predictions(quick):
    # ... wherever no private edges were released: edges also cut the encoded path's
    # category codes, which are numeric columns there
    assert set(quick["dp"]) == {"dp_ebm", "dp_gb", "dp_tree"}
    compared = 0
    for by_eps in quick["dp"].values():
        assert set(by_eps) == {0.5, 1.0}
        for cells in by_eps.values():
            assert 0.5 < cells["frame"]["auc"] <= 1.0
            if cells["private_edges"]:
                continue
            assert cells["same_predictions"] is True
            assert cells["frame"] == cells["encoded"]
            compared += 1
    assert compared >= 4  # the trees' cells and gradient boosting's (no edges here)
