"""Seconds per randomizer-specific bound (the three-class decomposition) and per calibration.

Upper bound: ``shuffle_epsilon(n, 0.01/n, params=R.amplification_parameters())`` for 10-RR (common
part fully covered) and Minkowski Response on [-1,1]^2 (LDP-only common ratio), eps0 in {1, 4}.
Calibration: ``local_epsilon(1.0, n, 0.01/n, family=...)`` for the same randomizers.
Parameters: ``Laplace(2, dim).amplification_parameters()`` at dim 1,000 and 10,000 (its exact
largest total variation, a d-fold convolution; target at dim 10,000: well under 1 s, was 57 s).
Targets (issue "Sound accounting for every randomizer", 2 cores): the bound at n = 10^6 <= 1 s,
the calibration at n = 10^6 <= 5 s.  Each time is the best of ``--repeats`` calls after a warm-up.
Run: ``python benchmarks/bench_blanket.py``.
"""

from __future__ import annotations

import argparse
from functools import partial

from _common import best_seconds, write_json

from shuffledp import local_epsilon, shuffle_epsilon
from shuffledp.randomizers import KRandomizedResponse, Laplace, MinkowskiResponse
from shuffledp.randomizers.laplace import laplace_total_variation

SIZES = (10**3, 10**4, 10**6, 10**8)
FAMILIES = {
    "10-rr": lambda eps: KRandomizedResponse(epsilon=eps, k=10),
    "minkowski-linf-2": lambda eps: MinkowskiResponse(epsilon=eps, dim=2, norm="linf"),
}
LIMITS = {"upper": {10**6: 1.0}, "calibration": {10**6: 5.0}}
#: Dimensions of the Laplace parameters benchmark.
LAPLACE_DIMS = (1_000, 10_000)


def _laplace_parameters(dim: int) -> float:
    laplace_total_variation.cache_clear()  # time the computation, not the cache
    return Laplace(2.0, dim=dim).amplification_parameters().beta


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    results = []
    print(f"{'kind':12s} {'family':18s} {'n':>6s} {'param':>8s} {'result':>12s} {'seconds':>9s}  limit")
    for n in SIZES:
        delta = 0.01 / n
        for name, family in FAMILIES.items():
            for eps0 in (1.0, 4.0):
                params = family(eps0).amplification_parameters()
                value = shuffle_epsilon(n, delta, params=params)
                seconds = best_seconds(partial(shuffle_epsilon, n, delta, params=params), args.repeats)
                results.append(
                    dict(kind="upper", family=name, n=n, eps0=eps0, delta=delta, epsilon=value, seconds=seconds)
                )
                print(
                    f"{'upper':12s} {name:18s} {n:6.0e} {eps0:8g} {value:12.6g} {seconds:9.4f}  {LIMITS['upper'].get(n, '')}"
                )
            value = local_epsilon(1.0, n, delta, family=family)
            seconds = best_seconds(partial(local_epsilon, 1.0, n, delta, family=family), args.repeats)
            results.append(
                dict(
                    kind="calibration", family=name, n=n, target=1.0, delta=delta, local_epsilon=value, seconds=seconds
                )
            )
            print(
                f"{'calibration':12s} {name:18s} {n:6.0e} {1.0:8g} {value:12.6g} {seconds:9.4f}  {LIMITS['calibration'].get(n, '')}"
            )
    for dim in LAPLACE_DIMS:
        beta = _laplace_parameters(dim)
        seconds = best_seconds(partial(_laplace_parameters, dim), args.repeats)
        results.append(dict(kind="parameters", family=f"laplace-{dim}", eps0=2.0, beta=beta, seconds=seconds))
        print(f"{'parameters':12s} {f'laplace-{dim}':18s} {'':>6s} {2.0:8g} {beta:12.6g} {seconds:9.4f}")
    slowest = {
        kind: {str(n): max(r["seconds"] for r in results if r["kind"] == kind and r["n"] == n) for n in SIZES}
        for kind in ("upper", "calibration")
    }
    limits = {kind: {str(n): s for n, s in per.items()} for kind, per in LIMITS.items()}
    met = all(slowest[kind][n] <= s for kind, per in limits.items() for n, s in per.items())
    print(f"slowest per n: {slowest}; within limits: {met}")
    write_json("bench_blanket", {"results": results, "slowest": slowest, "limits": limits, "within_limits": met})


if __name__ == "__main__":
    main()
