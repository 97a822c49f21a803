#!/usr/bin/env python
"""Cost of dptrees' exact noise samplers against numpy's floating-point samplers.

A plain script (no asv): every sampler is timed in the same process, on the same array
size, best of ``--repeat`` runs, and compared per sample with numpy's
``Generator.laplace`` -- the unsafe floating-point baseline (Mironov 2012). Private
selection over 1,000 candidates is reported per selection and compared with the float
exponential mechanism computed with numpy (Gumbel-max trick).

The project's target, checked on the last line:

    exact discrete Laplace and grid Laplace each cost at most 15x numpy's float Laplace
    per sample on large arrays.

Usage::

    python benchmarks/bench_samplers.py            # n = 2,000,000, best of 5
    python benchmarks/bench_samplers.py --quick    # small arrays, 1 repeat (smoke test)
    python benchmarks/bench_samplers.py --n 10000000 --repeat 3 --json out.json

The exit status is 1 when the target is missed on large arrays (n >= 1,000,000) and 0
otherwise; with ``--quick`` the verdict is printed but is only indicative.
"""

import argparse
import json
import math
import os
import platform
import sys
import time

import numpy as np

from dptrees import mechanisms

TARGET_MAX_RATIO = 15.0
TARGET_KEYS = ("discrete_laplace", "laplace_mechanism")
# Arrays at least this large count as "large" for the target.
LARGE_N = 1_000_000

LAPLACE_SCALE = 1000.0  # discrete Laplace scale in integer units
GAUSSIAN_SIGMA2 = 1.0e6  # discrete Gaussian variance parameter (sigma = 1000 units)
N_CANDIDATES = 1_000
N_SELECTIONS = 100
QUICK_N = 20_000
QUICK_SELECTIONS = 20


def _best_time(fn, repeat):
    """Best wall time of ``repeat`` calls of ``fn`` (after one warm-up call)."""
    fn()
    best = math.inf
    for _ in range(max(1, int(repeat))):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def machine_info():
    """Machine, Python and numpy information printed with (and stored in) the results."""
    try:
        import dptrees

        dptrees_version = getattr(dptrees, "__version__", "unknown")
    except Exception:  # pragma: no cover - dptrees is imported above
        dptrees_version = "unknown"
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or "unknown",
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "dptrees": dptrees_version,
        "bit_generator": type(np.random.default_rng().bit_generator).__name__,
    }


def _sampler_cases(n, rng):
    """(name, description, float baseline name, callable) for the per-sample benchmarks."""
    values = rng.normal(size=n)
    counts = rng.integers(0, 1_000, n)
    return [
        ("numpy_laplace", "numpy Generator.laplace (float, unsafe)", "numpy_laplace",
         lambda: rng.laplace(0.0, LAPLACE_SCALE, n)),
        ("numpy_normal", "numpy Generator.normal (float, unsafe)", "numpy_normal",
         lambda: rng.normal(0.0, 1000.0, n)),
        ("discrete_laplace", "discrete_laplace (exact)", "numpy_laplace",
         lambda: mechanisms.discrete_laplace(LAPLACE_SCALE, n, rng)),
        ("laplace_mechanism", "laplace_mechanism (grid Laplace)", "numpy_laplace",
         lambda: mechanisms.laplace_mechanism(values, sensitivity=1.0, epsilon=1.0,
                                              random_state=rng)),
        ("noisy_count", "noisy_count (exact)", "numpy_laplace",
         lambda: mechanisms.noisy_count(counts, epsilon=1.0, random_state=rng)),
        ("discrete_gaussian", "discrete_gaussian (exact)", "numpy_normal",
         lambda: mechanisms.discrete_gaussian(GAUSSIAN_SIGMA2, n, rng)),
        ("gaussian_mechanism", "gaussian_mechanism (grid Gaussian)", "numpy_normal",
         lambda: mechanisms.gaussian_mechanism(values, sensitivity=1.0,
                                               noise_multiplier=1.0, random_state=rng)),
    ]


def _selection_cases(n_selections, rng):
    """Selection over ``N_CANDIDATES`` utilities spread over 100 sensitivity units."""
    utilities = rng.uniform(0.0, 100.0, N_CANDIDATES)
    eps, sens = 1.0, 1.0

    def float_em():
        # The unsafe float exponential mechanism: argmax of u * eps / (2 sens) + Gumbel.
        noise = rng.gumbel(size=(n_selections, N_CANDIDATES))
        return np.argmax(utilities * (eps / (2.0 * sens)) + noise, axis=1)

    return [
        ("numpy_float_em", "numpy float exp. mechanism (Gumbel-max, unsafe)", float_em),
        ("permute_and_flip", "permute_and_flip (exact)",
         lambda: mechanisms.permute_and_flip(utilities, sensitivity=sens, epsilon=eps,
                                             size=n_selections, random_state=rng)),
        ("exponential_mechanism", "exponential_mechanism (exact)",
         lambda: mechanisms.exponential_mechanism(utilities, sensitivity=sens,
                                                  epsilon=eps, size=n_selections,
                                                  random_state=rng)),
    ]


def run(n=2_000_000, repeat=5, *, n_selections=N_SELECTIONS, seed=None):
    """Time every sampler and return the results as a dict.

    Returns
    -------
    dict with keys

    ``info``
        :func:`machine_info`.
    ``n``, ``repeat``, ``n_candidates``, ``n_selections``
        The settings.
    ``samplers``
        name -> ``{"description", "seconds", "ns_per_sample", "ratio_to_numpy_laplace",
        "ratio_to_float_twin"}`` (the float twin is ``numpy_laplace`` for Laplace-type
        samplers and ``numpy_normal`` for Gaussian-type ones).
    ``selection``
        name -> ``{"description", "seconds", "us_per_selection", "ratio_to_float_em"}``.
    ``ratios``
        ``discrete_laplace`` and ``laplace_mechanism`` -> cost per sample / numpy's.
    ``target``
        ``{"max_ratio", "large_arrays", "passed"}``; ``large_arrays`` says whether ``n``
        is large enough (>= 1,000,000) for the check to be meaningful.
    """
    n = int(n)
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    repeat = max(1, int(repeat))
    rng = np.random.default_rng(seed)

    samplers = {}
    cases = _sampler_cases(n, rng)
    for name, description, _, fn in cases:
        seconds = _best_time(fn, repeat)
        samplers[name] = {
            "description": description,
            "seconds": seconds,
            "ns_per_sample": seconds / n * 1e9,
        }
    base_laplace = samplers["numpy_laplace"]["seconds"]
    for name, _, twin, _ in cases:
        entry = samplers[name]
        entry["ratio_to_numpy_laplace"] = entry["seconds"] / base_laplace
        entry["ratio_to_float_twin"] = entry["seconds"] / samplers[twin]["seconds"]

    selection = {}
    for name, description, fn in _selection_cases(n_selections, rng):
        seconds = _best_time(fn, repeat)
        selection[name] = {
            "description": description,
            "seconds": seconds,
            "us_per_selection": seconds / n_selections * 1e6,
        }
    base_em = selection["numpy_float_em"]["seconds"]
    for entry in selection.values():
        entry["ratio_to_float_em"] = entry["seconds"] / base_em

    ratios = {key: samplers[key]["ratio_to_numpy_laplace"] for key in TARGET_KEYS}
    return {
        "info": machine_info(),
        "n": n,
        "repeat": repeat,
        "n_candidates": N_CANDIDATES,
        "n_selections": n_selections,
        "samplers": samplers,
        "selection": selection,
        "ratios": ratios,
        "target": {
            "max_ratio": TARGET_MAX_RATIO,
            "large_arrays": n >= LARGE_N,
            "passed": all(r <= TARGET_MAX_RATIO for r in ratios.values()),
        },
    }


def format_report(results):
    """The human-readable report of :func:`run`'s results, as a string."""
    info = results["info"]
    lines = [
        f"machine : {info['platform']} ({info['machine']}, {info['cpu_count']} CPUs, "
        f"processor {info['processor']})",
        f"python  : {info['python']}   numpy {info['numpy']}   dptrees {info['dptrees']}"
        f"   bit generator {info['bit_generator']}",
        f"settings: n = {results['n']:,} samples per array, best of {results['repeat']}; "
        f"selection over {results['n_candidates']:,} candidates, "
        f"{results['n_selections']} selections per call",
        "",
    ]
    header = f"{'sampler':<50} {'ns/sample':>10} {'x np.laplace':>13} {'x float twin':>13}"
    lines += [header, "-" * len(header)]
    for entry in results["samplers"].values():
        lines.append(
            f"{entry['description']:<50} {entry['ns_per_sample']:>10.1f} "
            f"{entry['ratio_to_numpy_laplace']:>13.2f} {entry['ratio_to_float_twin']:>13.2f}"
        )
    lines.append("")
    header = f"{'selection (1,000 candidates)':<50} {'us/selection':>12} {'x float EM':>11}"
    lines += [header, "-" * len(header)]
    for entry in results["selection"].values():
        lines.append(
            f"{entry['description']:<50} {entry['us_per_selection']:>12.2f} "
            f"{entry['ratio_to_float_em']:>11.2f}"
        )
    lines.append("")
    target = results["target"]
    verdict = "PASS" if target["passed"] else "FAIL"
    detail = ", ".join(f"{k} {v:.2f}x" for k, v in results["ratios"].items())
    note = "" if target["large_arrays"] else (
        f"  [n < {LARGE_N:,}: small arrays, indicative only]"
    )
    lines.append(
        f"{verdict}: exact discrete Laplace and grid Laplace each cost at most "
        f"{target['max_ratio']:g}x numpy's float Laplace per sample ({detail}){note}"
    )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"small arrays (n={QUICK_N:,}), {QUICK_SELECTIONS} selections, "
                             "1 repeat: a smoke test, not a measurement")
    parser.add_argument("--n", type=int, default=2_000_000,
                        help="samples per array (default: 2,000,000)")
    parser.add_argument("--repeat", type=int, default=5,
                        help="timed runs per sampler, the best is kept (default: 5)")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed of the numpy Generator (default: OS entropy)")
    parser.add_argument("--json", metavar="PATH", default=None,
                        help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)

    if args.quick:
        n, repeat, n_selections = QUICK_N, 1, QUICK_SELECTIONS
    else:
        n, repeat, n_selections = args.n, args.repeat, N_SELECTIONS
    results = run(n, repeat, n_selections=n_selections, seed=args.seed)
    print(format_report(results))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)
    # Only a failure on large arrays is a failure: small arrays are dominated by
    # per-call overhead and timer noise.
    target = results["target"]
    return 1 if target["large_arrays"] and not target["passed"] else 0


if __name__ == "__main__":
    sys.exit(main())
