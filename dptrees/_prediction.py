"""What every probabilistic classifier of dptrees predicts from its probabilities."""

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["MostProbableClassMixin"]


class MostProbableClassMixin:
    """``predict``: the most probable class of ``predict_proba`` (post-processing of the
    released model: no privacy cost)."""

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The most probable class of each sample."""
        proba = self.predict_proba(X)  # first: an unfitted model raises NotFittedError
        return self.classes_[np.argmax(proba, axis=1)]
