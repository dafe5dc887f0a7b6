"""Seconds per variation-ratio bound, per inverse and per sampled FL calibration, against the targets of record.

Upper bound: ``variation_ratio_epsilon`` for generic eps0-LDP at delta = 1e-6 (library
default rtol), n = 10^2 ... 10^12 and eps0 in `EPS0`.  Inverse: ``local_epsilon(target, n,
1e-6)``.  FL calibration: ``composed_local_epsilon`` of the PIC federated setting (80 rounds,
each a fixed-size secret sample of s = 10,000 of N = 50,000 users, delta = 0.01 / N, tight
composition), for global targets 1 and 3.

Each figure is the median of ``--repeats`` calls after a warm-up (wall and process CPU
seconds); the machine's load average is recorded at the start and end of each section, since
the machine may be shared.  Targets (issue #22, deliverable 6): the bound at n = 10^6 in
<= 10 ms, at every n up to 10^12 in <= 50 ms, the inverse at n = 10^6 in <= 25 ms, a sampled
FL calibration in <= 10 s; each is judged on the slowest case it covers (median wall time).

``--label NAME`` stores the run under that name beside the runs already in the output JSON
(e.g. ``before`` with the old tree on PYTHONPATH, ``after`` with the new one); the targets are
judged for every run.  Run: ``python benchmarks/bench_accounting.py [--label after]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from _common import output_dir, write_json

from shuffledp.accounting import VariationRatio, local_epsilon
from shuffledp.accounting.composition import composed_local_epsilon
from shuffledp.accounting.variation_ratio import variation_ratio_epsilon

DELTA = 1e-6
SIZES = tuple(10**k for k in range(2, 13))
EPS0 = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
INVERSE_SIZES = (10**4, 10**6, 10**8, 10**12)
INVERSE_TARGETS = (0.1, 1.0)
#: The PIC federated-learning setting (§7.3): users per round, population, rounds, delta.
FL = {"n": 10_000, "population": 50_000, "rounds": 80, "delta": 0.01 / 50_000}
FL_TARGETS = (1.0, 3.0)
#: Seconds allowed (median wall) for the slowest case each target covers.
TARGETS = {
    "bound at n = 10^6": 0.010,
    "bound at every n <= 10^12": 0.050,
    "inverse at n = 10^6": 0.025,
    "sampled FL calibration": 10.0,
}


def timed(func: Callable[[], Any], repeats: int) -> tuple[Any, float, float]:
    """(result, median wall seconds, median CPU seconds) of ``repeats`` calls after one warm-up call."""
    value = func()
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        func()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return value, statistics.median(walls), statistics.median(cpus)


def load() -> list[float]:
    """The 1, 5 and 15 minute load averages."""
    return [round(x, 2) for x in os.getloadavg()]


def bounds(repeats: int) -> dict[str, Any]:
    start, rows = load(), []
    for n in SIZES:
        for eps0 in EPS0:
            call = partial(variation_ratio_epsilon, VariationRatio.from_ldp(eps0), n, DELTA)
            value, wall, cpu = timed(call, repeats)
            rows.append(dict(n=n, eps0=eps0, delta=DELTA, epsilon=value, seconds=wall, cpu_seconds=cpu))
            print(f"bound    n={n:8.0e} eps0={eps0:<5g} {value:14.8g} {wall * 1e3:8.2f} ms (cpu {cpu * 1e3:.2f})")
    return {"load_start": start, "load_end": load(), "rows": rows}


def inverses(repeats: int) -> dict[str, Any]:
    start, rows = load(), []
    for n in INVERSE_SIZES:
        for target in INVERSE_TARGETS:
            value, wall, cpu = timed(partial(local_epsilon, target, n, DELTA), repeats)
            rows.append(dict(n=n, target=target, delta=DELTA, local_epsilon=value, seconds=wall, cpu_seconds=cpu))
            print(f"inverse  n={n:8.0e} target={target:<4g} {value:14.8g} {wall * 1e3:8.2f} ms (cpu {cpu * 1e3:.2f})")
    return {"load_start": start, "load_end": load(), "rows": rows}


def fl_calibrations(repeats: int) -> dict[str, Any]:
    start, rows = load(), []
    for target in FL_TARGETS:
        call = partial(composed_local_epsilon, target, FL["n"], FL["delta"], FL["rounds"], population=FL["population"])
        value, wall, cpu = timed(call, repeats)
        rows.append(dict(**FL, target=target, sampling="fixed-size", eps0=value, seconds=wall, cpu_seconds=cpu))
        print(f"FL       target={target:<4g} per-round eps0 {value:.8g} {wall:8.2f} s (cpu {cpu:.2f})")
    return {"load_start": start, "load_end": load(), "rows": rows}


def verdicts(run: dict[str, Any]) -> dict[str, Any]:
    """Each target beside the slowest case it covers (median wall and CPU seconds) and whether it is met."""
    bound_rows, inverse_rows = run["bounds"]["rows"], run["inverses"]["rows"]
    cases = {
        "bound at n = 10^6": [r for r in bound_rows if r["n"] == 10**6],
        "bound at every n <= 10^12": bound_rows,
        "inverse at n = 10^6": [r for r in inverse_rows if r["n"] == 10**6],
        "sampled FL calibration": run["fl"]["rows"],
    }
    out = {}
    for name, rows in cases.items():
        slowest = max(rows, key=lambda r: r["seconds"])
        case = {k: slowest[k] for k in ("n", "eps0", "target") if k in slowest}
        out[name] = {
            "target_seconds": TARGETS[name],
            "seconds": slowest["seconds"],
            "cpu_seconds": max(r["cpu_seconds"] for r in rows),
            "slowest_case": case,
            "met": slowest["seconds"] <= TARGETS[name],
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=7, help="timed calls per case (median); FL uses a third")
    parser.add_argument("--label", default="current", help="name of this run in the JSON (others are kept)")
    args = parser.parse_args()
    run: dict[str, Any] = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    run["bounds"] = bounds(args.repeats)
    run["inverses"] = inverses(args.repeats)
    run["fl"] = fl_calibrations(max(1, args.repeats // 3))
    run["targets"] = verdicts(run)
    for name, verdict in run["targets"].items():
        print(
            f"{name:28s} {verdict['seconds']:9.4f} s (cpu {verdict['cpu_seconds']:.4f}) "
            f"target {verdict['target_seconds']:g} s: {'met' if verdict['met'] else 'NOT met'}"
        )
    previous = output_dir() / "bench_accounting.json"
    runs = {}
    if previous.exists():
        runs = json.loads(previous.read_text()).get("runs", {})
    runs[args.label] = run
    write_json("bench_accounting", {"delta": DELTA, "targets_seconds": TARGETS, "runs": runs})


if __name__ == "__main__":
    main()
