"""Loaders of the shared UCI datasets with *public* schemas, for the dptrees experiments.

Every loader returns a :class:`Dataset`: float64 features ``X``, targets ``y``, the
public feature ``bounds`` to pass to the estimators, and the public ``classes``
(classification) or ``y_bounds`` (regression). Features go through
:class:`dptrees.preprocessing.PublicSchemaEncoder`, whose schema is built from each
dataset's *documented* domain, never from its rows:

* categorical columns: the category lists of the ``.names`` files (parsed from
  ``agaricus-lepiota.names``, ``house-votes-84.names`` and ``adult.names`` as shipped in
  ``shared/data``) or, for Nursery, whose ``.names`` file is not in ``shared/data``, the
  list of the UCI documentation (hard-coded below);
* numeric columns: documented or natural public bounds, stated per column below.

So the encoding, the bounds and the class lists cost no privacy. The rows are read only
to be encoded (a value outside its documented categories is an error).

Data: ``<repo>/../shared/data/<folder>`` (see ``shared/data/README.md``); pass
``data_dir`` to read it from elsewhere. A missing file raises ``FileNotFoundError``
naming the path. Cite the datasets by their DOIs (:data:`DOIS`).
"""

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dptrees.preprocessing import PublicSchemaEncoder

from experiments import DATA_DIR

__all__ = [
    "DATA_DIR",
    "DOIS",
    "Dataset",
    "load_adult",
    "load_congressional_voting",
    "load_daily_demand_orders",
    "load_dataset",
    "load_mushroom",
    "load_nursery",
    "load_wine_quality",
    "LOADERS",
]

DOIS = {
    "adult": "10.24432/C5XW20",
    "wine_quality": "10.24432/C56S3T",
    "mushroom": "10.24432/C5959T",
    "nursery": "10.24432/C5P88W",
    "congressional_voting": "10.24432/C5C01P",
    "daily_demand_orders": "10.24432/C5BC8T",
}


@dataclass
class Dataset:
    """A loaded dataset with its public schema.

    ``n_original_features`` is the number of attributes before encoding (DiffPETs' ``k``);
    ``max_categories`` the largest number of categories of a categorical column (0 if
    none): with ordinal encoding, ``n_bins >= max_categories`` keeps categories apart.
    """

    name: str
    task: str  # "classification" or "regression"
    X: np.ndarray
    y: np.ndarray
    bounds: tuple
    feature_names: list
    n_original_features: int
    max_categories: int
    encoding: str
    classes: np.ndarray | None = None
    y_bounds: tuple | None = None
    schema: list = field(default_factory=list)
    doi: str = ""

    @property
    def target_kwargs(self):
        """``classes=`` or ``y_bounds=`` for the estimators."""
        if self.task == "classification":
            return {"classes": self.classes}
        return {"y_bounds": self.y_bounds}


def _data_path(folder, filename, data_dir=None):
    base = Path(data_dir) if data_dir is not None else DATA_DIR
    path = base / folder / filename
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} not found: the shared UCI data is expected in {base} "
            f"(see shared/data/README.md); pass data_dir= to read it from elsewhere"
        )
    return path


def _encode(name, task, rows, schema, names, encoding, target, doi, classes=None,
            y_bounds=None):
    encoder = PublicSchemaEncoder(schema=schema, encoding=encoding).fit()
    X = encoder.transform(rows)
    n_cats = [len(s) for s in schema if not isinstance(s, tuple)]
    if encoding == "onehot":
        feature_names = []
        for col, spec in zip(names, schema):
            if isinstance(spec, tuple):
                feature_names.append(col)
            else:
                feature_names.extend(f"{col}={c}" for c in spec)
    else:
        feature_names = list(names)
    return Dataset(
        name=name, task=task, X=np.ascontiguousarray(X, dtype=np.float64), y=target,
        bounds=(encoder.bounds_[0].copy(), encoder.bounds_[1].copy()),
        feature_names=feature_names, n_original_features=len(schema),
        max_categories=max(n_cats, default=0), encoding=encoding,
        classes=None if classes is None else np.asarray(classes, dtype=object),
        y_bounds=y_bounds, schema=list(schema), doi=doi,
    )


def _read_csv_rows(path, delimiter=","):
    with open(path, newline="") as fh:
        return [row for row in csv.reader(fh, delimiter=delimiter) if row and any(row)]


# --------------------------------------------------------------------------------------
# .names parsers (documented domains)

def parse_mushroom_names(path):
    """``[(attribute, [codes])]`` from section 7 of ``agaricus-lepiota.names``.

    Lines look like ``  5. odor:   almond=a,anise=l,...`` with continuation lines; the
    codes are the letters after ``=`` (``missing=?`` gives ``?`` for stalk-root).
    """
    text = Path(path).read_text()
    section = text.split("7. Attribute Information:")[1].split("8. Missing Attribute")[0]
    attrs = []
    for line in section.splitlines():
        m = re.match(r"\s*(\d+)\.\s*([\w?-]+):\s*(.*)$", line)
        if m:
            attrs.append([m.group(2), m.group(3)])
        elif attrs and line.strip():
            attrs[-1][1] += line.strip()
    out = []
    for attr, spec in attrs:
        codes = [item.split("=")[1].strip() for item in spec.split(",") if "=" in item]
        out.append((attr, codes))
    return out


def parse_adult_names(path):
    """``{attribute: [categories] or "continuous"}`` and the class list from ``adult.names``."""
    lines = Path(path).read_text().splitlines()
    attrs = {}
    classes = None
    for line in lines:
        line = line.strip()
        if not line or line.startswith("|"):
            continue
        if classes is None and line.startswith(">50K"):
            classes = [c.strip().rstrip(".") for c in line.split(",")]
            continue
        m = re.match(r"^([\w-]+):\s*(.*)\.$", line)
        if m:
            values = m.group(2).strip()
            attrs[m.group(1)] = ("continuous" if values == "continuous"
                                 else [v.strip() for v in values.split(",")])
    return attrs, classes


def parse_voting_names(path):
    """Attribute names and (class list, vote values) from ``house-votes-84.names``."""
    text = Path(path).read_text()
    section = text.split("7. Attribute Information:")[1].split("8. Missing Attribute")[0]
    classes, attrs = None, []
    for line in section.splitlines():
        m = re.match(r"\s*(\d+)\.\s*([\w -]+):\s*\d+\s*\(([^)]*)\)", line)
        if not m:
            continue
        values = [v.strip() for v in m.group(3).split(",")]
        if m.group(2).strip() == "Class Name":
            classes = values
        else:
            attrs.append((m.group(2).strip(), values))
    return classes, attrs


# --------------------------------------------------------------------------------------
# Loaders

def load_mushroom(encoding="ordinal", data_dir=None):
    """Mushroom (UCI #73): 8,124 x 22 categorical attributes, classes ``e``/``p``.

    Categories from section 7 of ``agaricus-lepiota.names`` (stalk-root includes its
    documented ``missing=?``). Classes ``["e", "p"]`` (documented "edible=e, poisonous=p").
    """
    attrs = parse_mushroom_names(_data_path("mushroom", "agaricus-lepiota.names", data_dir))
    rows = _read_csv_rows(_data_path("mushroom", "agaricus-lepiota.data", data_dir))
    y = np.array([r[0] for r in rows], dtype=object)
    feats = [r[1:] for r in rows]
    return _encode("mushroom", "classification", feats, [codes for _, codes in attrs],
                   [a for a, _ in attrs], encoding, y, DOIS["mushroom"], classes=["e", "p"])


# Nursery's nursery.names is not in shared/data: the documented domains (UCI #76).
NURSERY_SCHEMA = (
    ("parents", ["usual", "pretentious", "great_pret"]),
    ("has_nurs", ["proper", "less_proper", "improper", "critical", "very_crit"]),
    ("form", ["complete", "completed", "incomplete", "foster"]),
    ("children", ["1", "2", "3", "more"]),
    ("housing", ["convenient", "less_conv", "critical"]),
    ("finance", ["convenient", "inconv"]),
    ("social", ["nonprob", "slightly_prob", "problematic"]),
    ("health", ["recommended", "priority", "not_recom"]),
)
NURSERY_CLASSES = ["not_recom", "recommend", "very_recom", "priority", "spec_prior"]


def load_nursery(encoding="ordinal", data_dir=None):
    """Nursery (UCI #76): 12,960 x 8 categorical attributes, 5 classes.

    Categories and classes as documented by UCI (hard-coded: :data:`NURSERY_SCHEMA`,
    :data:`NURSERY_CLASSES`, each in the documentation's order).
    """
    rows = _read_csv_rows(_data_path("nursery", "nursery.data", data_dir))
    y = np.array([r[-1] for r in rows], dtype=object)
    feats = [r[:-1] for r in rows]
    return _encode("nursery", "classification", feats, [c for _, c in NURSERY_SCHEMA],
                   [a for a, _ in NURSERY_SCHEMA], encoding, y, DOIS["nursery"],
                   classes=NURSERY_CLASSES)


def load_congressional_voting(encoding="ordinal", data_dir=None):
    """Congressional Voting Records (UCI #105): 435 x 16 votes, party as the class.

    Each vote has the documented values ``y``, ``n`` and ``?`` — the ``.names`` file says
    ``?`` is not "unknown" but "neither yea nor nay" (not voted), so it is a category of
    its own. Classes from the ``.names`` file: ``["democrat", "republican"]``.
    """
    classes, attrs = parse_voting_names(
        _data_path("congressional_voting", "house-votes-84.names", data_dir))
    rows = _read_csv_rows(_data_path("congressional_voting", "house-votes-84.data", data_dir))
    y = np.array([r[0] for r in rows], dtype=object)
    feats = [r[1:] for r in rows]
    schema = [values + ["?"] for _, values in attrs]
    return _encode("congressional_voting", "classification", feats, schema,
                   [a for a, _ in attrs], encoding, y, DOIS["congressional_voting"],
                   classes=classes)


# Wine Quality: winequality.names gives units (via Cortez et al. 2009) but no ranges, so
# these are round physical / regulatory bounds of red wine, chosen from domain knowledge
# of each quantity, not from the rows (values outside are clipped by the estimators):
WINE_BOUNDS = (
    ("fixed acidity", (0.0, 20.0)),         # g(tartaric acid)/L; wines ~4-15
    ("volatile acidity", (0.0, 2.0)),       # g(acetic acid)/L; EU limit for red ~1.2
    ("citric acid", (0.0, 2.0)),            # g/L; EU limit on added citric acid 1 g/L
    ("residual sugar", (0.0, 20.0)),        # g/L; dry to medium-sweet wines
    ("chlorides", (0.0, 1.0)),              # g(sodium chloride)/L
    ("free sulfur dioxide", (0.0, 100.0)),  # mg/L
    ("total sulfur dioxide", (0.0, 300.0)),  # mg/L; EU limit for red 150 (some 200+)
    ("density", (0.98, 1.02)),              # g/cm^3; water is 1, wine is near it
    ("pH", (2.5, 4.5)),                     # wines have pH ~3-4
    ("sulphates", (0.0, 2.0)),              # g(potassium sulphate)/L
    ("alcohol", (8.0, 16.0)),               # % vol; wine is ~8.5-15 % vol
)
WINE_Y_BOUNDS = (0.0, 10.0)  # documented: "quality (score between 0 and 10)"


def load_wine_quality(data_dir=None, encoding="ordinal"):
    """Wine Quality, red (UCI #186): 1,599 x 11 numeric features, target ``quality``.

    Regression with documented ``y_bounds = (0, 10)``; feature bounds :data:`WINE_BOUNDS`.
    """
    path = _data_path("wine_quality", "winequality-red.csv", data_dir)
    rows = _read_csv_rows(path, delimiter=";")
    header = [h.strip().strip('"') for h in rows[0]]
    expected = [name for name, _ in WINE_BOUNDS] + ["quality"]
    if header != expected:
        raise ValueError(f"unexpected header in {path}: {header}")
    data = np.array(rows[1:], dtype=np.float64)
    return _encode("wine_quality", "regression", data[:, :-1], [b for _, b in WINE_BOUNDS],
                   [n for n, _ in WINE_BOUNDS], encoding, data[:, -1], DOIS["wine_quality"],
                   y_bounds=WINE_Y_BOUNDS)


# Daily Demand Forecasting Orders: the UCI page documents the columns but no ranges. Round
# bounds of the right order of magnitude for each kind of count (orders per day of a
# Brazilian logistics company: hundreds of orders; the banking columns count
# transactions in the tens of thousands). Week of the month is documented as 1-5; the day
# of the week as "Monday to Friday", coded by the file as integers, so (1, 7) covers any
# 1-based day numbering.
DAILY_DEMAND_BOUNDS = (
    ("Week of the month", (1.0, 5.0)),
    ("Day of the week", (1.0, 7.0)),
    ("Non-urgent order", (0.0, 1000.0)),
    ("Urgent order", (0.0, 1000.0)),
    ("Order type A", (0.0, 1000.0)),
    ("Order type B", (0.0, 1000.0)),
    ("Order type C", (0.0, 1000.0)),
    ("Fiscal sector orders", (0.0, 1000.0)),
    ("Orders from the traffic controller sector", (0.0, 100000.0)),
    ("Banking orders (1)", (0.0, 250000.0)),
    ("Banking orders (2)", (0.0, 250000.0)),
    ("Banking orders (3)", (0.0, 250000.0)),
)
DAILY_DEMAND_Y_BOUNDS = (0.0, 1000.0)  # "Target (Total orders)", hundreds per day


def load_daily_demand_orders(data_dir=None, encoding="ordinal"):
    """Daily Demand Forecasting Orders (UCI #409): 60 x 12 features, target total orders.

    Bounds :data:`DAILY_DEMAND_BOUNDS`, ``y_bounds`` :data:`DAILY_DEMAND_Y_BOUNDS`.
    """
    path = _data_path("daily_demand_orders", "Daily_Demand_Forecasting_Orders.csv", data_dir)
    rows = _read_csv_rows(path, delimiter=";")
    if not rows[0][-1].startswith("Target"):
        raise ValueError(f"unexpected header in {path}: {rows[0]}")
    data = np.array([[float(v) for v in r] for r in rows[1:]], dtype=np.float64)
    if data.shape[1] != len(DAILY_DEMAND_BOUNDS) + 1:
        raise ValueError(f"expected {len(DAILY_DEMAND_BOUNDS) + 1} columns, got {data.shape[1]}")
    return _encode("daily_demand_orders", "regression", data[:, :-1],
                   [b for _, b in DAILY_DEMAND_BOUNDS], [n for n, _ in DAILY_DEMAND_BOUNDS],
                   encoding, data[:, -1], DOIS["daily_demand_orders"],
                   y_bounds=DAILY_DEMAND_Y_BOUNDS)


ADULT_COLUMNS = ("age", "workclass", "fnlwgt", "education", "education-num",
                 "marital-status", "occupation", "relationship", "race", "sex",
                 "capital-gain", "capital-loss", "hours-per-week", "native-country", "income")
# Public numeric bounds: age and hours-per-week as the census file's documented top codes
# and natural limits, capital-gain's documented top code 99999, capital-loss's (0, 4356)
# and education-num's 1-16 (one per documented education level).
ADULT_NUMERIC_BOUNDS = {
    "age": (17.0, 90.0),
    "education-num": (1.0, 16.0),
    "capital-gain": (0.0, 99999.0),
    "capital-loss": (0.0, 4356.0),
    "hours-per-week": (1.0, 99.0),
}
ADULT_DROPPED = ("fnlwgt", "native-country")


def _read_adult(path, is_test):
    rows = []
    with open(path) as fh:
        for i, line in enumerate(fh):
            line = line.strip()
            if not line or (is_test and i == 0 and line.startswith("|")):
                continue
            parts = [p.strip() for p in line.split(",")]
            if len(parts) != len(ADULT_COLUMNS):
                raise ValueError(f"{path}, line {i + 1}: expected 15 fields, got {len(parts)}")
            parts[-1] = parts[-1].rstrip(".")
            rows.append(parts)
    return rows


def load_adult(encoding="ordinal", data_dir=None, drop_missing=False):
    """Adult (UCI #2), prepared as in seeds.md section 3 (Zhang et al.'s DP AdaBoost).

    US natives only (``native-country == "United-States"``, so the column is then
    constant and dropped), ``fnlwgt`` dropped; ``adult.data`` is the training set,
    ``adult.test`` the test set (its banner line skipped, the trailing ``.`` of its labels
    removed). Categories of the categorical columns are ``adult.names``' lists plus
    ``"?"`` (documented there: "Convert Unknown to '?'"); numeric columns get
    :data:`ADULT_NUMERIC_BOUNDS`. Classes ``["<=50K", ">50K"]``.

    ``drop_missing=True`` also drops the rows with a ``?`` (as many papers do: then
    27,504 training and 13,788 test rows, majority class 0.7496 on the test set, versus
    0.7597 on the 14,662 US-native test rows with ``?`` kept).

    Returns
    -------
    (train, test) : two :class:`Dataset` with the same schema
    """
    attrs, classes = parse_adult_names(_data_path("adult", "adult.names", data_dir))
    classes = sorted(classes)  # ["<=50K", ">50K"]
    out = []
    for filename, is_test in (("adult.data", False), ("adult.test", True)):
        rows = _read_adult(_data_path("adult", filename, data_dir), is_test)
        country = ADULT_COLUMNS.index("native-country")
        rows = [r for r in rows if r[country] == "United-States"]
        if drop_missing:
            rows = [r for r in rows if "?" not in r]
        keep = [j for j, c in enumerate(ADULT_COLUMNS[:-1]) if c not in ADULT_DROPPED]
        names = [ADULT_COLUMNS[j] for j in keep]
        schema = []
        for name in names:
            spec = attrs[name]
            if spec == "continuous":
                schema.append(ADULT_NUMERIC_BOUNDS[name])
            else:
                schema.append(list(spec) + ["?"])
        feats = [[r[j] for j in keep] for r in rows]
        y = np.array([r[-1] for r in rows], dtype=object)
        ds = _encode("adult" + ("_test" if is_test else "_train"), "classification", feats,
                     schema, names, encoding, y, DOIS["adult"], classes=classes)
        out.append(ds)
    return tuple(out)


LOADERS = {
    "mushroom": load_mushroom,
    "nursery": load_nursery,
    "congressional_voting": load_congressional_voting,
    "wine_quality": load_wine_quality,
    "daily_demand_orders": load_daily_demand_orders,
}


def load_dataset(name, encoding="ordinal", data_dir=None):
    """One of :data:`LOADERS` by name (Adult has its own train/test :func:`load_adult`)."""
    if name not in LOADERS:
        raise KeyError(f"unknown dataset {name!r}; choose from {sorted(LOADERS)}")
    return LOADERS[name](encoding=encoding, data_dir=data_dir)


def data_available(data_dir=None):
    """Whether ``shared/data`` (or ``data_dir``) exists."""
    return (Path(data_dir) if data_dir is not None else DATA_DIR).is_dir()
