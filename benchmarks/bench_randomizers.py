"""Reports per second of every registered randomizer (issue: foundation and local randomizers).

d = 2 and n = 10^6 for all; d = 64 where the randomizer supports it.  Categorical
randomizers use k = 16 categories (the geometric one the integers 0..16); binary RR
has two.  Time is randomize() on inputs drawn uniformly from the randomizer's domain,
best of three after a warm-up.
Run: ``python benchmarks/bench_randomizers.py [--n N]``.
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import best_seconds, write_json

from shuffledp.errors import ShuffleDPError
from shuffledp.randomizers.registry import available_randomizers, make_randomizer, size_argument

EPSILON = 3.0
CATEGORIES = 16


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10**6)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    results = []
    for name in available_randomizers():
        kind = size_argument(name)
        sizes = {"dim": [2, 64], None: [2]}.get(kind, [CATEGORIES])
        for size in sizes:
            try:
                R = make_randomizer(name, EPSILON, size)
            except (ShuffleDPError, ValueError, ImportError) as exc:
                print(f"{name:16s} size={size:3d}  skipped: {exc}")
                continue
            X = R.domain.sample_uniform(args.n, rng)
            seconds = best_seconds(lambda: R.randomize(X, rng))
            rate = args.n / seconds
            results.append({"randomizer": name, "size": size, "n": args.n, "epsilon": EPSILON, "seconds": seconds, "reports_per_second": rate})
            print(f"{name:16s} size={size:3d}  {rate / 1e6:9.2f} M reports/s")
    write_json("bench_randomizers", {"results": results})


if __name__ == "__main__":
    main()
