"""Minimum-weight matching beyond the dense cap (issue 18): the sparse and blocked methods against the dense optimum.

On gMission and EverySender instance 0 (true locations, and Minkowski reports at eps0 = 3),
each large-group method's travel cost is compared with the dense optimum; leaves of the
blocked method are forced to 400 reports so that these instances need several leaves, as
10^5 per group does with the default 2,000.  Then the default ("auto" = blocked) is timed at
10^4 and 10^5 uniform users per group, with the gap measured where the dense optimum fits
(5,000 per group).

Run: ``python benchmarks/bench_matching_scale.py``; writes ``matching_scale.json``.
"""

from __future__ import annotations

import time

import numpy as np
from _common import write_json

import shuffledp.tasks.matching as M
from shuffledp.datasets import load_crowdsourcing
from shuffledp.randomizers.registry import make_randomizer
from shuffledp.tasks import travel_cost


def main() -> None:
    rng = np.random.default_rng(0)
    rows = []
    R = make_randomizer("minkowski", 3.0, dim=2)
    for name in ("gmission", "everysender"):
        inst = load_crowdsourcing(name, 0)
        for reports in ("true", "minkowski eps0=3"):
            A, B = (
                (inst.users, inst.workers)
                if reports == "true"
                else (R.randomize(inst.users, rng), R.randomize(inst.workers, rng))
            )
            dense = travel_cost(M.min_weight_matching(A, B, method="dense"), A, B)
            for method, block in (("sparse", None), ("blocked", 400)):
                saved = M.BLOCK_SIZE
                M.BLOCK_SIZE = block or saved
                start = time.perf_counter()
                m = M.min_weight_matching(A, B, method=method)
                seconds = time.perf_counter() - start
                M.BLOCK_SIZE = saved
                rows.append({"data": f"{name}[0]", "reports": reports, "n_a": len(A), "n_b": len(B), "method": method,
                             "block": block, "candidates": M.SPARSE_CANDIDATES if method == "sparse" else None,
                             "full": bool(m.size == min(len(A), len(B))), "dense_cost": dense,
                             "cost": travel_cost(m, A, B), "gap": travel_cost(m, A, B) / dense - 1, "seconds": seconds})  # fmt: skip
                print(rows[-1], flush=True)
    scale = []
    for n in (5_000, 10_000, 100_000):
        A, B = rng.uniform(-1, 1, (n, 2)), rng.uniform(-1, 1, (n, 2))
        start = time.perf_counter()
        m = M.min_weight_matching(A, B, method="blocked")
        row = {"n_per_group": n, "method": "blocked", "block": M.BLOCK_SIZE, "seconds": time.perf_counter() - start,
               "full": bool(m.size == n)}  # fmt: skip
        if n <= 5_000:
            row["gap"] = travel_cost(m, A, B) / travel_cost(M.min_weight_matching(A, B, method="dense"), A, B) - 1
        scale.append(row)
        print(row, flush=True)
    write_json("matching_scale", {"instances": rows, "uniform": scale})


if __name__ == "__main__":
    main()
