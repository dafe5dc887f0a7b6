"""Seconds of the personalized amplification bounds (issue 10), and the upper/lower gap per Table 3 distribution.

Targets: per-victim upper bounds for n = 10^5 users with 1,000 distinct budgets <= 30 s;
one victim among n = 10^6 users <= 1 s (binary RR, delta = 1/n).  Also records, for each
Table 3 distribution at n in {10^4, 10^5}, the upper bound, the lower bound and their gap
for the median-budget victim.  Run: ``python benchmarks/bench_personalized.py``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import best_seconds, write_json

from shuffledp.accounting.personalized import (
    personalized_shuffle_epsilon,
    personalized_shuffle_epsilon_lower,
    personalized_shuffle_epsilons,
)
from shuffledp.protocols.personalized import TABLE3, table3_budgets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    timings = []
    budgets = table3_budgets("uniform1", 1_000_000, rng)
    one = lambda: personalized_shuffle_epsilon(budgets[0], budgets[1:], 1e-6)  # noqa: E731
    timings.append(
        dict(case="one victim", n=1_000_000, seconds=best_seconds(one, args.repeats), limit=1.0, epsilon=one())
    )
    grid = rng.choice(np.linspace(0.05, 1.0, 1000), 100_000)  # 1,000 distinct budgets (uniform1 range)
    start = time.perf_counter()
    values, eps = personalized_shuffle_epsilons(grid, 1e-5)
    timings.append(
        dict(
            case="all distinct budgets",
            n=100_000,
            distinct=int(values.size),
            seconds=time.perf_counter() - start,
            limit=30.0,
        )
    )
    for row in timings:
        print(row)
    gaps = []
    for name in TABLE3:
        for n in (10_000, 100_000):
            b = table3_budgets(name, n, rng)
            i = int(np.argsort(b)[n // 2])
            others = np.delete(b, i)
            up = personalized_shuffle_epsilon(b[i], others, 1 / n)
            lo = personalized_shuffle_epsilon_lower(b[i], others, 1 / n)
            gaps.append(dict(distribution=name, n=n, victim_eps=float(b[i]), upper=up, lower=lo, gap=up / lo - 1))
            print(gaps[-1])
    write_json("bench_personalized", dict(timings=timings, gaps=gaps))


if __name__ == "__main__":
    main()
