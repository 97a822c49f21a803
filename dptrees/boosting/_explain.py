"""Explanations of a fitted DP explainable boosting machine, from released values only.

The model is ``raw(x) = intercept_ + sum_j term_scores_[:, j, bin_j(x_j)]``: one term
per feature, a released score per bin. This module says what each bin is, in the
feature's own terms: an interval of a numeric feature (equal-width bins of its public
bounds; values outside are clipped into the end bins), the public categories of a
categorical column of a data frame (a bin may hold none, one or several of them), or
the missing value. It gives the scores as a tidy table (:func:`explain`) and one
importance per term (:func:`term_importances`); :func:`dptrees.plot.plot_shape` and
:func:`dptrees.plot.plot_terms` draw them.

Privacy: everything here is computed from the released ``intercept_`` and
``term_scores_`` and from public inputs (the bounds and categories in ``bounds``, the
number of bins): post-processing, which costs no privacy. No training data is stored
in the model or read here. In particular the importances weigh every bin (every
category, the missing value) the same: interpret weighs them by training-set counts,
which are private and not released.
"""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from dptrees._feature_bins import feature_bins

__all__ = ["explain", "score_unit", "term_bins", "term_importances", "term_names",
           "term_rows"]


def term_names(ebm):
    """The name of each term: ``feature_names_in_``, else ``x[0]``, ``x[1]``, ..."""
    check_is_fitted(ebm, "term_scores_")
    names = getattr(ebm, "feature_names_in_", None)
    if names is None:
        names = [f"x[{j}]" for j in range(ebm.term_scores_.shape[1])]
    return [str(n) for n in names]


def term_bins(ebm):
    """The :class:`~dptrees._feature_bins.FeatureBins` of each term."""
    return feature_bins(ebm, term_names(ebm))


def term_index(ebm, term):
    """The index of ``term`` (its name or an int)."""
    names = term_names(ebm)
    if isinstance(term, str):
        if term not in names:
            raise KeyError(f"{type(ebm).__name__} has no term {term!r}; its terms: "
                           f"{', '.join(names)}")
        return names.index(term)
    if isinstance(term, (bool, np.bool_)) or not isinstance(term, (int, np.integer)):
        raise TypeError(f"term must be a term name or an int, got {term!r}")
    if not -len(names) <= term < len(names):
        raise IndexError(f"term {term} is out of range for {len(names)} terms")
    return int(term) % len(names)


def score_unit(ebm):
    """``(scale, unit)``: term scores times ``scale`` are in ``unit``. A regressor's
    released scores are in units of the target range, so ``scale`` is the width of its
    public ``y_bounds_`` (target units); a classifier's are log-odds (logits per class
    for several classes), scale 1."""
    if hasattr(ebm, "y_bounds_"):
        lower, upper = ebm.y_bounds_
        return float(upper) - float(lower), "target units"
    if ebm.term_scores_.shape[0] == 1:
        return 1.0, "log-odds"
    return 1.0, "logit"


def output_names(ebm):
    """One name per output (column of scores): the classes of a multiclass model, else
    a single ``None``."""
    if ebm.term_scores_.shape[0] == 1:
        return [None]
    return [str(c) for c in ebm.classes_]


def term_rows(ebm, j, fb=None):
    """The rows of term ``j``: ``(bin, label, category, lower, upper, missing)``, one per
    value the feature can take at ``predict``: every bin of a numeric feature (with its
    edges), then the missing value if the feature may be missing; every category of a
    categorical column in its public order (a bin that holds no category is never used
    and has no row), then the missing value."""
    fb = term_bins(ebm)[j] if fb is None else fb
    rows = []
    if fb.is_nominal:
        for c, b in zip(fb.categories, fb.category_bin):
            rows.append((int(b), str(c), c, np.nan, np.nan, False))
    else:
        for b in range(len(fb.edges) - 1):
            rows.append((b, fb.bin_label(b), None, float(fb.edges[b]),
                         float(fb.edges[b + 1]), False))
    if fb.missing_bin is not None:
        rows.append((int(fb.missing_bin), "missing", None, np.nan, np.nan, True))
    return rows


def explain(ebm, *, as_frame=True):
    """The released shape functions as a tidy table (see ``explain`` of the estimators).
    """
    check_is_fitted(ebm, "term_scores_")
    scale, _ = score_unit(ebm)
    outputs = output_names(ebm)
    score_columns = ["score"] if outputs == [None] else [f"score_{c}" for c in outputs]
    columns = {name: [] for name in ("term", "term_type", "bin", "label", "category",
                                     "lower", "upper", "missing", *score_columns)}
    for j, fb in enumerate(term_bins(ebm)):
        for b, label, category, lower, upper, missing in term_rows(ebm, j, fb):
            for key, value in (("term", fb.name), ("term_type", fb.kind), ("bin", b),
                               ("label", label), ("category", category),
                               ("lower", lower), ("upper", upper), ("missing", missing)):
                columns[key].append(value)
            for k, key in enumerate(score_columns):
                columns[key].append(float(ebm.term_scores_[k, j, b]) * scale)
    arrays = {key: np.asarray(values, dtype=object if key in ("term", "term_type", "label",
                                                               "category") else None)
              for key, values in columns.items()}
    if not as_frame:
        return arrays
    try:
        import pandas as pd
    except ImportError as exc:
        raise ImportError(f"{type(ebm).__name__}.explain() returns a pandas DataFrame and "
                          "needs pandas (pip install pandas); explain(as_frame=False) "
                          "returns the same columns as a dict of numpy arrays") from exc
    frame = pd.DataFrame(arrays)
    for key in ("term", "term_type", "label"):
        frame[key] = frame[key].astype(str)
    return frame


def term_importances(ebm):
    """Mean absolute centred score of each term (see ``term_importances`` of the
    estimators)."""
    check_is_fitted(ebm, "term_scores_")
    scale, _ = score_unit(ebm)
    out = np.zeros(ebm.term_scores_.shape[1])
    for j, fb in enumerate(term_bins(ebm)):
        bins = [row[0] for row in term_rows(ebm, j, fb)]
        scores = ebm.term_scores_[:, j, bins] * scale  # (n_outputs, n_values)
        centred = scores - scores.mean(axis=1, keepdims=True)
        out[j] = float(np.abs(centred).mean())
    return out
