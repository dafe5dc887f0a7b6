"""The PIC server as an HTTP service: signed round parameters, batch intake, f(L), the signed board.

It runs `shuffledp.protocols.pic.Server` (one object per round, its KEM key in a 0600 file;
the object is rebuilt after a restart from that key and the stored signed parameters, which
it reproduces byte for byte).  A round moves through ``open`` -> ``closed`` -> ``shuffled``
(every group's batch verified and stored) -> ``computed`` (the board sealed and stored) ->
``published`` (the bulletin board verified and stored it), or ``failed``; a background step
moves stored rounds on, so a server killed at any point continues where the database says.

Authentication: a batch is accepted only if the round's shuffler signed it (the key named in
the signed parameters); the board accepts only boards signed by this server.  Opening and
closing rounds needs the operator token; the server's calls to the shuffler carry the
service token.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from fastapi import FastAPI, Request, Response
from pydantic import Field, field_validator

from shuffledp.accounting._rounding import SEARCH_MAX_EPSILON
from shuffledp.crypto import KemPublicKey, VerifyKey
from shuffledp.crypto.kem import fingerprint
from shuffledp.errors import AnonymityThresholdError, MessageFormatError, ShuffleDPError
from shuffledp.protocols.pic import PicTask, RoundConfig, Server
from shuffledp.protocols.pic.bulletin import bucket_of
from shuffledp.protocols.pic.messages import SignedRoundParams
from shuffledp.protocols.pic.round import GroupPrivacy, plan_groups
from shuffledp.service._http import (
    OCTETS,
    Metrics,
    Problem,
    StrictModel,
    b64,
    bearer_first,
    octets_body,
    octets_response,
    parse_round_id,
    problems,
    service_app,
)
from shuffledp.service._peers import FAILURE_CONTEXT, MAX_FAILURE_REASON, Peers, failure_message, keep_stepping
from shuffledp.service.keys import KeyStore
from shuffledp.service.settings import ServiceSettings
from shuffledp.service.storage import Store

__all__ = ["CreateRound", "GroupSpec", "KeyConfig", "RoundInfo", "ServerService", "TaskModel", "create_app"]

log = logging.getLogger("shuffledp.service.server")
ROLE = "server"
POST_SIZE = 16


class TaskModel(StrictModel):
    name: Literal["min-weight", "max-matching", "neighbors"]
    k: int = Field(1, ge=1, le=1000)
    radius: float = Field(0.0, ge=0, le=1e6)


class GroupSpec(StrictModel):
    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    size: int = Field(ge=1, le=100_000_000, description="n_i: users enrolled for the group")


class CreateRound(StrictModel):
    task: TaskModel
    randomizer: Literal["minkowski", "laplace", "staircase", "squarewave", "duchi", "privunit"] = "minkowski"
    # at most the local-epsilon search's top: a group's local epsilon is searched up to it, and a shuffled
    # epsilon never exceeds the local one, so a larger target is met exactly as this one
    epsilon_c: float = Field(gt=0, le=SEARCH_MAX_EPSILON)
    delta: float | None = Field(None, gt=0, lt=1)
    groups: list[GroupSpec] = Field(min_length=1, max_length=2)
    min_fraction: float = Field(1.0, gt=0, le=1)
    corrupted: int = Field(0, ge=0, le=100_000_000)
    dim: int = Field(2, ge=1, le=16)
    bucket_bits: int = Field(0, ge=0, le=16)
    min_bucket_size: int = Field(10, ge=1, le=1_000_000)
    ttl_seconds: float = Field(3600.0, gt=0, le=30 * 86400, description="the round closes this long after it opens")
    suite: Literal["x25519", "pq-hybrid"] = "x25519"

    @field_validator("groups")
    @classmethod
    def _distinct_names(cls, groups: list[GroupSpec]) -> list[GroupSpec]:
        names = [g.name for g in groups]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"group names must be distinct, got {', '.join(map(repr, twice))} more than once")
        return groups


class RoundInfo(StrictModel):
    round_id: str
    state: str
    params_hash: str | None = None
    deadline: float | None = None
    announced: bool = False
    groups: list[dict[str, Any]] = Field(default_factory=list)
    batches: dict[str, dict[str, Any]] = Field(default_factory=dict)
    privacy: list[dict[str, Any]] | None = None
    error: str | None = None


class KeyConfig(StrictModel):
    verify_key: str = Field(description="the server's long-term Ed25519 key (hex): it signs parameters and boards")
    fingerprint: str


@dataclass
class _Live:
    server: Server
    lock: threading.Lock


_BATCH_REASONS = {
    "signature": (403, "signature"), "count": (400, "malformed-batch"), "digest": (400, "malformed-batch"),
    "round": (422, "wrong-round"), "view": (422, "wrong-view"), "group": (422, "wrong-group"),
    "replay": (409, "replay"), "closed": (409, "duplicate-batch"), "short": (422, "short-batch"),
}  # fmt: skip


class ServerService:
    """The state and logic behind the server's routes (module docstring)."""

    def __init__(self, settings: ServiceSettings, store: Store, keys: KeyStore, peers: Peers) -> None:
        self.settings, self.store, self.keys, self.peers = settings, store, keys, peers
        self.metrics = Metrics(ROLE)
        self.identity = keys.identity(ROLE)
        self.service_token = keys.token("service")
        self.operator_token = keys.token("operator")
        self.live: dict[bytes, _Live] = {}
        self._last_close_call: dict[bytes, float] = {}
        self._computing: set[bytes] = set()
        self._task: asyncio.Task | None = None
        self.ready = False
        self.executor: Any = None  # a Dask client when --dask-scheduler is given (service.scale)

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        if self.settings.dask_scheduler:
            from shuffledp.service.scale import connect

            self.executor = await asyncio.to_thread(connect, self.settings.dask_scheduler)
        self.ready = True
        self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()

    async def _loop(self) -> None:
        await keep_stepping(self.step, self.settings.reconcile_seconds, log, "server")

    def _server(self, row: dict[str, Any]) -> _Live:
        """The round's protocol Server, rebuilt from its key file and stored parameters (and batches) if needed."""
        rid = row["round_id"]
        if rid in self.live:
            return self.live[rid]
        params = SignedRoundParams.from_bytes(row["signed_params"], server_key=self.identity.verify_key).params
        kem = self.keys.load_kem(f"server-round-{rid.hex()}")
        server = Server(params.suite, params.groups, PicTask.from_json(params.task),
                        (params.shuffler_kem_key, params.shuffler_verify_key), identity=self.identity,
                        post_payload_size=params.post_payload_size, output_payload_size=params.output_payload_size,
                        bucket_bits=params.bucket_bits, min_bucket_size=params.min_bucket_size, kem=kem, round_id=rid)  # fmt: skip
        if server.signed_params() != row["signed_params"]:
            raise RuntimeError("restored round parameters differ from the stored ones")
        if self.executor is not None:
            from shuffledp.service.scale import attach_server

            attach_server(server, self.executor)
        for _, (_, data) in sorted(self.store.batches_of(ROLE, rid).items()):
            server.receive(data)
        live = _Live(server, threading.Lock())
        self.live[rid] = live
        return live

    async def step(self) -> None:
        now = time.time()
        states = ["open", "closed", "shuffled", "computed", "failed"]
        for row in await asyncio.to_thread(self.store.list_rounds, ROLE, states):
            rid, state = row["round_id"], row["state"]
            if state == "failed":
                if not row["info"].get("failure_posted"):
                    await self.push_failure(row)
                continue
            if state == "open" and not row["info"].get("announced"):
                await self.announce(row)
            elif state == "open" and row["deadline"] is not None and now >= row["deadline"]:
                await asyncio.to_thread(self.store.update_round, ROLE, rid, state="closed", expect="open")
            elif state == "closed" and now - self._last_close_call.get(rid, 0.0) >= 1.0:
                self._last_close_call[rid] = now
                await self.ask_shuffler_to_close(rid)
            elif state == "shuffled" and rid not in self._computing:
                self._computing.add(rid)
                try:
                    await asyncio.to_thread(self.compute, row)
                finally:
                    self._computing.discard(rid)
            elif state == "computed":
                await self.push_board(row)

    # ------------------------------------------------------------------ operations
    async def create(self, spec: CreateRound) -> dict[str, Any]:
        task = PicTask(spec.task.name, radius=spec.task.radius, k=spec.task.k)
        try:
            config = RoundConfig(task, spec.randomizer, spec.epsilon_c, spec.delta, spec.suite, spec.corrupted,
                                 spec.min_fraction, spec.dim, bucket_bits=spec.bucket_bits,
                                 min_bucket_size=spec.min_bucket_size)  # fmt: skip
            groups, plans = await asyncio.to_thread(plan_groups, config, [(g.name, g.size) for g in spec.groups])
        except (
            ShuffleDPError
        ) as exc:  # RoundConfig names the field first ("delta must ..."); the plan speaks of epsilon
            first = str(exc).split(" ", 1)[0]
            field = (
                first
                if first in RoundConfig.__dataclass_fields__
                else "epsilon_c"
                if "epsilon" in str(exc)
                else "groups"
            )
            raise Problem(422, "invalid-field", str(exc), field=field, allowed=str(exc)) from None
        r = await self.peers.client("shuffler").post("/v1/round-keys", json={"suite": spec.suite},
                                                     headers={"authorization": f"Bearer {self.service_token}"})  # fmt: skip
        if r.status_code != 201:
            raise Problem(503, "not-processed", f"the shuffler did not issue a round key ({r.status_code})",
                          headers={"Retry-After": "1"})  # fmt: skip
        key = r.json()
        shuffler_vk = bytes.fromhex(key["verify_key"])
        if self.settings.shuffler_verify_key and bytes.fromhex(self.settings.shuffler_verify_key) != shuffler_vk:
            raise Problem(503, "not-processed", "the shuffler's key differs from the configured one")
        pinned = await asyncio.to_thread(self.store.pin, "verify-key:shuffler", shuffler_vk)
        if pinned != shuffler_vk:
            raise Problem(503, "not-processed", "the shuffler's key changed since it was pinned; refusing it")
        kem_pub = KemPublicKey.from_bytes(spec.suite, bytes.fromhex(key["kem_public_key"]))
        server = Server(spec.suite, groups, task, (kem_pub, VerifyKey.from_bytes(shuffler_vk)), identity=self.identity,
                        post_payload_size=POST_SIZE, bucket_bits=spec.bucket_bits, min_bucket_size=spec.min_bucket_size)  # fmt: skip
        if self.executor is not None:
            from shuffledp.service.scale import attach_server

            attach_server(server, self.executor)
        rid = server.params.round_id
        self.keys.save_kem(f"server-round-{rid.hex()}", server._kem)
        deadline = time.time() + spec.ttl_seconds
        info = {"announced": False, "plans": [p.to_json() for p in plans], "spec": spec.model_dump()}
        await asyncio.to_thread(self.store.put_round, ROLE, rid, "open", deadline=deadline,
                                signed_params=server.signed_params(), info=info)  # fmt: skip
        self.live[rid] = _Live(server, threading.Lock())
        row = await asyncio.to_thread(self.store.get_round, ROLE, rid)
        try:
            await self.announce(row)  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - the background step retries
            log.warning(
                "announcing round %s failed (%s); retrying in the background", rid.hex()[:8], type(exc).__name__
            )
        log.info("server opened round %s", rid.hex()[:8])
        return await self.info(rid)

    async def announce(self, row: dict[str, Any]) -> None:
        """Give the signed parameters to the shuffler (which answers its view), then both to the board."""
        rid = row["round_id"]
        r = await self.peers.client("shuffler").post("/v1/rounds", json={"signed_params": b64(row["signed_params"]),
                                                                         "deadline": row["deadline"]},
                                                     headers={"authorization": f"Bearer {self.service_token}"})  # fmt: skip
        if r.status_code not in (200, 201):
            raise RuntimeError(f"shuffler refused to open the round: {r.status_code}")
        view = r.json()["view"]
        b = await self.peers.client("board").post(
            "/v1/rounds", json={"signed_params": b64(row["signed_params"]), "view": view}
        )
        if b.status_code not in (200, 201):
            raise RuntimeError(f"board refused the round: {b.status_code}")
        import base64

        await asyncio.to_thread(
            self.store.update_round, ROLE, rid, view=base64.b64decode(view), info={"announced": True}
        )

    async def close(self, rid: bytes) -> dict[str, Any]:
        row = await self._row(rid)
        if row["state"] == "open":
            await asyncio.to_thread(self.store.update_round, ROLE, rid, state="closed", expect="open")
            await self.ask_shuffler_to_close(rid)
        return await self.info(rid)

    async def ask_shuffler_to_close(self, rid: bytes) -> None:
        r = await self.peers.client("shuffler").post(f"/v1/rounds/{rid.hex()}/close",
                                                     headers={"authorization": f"Bearer {self.service_token}"})  # fmt: skip
        if r.status_code in (200, 202) and r.json().get("state") == "failed":
            await asyncio.to_thread(self.store.update_round, ROLE, rid, state="failed",
                                    info={"error": r.json().get("error") or "the shuffler's threshold was not met"})  # fmt: skip

    async def receive(self, rid: bytes, data: bytes) -> tuple[dict[str, Any], int]:
        row = await self._row(rid)
        if len(data) < 75:
            raise Problem(
                400, "malformed-batch", f"a signed batch has at least 75 bytes, got {len(data)}", field="body"
            )
        if data[5:21] != rid:
            raise Problem(422, "wrong-round", "the batch is for another round than the path's", field="body",
                          allowed=f"a batch of round {rid.hex()}")  # fmt: skip
        group_id, batch_id = int.from_bytes(data[21:23], "big"), data[55:71]
        stored = await asyncio.to_thread(self.store.batches_of, ROLE, rid)
        if group_id in stored:
            if stored[group_id][1] == data:
                return {"status": "duplicate", "group_id": group_id}, 200
            raise Problem(409, "duplicate-batch", f"group {group_id} of this round already has its batch")
        if row["state"] not in ("open", "closed"):
            raise Problem(409, "duplicate-batch", f"round {rid.hex()} is {row['state']}: it takes no more batches")
        live = await asyncio.to_thread(self._server, row)

        def work() -> Any:
            with live.lock:
                return live.server.receive(data)

        try:
            decrypted = await asyncio.to_thread(work)
        except MessageFormatError as exc:
            code, name = _BATCH_REASONS.get(exc.reason, (400, "malformed-batch"))
            raise Problem(code, name, str(exc), field="body") from None
        groups = {g.group_id for g in live.server.params.groups}
        all_in = groups <= set(stored) | {group_id}
        fields = {"state": "shuffled"} if all_in else {}
        await asyncio.to_thread(self.store.put_batches, ROLE, rid, [(group_id, batch_id, data)], **fields)
        self.metrics.batch_size.observe(decrypted.received)
        if all_in:
            self.metrics.round_seconds.labels("shuffled").observe(time.time() - row["created_at"])
        return {"status": "accepted", "group_id": group_id, "received": decrypted.received, "valid": decrypted.valid,
                "rejected": dict(decrypted.rejected)}, 201  # fmt: skip

    def compute(self, row: dict[str, Any]) -> None:
        """Steps 4-5 for a round whose batches are all in: f(L), the sealed entries, the signed board (stored)."""
        rid = row["round_id"]
        live = self._server(row)
        with live.lock:
            try:
                board = live.server.publish()
            except AnonymityThresholdError as exc:
                self.store.update_round(ROLE, rid, state="failed", info={"error": str(exc)})
                return
            server = live.server
            bits = server.board_bucket_bits or 0
            privacy = []
            for plan, g in zip(row["info"]["plans"], server.params.groups, strict=True):
                rec = GroupPrivacy(**{k: v for k, v in plan.items() if k in GroupPrivacy.__dataclass_fields__})
                rec.target_epsilon = float(rec.target_epsilon)
                d = server._received[g.group_id]
                smallest = (
                    min(Counter(bucket_of(p.to_bytes(), bits) for p in d.pseudonyms).values(), default=0)
                    if bits
                    else None
                )
                rec.settle(d.received, d.valid, d.rejected, bits, smallest)
                privacy.append(rec.to_json())
        self.store.update_round(ROLE, rid, state="computed", board=board,
                                info={"privacy": privacy, "timings": dict(server.timings)})  # fmt: skip
        self.metrics.round_seconds.labels("computed").observe(time.time() - row["created_at"])
        log.info("server computed round %s", rid.hex()[:8])

    async def push_board(self, row: dict[str, Any]) -> None:
        rid = row["round_id"]
        r = await self.peers.client("board").post(f"/v1/rounds/{rid.hex()}/board", content=row["board"],
                                                  headers={"content-type": OCTETS})  # fmt: skip
        if r.status_code in (200, 201):
            await asyncio.to_thread(self.store.update_round, ROLE, rid, state="published", expect="computed")
            self.metrics.round_seconds.labels("published").observe(time.time() - row["created_at"])
            self.keys.drop_kem(f"server-round-{rid.hex()}")
            self.live.pop(rid, None)
            log.info("server published round %s", rid.hex()[:8])
        else:
            log.warning("board refused the board of round %s: %s", rid.hex()[:8], r.status_code)

    async def push_failure(self, row: dict[str, Any]) -> None:
        """Tell the board, signed, that the round failed and why (its readers stop polling: 410 round-failed)."""
        rid = row["round_id"]
        reason = (row["info"].get("error") or "the round failed")[:MAX_FAILURE_REASON]
        signature = self.identity.signing_key.sign(failure_message(rid, reason), context=FAILURE_CONTEXT)
        r = await self.peers.client("board").post(f"/v1/rounds/{rid.hex()}/failure",
                                                  json={"reason": reason, "signature": b64(signature)})  # fmt: skip
        if r.status_code in (200, 201, 404):  # 404: the round never reached the board (nothing to tell)
            await asyncio.to_thread(self.store.update_round, ROLE, rid, info={"failure_posted": True})
            log.info("server told the board that round %s failed", rid.hex()[:8])
        else:
            log.warning("board refused the failure of round %s: %s", rid.hex()[:8], r.status_code)

    async def _row(self, rid: bytes) -> dict[str, Any]:
        row = await asyncio.to_thread(self.store.get_round, ROLE, rid)
        if row is None:
            raise Problem(404, "unknown-round", f"round {rid.hex()} is not known to this server")
        return row

    async def info(self, rid: bytes) -> dict[str, Any]:
        row = await self._row(rid)
        params = SignedRoundParams.from_bytes(row["signed_params"], server_key=self.identity.verify_key).params
        stored = await asyncio.to_thread(self.store.batches_of, ROLE, rid)
        groups = [{"group_id": g.group_id, "name": g.name, "threshold": g.threshold, "local_epsilon": g.local_epsilon,
                   "delta": g.delta, "randomizer": g.randomizer} for g in params.groups]  # fmt: skip
        batches = {
            str(g): {"batch_id": bid.hex(), "envelopes": int.from_bytes(d[71:75], "big")}
            for g, (bid, d) in stored.items()
        }
        return {"round_id": rid.hex(), "state": row["state"], "params_hash": params.digest.hex(), "deadline": row["deadline"],
                "announced": bool(row["info"].get("announced")), "groups": groups, "batches": batches,
                "privacy": row["info"].get("privacy"), "error": row["info"].get("error")}  # fmt: skip


def create_app(settings: ServiceSettings, *, store: Store | None = None, peers: Peers | None = None) -> FastAPI:
    """The server's FastAPI application."""
    store = store or Store(settings.database_url())
    keys = KeyStore(settings.data_dir)
    peers = peers or Peers({"shuffler": settings.shuffler_url, "board": settings.board_url})
    svc = ServerService(settings, store, keys, peers)
    app = service_app(svc, "shuffledp PIC server", __doc__, bulk_path="/batches")
    operator_only = bearer_first(lambda: svc.operator_token)

    @app.get("/v1/key-config", response_model=KeyConfig, tags=["clients"], summary="the server's long-term verify key")
    async def key_config(response: Response) -> KeyConfig:
        response.headers["Cache-Control"] = "public, max-age=86400"
        vk = svc.identity.verify_key.to_bytes()
        return KeyConfig(verify_key=vk.hex(), fingerprint=fingerprint(vk))

    @app.post("/v1/rounds", dependencies=operator_only, response_model=RoundInfo, status_code=201, tags=["operator"], responses=problems(401, 422, 503),
              summary="open a round: plan the local epsilons, get the shuffler's round key, sign, announce")  # fmt: skip
    async def create(body: CreateRound) -> dict[str, Any]:
        return await svc.create(body)

    @app.get("/v1/rounds", tags=["operator"], summary="every round with its state")
    async def list_rounds() -> list[dict[str, Any]]:
        rows = await asyncio.to_thread(store.list_rounds, ROLE)
        return [{"round_id": r["round_id"].hex(), "state": r["state"], "deadline": r["deadline"]} for r in rows]

    @app.get("/v1/rounds/{round_id}", response_model=RoundInfo, tags=["operator"], responses=problems(404, 422),
             summary="a round's state, groups, batches and (once computed) its privacy record")  # fmt: skip
    async def round_info(round_id: str) -> dict[str, Any]:
        return await svc.info(parse_round_id(round_id))

    @app.get("/v1/rounds/{round_id}/params", tags=["clients"], response_class=Response, responses={**octets_response(
             "the signed round parameters (message type 2)"), **problems(404, 422)})  # fmt: skip
    async def params(round_id: str) -> Response:
        row = await svc._row(parse_round_id(round_id))
        return Response(
            row["signed_params"], media_type=OCTETS, headers={"Cache-Control": "public, max-age=31536000, immutable"}
        )

    @app.post("/v1/rounds/{round_id}/close", dependencies=operator_only, response_model=RoundInfo, status_code=202, tags=["operator"],
              responses={200: {"model": RoundInfo, "description": "already published or failed"}, **problems(401, 404, 422)},
              summary="close a round; 202 + Retry-After until it is published (poll GET /v1/rounds/{round_id})")  # fmt: skip
    async def close(round_id: str, response: Response) -> dict[str, Any]:
        info = await svc.close(parse_round_id(round_id))
        if info["state"] in ("published", "failed"):
            response.status_code = 200
        else:
            response.headers["Retry-After"] = "1"
            response.headers["Location"] = f"/v1/rounds/{round_id}"
        return info

    @app.post("/v1/rounds/{round_id}/batches", status_code=201, tags=["shuffler"], openapi_extra=octets_body(
              "a signed batch (message type 7); only the round's shuffler can sign one"),
              responses={200: {"description": "duplicate: this exact batch was stored before"},
                         **problems(400, 403, 404, 409, 413, 422)},
              summary="deliver one group's signed, shuffled batch (authenticated by the shuffler's signature)")  # fmt: skip
    async def batches(round_id: str, request: Request, response: Response) -> dict[str, Any]:
        rid = parse_round_id(round_id)
        data = await request.body()
        out, code = await svc.receive(rid, data)
        response.status_code = code
        return out

    return app
