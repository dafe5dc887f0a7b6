"""A PIC round over HTTP with one simulated client per user (the demo, the tests and the load generator).

Each user is a `shuffledp.protocols.pic.Client` -- the same code as the in-process round --
that pins the server's and the shuffler's keys from their key-configuration endpoints,
verifies the signed parameters and the shuffler's view (read from the board through the
shuffler's relay), submits its two-layer envelope through the SDK, then verifies the signed
board, decrypts its output, and exchanges signed posts with its mutual partners.  Every
output is checked against F_PIC evaluated on what the clients submitted (the check of the
in-process round), and the utility is compared with the non-private computation.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from shuffledp.crypto import VerifyKey
from shuffledp.errors import ShuffleDPError
from shuffledp.protocols.pic import Client, ClientPolicy, PicTask, VerifiedDownloads
from shuffledp.protocols.pic.computation import decode_output
from shuffledp.protocols.pic.round import _independent_check, utility
from shuffledp.service.client import AsyncPicServiceClient, ServiceError

__all__ = ["HttpRoundResult", "Progress", "run_http_round"]

Progress = Callable[[str, int, int], None]


@dataclass
class HttpRoundResult:
    round_id: str
    state: str
    admitted: int
    refused: dict[str, int]
    outputs: int
    outputs_verified: bool
    posts_sent: int
    posts_verified: bool
    utility: dict[str, float]
    ledger: list[dict[str, Any]]
    privacy: list[dict[str, Any]] | None
    signatures: dict[str, str]
    seconds: dict[str, float] = field(default_factory=dict)
    acknowledged: list[bytes] = field(default_factory=list, repr=False)


async def _bounded(items: Sequence[Any], limit: int, fn: Callable[[Any], Any]) -> list[Any]:
    sem = asyncio.Semaphore(limit)

    async def one(item: Any) -> Any:
        async with sem:
            return await fn(item)

    return await asyncio.gather(*(one(i) for i in items))


async def run_http_round(
    sdk: AsyncPicServiceClient,
    groups: Sequence[tuple[str, np.ndarray]],
    spec: dict[str, Any],
    *,
    rng: np.random.Generator,
    concurrency: int = 16,
    progress: Progress | None = None,
    policy: ClientPolicy | None = None,
    posts: bool = True,
    timeout: float = 300.0,
) -> HttpRoundResult:
    """Run one round over HTTP; ``spec`` is the body of ``POST /v1/rounds`` without ``groups`` (sizes are filled in)."""
    note = progress or (lambda what, done, total: None)
    t: dict[str, float] = {}
    start = time.perf_counter()
    server_key = VerifyKey.from_bytes(bytes.fromhex((await sdk.key_config("server"))["verify_key"]))
    shuffler_key = VerifyKey.from_bytes(bytes.fromhex((await sdk.key_config("shuffler"))["verify_key"]))
    n = sum(len(X) for _, X in groups)
    credentials: list[bytes] = []
    while len(credentials) < n:
        credentials += await sdk.enrol(min(1000, n - len(credentials)))
        note("enrolment", len(credentials), n)
    info = await sdk.create_round({**spec, "groups": [{"name": name, "size": len(X)} for name, X in groups]})
    rid = bytes.fromhex(info["round_id"])
    signed, view = await sdk.round_params(rid), await sdk.view(rid)
    downloads = VerifiedDownloads(server_key, shuffler_key)
    clients: list[list[Client]] = []
    submissions: list[tuple[Client, bytes]] = []
    creds = iter(credentials)
    for gid, (_, X) in enumerate(groups):
        row = []
        for x in X:
            c = Client(
                server_key, gid, shuffler_key=shuffler_key, credential=next(creds), policy=policy, downloads=downloads
            )
            c.join(signed, view)
            submissions.append((c, c.prepare(x, rng)))
            row.append(c)
        clients.append(row)
    t["prepare"] = time.perf_counter() - start
    refused: dict[str, int] = {}
    admitted: set[int] = set()
    acknowledged: list[bytes] = []
    done = 0

    async def send(item: tuple[Client, bytes]) -> None:
        nonlocal done
        c, sub = item
        try:
            await sdk.submit(rid, sub)
            admitted.add(id(c))
            acknowledged.append(sub)
        except ServiceError as exc:
            refused[exc.code] = refused.get(exc.code, 0) + 1
        done += 1
        if done % 100 == 0 or done == len(submissions):
            note("submissions", done, len(submissions))

    s0 = time.perf_counter()
    await _bounded(submissions, concurrency, send)
    t["submit"] = time.perf_counter() - s0
    s0 = time.perf_counter()
    await sdk.close_round(rid)
    final = await sdk.wait_round(rid, timeout=timeout)
    t["close_to_published"] = time.perf_counter() - s0
    result = HttpRoundResult(info["round_id"], final["state"], len(admitted), refused, 0, False, 0, False, {}, [],
                             final.get("privacy"), {}, t, acknowledged)  # fmt: skip
    if final["state"] != "published":
        return result
    s0 = time.perf_counter()
    head = await sdk.head(rid, timeout=timeout)
    cache: dict[int, bytes] = {}
    served = 0
    for row in clients:
        for c in row:
            if id(c) not in admitted:
                continue
            b = c.bucket(head)
            if b not in cache:
                cache[b] = await sdk.download_bucket(rid, b)
            try:
                c.retrieve(cache[b])
                served += 1
            except ShuffleDPError:
                pass
    result.outputs = served
    note("outputs", served, len(admitted))
    params = clients[0][0].params
    task = PicTask.from_json(params.task)  # type: ignore[union-attr]
    result.outputs_verified = _independent_check(params, task, clients, admitted)  # type: ignore[arg-type]
    t["retrieve"] = time.perf_counter() - s0
    if posts:
        s0 = time.perf_counter()
        sent: dict[tuple[bytes, bytes], bytes] = {}
        outgoing = []
        for row in clients:
            for c in row:
                if c.output is None:
                    continue
                for partner in c.post_targets():
                    token = secrets.token_bytes(16)
                    outgoing.append(c.post_to(partner, token))
                    sent[(c.pseudonym.to_bytes(), partner)] = token
        await _bounded(outgoing, concurrency, sdk.post)
        received = 0
        ok = True
        readers = [c for row in clients for c in row if c.output is not None and c.post_targets()]

        async def read(c: Client) -> None:
            nonlocal received, ok
            me = c.pseudonym.to_bytes()
            for data in await sdk.posts_for(rid, me):
                sender, message = c.read_post(data)
                ok = ok and sent.get((sender, me)) == message
                received += 1

        await _bounded(readers, concurrency, read)
        result.posts_sent = len(sent)
        result.posts_verified = ok and received == len(sent)
        t["posts"] = time.perf_counter() - s0
    summary = await sdk.board_round(rid)
    result.ledger, result.signatures = summary.get("ledger", []), summary.get("signatures", {})
    owners = {c.pseudonym.to_bytes(): (g, j) for g, row in enumerate(clients) for j, c in enumerate(row)}
    fmt = params.groups[0].report  # type: ignore[union-attr]
    identity = [[[(*owners[r.pseudonym], r.report.astype("<f8").tobytes()) for r in decode_output(c.output, params.suite, fmt)]  # type: ignore[union-attr]
                 if c.output is not None else [] for c in row] for row in clients]  # fmt: skip
    result.utility = utility(task, [X for _, X in groups], identity)
    t["total"] = time.perf_counter() - start
    return result
