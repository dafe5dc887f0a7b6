"""Minkowski Response speed (issue 19, deliverable 6).

Two targets:

1. at d = 2, ``randomize`` costs at most 8x a uniform draw of the same size
   (``rng.random((n, 2))``), n = 10^5 and 10^6; both norms (l-inf is the paper's
   choice for locations, Appendix B);
2. at the federated-learning dimension it randomizes at least 10^4 reports/s.
   The FL dimension is the number of gradient coordinates a user keeps after
   0.15% coordinate sampling, which the randomizer sanitizes (§7.3; full
   version Appendix B: "the subsampled gradient vector has 6 dimensions",
   0.15% of the 4,292 parameters of Table 4; ``experiments/fl_composition.py``
   uses ``FL_DIM = 6``): d = 6.  The full parameter count d = 4,292 is measured
   too, for a deployment that randomizes the whole vector.

Cost is the process CPU time (``time.process_time``): the cores are shared with
other jobs, and wall time then charges a call for the time it waits for a core,
more so the longer the call (a 3 ms draw fits in a scheduler slice, a 10 ms call
does not).  Wall times are recorded beside, with the load average before and
after.  At d = 2 the uniform draw and ``randomize`` alternate ``--repeats`` times
after a warm-up and the ratio is the median of the per-pair ratios; rates are
the best of several calls.  Inputs uniform on the domain, epsilon = 3.

Run: ``python benchmarks/bench_minkowski.py``; writes
``results/bench/bench_minkowski.json`` (``SHUFFLEDP_BENCH_RECORD=1``: the tracked
``benchmarks/results/``).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
from _common import write_json

from shuffledp.randomizers import MinkowskiResponse

EPSILON = 3.0
RATIO_TARGET = 8.0
RATE_TARGET = 1e4
#: The paper's subsampled-gradient dimension, and the full parameter count of its model (Table 4).
FL_DIMS = (6, 4292)
NORMS = ("linf", "l2")


def _timed(func: Callable[[], Any]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    func()
    return time.process_time() - cpu, time.perf_counter() - wall


def _paired(base: Callable[[], Any], func: Callable[[], Any], repeats: int) -> dict[str, float]:
    """Alternate base and func ``repeats`` times (after a warm-up): best times of each and the
    median of the per-pair ratios, in CPU and in wall time."""
    base(), func()
    pairs = [(_timed(base), _timed(func)) for _ in range(repeats)]
    out = {}
    for k, clock in enumerate(("cpu", "wall")):
        out[f"uniform_{clock}_seconds"] = min(b[k] for b, _ in pairs)
        out[f"randomize_{clock}_seconds"] = min(f[k] for _, f in pairs)
        out[f"ratio_{clock}"] = float(np.median([f[k] / max(b[k], 1e-9) for b, f in pairs]))
    return out


def _best(func: Callable[[], Any], repeats: int) -> tuple[float, float]:
    """Best CPU and best wall seconds of ``repeats`` calls after a warm-up."""
    func()
    times = [_timed(func) for _ in range(repeats)]
    return min(t for t, _ in times), min(t for _, t in times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10**5, 10**6], help="reports at d = 2")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    load_before = os.getloadavg()
    rng = np.random.default_rng(0)
    ratios, rates = [], []
    for n in args.sizes:
        for norm in NORMS:
            R = MinkowskiResponse(EPSILON, dim=2, norm=norm)
            X = R.domain.sample_uniform(n, rng)
            row = _paired(partial(rng.random, (n, 2)), partial(R.randomize, X, rng), args.repeats)
            row = {
                "norm": norm,
                "dim": 2,
                "n": n,
                **row,
                "target": RATIO_TARGET,
                "met": row["ratio_cpu"] <= RATIO_TARGET,
            }
            print(
                f"d=2 {norm:4s} n={n:>8}: randomize {row['randomize_cpu_seconds'] * 1e3:6.2f} ms, uniform "
                f"{row['uniform_cpu_seconds'] * 1e3:5.2f} ms (CPU), ratio {row['ratio_cpu']:.2f} CPU / "
                f"{row['ratio_wall']:.2f} wall (target <= {RATIO_TARGET:g})"
            )
            ratios.append(row)
    for d in FL_DIMS:
        n = max(10_000, min(10**6, (1 << 24) // d))
        for norm in NORMS:
            R = MinkowskiResponse(EPSILON, dim=d, norm=norm)
            X = R.domain.sample_uniform(n, rng)
            cpu, wall = _best(partial(R.randomize, X, rng), max(3, args.repeats // 3))
            row = {"norm": norm, "dim": d, "n": n, "cpu_seconds": cpu, "wall_seconds": wall,
                   "reports_per_cpu_second": n / cpu, "reports_per_wall_second": n / wall,
                   "target": RATE_TARGET, "met": n / wall >= RATE_TARGET}  # fmt: skip
            print(
                f"d={d} {norm:4s} n={n}: {n / cpu:,.0f} reports per CPU second, {n / wall:,.0f} per wall second "
                f"(target >= {RATE_TARGET:,.0f})"
            )
            rates.append(row)
    load = {"before": list(load_before), "after": list(os.getloadavg()), "cpus": os.cpu_count()}
    print(f"load average (1, 5, 15 min) before {load['before']}, after {load['after']}")
    write_json(
        "bench_minkowski",
        {
            "epsilon": EPSILON,
            "fl_dims": list(FL_DIMS),
            "load_average": load,
            "ratio_to_uniform": ratios,
            "rates": rates,
        },
    )


if __name__ == "__main__":
    main()
