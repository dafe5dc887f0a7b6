"""Reports per second of every registered randomizer (issue: foundation and local randomizers).

d = 2 and n = 10^6 for all; d = 64 where the randomizer supports it.  Categorical
randomizers use k = 16 categories (the geometric one the integers 0..16); binary RR
has two.  Minkowski Response also runs at d = 1,000 and 10,000 in both norms
(issue 6, deliverable 4), with n cut so that n * d <= 2^24 (a 128 MB output), and
reports the time to build it (radius search) separately.  Time is randomize() on
inputs drawn uniformly from the randomizer's domain, best of three after a warm-up.
Run: ``python benchmarks/bench_randomizers.py [--n N]``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
from _common import best_seconds, write_json

from shuffledp.errors import ShuffleDPError
from shuffledp.randomizers.registry import available_randomizers, make_randomizer, size_argument

EPSILON = 3.0
CATEGORIES = 16
#: Extra high-dimensional cases: (randomizer, dim, keyword arguments).
HIGH_DIM_CASES = [("minkowski", d, {"norm": norm}) for d in (1_000, 10_000) for norm in ("linf", "l2")]
#: Largest n * dim of a high-dimensional case.
HIGH_DIM_ELEMENTS = 1 << 24


def _bench(name: str, size: int, n: int, options: dict[str, Any], rng: np.random.Generator) -> dict[str, Any] | None:
    start = time.perf_counter()
    try:
        R = make_randomizer(name, EPSILON, size, **options)
    except (ShuffleDPError, ValueError, ImportError) as exc:
        print(f"{name:16s} size={size:5d}  skipped: {exc}")
        return None
    build = time.perf_counter() - start
    X = R.domain.sample_uniform(n, rng)
    seconds = best_seconds(lambda: R.randomize(X, rng))
    rate = n / seconds
    label = "".join(f" {k}={v}" for k, v in options.items())
    print(f"{name:16s} size={size:5d}{label:10s} n={n:8d}  {rate / 1e6:9.3f} M reports/s  (built in {build:.3f} s)")
    row = {"randomizer": name, "size": size, "n": n, "epsilon": EPSILON, "seconds": seconds, "reports_per_second": rate}
    return row | ({"options": options, "build_seconds": build} if options else {})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10**6)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    cases = []
    for name in available_randomizers():
        kind = size_argument(name)
        sizes = {"dim": [2, 64], None: [2]}.get(kind, [CATEGORIES])
        cases += [(name, size, args.n, {}) for size in sizes]
    cases += [(name, d, min(args.n, HIGH_DIM_ELEMENTS // d), options) for name, d, options in HIGH_DIM_CASES]
    results = [row for case in cases if (row := _bench(*case, rng)) is not None]
    write_json("bench_randomizers", {"results": results})


if __name__ == "__main__":
    main()
