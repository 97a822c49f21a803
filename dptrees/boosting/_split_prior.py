"""Split priors of boosting's random trees: where to draw the splits, from one release.

With ``split="guided"``, :mod:`dptrees.boosting._gradient` releases, once before its
first tree, sums of the clipped initial gradients ``g`` and Hessians ``h`` of all
records per (feature, bin). :func:`split_prior` turns them into a probability for every
(feature, bin threshold), from which every tree then draws its splits. It reads nothing
but the released sums and public values (their noise level, ``reg_lambda``):
post-processing, no budget.

**The release, and its sensitivity** (add/remove one record), by the public number of
features ``p``:

* ``p <= MAX_ACTIVE``: the full histogram, every (feature, bin) cell. A record falls in
  one bin of each feature: L2 sensitivity ``sqrt(p)`` times the per-record bound of
  ``g`` (and of ``h``), ``p`` times in L1 (Laplace noise); the same release as a
  privately chosen level's;
* ``p > MAX_ACTIVE``: the totals, and the cells of every bin but each feature's first
  (the first bin's sums are the totals minus the others: :func:`with_first_bins`). A
  record adds nothing to the cells of the features where it is in the first bin; it is
  *active* in the ``k`` others. Its statistics are first multiplied by ``c = min(1,
  sqrt(K / k))`` with ``K = MAX_ACTIVE`` (:func:`dptrees._sources._rows.clip_active`,
  truncated towards zero), so it changes the totals and ``k`` cells by at most ``c``
  times its bound: an L2 norm of ``c sqrt(1 + k) <= sqrt(K + 1)`` times the bound
  (``c**2 (1 + k)`` is ``1 + k <= K`` when ``k < K``, else ``K (1 + k) / k <= K + 1``).
  With Laplace noise ``c = min(1, K / k)``, and the L1 norm ``c (1 + k) <= K + 1`` the
  same way. On one-hot and other sparse tables this is far below ``sqrt(p)`` (Adult: 70
  one-hot columns of which a record has about 12 active, ``sqrt(17)`` against
  ``sqrt(70)``): the prior is as good as one from several times the budget.

Why: most random splits of a wide table fall on features that do not matter (one-hot
columns, mostly), and each tree's leaves then spend their budget on noise. Drawing the
splits where the initial gradients say the gain is keeps the trees random (every
(feature, threshold) keeps a share :data:`UNIFORM_SHARE` of uniform mass) but puts most
of them where they help.
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
