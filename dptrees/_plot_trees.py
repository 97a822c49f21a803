"""One fitted tree as text and as a figure (:mod:`dptrees.plot`), from released values
and public inputs only.

A split is described by where records go, as ``predict`` sends them: a numeric feature
by its threshold (``x < t`` goes left), a categorical column of a data frame by the
public categories each side receives, and, for a feature that may be missing (a
categorical column, or ``Numeric(..., missing=True)``), by the side missing values take.
Only what reaches a node is listed there (an earlier split on the same feature may have
sent some categories elsewhere), and a side that nothing can reach is marked: such a
split separates nothing. The categories of each bin come from the public domains in
``bounds`` binned by the model's own binner (:mod:`dptrees._feature_bins`); no training
data is read.
"""

import math
import numbers
import warnings
from collections import defaultdict
from typing import NamedTuple

import numpy as np
from sklearn.utils.validation import check_is_fitted

from dptrees._feature_bins import feature_bins, number as _number
from dptrees._optional import optional_import
from dptrees._plot_privacy import _pyplot
from dptrees._tree_structure import Tree

__all__ = ["export_text", "plot_tree"]


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
    bins: list = None


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
        raise TypeError(f"{type(obj).__name__} is an additive model without trees: "
                        f"explain() tabulates its released scores per bin and category, "
                        f"and dptrees.plot.plot_shape and plot_terms draw them")
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
    bins = None
    if estimator is not None and hasattr(estimator, "binner_"):
        bins = feature_bins(estimator, feature_names)
    return _TreeView(tree, name, feature_names, class_names, leaf_kind, counts, labels,
                     bins)


def _vector(values, decimals):
    return "[" + ", ".join(_number(v, decimals) for v in values) + "]"


class _Split(NamedTuple):
    """How one split routes records: ``left`` and ``right``, the text of each branch
    (what goes there, missing values included where they can reach the node);
    ``box``, the lines of its box in :func:`plot_tree` (the condition of the left,
    "yes", branch, then where missing values go); ``empty``, whether each side receives
    nothing that can reach the node (then the split separates nothing)."""

    left: str
    right: str
    box: list
    empty: tuple


_EMPTY = {"nominal": "  (no category goes here: the split separates nothing)",
          "continuous": "  (no value goes here: the split separates nothing)"}


def _category_set(categories):
    return "{" + ", ".join(str(c) for c in categories) + "}"


def _wrapped(head, categories, width=30, max_lines=4):
    """``head {a, b, ...}`` over lines of about ``width`` characters, broken between
    categories (never inside a name), at most ``max_lines`` of them; the categories
    that do not fit are counted instead (``... (+3 more)``)."""
    items = [str(c) for c in categories]
    lines, line = [], head + " {"
    for k, item in enumerate(items):
        piece = item + ("}" if k == len(items) - 1 else ",")
        if len(line) + len(piece) > width and not line.endswith("{"):
            if len(lines) == max_lines - 1:
                line += f" ... (+{len(items) - k} more)}}"
                break
            lines.append(line)
            line = piece
        else:
            line += ("" if line.endswith("{") else " ") + piece
    lines.append(line)
    return lines


def _nominal_split(fb, name, left_mask, right_mask):
    def side(mask):
        cats = [c for c, b in zip(fb.categories, fb.category_bin) if mask[b]]
        return cats, bool(mask[fb.missing_bin])

    (lc, lm), (rc, rm) = side(left_mask), side(right_mask)

    def text(cats, miss):
        if not cats:
            return f"{name} is missing" if miss else f"{name} in {{}}" + _EMPTY["nominal"]
        return f"{name} in {_category_set(cats)}" + (" or missing" if miss else "")

    empty = (not lc and not lm, not rc and not rm)
    if any(empty):
        goes = "right" if empty[0] else "left"
        box = [f"{name}: splits nothing", f"(all go {goes})"]
    elif not lc:
        box = [f"{name} is missing"]
    elif not rc:
        box = [f"{name} is present"]
    else:
        # the shorter side, so that a long list of categories stays short
        box = (_wrapped(f"{name} in", lc) if len(lc) <= len(rc)
               else _wrapped(f"{name} not in", rc))
        if lm or rm:
            box.append(f"missing \u2192 {'left' if lm else 'right'}")
    return _Split(text(lc, lm), text(rc, rm), box, empty)


def _continuous_split(fb, name, threshold, b, left_mask, right_mask, decimals):
    n_present = fb.n_bins - (fb.missing_bin is not None) if fb is not None else None
    present = (left_mask[:n_present].any(), right_mask[:n_present].any())
    missing = (False, False) if fb is None or fb.missing_bin is None else (
        bool(left_mask[fb.missing_bin]), bool(right_mask[fb.missing_bin]))
    empty = (not present[0] and not missing[0], not present[1] and not missing[1])
    if math.isnan(threshold):  # no threshold in feature units: the bin rule
        texts = [f"{name} bin <= {b}", f"{name} bin > {b}"]
    elif math.isinf(threshold):  # present values left, missing ones right
        texts = [f"{name} is present", f"{name} is missing"]
    else:
        t = _number(threshold, decimals)
        texts = [f"{name} < {t}", f"{name} >= {t}"]
    box = [texts[0]]
    if any(empty):
        box.append(f"(splits nothing: all go {'right' if empty[0] else 'left'})")
    elif any(missing) and not math.isinf(threshold):
        box.append(f"missing \u2192 {'left' if missing[0] else 'right'}")
    for k in (0, 1):
        if missing[k] and not math.isinf(threshold):
            texts[k] += " or missing"
        if empty[k]:
            texts[k] += _EMPTY["continuous"]
    return _Split(texts[0], texts[1], box, empty)


def _routes(view, decimals):
    """The :class:`_Split` of every internal node. Along each path, the bins of every
    feature that can still reach a node are tracked (a record goes left when its bin is
    at most ``bin_threshold``, exactly as ``Tree.apply`` sends it at ``predict``)."""
    t = view.tree
    n_bins = view.bins[0].n_bins if view.bins else 256  # bin codes are uint8
    bins = np.arange(n_bins)
    splits = {}
    stack = [(0, {})]
    while stack:
        node, reach = stack.pop()
        if t.left[node] == -1:
            continue
        j, b = int(t.feature[node]), int(t.bin_threshold[node])
        here = reach.get(j, np.ones(n_bins, dtype=bool))
        left_mask, right_mask = here & (bins <= b), here & (bins > b)
        fb = view.bins[j] if view.bins else None
        name = view.feature_names[j]
        if fb is not None and fb.is_nominal:
            splits[node] = _nominal_split(fb, name, left_mask, right_mask)
        else:
            splits[node] = _continuous_split(fb, name, float(t.threshold[node]), b,
                                             left_mask, right_mask, decimals)
        stack.append((int(t.left[node]), {**reach, j: left_mask}))
        stack.append((int(t.right[node]), {**reach, j: right_mask}))
    return splits


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

    Every line is a released value or public: a split (records with ``x < threshold``
    go to the first branch), the noisy count of the node the branch leads to (where the
    model released one; the line for the root comes first) and, at a leaf, its released
    value.

    A categorical column of a data frame is shown by the public categories each branch
    receives (``sex in {Female}``), and a feature that may be missing (a categorical
    column, or ``Numeric(..., missing=True)`` in ``bounds``) by the branch that missing
    values take (``... or missing``, ``x is missing``): the routes ``predict`` follows.
    A branch lists what can reach it (an earlier split on the same feature may have sent
    some categories elsewhere); a branch that nothing can reach is marked "the split
    separates nothing" (with a public domain wider than the categories, or many bins per
    category, the private choice may pick an edge below every category). The categories
    come from the public ``bounds`` binned by the model's own binner: no training data
    is read, so the text costs no privacy. A bare ``Tree`` knows no binning: its
    features are shown as numbers.
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

    A categorical column, and a numeric one that may be missing:

    >>> import numpy as np, pandas as pd
    >>> from dptrees import DPDecisionTreeClassifier, Numeric
    >>> rng = np.random.default_rng(0)
    >>> frame = pd.DataFrame({"sex": rng.choice(["Female", "Male", None], 2000),
    ...                       "age": np.where(rng.random(2000) < 0.1, np.nan,
    ...                                       rng.uniform(17, 90, 2000))})
    >>> y = ((frame["sex"] == "Male") ^ (frame["age"] > 50)).astype(int)
    >>> bounds = {"sex": ["Female", "Male"], "age": Numeric(17, 90, missing=True)}
    >>> clf = DPDecisionTreeClassifier(epsilon=5, max_depth=2, bounds=bounds,
    ...                                classes=[0, 1], random_state=0).fit(frame, y)
    >>> print(export_text(clf, show_counts=False))
    |--- age < 50.692
    |   |--- sex in {Female, Male}
    |   |   |--- class: 1; proba [0.49, 0.51]; noisy class counts [265, 276]
    |   |--- sex is missing
    |   |   |--- class: 0; proba [0.977, 0.023]; noisy class counts [285, 5]
    |--- age >= 50.692 or missing
    |   |--- sex in {Female}
    |   |   |--- class: 1; proba [0.196, 0.804]; noisy class counts [71, 297]
    |   |--- sex in {Male} or missing
    |   |   |--- class: 0; proba [0.512, 0.488]; noisy class counts [413, 393]
    """
    view = _resolve_tree(estimator_or_tree, index, feature_names, class_names)
    max_depth = _check_depth(max_depth)
    decimals = _check_decimals(decimals)
    t = view.tree
    splits = _routes(view, decimals)
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
        for child, text in ((t.left[node], splits[node].left),
                            (t.right[node], splits[node].right)):
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

    Each box is a node with released values and public inputs only: an internal
    node's split (records with ``x < threshold`` go left, marked "yes" under the root;
    a categorical column by its categories, ``sex in {Female}``, or the shorter
    ``not in`` list) with the side missing values take (``missing \u2192 right``) and
    its noisy count, and a leaf's released value (see :func:`export_text`, which also
    says how a split that separates nothing is marked). Nothing is recomputed from
    training data.

    A new figure is at most 16 inches wide, with text of 7 to 10 points; a tree too
    wide to be read at that size (a deep boosted tree) is still drawn, with a warning
    naming the ``max_depth`` that fits.

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
        Default: a new figure sized to the tree (at most 16 by 12 inches).

    Returns
    -------
    list of matplotlib.text.Annotation
        One per node drawn, from the root in depth-first order.

    Warns
    -----
    UserWarning
        When the text had to shrink below 6.5 points to fit (pass ``max_depth``, or a
        larger ``ax``).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from dptrees import DPGradientBoostingRegressor
    >>> from dptrees.datasets import load_california_housing
    >>> from dptrees.plot import plot_tree
    >>> X, y, names, bounds, y_bounds = load_california_housing()
    >>> gbm = DPGradientBoostingRegressor(n_estimators=5, max_depth=4, bounds=bounds,
    ...                                   y_bounds=y_bounds, random_state=0)
    >>> boxes = plot_tree(gbm.fit(X, y), index=0, max_depth=2)  # doctest: +SKIP
    """
    view = _resolve_tree(estimator_or_tree, index, feature_names, class_names)
    max_depth = _check_depth(max_depth)
    decimals = _check_decimals(decimals)
    plt = _pyplot()
    t = view.tree
    pos, parents = _layout(t, max_depth)
    n_columns = max(x for x, _ in pos.values()) + 1
    n_rows = max(d for _, d in pos.values()) + 1
    splits = _routes(view, decimals)
    labels = {node: _node_label(view, splits, node, pos, max_depth, decimals, show_counts)
              for node in pos}
    chars = max(len(line) for label in labels.values() for line in label.split("\n"))
    lines = max(label.count("\n") + 1 for label in labels.values())
    start, own_figure = 10.0, ax is None
    if ax is None:
        # the largest text (7 to 10 points) at which the widest row fits in 16 inches
        start = min(10.0, max(_MIN_POINTS, _MAX_WIDTH / (n_columns * _box_width(chars, 1.0))))
        width = min(max(6.0, n_columns * _box_width(chars, start)), _MAX_WIDTH)
        height = min(max(3.0, n_rows * _row_height(lines, start) + 0.4), _MAX_HEIGHT)
        _, ax = plt.subplots(figsize=(width, height), layout="constrained")
    ax.set_axis_off()
    ax.set_title(view.name, fontsize=10)
    colours = _leaf_colours(view, pos) if filled else {}

    def xy(node):
        x, d = pos[node]
        return ((x + 0.5) / n_columns, 1.0 - (d + 0.5) / n_rows)

    size = start if fontsize is None else float(fontsize)
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
    if own_figure:
        _fit_height(ax, artists, n_rows)
    if fontsize is None:
        size = _shrink_to_fit(ax, artists, size)
        if size < _READABLE_POINTS:
            fits = _deepest_that_fits(t, chars, ax.get_window_extent().width / ax.figure.dpi)
            warnings.warn(
                f"plot_tree: {view.name} has {int(n_columns)} boxes in a row, too many to "
                f"read in this figure (text shrunk to {size:.1f} points): draw fewer "
                f"levels with max_depth={fits}, or pass a larger ax", UserWarning,
                stacklevel=2)
    return artists


# A new figure: at most this wide and high (inches), with text of at least this size
# (points) before the boxes are fitted; a warning below the readable size.
_MAX_WIDTH, _MAX_HEIGHT, _MIN_POINTS, _READABLE_POINTS = 16.0, 12.0, 7.0, 6.5


def _fit_height(ax, artists, n_rows):
    """Give a new figure the height its rows of boxes take at their font size (1.5
    times the tallest box per row, for the arrows), within 3 to 12 inches."""
    try:
        renderer = ax.figure.canvas.get_renderer()
    except AttributeError:  # pragma: no cover - a backend without an Agg renderer
        return
    ax.figure.draw_without_rendering()  # the layout engine places the axes
    tallest = 0.0
    for a in artists:
        a.update_bbox_position_size(renderer)
        tallest = max(tallest, a.get_bbox_patch().get_window_extent(renderer).height)
    inches = tallest / ax.figure.dpi
    width = ax.figure.get_size_inches()[0]
    ax.figure.set_size_inches(width, min(max(3.0, 1.5 * inches * n_rows + 0.7), _MAX_HEIGHT))


def _box_width(chars, points):
    """About the width (inches) a box of ``chars`` characters per line takes, with the
    space between boxes: 0.0075 inch per character and point, and padding."""
    return (0.0075 * chars + 0.04) * points


def _row_height(lines, points):
    """About the height (inches) of a row of boxes of ``lines`` lines, arrows included."""
    return (0.02 * lines + 0.09) * points


def _deepest_that_fits(tree, chars, width):
    """The largest ``max_depth`` whose drawing fits ``width`` inches at the readable
    size (at least 1)."""
    best = 1
    for depth in range(1, int(tree.depth.max()) + 1):
        pos, _ = _layout(tree, depth)
        if (max(x for x, _ in pos.values()) + 1) * _box_width(chars, _MIN_POINTS) > width:
            break
        best = depth
    return best


def _node_label(view, splits, node, pos, max_depth, decimals, show_counts):
    """The text of a node's box: its split or leaf values, and its noisy count."""
    t = view.tree
    if t.left[node] != -1 and max_depth is not None and pos[node][1] >= max_depth:
        return "(...)"
    if t.left[node] == -1:
        label = "\n".join(_leaf_lines(view, node, decimals))
    else:
        label = "\n".join(splits[node].box)
    count = _count_text(view, node, decimals) if show_counts else None
    return label + "\n" + count if count else label


def _shrink_to_fit(ax, artists, size):
    """Lower the font size of ``artists`` (and of the edge labels) until no two boxes of
    a row overlap and the rows fit in the axes (scikit-learn's plot_tree does the same);
    returns the size."""
    try:
        renderer = ax.figure.canvas.get_renderer()
    except AttributeError:  # a backend without an Agg renderer: keep the size
        return size
    for _ in range(8):
        ax.figure.draw_without_rendering()  # the axes where the layout engine puts them
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
            return size
        size = max(3.0, size / scale)
        for text in ax.texts:
            text.set_fontsize(size if text in artists else 0.8 * size)
    return size
