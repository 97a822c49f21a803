"""Figures of an explainable boosting machine (:mod:`dptrees.plot`): one term's shape
function and every term's importance, like interpret's shape plots. Everything drawn is
a released score or public (bounds, categories, number of bins): post-processing, no
privacy cost, and no training data is read (so, unlike interpret's, the figures show no
histogram of the data)."""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from dptrees._plot_privacy import _pyplot
from dptrees.boosting import _explain

__all__ = ["plot_shape", "plot_terms"]


def _check_ebm(ebm):
    from dptrees.boosting._cyclic import _BaseDPExplainableBoosting

    if not isinstance(ebm, _BaseDPExplainableBoosting):
        raise TypeError(f"expected a fitted DPExplainableBoostingClassifier or "
                        f"DPExplainableBoostingRegressor, got {type(ebm).__name__}")
    check_is_fitted(ebm, "term_scores_")


def _outputs(ebm, output):
    """The score rows to draw and their legend names (None: no legend)."""
    names = _explain.output_names(ebm)
    if output is None:
        return list(range(len(names))), names
    if isinstance(output, str) or output not in range(-len(names), len(names)):
        classes = [str(c) for c in getattr(ebm, "classes_", [])]
        if str(output) in classes and len(names) > 1:
            return [classes.index(str(output))], [None]
        raise ValueError(f"output must be None or one of the {len(names)} outputs "
                         f"(an index, or a class of a multiclass model), got {output!r}")
    return [int(output) % len(names)], [None]


def _axis_label(ebm):
    _, unit = _explain.score_unit(ebm)
    return f"score ({unit})"


def plot_shape(ebm, term, *, output=None, ax=None):
    """Draw one term of a fitted explainable boosting machine: its released score per
    bin or category, like interpret's shape plots.

    A numeric feature is a step function over its equal-width bins of the public
    bounds (the first bin, at the lower bound, is the baseline, never released: score
    0, drawn dashed); a categorical column is a bar per public category (a category in
    the first bin is marked "baseline"); a feature that may be missing
    shows the score of a missing value apart (a marker right of the steps, or a bar of
    its own). The score is what ``predict`` adds for a record in that bin (log-odds for
    a classifier, target units for a regressor; see ``explain``). Everything drawn is
    released or public: no training data is read, and interpret's histogram of the
    training data is deliberately missing.

    Parameters
    ----------
    ebm : fitted DPExplainableBoostingClassifier or DPExplainableBoostingRegressor
    term : str or int
        The term (feature) by name (``term_names_``) or index.
    output : int or class label, optional
        For a multiclass model, one class's scores; default: one line (or bar) per
        class.
    ax : matplotlib Axes, optional
        Default: a new figure.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from dptrees import DPExplainableBoostingClassifier
    >>> from dptrees.plot import plot_shape
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((2000, 2))
    >>> y = (X[:, 0] > 0.5).astype(int)
    >>> ebm = DPExplainableBoostingClassifier(epsilon=4.0, bounds=(0, 1), classes=[0, 1],
    ...                                       random_state=0).fit(X, y)
    >>> plot_shape(ebm, 0).get_xlabel()
    'x[0]'
    """
    _check_ebm(ebm)
    j = _explain.term_index(ebm, term)
    fb = _explain.term_bins(ebm)[j]
    rows = _explain.term_rows(ebm, j, fb)
    scale, _ = _explain.score_unit(ebm)
    outputs, legend = _outputs(ebm, output)
    plt = _pyplot()
    if fb.is_nominal:
        return _nominal_shape(ebm, fb, rows, j, scale, outputs, legend, ax, plt)
    return _continuous_shape(ebm, fb, j, scale, outputs, legend, ax, plt)


def _continuous_shape(ebm, fb, j, scale, outputs, legend, ax, plt):
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
    edges = fb.edges
    n_present = len(edges) - 1
    width = edges[-1] - edges[0]
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (k, name) in enumerate(zip(outputs, legend)):
        colour = colours[i % len(colours)]
        scores = ebm.term_scores_[k, j, :n_present] * scale
        # bin 0 is the baseline, never released (its score is 0): drawn apart, in grey
        ax.stairs(scores[1:], edges[1:], baseline=None, color=colour, lw=1.8,
                  label=None if name is None else f"class {name}")
        ax.stairs(scores[:1], edges[:2], baseline=None, color="0.6", lw=3.0)
        if fb.missing_bin is not None:
            x = edges[-1] + 0.1 * width
            ax.plot([x], [ebm.term_scores_[k, j, fb.missing_bin] * scale], marker="D",
                    ls="none", color=colour, ms=7)
    ax.axhline(0.0, color="0.5", lw=0.8, ls=":")
    ax.annotate("baseline (first bin)", xy=((edges[0] + edges[1]) / 2, 0.0),
                xytext=(0, 6), textcoords="offset points", ha="left", va="bottom",
                fontsize=8, color="0.4")
    if fb.missing_bin is not None:
        # the missing value, right of the steps, on a tick of its own
        ax.axvline(edges[-1] + 0.05 * width, color="0.7", lw=0.8)
        ticks = [t for t in ax.get_xticks() if edges[0] <= t <= edges[-1]]
        ax.set_xticks(ticks + [edges[-1] + 0.1 * width],
                      [f"{t:g}" for t in ticks] + ["missing"])
        ax.set_xlim(edges[0] - 0.02 * width, edges[-1] + 0.15 * width)
    else:
        ax.set_xlim(edges[0], edges[-1])
    ax.set_xlabel(fb.name)
    ax.set_ylabel(_axis_label(ebm))
    ax.set_title(f"{fb.name}: released score per bin ({n_present} bins of "
                 f"[{edges[0]:g}, {edges[-1]:g}])", fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    if any(name is not None for name in legend):
        ax.legend(fontsize=8)
    return ax


def _nominal_shape(ebm, fb, rows, j, scale, outputs, legend, ax, plt):
    bins = [b for b, *_ in rows]
    # a category in bin 0 shares the baseline, whose score is 0 (never released)
    labels = [label + (" (baseline)" if b == 0 else "") for b, label, *_ in rows]
    if ax is None:
        longest = max(len(label) for label in labels)
        _, ax = plt.subplots(figsize=(max(6.4, 4.5 + 0.07 * longest),
                                      max(2.5, 0.32 * len(labels) * max(1, len(outputs)
                                                                         ** 0.5) + 1.2)),
                             layout="constrained")
    y = np.arange(len(labels))
    height = 0.8 / len(outputs)
    for i, (k, name) in enumerate(zip(outputs, legend)):
        scores = ebm.term_scores_[k, j, bins] * scale
        offset = (i - (len(outputs) - 1) / 2) * height
        colours = None if name is not None else [
            "tab:red" if s > 0 else "tab:blue" for s in scores]
        ax.barh(y + offset, scores, height=height, color=colours,
                label=None if name is None else f"class {name}")
    ax.set_yticks(y, labels)
    ax.invert_yaxis()  # the public order of the categories, top down
    for tick, missing in zip(ax.get_yticklabels(), [row[5] for row in rows]):
        if missing:
            tick.set_fontstyle("italic")
    ax.axvline(0.0, color="0.3", lw=0.8)
    ax.set_xlabel(_axis_label(ebm))
    ax.set_title(f"{fb.name}: released score per category", fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    if any(name is not None for name in legend):
        ax.legend(fontsize=8)
    return ax


def plot_terms(ebm, *, max_terms=None, ax=None):
    """Draw every term's importance (``term_importances()``), largest first, like
    interpret's global overview.

    An importance is the mean absolute centred score of a term over the values its
    feature can take, every bin and category weighing the same: interpret weighs them by
    training-set counts, which are private and were not released. Everything drawn is
    post-processing of released scores: no training data is read.

    Parameters
    ----------
    ebm : fitted DPExplainableBoostingClassifier or DPExplainableBoostingRegressor
    max_terms : int, optional
        Draw the largest ``max_terms`` only (default: all).
    ax : matplotlib Axes, optional
        Default: a new figure, its height growing with the number of terms drawn.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    Three features, of which only the first decides the class: it is drawn first.

    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from dptrees import DPExplainableBoostingClassifier
    >>> from dptrees.plot import plot_terms
    >>> X = np.random.default_rng(0).random((2000, 3))
    >>> ebm = DPExplainableBoostingClassifier(epsilon=4.0, bounds=(0, 1), classes=[False, True],
    ...                                       random_state=0).fit(X, X[:, 0] > 0.5)
    >>> [t.get_text() for t in plot_terms(ebm).get_yticklabels()][0]
    'x[0]'
    """
    _check_ebm(ebm)
    if max_terms is not None and (isinstance(max_terms, bool) or not isinstance(
            max_terms, (int, np.integer)) or max_terms < 1):
        raise ValueError(f"max_terms must be None or an int >= 1, got {max_terms!r}")
    importances = _explain.term_importances(ebm)
    names = _explain.term_names(ebm)
    order = np.argsort(-importances, kind="stable")[:max_terms]
    plt = _pyplot()
    if ax is None:
        longest = max(len(names[j]) for j in order)
        _, ax = plt.subplots(figsize=(max(6.4, 4.5 + 0.07 * longest),
                                      max(2.5, 0.32 * len(order) + 1.2)),
                             layout="constrained")
    y = np.arange(len(order))
    ax.barh(y, importances[order], color="tab:blue")
    ax.set_yticks(y, [names[j] for j in order])
    ax.invert_yaxis()
    _, unit = _explain.score_unit(ebm)
    ax.set_xlabel(f"mean absolute score ({unit}; every bin weighs the same)")
    ax.set_title(f"{type(ebm).__name__}: term importances", fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    return ax
