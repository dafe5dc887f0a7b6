"""One full in-process PIC round per suite and size (issue 8, "Speed"): the roles, over bytes.

Each point runs :func:`shuffledp.protocols.pic.round.run_round` on synthetic users in
[-1,1]^2 (Minkowski Response, epsilon_c = 1): every user draws one-time keys, verifies
the signed parameters and seals its report (client prepare); the shuffler permutes
with the OS CSPRNG; the server decrypts and validates (server decrypt), computes
f(L) and seals the board (board encryption); every user verifies the board and
decrypts its output; mutual neighbours exchange signed posts (timed apart:
``posts_seconds``; ``round_seconds`` covers steps 1-6).  The task is each user's
nearest neighbour (k = 1) in one group of n users: k-d tree, O(n log n), so the
figures measure the protocol, not the task (min-weight matching is cubic, and
``tasks.radius_matching`` already takes seconds at 2,000 x 2,000).  Run: ``python benchmarks/bench_pic.py [--sizes ...] [--suites ...]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import write_json

from shuffledp.datasets import synthetic_instance
from shuffledp.protocols.pic.computation import PicTask
from shuffledp.protocols.pic.round import RoundConfig, run_round

TARGETS = {
    "client_prepare_us": 500.0,
    "server_decrypt_reports_per_s": 10_000.0,
    "message_bytes": 160,
    "round_seconds_at_1e5": 60.0,
}


def bench_point(suite: str, n: int) -> dict:
    rng = np.random.default_rng(0)
    inst = synthetic_instance(n, 0, rng)
    config = RoundConfig(PicTask("neighbors", k=1), "minkowski", 1.0, suite=suite)
    start = time.perf_counter()
    result = run_round([("users", inst.users)], config, rng)
    m = result.metrics
    return {
        "suite": suite,
        "n": n,
        "wall_seconds": time.perf_counter() - start,
        "round_seconds": m["round_seconds"],
        "posts_seconds": m["posts_seconds"],
        "client_prepare_us": m["client_prepare_us"],
        "server_decrypt_us_per_message": m["server_decrypt_us_per_message"],
        "server_decrypt_reports_per_s": 1e6 / m["server_decrypt_us_per_message"],
        "board_seal_us_per_entry": m["board_seal_us_per_entry"],
        "board_encrypt_entries_per_s": 1e6 / m["board_seal_us_per_entry"],
        "client_retrieve_us": m["client_retrieve_us"],
        "task_ms": m["task_ms"],
        "message_bytes": m["message_bytes"],
        "board_bytes": m["board_bytes"],
        "outputs_verified": m["outputs_verified"],
        "posts_verified": m["posts_verified"],
    }


def _size(text: str) -> int:
    """Users per round: an integer >= 10 (float literals such as 1e4 accepted when exact)."""
    value = float(text)
    if not value.is_integer() or value < 10:
        raise argparse.ArgumentTypeError(f"sizes must be integers >= 10, got {text}")
    return int(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=lambda v: _size(v), nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--suites", nargs="+", choices=["x25519", "pq-hybrid"], default=["x25519", "pq-hybrid"])
    parser.add_argument("--pq-max", type=int, default=10_000, help="largest n for the pq-hybrid suite (slow keys)")
    args = parser.parse_args()
    results = []
    for suite in args.suites:
        for n in args.sizes:
            if suite == "pq-hybrid" and n > args.pq_max:
                print(f"{suite} n={n}: skipped (above --pq-max {args.pq_max})")
                continue
            point = bench_point(suite, n)
            results.append(point)
            print(
                f"{suite:9s} n={n:>7d}: round {point['round_seconds']:.1f} s (+ posts {point['posts_seconds']:.1f} s), "
                f"prepare {point['client_prepare_us']:.0f} us, decrypt {point['server_decrypt_reports_per_s']:.0f}/s, "
                f"board {point['board_encrypt_entries_per_s']:.0f} entries/s, message {point['message_bytes']} B, "
                f"board {point['board_bytes'] / 1e6:.2f} MB, verified {point['outputs_verified']}"
            )
    write_json("bench_pic", {"targets_x25519": TARGETS, "pq_hybrid_max_n": args.pq_max, "results": results})


if __name__ == "__main__":
    main()
