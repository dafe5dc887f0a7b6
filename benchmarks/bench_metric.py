"""Seconds per Geo-Shuffle epsilon (metric paper Theorem 4.1) and per inverse (issue 11).

``geo_shuffle_epsilon_paper(eps_geo, delta=1e-4, n)`` (Theorem 4.1's formula) maximised over d = 1..50 (the default) and at d = 1 only,
for n = 300 and 10^5 and several eps_geo; ``geo_shuffle_local_epsilon(target, 1e-4, n, method="theorem-4.1")`` (its inverse; the certified default
returns eps_geo at once when k > 2c).
Each time is the best of three calls after a warm-up; nothing is cached between calls.
Targets (2 cores): one epsilon at n = 300 <= 10 ms, at n = 10^5 <= 100 ms (the published
implementation takes about 5 s per value).  Run: ``python benchmarks/bench_metric.py``.
"""

from __future__ import annotations

import argparse
from functools import partial

from _common import best_seconds, write_json

from shuffledp.accounting.metric import DEFAULT_MAX_DISTANCE, geo_shuffle_epsilon_paper, geo_shuffle_local_epsilon

DELTA = 1e-4
SIZES = (300, 10**5)
EPS_GEO = (0.05, 0.2, 0.5, 1.0, 3.0)
TARGETS = (0.01, 0.1)
LIMITS = {"epsilon": {300: 0.01, 10**5: 0.1}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    results = []
    print(f"{'kind':8s} {'n':>7s} {'param':>14s} {'d max':>6s} {'result':>14s} {'seconds':>9s}")
    for n in SIZES:
        for eps_geo in EPS_GEO:
            for max_d in (DEFAULT_MAX_DISTANCE, 1):
                value = geo_shuffle_epsilon_paper(eps_geo, DELTA, n, max_distance=max_d)
                seconds = best_seconds(partial(geo_shuffle_epsilon_paper, eps_geo, DELTA, n, max_distance=max_d), args.repeats)
                results.append(dict(kind="epsilon", n=n, eps_geo=eps_geo, delta=DELTA, max_distance=max_d, epsilon=value, seconds=seconds))
                print(f"{'epsilon':8s} {n:7d} {'eps_geo=' + str(eps_geo):>14s} {max_d:6d} {value:14.8g} {seconds:9.5f}")
        for target in TARGETS:
            value = geo_shuffle_local_epsilon(target, DELTA, n, method="theorem-4.1")
            seconds = best_seconds(partial(geo_shuffle_local_epsilon, target, DELTA, n, method="theorem-4.1"), args.repeats)
            results.append(dict(kind="inverse", n=n, target=target, delta=DELTA, eps_geo=value, seconds=seconds))
            print(f"{'inverse':8s} {n:7d} {'target=' + str(target):>14s} {'':6s} {value:14.8g} {seconds:9.5f}")
    slowest = {
        kind: {str(n): max(r["seconds"] for r in results if r["kind"] == kind and r["n"] == n) for n in SIZES}
        for kind in ("epsilon", "inverse")
    }
    limits = {kind: {str(n): s for n, s in per.items()} for kind, per in LIMITS.items()}
    met = all(slowest[kind][n] <= s for kind, per in limits.items() for n, s in per.items())
    print(f"slowest per n: {slowest}; within limits: {met}")
    write_json("bench_metric", {"delta": DELTA, "results": results, "slowest": slowest, "limits": limits, "within_limits": met})


if __name__ == "__main__":
    main()
