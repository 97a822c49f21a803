"""Adult read by pandas as it comes, fitted with a public domain and no hand encoding.

The user's path: ``pandas.read_csv`` with ``na_values="?"`` (strings, missing values),
the public domain of every column (numeric bounds, and the categories ``adult.names``
documents) in ``bounds``, and ``fit(frame, y)`` with library defaults. Beside it, the
encoded path the other Adult experiments use (:func:`experiments.uci_datasets.load_adult`:
``PublicSchemaEncoder``, ``"?"`` as a listed category). Both see the same rows (US
natives, ``fnlwgt`` and ``native-country`` dropped), at each epsilon and seed; the table
prints accuracy and ROC AUC on ``adult.test`` for both, and whether the two paths gave
the same predictions (they should: a missing value is the category after the listed
ones, where the encoded path puts ``"?"``; except where gradient boosting's
``bin_edges="auto"`` releases private edges, from ``epsilon x n`` 10,000: there the
encoded path's category codes are numeric columns with edges of their own, while the
frame keeps its categories; and where gradient boosting's ``category_order="auto"``
orders the frame's categories by a noisy rate, from the same 10,000: the encoded path
has no categorical column to order).

    python -m experiments.adult_dataframe             # 6 epsilons, 3 seeds, 3 models

Below the table, issue 36's targets for the better of the two boosting families on the
frame (test ROC AUC at eps 0.03, 0.1 and 0.5, accuracy at 1) beside S-BDT's figures on
this protocol (its public code run with tuned settings; quoted, not measured here).
    python -m experiments.adult_dataframe --quick     # 2 epsilons, 1 seed, 2,000 rows
"""

from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.metrics import accuracy_score, roc_auc_score

from dptrees import (
    DPDecisionTreeClassifier,
    DPExplainableBoostingClassifier,
    DPGradientBoostingClassifier,
)
from experiments import DATA_DIR
from experiments.cli import sweep_main
from experiments.uci_datasets import (
    ADULT_COLUMNS,
    ADULT_DROPPED,
    ADULT_NUMERIC_BOUNDS,
    load_adult,
    parse_adult_names,
)

EPSILONS = (0.03, 0.05, 0.1, 0.25, 0.5, 1.0)
QUICK_EPSILONS = (0.5, 1.0)
N_SEEDS = 3
QUICK_ROWS = 2000
MODELS = {
    "dp_ebm": DPExplainableBoostingClassifier,
    "dp_gb": DPGradientBoostingClassifier,
    "dp_tree": DPDecisionTreeClassifier,
}


def read_frames(data_dir=None):
    """``(X_train, y_train, X_test, y_test, domain, classes)``: Adult as pandas reads it."""
    import pandas as pd

    folder = Path(data_dir or DATA_DIR) / "adult"
    attrs, classes = parse_adult_names(folder / "adult.names")

    def read(name, banner):
        frame = pd.read_csv(folder / name, header=None, names=list(ADULT_COLUMNS),
                            skipinitialspace=True, na_values="?", skiprows=banner)
        frame["income"] = frame["income"].str.rstrip(".")
        frame = frame[frame["native-country"] == "United-States"]
        frame = frame.drop(columns=list(ADULT_DROPPED))
        return frame.drop(columns="income"), frame["income"].to_numpy()

    X_train, y_train = read("adult.data", 0)
    X_test, y_test = read("adult.test", 1)
    domain = {column: (ADULT_NUMERIC_BOUNDS[column] if attrs[column] == "continuous"
                       else list(attrs[column])) for column in X_train.columns}
    return X_train, y_train, X_test, y_test, domain, sorted(classes)


def _scores(model, X, y, positive):
    proba = model.predict_proba(X)[:, list(model.classes_).index(positive)]
    return accuracy_score(y, model.predict(X)), roc_auc_score(y == positive, proba)


def run(epsilons, n_seeds, models, quick=False, data_dir=None, log=print):
    X_train, y_train, X_test, y_test, domain, classes = read_frames(data_dir)
    encoded_train, encoded_test = load_adult(data_dir=data_dir)
    rows = np.arange(len(y_train))
    if quick:
        rows = np.random.default_rng(0).choice(rows, QUICK_ROWS, replace=False)
    positive = classes[1]
    results = {"epsilons": list(epsilons), "n_seeds": n_seeds, "quick": quick,
               "n_train": int(rows.size), "n_test": int(len(y_test)), "dp": {}}
    for name in models:
        results["dp"][name] = {}
        for eps in epsilons:
            # released private edges cut the encoded path's category codes too (numeric
            # columns there), so the two paths then differ
            cells = {"frame": [], "encoded": [], "same_predictions": True,
                     "private_edges": False}
            for seed in range(n_seeds):
                model = MODELS[name](epsilon=eps, bounds=domain, classes=classes,
                                     random_state=seed)
                frame_model = clone(model).fit(X_train.iloc[rows], y_train[rows])
                encoded_model = clone(model).set_params(bounds=encoded_train.bounds).fit(
                    encoded_train.X[rows], encoded_train.y[rows])
                cells["frame"].append(_scores(frame_model, X_test, y_test, positive))
                cells["encoded"].append(_scores(encoded_model, encoded_test.X,
                                                encoded_test.y, positive))
                cells["same_predictions"] &= bool(np.array_equal(
                    frame_model.predict_proba(X_test),
                    encoded_model.predict_proba(encoded_test.X)))
                cells["private_edges"] |= any(getattr(m, "private_edges_", False)
                                              for m in (frame_model, encoded_model))
            for path in ("frame", "encoded"):
                accuracy, auc = np.mean(cells[path], axis=0)
                cells[path] = {"accuracy": float(accuracy), "auc": float(auc)}
            results["dp"][name][eps] = cells
            log(f"{name} eps {eps:g}: frame {cells['frame']['accuracy']:.4f} / "
                f"{cells['frame']['auc']:.4f}, encoded {cells['encoded']['accuracy']:.4f} / "
                f"{cells['encoded']['auc']:.4f}, same predictions "
                f"{cells['same_predictions']}")
    return results


def format_results(results):
    lines = [f"Adult, {results['n_train']} training rows (US natives), adult.test "
             f"({results['n_test']} rows); mean of {results['n_seeds']} seeds; library "
             "defaults; accuracy / ROC AUC" + (" (QUICK subsample)" if results["quick"]
                                               else ""),
             f"{'model':<8} {'eps':>5} {'data frame':>17} {'hand-encoded':>17} {'same':>6}"]
    for name, by_eps in results["dp"].items():
        for eps, cells in by_eps.items():
            frame, encoded = cells["frame"], cells["encoded"]
            lines.append(f"{name:<8} {eps:>5g} {frame['accuracy']:>8.4f} / {frame['auc']:.4f}"
                         f" {encoded['accuracy']:>8.4f} / {encoded['auc']:.4f} "
                         f"{str(cells['same_predictions']):>6}")
    lines += issue36_lines(results)
    return "\n".join(lines)


# Issue 36: {eps: (metric, target, S-BDT on this protocol, quoted)}
ISSUE36_TARGETS = {0.03: ("auc", 0.866, 0.8625), 0.1: ("auc", 0.885, 0.8804),
                   0.5: ("auc", 0.90, 0.8954), 1.0: ("accuracy", 0.855, None)}
BOOSTING = ("dp_gb", "dp_ebm")


def issue36_lines(results):
    """Each target of issue 36 met or not by the better boosting family on the frame."""
    lines = ["", "Issue 36, the better of dp_gb / dp_ebm on the frame against its target "
             "and S-BDT (quoted):"]
    for eps, (metric, target, sbdt) in ISSUE36_TARGETS.items():
        cells = [(results["dp"][m][eps]["frame"][metric], m) for m in BOOSTING
                 if eps in results["dp"].get(m, {})]
        if not cells:
            continue
        best, model = max(cells)
        quoted = f", S-BDT {sbdt:.4f}" if sbdt is not None else ""
        lines.append(f"  eps {eps:g} {metric}: {best:.4f} ({model}), target {target:g}"
                     f"{quoted}: {'met' if best >= target else 'not met'}")
    return lines


main = sweep_main(__doc__, run=run, format_results=format_results, epsilons=EPSILONS,
                  quick_epsilons=QUICK_EPSILONS, n_seeds=N_SEEDS, models=MODELS,
                  quick_rows=QUICK_ROWS)

if __name__ == "__main__":
    main()
