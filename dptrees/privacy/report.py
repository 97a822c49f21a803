"""One privacy report for every fitted estimator: what was released, how, and the total.

Every estimator keeps, after ``fit``:

* ``privacy_ledger_``: a list of entries, one per *kind* of release (node counts, split
  choices, leaf values, noisy histograms, a federated round ...), each a dict made by
  :func:`ledger_entry`: the mechanism, the sensitivity of one release (and its norm)
  for the neighbour relation, the budget of one release (``epsilon`` for pure DP,
  ``rho`` for zero-concentrated DP, or the noise multiplier and sampling rate of a
  subsampled Gaussian), and ``count``, how many such releases a single record (or
  client) takes part in;
* ``epsilon_spent_`` and ``delta_spent_``: the guarantee of the whole fit, the same
  numbers the fit charged to its accountant;
* :meth:`PrivacyReportMixin.privacy_report`: the two above with the estimator's public
  inputs, as a :class:`PrivacyReport` (a dict that serialises to JSON) whose ``str`` is
  a plain-text summary an auditor can read.

The ledger describes releases; it is built from public values only (budgets, bounds,
hyper-parameters, the number of rounds run), never from the data.
"""

import json
from pathlib import PurePath

import numpy as np
from sklearn.utils.validation import check_is_fitted

__all__ = ["PrivacyReport", "PrivacyReportMixin", "ledger_entry", "jsonable", "RECORD",
           "CLIENT", "SEEDED", "seed_note", "seeded_parameters"]

#: Neighbouring datasets of the record-level estimators.
RECORD = "add/remove one record"
#: Neighbouring federations of the federated estimators.
CLIENT = "add/remove one client (with all its records)"


def ledger_entry(release, mechanism, sensitivity, *, norm="L1", epsilon=None, rho=None,
                 count=1, neighbours=RECORD, **details):
    """One kind of release, for ``privacy_ledger_``.

    Parameters
    ----------
    release : str
        What is released (e.g. ``"node counts"``).
    mechanism : str
    sensitivity : float or None
        How far one neighbour moves one release, in ``norm``; None for a release made
        of others, each with its own (a meta-estimator's trial).
    norm : {"L1", "L2", "utility"}
        ``"utility"``: the sensitivity of a selection's scores.
    epsilon, rho : float, optional
        The budget of one release: pure ``epsilon``-DP or ``rho``-zCDP.
    count : int
        How many releases of this kind one record (client) takes part in.
    neighbours : str
    **details
        Anything else an auditor needs (noise multiplier, sampling rate ...).
    """
    entry = {"release": release, "mechanism": mechanism,
             "sensitivity": None if sensitivity is None else float(sensitivity),
             "norm": norm, "epsilon": None if epsilon is None else float(epsilon),
             "rho": None if rho is None else float(rho), "count": int(count),
             "neighbours": neighbours}
    entry.update(details)
    return entry


class Ledger:
    """The releases of one fit, recorded as they are made (``privacy_ledger_``).

    Releases of the same kind (release, mechanism, sensitivity, norm, budget and
    details) share one :func:`ledger_entry`, whose ``count`` is how many of them one
    record (client) takes part in.
    """

    def __init__(self):
        self._entries = {}

    def record(self, release, mechanism, sensitivity, *, norm="L1", count=1, **details):
        """Count ``count`` releases of a kind (``details`` as for :func:`ledger_entry`);
        ``count=0`` lists a kind that one record takes no part in (a depth-0 tree's split
        choices), so that every planned kind is shown."""
        key = (release, mechanism, sensitivity, norm, tuple(sorted(details.items())))
        entry = self._entries.get(key)
        if entry is None:
            self._entries[key] = ledger_entry(release, mechanism, sensitivity, norm=norm,
                                              count=count, **details)
        else:
            entry["count"] += int(count)

    def entries(self):
        """The ledger so far: a list of :func:`ledger_entry` dicts (copies)."""
        return [dict(entry) for entry in self._entries.values()]


def jsonable(obj):
    """``obj`` with dict keys as strings, tuples as lists, numpy arrays and scalars as
    Python values and paths as strings, recursively, so that ``json.dumps`` takes it."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, PurePath):
        return str(obj)
    return obj


class PrivacyReport(dict):
    """What a fitted estimator released, as a dict (``json.dumps`` works on it); its
    ``str`` is a plain-text summary."""

    def to_json(self, **kwargs):
        return json.dumps(self, **kwargs)

    def __str__(self):
        claim = (f"({self['epsilon_spent']:.6g}, {self['delta_spent']:.3g})-differential "
                 f"privacy for {self['neighbours']} neighbours")
        if self["privacy_leaks"]:
            claim = ("NONE: public inputs were read from the training data (below), so "
                     f"the model is NOT differentially private. With them given, it would "
                     f"be {claim}")
        lines = [
            f"Privacy report: {self['estimator']} (dptrees {self['dptrees_version']})",
            f"Guarantee: {claim}",
            f"Composition: {self['composition']}",
            "",
            f"{'release':<54} {'mechanism':<30} {'sensitivity':>14} {'budget each':>14} "
            f"{'count':>6}",
        ]
        for e in self["ledger"]:
            if e["epsilon"] is not None:
                budget = f"eps {e['epsilon']:.4g}"
            elif e["rho"] is not None:
                budget = f"rho {e['rho']:.4g}"
            else:
                budget = f"z {e.get('noise_multiplier', float('nan')):.4g}"
            sens = ("see note" if e["sensitivity"] is None
                    else f"{e['sensitivity']:.4g} ({e['norm']})")
            lines.append(f"{e['release'][:54]:<54} {e['mechanism'][:30]:<30} {sens:>14} "
                         f"{budget:>14} {e['count']:>6}")
        notes = [f"  {e['release']}: {e['note']}" for e in self["ledger"] if e.get("note")]
        if notes:
            lines += ["Notes:", *notes]
        lines.append("")
        lines.append("Public inputs:")
        for key, value in self["public_inputs"].items():
            lines.append(f"  {key}: {value}")
        leaks = self["privacy_leaks"]
        lines.append("Read from the data (NOT private): " + ("; ".join(leaks) if leaks
                                                             else "nothing"))
        if self.get("seed"):
            lines.append(f"Seed: {self['seed']}")
        return "\n".join(lines)


class PrivacyReportMixin:
    """``privacy_report()`` from ``privacy_ledger_``, ``epsilon_spent_``,
    ``delta_spent_``, ``privacy_leaks_`` and the class's ``_composition`` text."""

    #: How the ledger's releases compose into the total (set by each family).
    _composition = ""
    #: The neighbour relation of the guarantee.
    _neighbours = RECORD
    #: Fitted attributes listed as public inputs in the report, when present.
    _public_inputs = ("bounds_", "categories_", "missing_columns_", "y_bounds_", "classes_",
                      "n_features_in_", "feature_names_in_")

    def _public_input_values(self):
        """The public inputs the report lists: ``{name: value}``. With categorical
        columns, ``bounds`` gives the numeric columns' bounds by column (the categorical
        ones are listed, as given, under ``categories``: their encoded ranges are an
        implementation detail)."""
        values = {name.rstrip("_"): jsonable(getattr(self, name))
                  for name in self._public_inputs if hasattr(self, name)}
        if values.get("categories") and "bounds" in values:
            categorical = set(self.categories_)
            names = getattr(self, "feature_names_in_", None)
            values["bounds"] = {
                str(key): [low, high]
                for j, (low, high) in enumerate(zip(*values["bounds"]))
                if (key := names[j] if names is not None else j) not in categorical}
        return values

    def privacy_report(self) -> "PrivacyReport":
        """What the fit released and its total privacy cost.

        Returns
        -------
        PrivacyReport
            A dict with ``estimator``, ``epsilon_spent``, ``delta_spent``,
            ``neighbours``, ``composition``, ``ledger`` (``privacy_ledger_``),
            ``public_inputs``, ``privacy_leaks`` and ``seed`` (None, or what a stored
            user-given ``random_state`` means: see :func:`seed_note`); it serialises to
            JSON and prints as a plain-text summary.
        """
        check_is_fitted(self, "privacy_ledger_")
        from dptrees import __version__

        public = self._public_input_values()
        return PrivacyReport(
            estimator=type(self).__name__,
            dptrees_version=__version__,
            epsilon_spent=float(self.epsilon_spent_),
            delta_spent=float(getattr(self, "delta_spent_", 0.0)),
            neighbours=self._neighbours,
            composition=self._composition,
            ledger=jsonable(list(self.privacy_ledger_)),
            public_inputs=public,
            privacy_leaks=list(getattr(self, "privacy_leaks_", [])),
            seed=seed_note(self),
        )


#: What the report says of a model that stores a user-given ``random_state``.
SEEDED = ("noise reproducible from the seed: this model stores the random_state it was "
          "given, and whoever reads it (a file, a pickle) can recompute every noise draw "
          "of a refit; fit releases with random_state=None")


def seeded_parameters(estimator):
    """The names of ``estimator``'s ``random_state`` parameters (its own and, through
    ``get_params(deep=True)``, its parts') that hold a seed or a generator, not None."""
    get_params = getattr(estimator, "get_params", None)
    if get_params is None:
        return []
    return [name for name, value in get_params(deep=True).items()
            if (name == "random_state" or name.endswith("__random_state"))
            and value is not None]


def seed_note(estimator):
    """:data:`SEEDED` if ``estimator`` stores a user-given seed, else None."""
    return SEEDED if seeded_parameters(estimator) else None
