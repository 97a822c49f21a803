"""What each bin of a fitted model's features holds, from public inputs only.

A fitted model bins every feature into ``n_bins`` equal-width bins of its public bounds
(:class:`dptrees.data.binning.Binner`). A categorical column of a data frame is first
encoded as the codes ``0 .. K-1`` of its ``K`` public categories and ``K`` for a missing
value (:mod:`dptrees.data.tables`), so a bin holds zero, one or several categories; a
numeric column declared ``Numeric(..., missing=True)`` keeps its last bin for missing
values. :func:`feature_bins` describes every feature's bins in those terms: the
categories of each bin (found by binning the codes with the model's own binner, the
path ``predict`` takes), the bin a missing value lands in, and the edges of the numeric
bins. Everything comes from the public domains in ``bounds`` and the fitted binner: no
training data is read, so nothing here costs privacy.
"""

from typing import NamedTuple

import numpy as np

from dptrees.data.binning import column_bins

__all__ = ["FeatureBins", "feature_bins"]


class FeatureBins(NamedTuple):
    """The bins of one feature.

    ``kind``: ``"continuous"`` (numbers) or ``"nominal"`` (public categories).
    ``categories``: the public categories (nominal), else None; ``category_bin[k]`` is
    the bin of category ``k``. ``missing_bin``: the bin of a missing value, or None when
    the feature cannot be missing (a missing value is then an error at ``predict``).
    ``edges``: a continuous feature's bin edges in feature units, ``n_present + 1`` of
    them from the lower to the upper bound (values outside are clipped into the end
    bins), else None.
    """

    name: str
    kind: str
    n_bins: int
    categories: list = None
    category_bin: np.ndarray = None
    missing_bin: int = None
    edges: np.ndarray = None

    @property
    def is_nominal(self):
        return self.kind == "nominal"

    def bin_categories(self, b):
        """The categories (nominal) in bin ``b``, in their public order."""
        return [c for c, cb in zip(self.categories, self.category_bin) if cb == b]

    def used_bins(self):
        """The bins a value can land in, ascending (a nominal feature's other bins
        hold no category and are never used by ``predict``)."""
        if self.is_nominal:
            bins = set(int(b) for b in self.category_bin)
        else:
            bins = set(range(len(self.edges) - 1))
        if self.missing_bin is not None:
            bins.add(int(self.missing_bin))
        return sorted(bins)

    def bin_label(self, b, decimals=3):
        """A short label of bin ``b``: its categories (and "missing"), or its interval
        ``[lower, upper)`` in feature units (``]`` for the last), or "missing"."""
        parts = []
        if self.is_nominal:
            parts = [str(c) for c in self.bin_categories(b)]
        elif b < len(self.edges) - 1:
            # the last bin holds the upper bound (and everything clipped to it)
            close = "]" if b == len(self.edges) - 2 else ")"
            parts = [f"[{number(self.edges[b], decimals)}, "
                     f"{number(self.edges[b + 1], decimals)}{close}"]
        if self.missing_bin is not None and b == self.missing_bin:
            parts.append("missing")
        return ", ".join(parts)


def number(x, decimals):
    """``x`` rounded to ``decimals``, without a trailing ``.0`` for whole numbers, and
    ``0`` for what rounds to zero from below (not ``-0``)."""
    x = float(x)
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    text = f"{x:.{decimals}f}"
    text = text.rstrip("0").rstrip(".") if "." in text else text
    return "0" if text == "-0" else text


def feature_bins(estimator, feature_names):
    """The :class:`FeatureBins` of every feature of a fitted estimator with a
    ``binner_`` (and, for a data frame with categorical or maybe-missing columns, its
    table encoding), named by ``feature_names``."""
    binner = estimator.binner_
    n_features, n_bins = binner.lower.shape[0], binner.n_bins
    encoding = getattr(estimator, "_table_encoding", None)
    categories = {} if encoding is None else dict(encoding.categories)
    numeric_missing = {} if encoding is None else dict(encoding.missing)

    def bins_of(j, values):
        return column_bins(binner, j, values).astype(np.intp)

    out = []
    for j in range(n_features):
        name = str(feature_names[j])
        if j in categories:
            cats = list(categories[j])
            bins = bins_of(j, np.arange(len(cats) + 1, dtype=np.float64))
            out.append(FeatureBins(name, "nominal", n_bins, cats, bins[:-1],
                                   int(bins[-1])))
            continue
        has_missing = bool(binner.missing[j])
        lower, upper = float(binner.lower[j]), float(binner.upper[j])
        edges = binner.edges(j)
        missing_bin = None
        if has_missing:
            domain = numeric_missing.get(j)
            value = domain.missing_value if domain is not None else upper + (upper - lower)
            missing_bin = int(bins_of(j, np.array([value]))[0])
        out.append(FeatureBins(name, "continuous", n_bins, edges=edges,
                               missing_bin=missing_bin))
    return out
