"""PIC speed (issue 17, "Acceptance"): each role's cost per message at group sizes 500..100,000, and full rounds.

Roles (``roles``): one group of n enrolled clients each joins (verifies the signed parameters
and the shuffler's view, draws one-time keys) and seals its report twice -- inner to the
server, outer to the shuffler (client prepare); the shuffler opens every outer envelope,
checks the credential and admits it (shuffler unwrap), then releases one signed batch; the
server verifies the batch and decrypts and validates every inner envelope (server decrypt).
Costs are CPU time of the calling thread on one core (``time.thread_time``; the project's
machine is shared, so wall time, also recorded, measures the neighbours' load too).

Rounds (``rounds``): :func:`shuffledp.protocols.pic.round.run_round` end to end on synthetic
users (Minkowski, epsilon_c = 1, each user's nearest neighbour, k = 1: a k-d tree, so the
figures measure the protocol, not the task).

Run: ``python benchmarks/bench_pic.py [--sizes ...] [--round-sizes ...] [--suites ...]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import write_json

from shuffledp._util.timing import cpu_wall
from shuffledp.datasets import synthetic_instance
from shuffledp.protocols.pic.client import Client, ClientPolicy, VerifiedDownloads
from shuffledp.protocols.pic.computation import PicTask
from shuffledp.protocols.pic.identity import SigningIdentity
from shuffledp.protocols.pic.messages import GroupParams
from shuffledp.protocols.pic.reports import report_format
from shuffledp.protocols.pic.round import RoundConfig, run_round
from shuffledp.protocols.pic.server import Server
from shuffledp.protocols.pic.shuffler import Shuffler
from shuffledp.randomizers import make_randomizer

TARGETS = {
    "client_prepare_us": 500.0,
    "shuffler_unwrap_per_s": 10_000.0,
    "server_decrypt_per_s": 10_000.0,
    "submission_bytes_x25519": 256,
}


def _timed(func) -> tuple[float, float]:
    """(CPU, wall) seconds of one call (`shuffledp._util.timing`, shared with the round and pic-costs)."""
    _, cpu, wall = cpu_wall(func)
    return cpu, wall


def bench_roles(suite: str, n: int) -> dict:
    rng = np.random.default_rng(0)
    fmt = report_format(make_randomizer("minkowski", 3.0, dim=2))
    group = GroupParams(0, "users", "minkowski", 3.0, fmt, n, 1e-3, {"dim": 2})
    server_id = SigningIdentity.ephemeral()
    shuffler = Shuffler(server_id.verify_key, suite=suite)
    server = Server(
        suite, [group], PicTask("neighbors"), (shuffler.kem_public_key, shuffler.verify_key), identity=server_id
    )
    signed = server.signed_params()
    view = shuffler.open(signed)
    downloads = VerifiedDownloads(server.verify_key, shuffler.verify_key)
    credentials = [shuffler.enrolment.enroll() for _ in range(n)]
    X = rng.uniform(-1, 1, (n, 2))
    policy = ClientPolicy.permissive()
    subs: list[bytes] = []

    def prepare() -> None:
        for cred, x in zip(credentials, X, strict=True):
            c = Client(server.verify_key, 0, shuffler_key=shuffler.verify_key, credential=cred, policy=policy,
                       downloads=downloads)  # fmt: skip
            c.join(signed, view)
            subs.append(c.prepare(x, rng))

    def unwrap() -> None:
        for s in subs:
            shuffler.submit(s)

    batch: list[bytes] = []
    prep_cpu, prep_wall = _timed(prepare)
    unwrap_cpu, unwrap_wall = _timed(unwrap)
    release_cpu, _ = _timed(lambda: batch.append(shuffler.release(0)))
    decrypt_cpu, decrypt_wall = _timed(lambda: server.receive(batch[0]))
    return {
        "suite": suite,
        "n": n,
        "client_prepare_us": 1e6 * prep_cpu / n,
        "shuffler_unwrap_us": 1e6 * unwrap_cpu / n,
        "shuffler_unwrap_per_s": n / unwrap_cpu,
        "shuffler_release_ms": 1e3 * release_cpu,
        "server_decrypt_us": 1e6 * decrypt_cpu / n,
        "server_decrypt_per_s": n / decrypt_cpu,
        "wall_us": {
            "client_prepare": 1e6 * prep_wall / n,
            "shuffler_unwrap": 1e6 * unwrap_wall / n,
            "server_decrypt": 1e6 * decrypt_wall / n,
        },  # fmt: skip
        "submission_bytes": server.params.envelope_size,
        "inner_envelope_bytes": server.params.inner_size,
        "batch_bytes": len(batch[0]),
    }


def bench_round(suite: str, n: int) -> dict:
    rng = np.random.default_rng(0)
    inst = synthetic_instance(n, 0, rng)
    config = RoundConfig(PicTask("neighbors", k=1), "minkowski", 1.0, suite=suite)
    start = time.perf_counter()
    m = run_round([("users", inst.users)], config, rng).metrics
    keys = ("round_seconds", "posts_seconds", "client_prepare_us", "shuffler_unwrap_us_per_envelope",
            "server_decrypt_us_per_message", "board_seal_us_per_entry", "client_retrieve_us", "task_ms",
            "message_bytes", "inner_envelope_bytes", "board_bytes", "outputs_verified", "posts_verified", "wall_us")  # fmt: skip
    return {"suite": suite, "n": n, "wall_seconds": time.perf_counter() - start, **{k: m[k] for k in keys}}


def _size(text: str) -> int:
    """Users per group: an integer >= 10 (float literals such as 1e4 accepted when exact)."""
    value = float(text)
    if not value.is_integer() or value < 10:
        raise argparse.ArgumentTypeError(f"sizes must be integers >= 10, got {text}")
    return int(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=_size, nargs="+", default=[500, 2_000, 10_000, 100_000])
    parser.add_argument("--round-sizes", type=_size, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--suites", nargs="+", choices=["x25519", "pq-hybrid"], default=["x25519", "pq-hybrid"])
    parser.add_argument("--pq-max", type=int, default=10_000, help="largest n for the pq-hybrid suite (slow keys)")
    args = parser.parse_args()
    roles, rounds = [], []
    for suite in args.suites:
        for n in args.sizes:
            if suite == "pq-hybrid" and n > args.pq_max:
                continue
            p = bench_roles(suite, n)
            roles.append(p)
            print(
                f"{suite:9s} n={n:>7d}: prepare {p['client_prepare_us']:.0f} us, shuffler {p['shuffler_unwrap_per_s']:.0f}/s, "
                f"server {p['server_decrypt_per_s']:.0f}/s (CPU, one core); submission {p['submission_bytes']} B, "
                f"inner {p['inner_envelope_bytes']} B"
            )
        for n in args.round_sizes:
            if suite == "pq-hybrid" and n > args.pq_max:
                continue
            r = bench_round(suite, n)
            rounds.append(r)
            print(f"{suite:9s} round n={n:>7d}: {r['round_seconds']:.1f} s (+ posts {r['posts_seconds']:.1f} s), "
                  f"verified {r['outputs_verified']}")  # fmt: skip
    write_json("bench_pic", {"targets_x25519": TARGETS, "timing": "CPU time, one process, one core; wall_us beside",
                             "pq_hybrid_max_n": args.pq_max, "roles": roles, "rounds": rounds})  # fmt: skip


if __name__ == "__main__":
    main()
