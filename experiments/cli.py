"""The command line shared by the sweeps over epsilons, seeds and models."""

import argparse
import time

import numpy as np
from pathlib import Path

from experiments.results_json import write_json

__all__ = ["config_table", "finish", "gain_over_defaults", "paired_difference",
           "record_cell", "sweep_main", "sweep_parser", "sweep_settings"]


def sweep_parser(doc, quick_help, models):
    """``--quick --eps --seeds --models --data-dir --json``, described by ``doc``'s first
    paragraph."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help=quick_help)
    p.add_argument("--eps", type=float, nargs="+", default=None)
    p.add_argument("--seeds", type=int, default=None)
    p.add_argument("--models", nargs="+", default=None, choices=list(models))
    p.add_argument("--data-dir", type=Path, default=None)
    p.add_argument("--json", type=Path, default=None)
    return p


def sweep_settings(args, epsilons, quick_epsilons, n_seeds, models):
    """``(epsilons, n_seeds, models)`` of a run: the options given, else the defaults
    (the quick ones with ``--quick``)."""
    return (tuple(args.eps) if args.eps else (quick_epsilons if args.quick else epsilons),
            args.seeds or (1 if args.quick else n_seeds),
            tuple(args.models) if args.models else tuple(models))


def finish(results, text, start, json_path):
    """Print the results' table ``text`` and the run time (kept in ``results``), write
    them to ``json_path`` if given, and return them."""
    print()
    print(text)
    results["elapsed_seconds"] = time.perf_counter() - start
    print(f"\nrun time: {results['elapsed_seconds']:.1f} s")
    if json_path is not None:
        write_json(json_path, results)
    return results


def sweep_main(doc, *, run, format_results, epsilons, quick_epsilons, n_seeds, models,
               quick_rows=None, quick_help=None, options=()):
    """The ``main(argv=None)`` of a plain sweep: parse ``argv`` (:func:`sweep_parser`,
    plus ``options``: ``(flag, add_argument keywords)`` pairs, each passed to ``run`` by
    its destination), call ``run(epsilons, n_seeds, models, quick=..., data_dir=...,
    **options)``, print ``format_results(results)`` and return the results
    (:func:`finish`). ``quick_help`` says what ``--quick`` runs (by default
    ``quick_rows`` training rows, ``quick_epsilons``, 1 seed)."""

    def main(argv=None):
        parser = sweep_parser(
            doc, quick_help or f"{quick_rows} training rows, eps {quick_epsilons}, 1 seed",
            models)
        extra = [parser.add_argument(flag, **kwargs).dest for flag, kwargs in options]
        args = parser.parse_args(argv)
        start = time.perf_counter()
        chosen = sweep_settings(args, epsilons, quick_epsilons, n_seeds, models)
        results = run(*chosen, quick=args.quick, data_dir=args.data_dir,
                      **{dest: getattr(args, dest) for dest in extra})
        return finish(results, format_results(results), start, args.json)

    return main


def paired_difference(diff):
    """``(mean, 2 SE)`` of paired per-fit differences (the noise band: twice the standard
    error ``std(ddof=1) / sqrt(n)``; NaN for a single pair)."""
    diff = np.asarray(diff, dtype=float)
    two_se = 2 * diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else float("nan")
    return float(diff.mean()), float(two_se)


def gain_over_defaults(cells, name, column, key, sign=1, baseline="defaults"):
    """`` [gain +- 2 SE]`` of config ``name`` over ``baseline`` in ``column``: the paired
    per-seed differences of ``cells[...][column][key]`` times ``sign`` (-1 where lower is
    better); empty for the baseline itself or where there is none."""
    if baseline not in cells or name == baseline:
        return ""
    diff, two_se = paired_difference(sign * np.subtract(
        cells[name][column][key], cells[baseline][column][key]))
    return f" [{diff:+.4f} +- {two_se:.4f}]"


def config_table(cells, columns, labels, cell_text, name_width, width):
    """A header (``labels`` of the ``columns``), its rule and one row per config of
    ``cells``, ``cell_text(name, column)`` right-aligned in each column."""
    head = f"{'config':<{name_width}}" + "".join(f"{label:>{width}}" for label in labels)
    lines = [head, "-" * len(head)]
    for name in cells:
        lines.append(f"{name:<{name_width}}" + "".join(
            f"{cell_text(name, column):>{width}}" for column in columns))
    return lines


def record_cell(results, name, eps, cell, log, text):
    """Store ``cell`` as config ``name``'s at ``eps`` in ``results["cells"]`` and, if
    ``log``, log ``  [text] (seconds)``."""
    results["cells"].setdefault(name, {})[eps] = cell
    if log:
        log(f"  [{text} ({cell['seconds']:.1f} s)")
