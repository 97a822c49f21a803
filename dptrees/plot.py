"""Text and figures of fitted DP models, drawn from released values only.

* :func:`export_text` and :func:`plot_tree` show one fitted tree the way
  :func:`sklearn.tree.export_text` and :func:`sklearn.tree.plot_tree` do: its splits (the
  thresholds), the noisy counts its nodes released (where the model releases them) and
  its leaf values;
* :func:`plot_privacy_utility` draws privacy-utility curves (a metric against epsilon)
  from the results the benchmark scripts write with ``--json``, or from your own records;
* :func:`plot_budget` draws how a fit's privacy budget is split over its kinds of
  release, from :meth:`privacy_report`.

Privacy: everything shown is a released value, public, or post-processing of released
values; nothing is recomputed from training data, so nothing here costs privacy. A NaN
count in a tree means that the count was not released, and it is not shown.

The figures need matplotlib, an optional dependency: ``pip install "dptrees[plot]"``.
"""

import json
import math
import numbers
import os
import re
from collections import defaultdict
from typing import NamedTuple

import numpy as np
from sklearn.utils.validation import check_is_fitted

from dptrees._optional import optional_import
from dptrees._tree_structure import Tree

__all__ = ["export_text", "plot_tree", "plot_privacy_utility", "plot_budget"]


def _pyplot():
    """matplotlib.pyplot, or an ImportError naming the ``plot`` extra."""
    return optional_import("matplotlib.pyplot", "plot", "dptrees.plot")


# ------------------------------------------------------------------------------------
# One tree of a fitted model


class _TreeView(NamedTuple):
    """A fitted tree with what is needed to describe its nodes in words.

    ``leaf_kind``: ``"value"`` (a number or vector per leaf, as stored), ``"proba"`` (a
    classification tree: class probabilities, with the released noisy class counts when
    ``counts`` is not None) or ``"totals"`` (an AdaBoost weak learner: noisy weighted
    class totals, and ``labels``, the class each leaf predicts).
    """

    tree: Tree
    name: str
    feature_names: list
    class_names: list
    leaf_kind: str
    counts: np.ndarray = None
    labels: np.ndarray = None


def _check_index(index, n, what):
    if isinstance(index, bool) or not isinstance(index, numbers.Integral):
        raise TypeError(f"index must be an int (0 to {n - 1}) selecting one of the {n} "
                        f"{what}, got {index!r}")
    if not -n <= index < n:
        raise IndexError(f"index {index} is out of range for {n} {what}")
    return int(index) % n


def _pick(estimator, attr, index, what, word):
    """``(tree, description)`` of the tree ``index`` of the fitted list ``attr``."""
    check_is_fitted(estimator, attr)
    trees = getattr(estimator, attr)
    name = type(estimator).__name__
    if index is None:
        raise ValueError(f"{name} has {len(trees)} {what}: pass index=i to choose one")
    i = _check_index(index, len(trees), what)
    return trees[i], f"{name}, {word} {i}"


def _ensemble_tree(estimator, index):
    """``(tree, description)`` of the tree ``index`` of a fitted ensemble."""
    from dptrees.boosting import DPAdaBoostClassifier
    from dptrees.boosting._trees import BoostedTreesMixin
    from dptrees.forest import _BaseDPForest

    name = type(estimator).__name__
    if isinstance(estimator, _BaseDPForest):
        return _pick(estimator, "estimators_", index, "trees", "tree")
    if isinstance(estimator, DPAdaBoostClassifier):
        return _pick(estimator, "learners_", index, "weak learners", "learner")
    if isinstance(estimator, BoostedTreesMixin):
        check_is_fitted(estimator, "estimators_")
        rounds = estimator.estimators_
        n_out = len(rounds[0]) if rounds else 1
        if index is None or (isinstance(index, tuple) and len(index) != 2):
            raise ValueError(f"{name} has {len(rounds)} rounds of {n_out} tree(s): pass "
                             f"index=round (one tree per round) or index=(round, output)")
        r, k = index if isinstance(index, tuple) else (index, None)
        r = _check_index(r, len(rounds), "rounds")
        if k is None:
            if n_out != 1:
                raise ValueError(f"{name} has {n_out} trees per round (one per class): "
                                 f"pass index=(round, output)")
            k = 0
        k = _check_index(k, n_out, "trees of the round")
        classes = getattr(estimator, "classes_", None)
        where = "" if n_out == 1 else (f", class {classes[k]}" if classes is not None
                                       else f", output {k}")
        return rounds[r][k], f"{name}, round {r}{where} (leaf values are raw-score steps)"
    raise TypeError(f"{name} is not a dptrees tree, forest or boosted-tree model")


def _resolve_tree(estimator_or_tree, index, feature_names, class_names):
    """A :class:`_TreeView` of a fitted estimator's tree (``index`` in an ensemble) or of
    a :class:`~dptrees._tree_structure.Tree`."""
    from dptrees.boosting import DPAdaBoostClassifier
    from dptrees.boosting._cyclic import _BaseDPExplainableBoosting
    from dptrees.tree import _BaseDPTree
    from dptrees.forest import _BaseDPForest

    obj = estimator_or_tree
    estimator = None
    if isinstance(obj, Tree):
        if index is not None:
            raise ValueError("a Tree is one tree: index must be None")
        tree, name = obj, type(obj).__name__
    elif isinstance(obj, _BaseDPExplainableBoosting):
        raise TypeError(f"{type(obj).__name__} is an additive model without trees: its "
                        f"released shape functions are term_scores_ (one score per "
                        f"feature bin); plot those instead")
    elif isinstance(obj, _BaseDPTree) and not isinstance(obj, _BaseDPForest):
        check_is_fitted(obj, "tree_")
        if index is not None:
            raise ValueError(f"{type(obj).__name__} has a single tree: index must be None")
        estimator, tree, name = obj, obj.tree_, type(obj).__name__
    elif hasattr(obj, "fit") and hasattr(obj, "get_params"):
        estimator = obj
        tree, name = _ensemble_tree(obj, index)
    else:
        raise TypeError(f"expected a fitted dptrees estimator or a Tree, got "
                        f"{type(obj).__name__}")

    n_features = getattr(estimator, "n_features_in_", None)
    if n_features is None:
        n_features = int(tree.feature.max()) + 1 if tree.node_count else 0
    if feature_names is None:
        feature_names = getattr(estimator, "feature_names_in_", None)
    if feature_names is None:
        feature_names = [f"x[{i}]" for i in range(n_features)]
    feature_names = [str(f) for f in feature_names]
    # a bare Tree only tells the largest feature it splits on
    if len(feature_names) < n_features or (estimator is not None
                                           and len(feature_names) != n_features):
        raise ValueError(f"feature_names has {len(feature_names)} names; the model has "
                         f"{n_features} features")

    classes = getattr(estimator, "classes_", None)
    if class_names is None and classes is not None:
        class_names = [str(c) for c in classes]
    leaf_kind, counts, labels = "value", None, None
    if isinstance(estimator, DPAdaBoostClassifier):
        leaf_kind, labels = "totals", tree.leaf_label
    elif estimator is not None and classes is not None and tree.value.ndim == 2:
        leaf_kind = "proba"
        if getattr(estimator, "leaf", None) == "counts":
            counts = getattr(tree, "noisy_value", None)
    if class_names is not None:
        class_names = [str(c) for c in class_names]
        n_classes = tree.value.shape[1] if tree.value.ndim == 2 else None
        if leaf_kind != "value" and len(class_names) != n_classes:
            raise ValueError(f"class_names has {len(class_names)} names; the tree has "
                             f"{n_classes} classes")
    return _TreeView(tree, name, feature_names, class_names, leaf_kind, counts, labels)


def _number(x, decimals):
    """``x`` rounded to ``decimals``, without a trailing ``.0`` for whole numbers."""
    x = float(x)
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    text = f"{x:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _vector(values, decimals):
    return "[" + ", ".join(_number(v, decimals) for v in values) + "]"


def _split_text(view, node, decimals, left):
    """``"name < t"`` (``left``) or ``"name >= t"``: records with ``x < threshold`` go
    left. Without a threshold in feature units, the bin rule; an infinite threshold
    separates present values (left) from missing ones (right)."""
    t = view.tree
    name = view.feature_names[t.feature[node]]
    if math.isnan(t.threshold[node]):
        return f"{name} bin {'<=' if left else '>'} {t.bin_threshold[node]}"
    if math.isinf(t.threshold[node]):
        return f"{name} {'is present' if left else 'is missing'}"
    return f"{name} {'<' if left else '>='} {_number(t.threshold[node], decimals)}"


def _count_text(view, node, decimals):
    c = view.tree.noisy_count[node]
    return None if math.isnan(c) else f"noisy count {_number(c, decimals)}"


def _class_name(view, k):
    return view.class_names[k] if view.class_names is not None else str(k)


def _leaf_lines(view, node, decimals):
    """The released values of a leaf, one item per line."""
    value = view.tree.value[node]
    if view.leaf_kind == "totals":
        return [f"class: {_class_name(view, view.labels[node - view.tree.n_internal])}",
                f"noisy weighted totals {_vector(value, decimals)}"]
    if view.leaf_kind == "proba":
        lines = [f"class: {_class_name(view, int(np.argmax(value)))}",
                 f"proba {_vector(value, decimals)}"]
        if view.counts is not None:
            lines.append(f"noisy class counts {_vector(view.counts[node], decimals)}")
        return lines
    if np.ndim(value) == 0:
        return [f"value: {_number(value, decimals)}"]
    return [f"value: {_vector(value, decimals)}"]


def _check_depth(max_depth, name="max_depth"):
    if max_depth is None:
        return None
    if isinstance(max_depth, bool) or not isinstance(max_depth, numbers.Integral) or \
            max_depth < 0:
        raise ValueError(f"{name} must be None or an int >= 0, got {max_depth!r}")
    return int(max_depth)


def _check_decimals(decimals):
    if isinstance(decimals, bool) or not isinstance(decimals, numbers.Integral) or \
            decimals < 0:
        raise ValueError(f"decimals must be an int >= 0, got {decimals!r}")
    return int(decimals)


def export_text(estimator_or_tree, *, index=None, feature_names=None, class_names=None,
                max_depth=10, decimals=3, show_counts=True):
    """A text outline of a fitted DP tree, like :func:`sklearn.tree.export_text`.

    Every line is a released value: a split (records with ``x < threshold`` go to the
    first branch), the noisy count of the node the branch leads to (where the model
    released one; the line for the root comes first) and, at a leaf, its released value.
    A classification tree's leaf shows its class, its probabilities and, with
    ``leaf="counts"``, the noisy class counts they come from; an AdaBoost weak learner's
    leaf shows its noisy weighted class totals; a boosted tree's leaf shows its raw-score
    step (before the learning rate).

    Parameters
    ----------
    estimator_or_tree : fitted estimator or Tree
        A fitted :class:`~dptrees.DPDecisionTreeRegressor` or
        :class:`~dptrees.DPDecisionTreeClassifier` (its ``tree_``), a fitted forest,
        gradient-boosting (centralised or federated) or AdaBoost model (with ``index``),
        or a ``Tree``. The explainable boosting machines have no trees (a
        ``TypeError``).
    index : int or tuple of 2 ints, optional
        The tree of an ensemble: ``estimators_[index]`` of a forest,
        ``learners_[index]`` of AdaBoost, and ``estimators_[round][output]`` of gradient
        boosting (``index=round`` when a round has one tree, else
        ``index=(round, output)``).
    feature_names : list of str, optional
        Default: the model's ``feature_names_in_``, else ``x[0]``, ``x[1]``, ...
    class_names : list of str, optional
        Default: the model's ``classes_``.
    max_depth : int or None, default=10
        Deeper branches are shown as truncated.
    decimals : int, default=3
        Digits after the decimal point of thresholds and values.
    show_counts : bool, default=True
        Show the released noisy counts.

    Returns
    -------
    str
        The outline, one line per branch and leaf.

    Examples
    --------
    >>> from dptrees import DPDecisionTreeRegressor
    >>> from dptrees.datasets import load_california_housing
    >>> from dptrees.plot import export_text
    >>> X, y, names, bounds, y_bounds = load_california_housing()
    >>> tree = DPDecisionTreeRegressor(max_depth=2, bounds=bounds, y_bounds=y_bounds)
    >>> print(export_text(tree.fit(X, y), feature_names=names))  # doctest: +SKIP
    """
    view = _resolve_tree(estimator_or_tree, index, feature_names, class_names)
    max_depth = _check_depth(max_depth)
    decimals = _check_decimals(decimals)
    t = view.tree
    lines = []
    root_count = _count_text(view, 0, decimals) if show_counts else None
    if root_count:
        lines.append(f"root: {root_count}")

    def leaf(node, indent):
        lines.append(f"{indent}|--- " + "; ".join(_leaf_lines(view, node, decimals)))

    def walk(node, depth, indent):
        if t.left[node] == -1:
            leaf(node, indent)
            return
        if max_depth is not None and depth >= max_depth:
            lines.append(f"{indent}|--- truncated branch of depth "
                         f"{_subtree_depth(t, node)}")
            return
        for child, is_left in ((t.left[node], True), (t.right[node], False)):
            text = _split_text(view, node, decimals, is_left)
            count = _count_text(view, child, decimals) if show_counts else None
            lines.append(f"{indent}|--- {text}" + (f"  [{count}]" if count else ""))
            walk(child, depth + 1, indent + "|   ")

    walk(0, 0, "")
    return "\n".join(lines) + "\n"


def _subtree_depth(tree, node):
    """Depth of the subtree under ``node`` (0 for a leaf)."""
    stack, deepest = [(node, 0)], 0
    while stack:
        n, d = stack.pop()
        deepest = max(deepest, d)
        if tree.left[n] != -1:
            stack += [(tree.left[n], d + 1), (tree.right[n], d + 1)]
    return deepest


def _layout(tree, max_depth):
    """``(pos, parent)`` of the nodes to draw: ``pos[node] = (x, depth)`` in depth-first
    order, leaves (and truncated nodes) at successive x, an internal node centred over its
    children; ``parent[node]`` for every drawn node but the root."""
    pos, parent, next_x = {}, {}, [0.0]

    def place(node, depth):
        pos[node] = None  # keeps depth-first order
        if tree.left[node] == -1 or (max_depth is not None and depth >= max_depth):
            pos[node] = (next_x[0], depth)
            next_x[0] += 1.0
            return
        for child in (int(tree.left[node]), int(tree.right[node])):
            parent[child] = node
            place(child, depth + 1)
        pos[node] = ((pos[tree.left[node]][0] + pos[tree.right[node]][0]) / 2, depth)

    place(0, 0)
    return pos, parent


def _leaf_colours(view, nodes):
    """A face colour per leaf of ``nodes``: the predicted class's colour, lighter the less
    sure (classification), or the leaf value on a diverging scale (regression)."""
    cm = optional_import("matplotlib", "plot", "dptrees.plot").colormaps
    t = view.tree
    leaves = [n for n in nodes if t.left[n] == -1]
    colours = {}
    if view.leaf_kind in ("proba", "totals"):
        palette = cm["tab10"]
        for n in leaves:
            v = np.maximum(np.nan_to_num(t.value[n]), 0.0)
            k = int(np.argmax(v))
            if view.leaf_kind == "totals":
                k = int(view.labels[n - t.n_leaves + 1])
            share = v[k] / v.sum() if v.sum() > 0 else 0.0
            second = 1.0 / len(v)
            alpha = 0.15 + 0.6 * max(0.0, (share - second) / (1 - second)) if len(v) > 1 \
                else 0.4
            colours[n] = (*palette(k % 10)[:3], alpha)
        return colours
    values = np.array([np.mean(t.value[n]) for n in leaves], dtype=float)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return colours
    lo, hi = finite.min(), finite.max()
    ramp = cm["RdYlBu_r"]
    for n, v in zip(leaves, values):
        share = 0.5 if hi == lo or not np.isfinite(v) else (v - lo) / (hi - lo)
        colours[n] = (*ramp(0.15 + 0.7 * share)[:3], 0.55)
    return colours


def plot_tree(estimator_or_tree, *, index=None, feature_names=None, class_names=None,
              max_depth=None, decimals=3, show_counts=True, filled=True, fontsize=None,
              ax=None):
    """Draw a fitted DP tree, like :func:`sklearn.tree.plot_tree`.

    Each box is a node with released values only: an internal node's split (records
    with ``x < threshold`` go left, marked "yes" under the root) and noisy count, a
    leaf's released value (see :func:`export_text`). Nothing is recomputed from
    training data.

    Parameters
    ----------
    estimator_or_tree : fitted estimator or Tree
        As for :func:`export_text`.
    index : int or tuple of 2 ints, optional
        The tree of an ensemble, as for :func:`export_text`.
    feature_names, class_names : list of str, optional
        As for :func:`export_text`.
    max_depth : int, optional
        Draw the nodes down to this depth; deeper subtrees are shown as ``(...)``.
    decimals : int, default=3
        Digits after the decimal point.
    show_counts : bool, default=True
        Show the released noisy counts.
    filled : bool, default=True
        Colour the leaves by predicted class (paler when the released probabilities are
        less sure) or by value.
    fontsize : float, optional
        Default: the largest size, up to 10 points, at which neighbouring boxes do not
        overlap.
    ax : matplotlib Axes, optional
        Default: a new figure sized to the tree.

    Returns
    -------
    list of matplotlib.text.Annotation
        One per node drawn, from the root in depth-first order.
    """
    view = _resolve_tree(estimator_or_tree, index, feature_names, class_names)
    max_depth = _check_depth(max_depth)
    decimals = _check_decimals(decimals)
    plt = _pyplot()
    t = view.tree
    pos, parents = _layout(t, max_depth)
    n_columns = max(x for x, _ in pos.values()) + 1
    n_rows = max(d for _, d in pos.values()) + 1
    labels = {node: _node_label(view, node, pos, max_depth, decimals, show_counts)
              for node in pos}
    if ax is None:
        # about 0.075 inch per character and 0.2 inch per line of text at 10 points
        chars = max(len(line) for label in labels.values() for line in label.split("\n"))
        lines = max(label.count("\n") + 1 for label in labels.values())
        _, ax = plt.subplots(figsize=(min(max(6.0, (0.075 * chars + 0.4) * n_columns), 40.0),
                                      max(3.0, (0.2 * lines + 0.9) * n_rows)),
                             layout="constrained")
    ax.set_axis_off()
    ax.set_title(view.name, fontsize=10)
    colours = _leaf_colours(view, pos) if filled else {}

    def xy(node):
        x, d = pos[node]
        return ((x + 0.5) / n_columns, 1.0 - (d + 0.5) / n_rows)

    size = 10.0 if fontsize is None else float(fontsize)
    boxes = {}
    for node in pos:
        box = dict(boxstyle="round,pad=0.4", fc=colours.get(node, "white"), ec="0.3",
                   lw=0.8)
        kwargs = dict(xycoords="axes fraction", textcoords="axes fraction", ha="center",
                      va="center", fontsize=size, bbox=box, zorder=2)
        if node in parents:
            # from the child's box to the edge of the parent's (drawn before it)
            arrow = dict(arrowstyle="<-", color="0.3", lw=0.8, shrinkA=0, shrinkB=0,
                         patchB=boxes[parents[node]].get_bbox_patch())
            art = ax.annotate(labels[node], xy=xy(parents[node]), xytext=xy(node),
                              arrowprops=arrow, **kwargs)
        else:
            art = ax.annotate(labels[node], xy=xy(node), **kwargs)
        boxes[node] = art
    if t.left[0] != -1 and len(boxes) > 1:
        for child, word, side in ((t.left[0], "yes ", "right"), (t.right[0], " no", "left")):
            (x0, y0), (x1, y1) = xy(0), xy(child)
            ax.text((x0 + x1) / 2, (y0 + y1) / 2, word, transform=ax.transAxes,
                    ha=side, va="center", fontsize=0.8 * size, color="0.3")
    artists = list(boxes.values())
    if fontsize is None:
        _shrink_to_fit(ax, artists, size)
    return artists


def _node_label(view, node, pos, max_depth, decimals, show_counts):
    """The text of a node's box: its split or leaf values, and its noisy count."""
    t = view.tree
    if t.left[node] != -1 and max_depth is not None and pos[node][1] >= max_depth:
        return "(...)"
    if t.left[node] == -1:
        label = "\n".join(_leaf_lines(view, node, decimals))
    else:
        label = _split_text(view, node, decimals, True)
    count = _count_text(view, node, decimals) if show_counts else None
    return label + "\n" + count if count else label


def _shrink_to_fit(ax, artists, size):
    """Lower the font size of ``artists`` (and of the edge labels) until no two boxes of
    a row overlap and the rows fit in the axes (scikit-learn's plot_tree does the same)."""
    try:
        renderer = ax.figure.canvas.get_renderer()
    except AttributeError:  # a backend without an Agg renderer: keep the size
        return
    for _ in range(8):
        rows = defaultdict(list)
        for a in artists:
            a.update_bbox_position_size(renderer)
            box = a.get_bbox_patch().get_window_extent(renderer)  # its size, in pixels
            x, y = ax.transAxes.transform(a.xyann)
            rows[round(y)].append((x, box.width, box.height))
        scale = 1.0
        for row in rows.values():
            row.sort()
            for (x0, w0, _), (x1, w1, _) in zip(row, row[1:]):
                scale = max(scale, 1.08 * (w0 + w1) / 2 / max(x1 - x0, 1e-9))
        tallest = max(h for row in rows.values() for _, _, h in row)
        height = ax.get_window_extent(renderer).height
        if len(rows) > 1:
            scale = max(scale, 1.15 * tallest * len(rows) / height)
        if scale <= 1.0 or size <= 3:
            return
        size = max(3.0, size / scale)
        for text in ax.texts:
            text.set_fontsize(size if text in artists else 0.8 * size)


# ------------------------------------------------------------------------------------
# Privacy-utility curves


def _load(results):
    if isinstance(results, (str, os.PathLike)):
        with open(results) as fh:
            return json.load(fh)
    return results


def _as_float(key):
    try:
        value = float(key)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) and value > 0 else None


def _is_table(obj):
    """A dict ``{line: {epsilon: cell}}`` (epsilon keys as numbers or strings)."""
    return (isinstance(obj, dict) and obj and all(
        isinstance(v, dict) and v and all(_as_float(k) is not None for k in v)
        for v in obj.values()))


def _find_tables(obj, path=()):
    """Every ``{line: {epsilon: cell}}`` table and every list of records in ``obj``, by
    their key paths."""
    found = []
    if isinstance(obj, list) and obj and all(isinstance(r, dict) for r in obj) and all(
            "epsilon" in r or "eps" in r for r in obj):
        return [(path, obj)]
    if not isinstance(obj, dict):
        return found
    if _is_table(obj):
        return [(path, obj)]
    for key, value in obj.items():
        found += _find_tables(value, path + (str(key),))
    return found


def _numeric(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _summary(value):
    """``(mean, error or None, n)`` of a number, a list of repeats or a ``{"mean",
    "std"}`` summary; None if it is none of them."""
    if _numeric(value):
        return float(value), None, 1
    if isinstance(value, (list, tuple)) and value and all(_numeric(v) for v in value):
        arr = np.asarray(value, dtype=float)
        return float(arr.mean()), (float(arr.std(ddof=1)) if arr.size > 1 else None), \
            arr.size
    if isinstance(value, dict) and _numeric(value.get("mean")):
        std = value.get("std")
        return float(value["mean"]), (float(std) if _numeric(std) else None), \
            len(value.get("values", ())) or None
    return None


def _metric_candidates(cell):
    """The fields of a dict that could be plotted (not the repeats of another field)."""
    return sorted(k for k, v in cell.items() if _summary(v) is not None
                  and k not in ("epsilon", "eps", "seconds", "delta")
                  and not any(k in _plurals(other) for other in cell))


def _plurals(metric):
    """Field names that may hold the repeats of ``metric`` (``accuracy``: ``accuracies``)."""
    names = [metric + "s", metric + "es"]
    if metric.endswith("y"):
        names.append(metric[:-1] + "ies")
    return names


def _cell_summary(cell, metric, where):
    """``(mean, error)`` of one cell; ``metric`` picks a field of a dict cell, whose
    repeats (``metric + "s"``) or ``metric + "_sd"`` / ``"_std"`` give the error."""
    direct = _summary(cell)
    if direct is not None and (metric is None or not isinstance(cell, dict)
                               or metric not in cell):
        return direct[:2]
    if not isinstance(cell, dict):
        raise ValueError(f"{where}: cannot read a number from {cell!r}")
    if metric is None:
        raise ValueError(f"{where} holds several numbers: pass metric= one of "
                         f"{_metric_candidates(cell)}")
    if metric not in cell:
        raise KeyError(f"{where} has no {metric!r}; it has {_metric_candidates(cell)}")
    summary = _summary(cell[metric])
    if summary is None:
        raise ValueError(f"{where}: {metric!r} is not a number, a list of numbers or a "
                         f"summary with a 'mean'")
    mean, err, _ = summary
    for name in _plurals(metric):
        repeats = _summary(cell.get(name))
        if repeats is not None and isinstance(cell.get(name), list):
            return repeats[:2]
    for name in (metric + "_sd", metric + "_std"):
        if err is None and _numeric(cell.get(name)):
            err = float(cell[name])
    return mean, err


def _records_to_curves(records, metric, by):
    """``(curves, baselines)`` from a list of records: one curve per distinct ``by``
    value(s); several records of one curve and epsilon are repeats; records whose
    epsilon is None are non-private baselines."""
    by = (by,) if isinstance(by, str) else tuple(by)
    if metric is None:
        candidates = set()
        for r in records:
            candidates.update(k for k in _metric_candidates(r) if k not in by)
        if len(candidates) != 1:
            raise ValueError(f"the records hold several numbers: pass metric= one of "
                             f"{sorted(candidates)}")
        metric = candidates.pop()
    groups = defaultdict(list)
    for i, r in enumerate(records):
        missing = [k for k in by if k not in r]
        if missing:
            raise KeyError(f"record {i} has no {missing[0]!r} (lines are grouped by {by})")
        label = ", ".join(str(r[k]) if j == 0 else f"{k}={r[k]}"
                          for j, k in enumerate(by) if j == 0 or r[k] is not None)
        eps = r.get("epsilon", r.get("eps"))
        groups[label, None if eps is None else float(eps)].append(
            _cell_summary(r, metric, f"record {i}"))
    curves, baselines = defaultdict(dict), {}
    for (label, eps), cells in groups.items():
        means = [m for m, _ in cells]
        if len(cells) > 1:
            summary = (float(np.mean(means)), float(np.std(means, ddof=1)))
        else:
            summary = cells[0]
        if eps is None:
            baselines[label] = summary
        else:
            curves[label][eps] = summary
    return dict(curves), baselines, metric


def _table_to_curves(table, metric):
    curves = {}
    for label, cells in table.items():
        curves[str(label)] = {float(eps): _cell_summary(cell, metric, f"{label} at eps {eps}")
                              for eps, cell in cells.items()}
    return curves


def _utility_curves(results, metric, key, by):
    """``(curves, baselines, metric)``: ``curves[label][epsilon] = (mean, error)``."""
    data = _load(results)
    if key is not None:
        for part in (key.split("/") if isinstance(key, str) else key):
            try:
                data = data[part]
            except (KeyError, TypeError):
                raise KeyError(f"results have no {part!r} (key={key!r})") from None
    if isinstance(data, dict) and isinstance(data.get("rows"), list):
        data = data["rows"]
    if isinstance(data, list):
        if not data or not all(isinstance(r, dict) for r in data):
            raise ValueError("a list of results must hold one dict per record")
        return _records_to_curves(data, metric, by)
    if not isinstance(data, dict):
        raise TypeError(f"results must be a path, a dict or a list of records, got "
                        f"{type(data).__name__}")
    if not _is_table(data):
        tables = _find_tables(data)
        preferred = [t for t in tables if t[0] and t[0][-1] in ("dp", "columns", "rows")]
        tables = preferred if len(preferred) == 1 else tables
        if len(tables) != 1:
            paths = ["/".join(p) for p, _ in tables]
            raise ValueError("cannot tell which results to plot: " +
                             (f"pass key= one of {paths}" if paths else
                              "no table {model: {epsilon: value}} or list of records "
                              "with an 'epsilon' was found"))
        data = tables[0][1]
        if isinstance(data, list):
            return _records_to_curves(data, metric, by)
    return _table_to_curves(data, metric), {}, metric


def plot_privacy_utility(results, *, metric=None, key=None, by="model", ax=None,
                         xlabel="epsilon", ylabel=None, title=None):
    """Privacy-utility curves: a metric against epsilon (log scale), one line per model.

    Parameters
    ----------
    results : path, dict or list of dict
        Results in one of these shapes (the JSON the benchmark scripts write with
        ``--json`` is one of them):

        * a list of records, each a dict with an ``"epsilon"`` (or ``"eps"``), the
          metric and the keys ``by`` names (``{"model": "DP tree", "epsilon": 0.5,
          "r2": 0.41}``). Several records of one model and epsilon are repeats (their
          mean, with the standard deviation as an error bar); a record whose epsilon is
          None is a non-private baseline (a dashed horizontal line);
        * a dict with such a list under ``"rows"``;
        * a table ``{model: {epsilon: cell}}``, found at ``key`` or anywhere in the dict
          when there is only one (tables under ``"dp"`` or ``"columns"`` come first).
          A cell is a number, a list of repeats, a summary ``{"mean": m, "std": s}``, or
          a dict with ``metric`` among its fields (its repeats under ``metric + "s"``,
          or its standard deviation under ``metric + "_sd"``, give the error bar).
    metric : str, optional
        The field to plot when cells or records hold several (``"accuracy"``,
        ``"auc"``, ...). Required then; the error names the candidates.
    key : str or sequence of str, optional
        Where the results sit in a nested dict, e.g. ``"cal/columns"`` or
        ``("adult", "columns")``.
    by : str or tuple of str, default="model"
        The record fields that name a line (e.g. ``("model", "n_clients")``).
    ax : matplotlib Axes, optional
        Default: a new figure.
    xlabel, ylabel, title : str, optional
        Axis labels and title; ``ylabel`` defaults to ``metric``.

    Returns
    -------
    matplotlib.axes.Axes
        The axes; one legend entry per line.
    """
    curves, baselines, metric = _utility_curves(results, metric, key, by)
    if not curves and not baselines:
        raise ValueError("no results to plot")
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
    markers = "osD^vP*Xh<>"
    handles = []
    for i, (label, cells) in enumerate(curves.items()):
        eps = sorted(cells)
        mean = np.array([cells[e][0] for e in eps])
        err = [cells[e][1] for e in eps]
        yerr = [0.0 if e is None else e for e in err] if any(
            e is not None for e in err) else None
        handles.append(ax.errorbar(eps, mean, yerr=yerr, capsize=3, label=label,
                                   marker=markers[i % len(markers)], lw=1.5, ms=5))
    for i, (label, (mean, _)) in enumerate(baselines.items()):
        handles.append(ax.axhline(mean, ls=("--", ":", "-.")[i % 3], lw=1.2, color="0.35",
                                  label=label))
    ax.set_xscale("log")
    all_eps = sorted({e for cells in curves.values() for e in cells})
    if all_eps:
        ticker = optional_import("matplotlib.ticker", "plot", "dptrees.plot")
        ax.xaxis.set_major_locator(ticker.FixedLocator(all_eps))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_locator(ticker.NullLocator())
        ax.set_xlim(all_eps[0] / 1.3, all_eps[-1] * 1.3)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel if ylabel is not None else (metric or "utility"))
    if title is not None:
        ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(handles=handles, fontsize="small")
    return ax


# ------------------------------------------------------------------------------------
# Budget breakdown

_ROUND = re.compile(r"^round \d+: ")


def _report(estimator_or_report):
    obj = estimator_or_report
    if isinstance(obj, (str, os.PathLike)):
        obj = _load(obj)
    if hasattr(obj, "privacy_report") and hasattr(obj, "get_params"):
        return obj.privacy_report()
    if isinstance(obj, dict) and isinstance(obj.get("ledger"), list):
        return obj
    raise TypeError(f"expected a fitted dptrees estimator or its privacy_report(), got "
                    f"{type(obj).__name__}")


def _budget_bars(ledger, merge_rounds):
    """``(labels, amounts, unit)``: each kind of release's total budget, in the unit
    every entry shares (``epsilon`` or ``rho``, times ``count``), else its number of
    releases."""
    if not ledger:
        raise ValueError("the privacy ledger is empty")
    if all(e.get("epsilon") is not None for e in ledger):
        unit = "epsilon"
    elif all(e.get("rho") is not None for e in ledger):
        unit = "rho"
    else:
        unit = None
    totals = {}
    for e in ledger:
        label = _ROUND.sub("", e["release"]) if merge_rounds else e["release"]
        if unit is None:
            z = e.get("noise_multiplier")
            if z is not None:
                label += f" (z={z:.3g})"
        amount = e["count"] * (e[unit] if unit else 1.0)
        totals[label] = totals.get(label, 0.0) + amount
    return list(totals), np.array(list(totals.values())), unit


def plot_budget(estimator_or_report, *, kind="bar", merge_rounds=True, ax=None):
    """How a fit's privacy budget is split over its kinds of release.

    One bar (or pie slice) per kind of release of the privacy ledger
    (``privacy_ledger_``, or the ``"ledger"`` of :meth:`privacy_report`): its budget
    times the number of such releases a record (or client) takes part in. The unit is
    the ledger's: ``epsilon`` when every release is pure DP (the bars then add up to
    ``epsilon_spent_``), ``rho`` (zero-concentrated DP, which adds up too) when every
    release is Gaussian; the total ``(epsilon, delta)`` of a Gaussian fit comes from
    its accountant, not from this sum. A ledger without one additive unit (subsampled
    Gaussian rounds of federated training, which only state their noise multiplier
    ``z`` and sampling rate) is shown as numbers of releases.

    Parameters
    ----------
    estimator_or_report : fitted estimator, PrivacyReport, dict or path
        A fitted dptrees estimator, its ``privacy_report()``, or that report saved as
        JSON.
    kind : {"bar", "pie"}, default="bar"
        Horizontal bars (with each share written beside its bar) or a pie.
    merge_rounds : bool, default=True
        Add up entries that differ only by a leading ``"round k: "`` (AdaBoost's
        ledger has one entry per round).
    ax : matplotlib Axes, optional
        Default: a new figure.

    Returns
    -------
    matplotlib.axes.Axes
    """
    if kind not in ("bar", "pie"):
        raise ValueError(f"kind must be 'bar' or 'pie', got {kind!r}")
    report = _report(estimator_or_report)
    labels, amounts, unit = _budget_bars(report["ledger"], merge_rounds)
    plt = _pyplot()
    if ax is None:
        height = 1.4 + 0.45 * len(labels) if kind == "bar" else 4.5
        _, ax = plt.subplots(figsize=(7.5, height), layout="constrained")
    what = {"epsilon": "epsilon x count", "rho": "rho (zCDP) x count",
            None: "number of releases"}[unit]
    shares = amounts / amounts.sum() if amounts.sum() > 0 else amounts
    wrapped = [_wrap(label, 34) for label in labels]
    if kind == "bar":
        y = np.arange(len(labels))
        ax.barh(y, amounts, color=[f"C{i % 10}" for i in range(len(labels))])
        ax.set_yticks(y, wrapped)
        ax.invert_yaxis()
        ax.set_xlabel(what)
        for yi, amount, share in zip(y, amounts, shares):
            ax.text(amount, yi, f" {amount:.3g} ({100 * share:.0f}%)", va="center",
                    fontsize="small")
        ax.set_xlim(0, amounts.max() * 1.3 if amounts.max() > 0 else 1)
        ax.spines[["top", "right"]].set_visible(False)
    else:
        ax.pie(amounts, labels=wrapped, autopct="%1.0f%%", startangle=90,
               counterclock=False, textprops={"fontsize": "small"})
        ax.set_aspect("equal")
    ax.set_title(f"{report['estimator']}: ({report['epsilon_spent']:.3g}, "
                 f"{report['delta_spent']:.3g})-DP; {what}", fontsize=10)
    return ax


def _wrap(text, width):
    """``text`` broken into lines of at most about ``width`` characters."""
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "\n".join(lines)
