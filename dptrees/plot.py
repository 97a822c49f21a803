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

import math
import numbers
from collections import defaultdict
from typing import NamedTuple

import numpy as np
from sklearn.utils.validation import check_is_fitted

from dptrees._optional import optional_import
from dptrees._plot_privacy import _pyplot, plot_budget, plot_privacy_utility
from dptrees._tree_structure import Tree

__all__ = ["export_text", "plot_tree", "plot_privacy_utility", "plot_budget"]


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
