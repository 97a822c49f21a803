"""The split prior of guided trees: where a released histogram of the initial gradients
shows gain.

The release: per output, the (feature, bin) sums of the initial clipped gradients and
Hessians; sensitivity ``sqrt(n_features)`` times the per-record bound in L2 up to
``MAX_ACTIVE`` features, ``sqrt(MAX_ACTIVE + 1)`` above (first bins left out, each record
clipped to ``MAX_ACTIVE`` active features). The prior is post-processing. The proof:
"Privacy proofs, gradient boosting" in the documentation (``docs/proofs/boosting.rst``).
"""

import numpy as np

__all__ = ["split_prior", "with_first_bins", "release_shape", "MAX_ACTIVE",
           "UNIFORM_SHARE", "EMPTY_CELL_SIGMAS"]

#: Above this many features the release leaves out first bins and clips each record to
#: this many active features (``K``).
MAX_ACTIVE = 16

#: Share of the prior spread uniformly over every (feature, threshold): the trees keep
#: exploring, and a noisy release can never rule a split out.
UNIFORM_SHARE = 0.3
#: Cells whose noisy Hessian sum is below this many standard deviations of its noise
#: count as empty. Most cells of a one-hot or skewed feature hold no record; their noise,
#: summed along the bins, would otherwise swamp the gains of the cells that do.
EMPTY_CELL_SIGMAS = 2.0


def release_shape(n_features):
    """``(first_bins, cells)`` of the release for ``n_features`` public features:
    whether it has the first bins' cells (the full histogram), and the integer number of
    cells one record moves by at most the per-record bound (so the sensitivity is
    ``sqrt(cells)`` bounds in L2, ``cells`` in L1)."""
    if n_features <= MAX_ACTIVE:
        return True, int(n_features)
    return False, MAX_ACTIVE + 1


def with_first_bins(cells, total):
    """The full ``(n_features, n_bins, 2)`` histogram from released ``cells`` of every bin
    but the first, ``(n_features, n_bins - 1, 2)``, and the released ``total``, ``(2,)``:
    each first bin is the total minus the feature's other cells (post-processing)."""
    cells = np.asarray(cells, dtype=np.float64)
    first = np.asarray(total, dtype=np.float64)[None, :] - cells.sum(axis=1)
    return np.concatenate([first[:, None, :], cells], axis=1)


def split_prior(hist, sigma_h, reg_lambda):
    """The probability of every (feature, bin threshold) split, from released sums.

    Parameters
    ----------
    hist : ndarray of shape (n_features, n_bins, 2)
        Released (noisy) sums of gradients and Hessians per (feature, bin) of all
        records (with first bins from :func:`with_first_bins` where they were not
        released).
    sigma_h : float
        Standard deviation of the noise on each released Hessian cell (public).
    reg_lambda : float
        L2 regularisation of the Newton gain, in Hessian units.

    Returns
    -------
    prior : ndarray of shape (n_features, n_bins - 1)
        Non-negative, summing to 1: ``UNIFORM_SHARE`` spread evenly, the rest given to each
        feature in proportion to the Newton gain of its best threshold (the cells within
        :data:`EMPTY_CELL_SIGMAS` of no Hessian mass treated as empty), and within a
        feature in proportion to each threshold's gain. Uniform if no split gains.
    """
    hist = np.asarray(hist, dtype=np.float64)
    n_features, n_bins, _ = hist.shape
    occupied = hist[..., 1] > EMPTY_CELL_SIGMAS * sigma_h
    hist = np.where(occupied[..., None], hist, 0.0)
    cum = np.cumsum(hist, axis=1)
    total = cum[:, -1:, :]
    left, right = cum[:, :-1, :], total - cum[:, :-1, :]

    def score(sums):
        return sums[..., 0] ** 2 / (np.maximum(sums[..., 1], 0.0) + reg_lambda)

    gain = np.maximum(score(left) + score(right) - score(total), 0.0)
    best = gain.max(axis=1)
    uniform = np.full((n_features, n_bins - 1), 1.0 / (n_features * (n_bins - 1)))
    if not best.sum() > 0:
        return uniform
    per_feature = gain.sum(axis=1, keepdims=True)
    within = np.divide(gain, per_feature, out=np.full_like(gain, 1.0 / (n_bins - 1)),
                       where=per_feature > 0)
    prior = (best / best.sum())[:, None] * within
    return (1.0 - UNIFORM_SHARE) * prior + UNIFORM_SHARE * uniform
