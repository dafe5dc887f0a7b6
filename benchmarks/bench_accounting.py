"""Seconds per variation-ratio upper bound and per inverse (issue: amplification accounting).

Upper bound: ``variation_ratio_epsilon`` for generic eps0-LDP at delta = 1e-6, to the
acceptance precision rtol = 1e-6 and to the library default, for n = 10^4 ... 10^12.
Inverse: ``local_epsilon(target, n, 1e-6)`` (generic family, default upper bound).
Each time is the best of three calls after a warm-up; nothing is cached between calls.
Targets (2 cores): upper bound at n = 10^6 <= 0.5 s, at 10^8 <= 5 s and at 10^12 <= 10 s; inverse at
10^6 <= 2 s.  Run: ``python benchmarks/bench_accounting.py``.
"""

from __future__ import annotations

import argparse
from functools import partial

from _common import best_seconds, write_json

from shuffledp.accounting import VariationRatio, local_epsilon
from shuffledp.accounting.variation_ratio import DEFAULT_RTOL, variation_ratio_epsilon

DELTA = 1e-6
SIZES = (10**4, 10**6, 10**8, 10**10, 10**12)
EPS0 = (0.5, 1.0, 4.0)
TARGETS = (0.1, 1.0)
LIMITS = {"upper": {10**6: 0.5, 10**8: 5.0, 10**12: 10.0}, "inverse": {10**6: 2.0}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    results = []
    print(f"{'kind':8s} {'n':>6s} {'param':>12s} {'rtol':>7s} {'result':>14s} {'seconds':>9s}  limit")
    for n in SIZES:
        for eps0 in EPS0:
            params = VariationRatio.from_ldp(eps0)
            for rtol in (1e-6, DEFAULT_RTOL):
                value = variation_ratio_epsilon(params, n, DELTA, rtol=rtol)
                seconds = best_seconds(partial(variation_ratio_epsilon, params, n, DELTA, rtol=rtol), args.repeats)
                results.append(
                    dict(kind="upper", n=n, eps0=eps0, delta=DELTA, rtol=rtol, epsilon=value, seconds=seconds)
                )
                limit = LIMITS["upper"].get(n)
                print(
                    f"{'upper':8s} {n:6.0e} {'eps0=' + str(eps0):>12s} {rtol:7.0e} {value:14.8g} {seconds:9.4f}  {limit or ''}"
                )
        for target in TARGETS:
            value = local_epsilon(target, n, DELTA)
            seconds = best_seconds(partial(local_epsilon, target, n, DELTA), args.repeats)
            results.append(dict(kind="inverse", n=n, target=target, delta=DELTA, local_epsilon=value, seconds=seconds))
            limit = LIMITS["inverse"].get(n)
            print(
                f"{'inverse':8s} {n:6.0e} {'target=' + str(target):>12s} {'':7s} {value:14.8g} {seconds:9.4f}  {limit or ''}"
            )
    slowest = {
        kind: {str(n): max(r["seconds"] for r in results if r["kind"] == kind and r["n"] == n) for n in SIZES}
        for kind in ("upper", "inverse")
    }
    limits = {kind: {str(n): s for n, s in per.items()} for kind, per in LIMITS.items()}
    met = all(slowest[kind][n] <= s for kind, per in limits.items() for n, s in per.items())
    print(f"slowest per n: {slowest}; within limits: {met}")
    write_json(
        "bench_accounting",
        {"delta": DELTA, "results": results, "slowest": slowest, "limits": limits, "within_limits": met},
    )


if __name__ == "__main__":
    main()
