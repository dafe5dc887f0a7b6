"""Load on the PIC shuffler over loopback (issue 18, "Acceptance"): accepted submissions/s, latency, errors.

Starts the three services as processes on loopback (SQLite files in a temporary folder
unless ``--db``), opens a round of two groups, enrols the users and prepares one real
two-layer submission per user (before the clock starts), then ``--clients`` concurrent
clients send them (each over its own keep-alive connection) and every answer is timed.  An
acknowledgement comes only after the submission's row is committed (group commit), so the
rate is of durable admissions.  With ``--round`` it then closes the round and times it to
the published board (decrypt, matching, sealing, publication), with every client's output
checked on the board.

Writes ``results/bench/load_pic_service.json`` (``make bench-record``: the numbers of record).
Run: ``python benchmarks/load_pic_service.py [--users 20000] [--clients 200] [--round] [--db URL]``.
Loopback only; every loop is bounded by the number of users.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import tempfile
import time

import numpy as np
from _common import write_json

from shuffledp.crypto import VerifyKey
from shuffledp.protocols.pic import Client, VerifiedDownloads
from shuffledp.service.client import AsyncPicServiceClient
from shuffledp.service.local import LocalServices


async def _raw_client(host: str, port: int, path: str, bodies: list[bytes], out: list[tuple[float, int]]) -> None:
    """One keep-alive HTTP/1.1 connection sending ``bodies`` one after another (a minimal wrk-like client)."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        for body in bodies:
            head = (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(body)}\r\n\r\n").encode()  # fmt: skip
            start = time.perf_counter()
            writer.write(head + body)
            status_line = await reader.readline()
            length = 0
            while True:
                line = await reader.readline()
                if line in (b"\r\n", b""):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            await reader.readexactly(length)
            out.append((time.perf_counter() - start, int(status_line.split()[1])))
    finally:
        writer.close()


async def run(users: int, clients: int, db: str | None, do_round: bool, folder: str) -> dict:
    services = LocalServices(folder, db_url=db)
    services.start_all()
    try:
        async with AsyncPicServiceClient(services.url("shuffler"), server_url=services.url("server"),
                                         operator_token=services.token(), timeout=600) as sdk:  # fmt: skip
            server_key = VerifyKey.from_bytes(bytes.fromhex((await sdk.key_config("server"))["verify_key"]))
            shuffler_key = VerifyKey.from_bytes(bytes.fromhex((await sdk.key_config("shuffler"))["verify_key"]))
            half = users // 2
            spec = {"task": {"name": "min-weight"}, "randomizer": "minkowski", "epsilon_c": 1.0, "ttl_seconds": 3600.0,
                    "groups": [{"name": "passengers", "size": half}, {"name": "drivers", "size": users - half}]}  # fmt: skip
            t0 = time.perf_counter()
            creds = []
            while len(creds) < users:
                creds += await sdk.enrol(min(1000, users - len(creds)))
            info = await sdk.create_round(spec)
            rid = bytes.fromhex(info["round_id"])
            signed, view = await sdk.round_params(rid), await sdk.view(rid)
            downloads = VerifiedDownloads(server_key, shuffler_key)
            rng = np.random.default_rng(1)
            X = rng.uniform(-1, 1, (users, 2))
            cl = []
            for i, cred in enumerate(creds):
                c = Client(server_key, int(i >= half), shuffler_key=shuffler_key, credential=cred, downloads=downloads)
                c.join(signed, view)
                c.prepare(X[i], rng)
                cl.append(c)
            bodies = [('{"submission":"' + base64.b64encode(c.submission).decode() + '"}').encode() for c in cl]
            prepare_s = time.perf_counter() - t0
            host, port = "127.0.0.1", services.ports["shuffler"]
            path = f"/v1/rounds/{rid.hex()}/submissions"
            out: list[tuple[float, int]] = []
            load_before = os.getloadavg()[0]
            start = time.perf_counter()
            await asyncio.gather(*(_raw_client(host, port, path, bodies[k::clients], out) for k in range(clients)))
            elapsed = time.perf_counter() - start
            lat = np.array([t for t, _ in out])
            codes = [s for _, s in out]
            accepted = sum(1 for s in codes if s == 201)
            result = {
                "users": users, "clients": clients, "db": db or "sqlite (one file per service, WAL, synchronous=FULL)",
                "accepted": accepted, "errors": len(codes) - accepted, "seconds": elapsed,
                "accepted_per_second": accepted / elapsed, "latency_ms": {"p50": 1e3 * float(np.percentile(lat, 50)),
                "p90": 1e3 * float(np.percentile(lat, 90)), "p99": 1e3 * float(np.percentile(lat, 99)),
                "max": 1e3 * float(lat.max())}, "setup_seconds": prepare_s,
                "durability": "each 201 follows the commit of its row (group commit)",
                "load_average_1min": {"before": load_before, "after": os.getloadavg()[0], "cpus": os.cpu_count()},
            }  # fmt: skip
            print({k: v for k, v in result.items()}, flush=True)
            if do_round:
                t1 = time.perf_counter()
                await sdk.close_round(rid)
                final = await sdk.wait_round(rid, timeout=1800)
                t_pub = time.perf_counter() - t1
                served = 0
                if final["state"] == "published":
                    board = await sdk.download(rid, timeout=60)
                    for c in cl:
                        c.retrieve(board)
                        served += 1
                result["round"] = {"state": final["state"], "close_to_published_seconds": t_pub, "outputs_verified": served,
                                   "errors": users - served, "end_to_end_seconds": time.perf_counter() - t0}  # fmt: skip
                print(result["round"], flush=True)
            return result
    finally:
        services.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--users", type=int, default=20_000)
    ap.add_argument("--clients", type=int, default=200)
    ap.add_argument("--db", default=None)
    ap.add_argument("--round", action="store_true", help="then close the round and time it to the published board")
    ap.add_argument("--name", default="load_pic_service")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="shuffledp-load-") as folder:
        result = asyncio.run(run(a.users, a.clients, a.db, a.round, folder))
    write_json(a.name, {"command": "python benchmarks/" + " ".join(["load_pic_service.py", f"--users {a.users}",
                        f"--clients {a.clients}"] + (["--round"] if a.round else []) + ([f"--db {a.db}"] if a.db else [])),
                        **result})  # fmt: skip


if __name__ == "__main__":
    main()
