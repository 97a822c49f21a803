"""Split priors of boosting's random trees: where to draw the splits, from one release.

With ``split="guided"``, :mod:`dptrees.boosting._gradient` releases, once before its
first tree, the per-(feature, bin) sums ``G`` of the clipped initial gradients and ``H``
of the clipped Hessians of all records: the same Gaussian (or Laplace) histogram
release as a privately chosen level's, sensitivity ``sqrt(n_features)`` times the
per-record bound in L2 (a record falls in one bin of each feature). :func:`split_prior`
turns that release into a probability for every (feature, bin threshold), from which
every tree then draws its splits. It reads nothing but the released histogram and
public values (its noise level, ``reg_lambda``): post-processing, no budget.

Why: most random splits of a wide table fall on features that do not matter (one-hot
columns, mostly), and each tree's leaves then spend their budget on noise. Drawing the
splits where the initial gradients say the gain is keeps the trees random (every
(feature, threshold) keeps a share :data:`UNIFORM_SHARE` of uniform mass) but puts most
of them where they help.
"""

import numpy as np

__all__ = ["split_prior", "UNIFORM_SHARE", "EMPTY_CELL_SIGMAS"]

#: Share of the prior spread uniformly over every (feature, threshold): the trees keep
#: exploring, and a noisy release can never rule a split out.
UNIFORM_SHARE = 0.3
#: Cells whose noisy Hessian sum is below this many standard deviations of its noise
#: count as empty. Most cells of a one-hot or skewed feature hold no record; their noise,
#: summed along the bins, would otherwise swamp the gains of the cells that do.
EMPTY_CELL_SIGMAS = 2.0


def split_prior(hist, sigma_h, reg_lambda):
    """The probability of every (feature, bin threshold) split, from a released histogram.

    Parameters
    ----------
    hist : ndarray of shape (n_features, n_bins, 2)
        Released (noisy) sums of gradients and Hessians per (feature, bin) of all records.
    sigma_h : float
        Standard deviation of the noise on each Hessian cell (public).
    reg_lambda : float
        L2 regularisation of the Newton gain, in Hessian units.

    Returns
    -------
    prior : ndarray of shape (n_features, n_bins - 1)
        Non-negative, summing to 1: ``UNIFORM_SHARE`` spread evenly, the rest given to each
        feature in proportion to the Newton gain of its best threshold on ``hist`` (the
        cells of :data:`EMPTY_CELL_SIGMAS` treated as empty), and within a feature in
        proportion to each threshold's gain. Uniform if no split gains.
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
