"""Losses of DP gradient boosting: gradients, Hessians, their public bounds, the DP start.

Each loss works on raw scores ``raw`` of shape (n_samples, n_outputs) and on encoded
targets (regression targets rescaled to [0, 1] by the public ``y_bounds``; class indices
for classification). ``hessian_bound`` is a public bound on one record's Hessian, the
sensitivity of a Hessian sum; the gradient bound is the user's ``gradient_clip``.
"""

import numpy as np

__all__ = ["BinaryLogistic", "MultinomialLogistic", "SquaredError"]


def expit(x):
    """The logistic function, without overflow for large ``|x|``."""
    z = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + z), z / (1.0 + z))


def softmax(raw, axis=1):
    z = np.exp(raw - raw.max(axis=axis, keepdims=True))
    return z / z.sum(axis=axis, keepdims=True)


class SquaredError:
    """Half squared error on targets in [0, 1]: ``g = raw - y``, ``h = 1``.

    The Hessian sum of a leaf is its record count (sensitivity 1).
    """

    n_outputs = 1
    hessian_bound = 1.0
    constant_hessian = True

    def init_score(self, noisy_sum, noisy_count):
        """The DP starting score: the noisy mean, inside [0, 1] (post-processing)."""
        return np.array([float(np.clip(noisy_sum / max(noisy_count, 1.0), 0.0, 1.0))])

    def round_state(self, raw):
        return raw

    def gradients(self, y, state, k):
        return state[:, 0] - y, None


class BinaryLogistic:
    """Log-loss on one raw score: ``g = p - y`` in [-1, 1], ``h = p (1 - p)`` in [0, 1/4]."""

    n_outputs = 1
    hessian_bound = 0.25
    constant_hessian = False

    def init_score(self, noisy_counts):
        """Log-odds of the noisy class counts, each floored at 1 (post-processing)."""
        counts = np.maximum(np.asarray(noisy_counts, dtype=float), 1.0)
        return np.array([np.log(counts[1] / counts[0])])

    def round_state(self, raw):
        return expit(raw[:, 0])

    def gradients(self, y, state, k):
        return state - y, state * (1.0 - state)

    def proba(self, raw):
        p = expit(raw[:, 0])
        return np.column_stack([1.0 - p, p])


class MultinomialLogistic:
    """Softmax log-loss, one raw score per class: ``g_k = p_k - [y = k]``,
    ``h_k = p_k (1 - p_k)`` in [0, 1/4]."""

    hessian_bound = 0.25
    constant_hessian = False

    def __init__(self, n_classes):
        self.n_outputs = n_classes

    def init_score(self, noisy_counts):
        counts = np.maximum(np.asarray(noisy_counts, dtype=float), 1.0)
        logp = np.log(counts / counts.sum())
        return logp - logp.mean()

    def round_state(self, raw):
        return softmax(raw, axis=1)

    def gradients(self, y, state, k):
        p = state[:, k]
        return p - (y == k), p * (1.0 - p)

    def proba(self, raw):
        return softmax(raw, axis=1)
