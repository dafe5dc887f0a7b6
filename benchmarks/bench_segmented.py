"""Seconds per ``optimize_parameters`` of the segmented protocol (issue 9, deliverable 1 step 2).

The §6 settings: levels E = (0.5, 1, 2) with S1 = 25/50/25 % of n, d = 128, s in {4, 8},
delta = 0.01/n, n in {5,000, 50,000}; m free (the search over [min m_k, max m_k] and the
final calibration) and m = 1 fixed.  Each time is the best of ``--repeats`` calls after a
warm-up; the optimizer's memos (`clear_caches`) are emptied before every call, so each
time is a cold start.  Target: m free, K = 3, n = 50,000, d = 128
(s = 4) <= 5 s.  Run: ``python benchmarks/bench_segmented.py``.
"""

from __future__ import annotations

import argparse

from _common import best_seconds, write_json

from shuffledp.protocols.segmented import optimize_parameters
from shuffledp.protocols.segmented.optimizer import clear_caches

LEVELS = (0.5, 1.0, 2.0)
SHARES = (0.25, 0.5, 0.25)
D = 128
LIMIT = {("free", 50_000, 4): 5.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    results = []
    print(f"{'m':5s} {'n':>7s} {'s':>2s} {'chosen m':>10s} {'lambdas':>32s} {'seconds':>8s}  limit")
    for n in (5_000, 50_000):
        counts = [int(n * share) for share in SHARES]
        for s in (4, 8):
            for mode, m in (("free", None), ("fixed", 1.0)):

                def run(n=n, counts=counts, s=s, m=m):
                    clear_caches()  # a cold start: no memoised constraint checks from earlier calls
                    return optimize_parameters(LEVELS, 0.01 / n, counts, D, s, m)

                answer = run()
                seconds = best_seconds(run, args.repeats)
                limit = LIMIT.get((mode, n, s))
                results.append(
                    dict(
                        mode=mode,
                        n=n,
                        d=D,
                        s=s,
                        levels=LEVELS,
                        counts=counts,
                        m=answer.m,
                        lambdas=answer.lambdas,
                        m_range=answer.m_range,
                        mse_bound=answer.mse_bound,
                        seconds=seconds,
                        limit=limit,
                    )
                )
                lams = ", ".join(f"{v:.4f}" for v in answer.lambdas)
                mark = "" if limit is None else f"{limit:g} s {'ok' if seconds <= limit else 'OVER'}"
                print(f"{mode:5s} {n:7d} {s:2d} {answer.m:10.4g} {lams:>32s} {seconds:8.3f}  {mark}")
    write_json("bench_segmented", {"repeats": args.repeats, "results": results})


if __name__ == "__main__":
    main()
