"""Row splits and subsets shared by the experiments (one definition of each protocol).

* :func:`validation_split`: the fixed 80 % fit / 20 % validation split of a training set
  (``train_test_split(random_state=0)``) on which the Adult experiments choose their
  settings, so that the test set is read only for the final figures;
* :func:`random_rows`: a fixed random subset of rows, for the ``--quick`` modes.
"""

import numpy as np
from sklearn.model_selection import train_test_split

VAL_SIZE = 0.2


def validation_split(n_samples, val_size=VAL_SIZE):
    """``(fit_idx, val_idx)``: row indices of the fit and validation parts of ``n_samples``
    training rows (``train_test_split(..., random_state=0)``)."""
    return train_test_split(np.arange(n_samples), test_size=val_size, random_state=0)


def random_rows(rng, n_rows, max_rows):
    """Indices of ``min(max_rows, n_rows)`` distinct rows of ``n_rows``, drawn by ``rng``
    (``rng.choice(..., replace=False)``, in the order drawn)."""
    return rng.choice(n_rows, size=min(max_rows, n_rows), replace=False)
