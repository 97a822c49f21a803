"""Figures of privacy and utility (:mod:`dptrees.plot`): privacy-utility curves from
recorded results, and how a fit's budget is split over its kinds of release. Everything
drawn is released or public; nothing costs privacy."""

import json
import math
import numbers
import os
import re
from collections import defaultdict

import numpy as np

from dptrees._optional import optional_import

__all__ = ["plot_budget", "plot_privacy_utility"]


def _pyplot():
    """matplotlib.pyplot, or an ImportError naming the ``plot`` extra."""
    return optional_import("matplotlib.pyplot", "plot", "dptrees.plot")


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
