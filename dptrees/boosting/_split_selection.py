"""Selected splits of boosting's random trees: the top levels chosen by the exponential
mechanism.

Utility ``|G_left| + |G_right|`` of a node's exact clipped-gradient sums; sensitivity one
record's clipped gradient (``g_sens``) whatever the number of candidates; each level's
selection is ``epsilon``-DP and ``epsilon**2 / 8``-zCDP (bounded range). The proof:
"Privacy proofs, gradient boosting" in the documentation (``docs/proofs/boosting.rst``).
"""

import numpy as np

__all__ = ["split_utilities"]


def split_utilities(g_sums, g_scale):
    """``|G_left| + |G_right|`` of every (feature, bin threshold) of a node (or of
    several: any leading axes are kept).

    Parameters
    ----------
    g_sums : ndarray of int64, shape (..., n_features, n_bins)
        The exact fixed-point sums of the node's clipped gradients per (feature, bin).
    g_scale : float
        The fixed-point scale of ``g``.

    Returns
    -------
    ndarray of float, shape (..., n_features, n_bins - 1)
        Threshold ``b`` sends bins ``<= b`` left. Every value moves by at most one
        record's clipped gradient when a record is added or removed.
    """
    left = np.cumsum(g_sums, axis=-1)[..., :-1]  # exact: int64 sums of int64 values
    right = g_sums.sum(axis=-1, keepdims=True) - left
    return (np.abs(left) + np.abs(right)) / g_scale
