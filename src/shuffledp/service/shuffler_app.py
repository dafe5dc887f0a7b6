"""The PIC shuffler as an HTTP service: enrolment, admission, a durable pending set, signed batches.

It runs `shuffledp.protocols.pic.Shuffler` (one object per round, with the round's KEM key
kept in a 0600 file) and stores each admitted submission -- the outer ciphertext, one row --
before it acknowledges it.  On restart it rebuilds every open round by passing the stored
submissions through a fresh `Shuffler` with the same key, so admission decisions (one per
user and group, ids never reused) come out exactly as before the crash.  When a round closes
(by the server's call or at its deadline) it waits for the commits in flight, releases each
group as a `SignedBatch`, stores the batches with the round's new state ``shuffled`` in one
transaction, and delivers them to the server until the server acknowledges them; a batch
resent after a crash is byte-identical, so the server answers "duplicate".

Authentication: the server's calls (round keys, open, close) carry the service bearer
token; the round parameters themselves are verified under the pinned server key.  Enrolment
needs the operator token.  Submissions are authenticated by the enrolment credential inside
the outer encryption.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
from fastapi import FastAPI, Request, Response
from pydantic import Field

from shuffledp.crypto import KemKeyPair, VerifyKey
from shuffledp.crypto.kem import fingerprint
from shuffledp.errors import AnonymityThresholdError, CryptoError, MessageFormatError, ShuffleDPError
from shuffledp.protocols.pic import Enrolment, Shuffler
from shuffledp.protocols.pic.messages import CREDENTIAL_SIZE, SignedRoundParams
from shuffledp.protocols.pic.shuffler import ADMITTED
from shuffledp.service._http import (
    OCTETS,
    Metrics,
    Problem,
    StrictModel,
    b64,
    b64_field,
    bearer_first,
    parse_round_id,
    problems,
    service_app,
)
from shuffledp.service._peers import Peers, keep_stepping, pinned_key
from shuffledp.service.keys import KeyStore
from shuffledp.service.settings import ServiceSettings
from shuffledp.service.storage import GroupCommitter, Store

__all__ = [
    "EnrolAnswer",
    "EnrolBody",
    "KeyConfig",
    "OpenAnswer",
    "OpenBody",
    "RateLimited",
    "RoundKeyAnswer",
    "RoundKeyBody",
    "RoundStatus",
    "ShufflerService",
    "StoredEnrolment",
    "SubmissionAnswer",
    "SubmissionBody",
    "create_app",
]

log = logging.getLogger("shuffledp.service.shuffler")
ROLE = "shuffler"
MAX_SUBMISSION = 64 * 1024


class RateLimited(Exception):
    def __init__(self, retry_after: float) -> None:
        super().__init__("rate limited")
        self.retry_after = retry_after


class StoredEnrolment(Enrolment):
    """`Enrolment` whose users live in the database (credential hashes only), with a rate limit per user."""

    def __init__(self, store: Store, rate_per_minute: float, burst: int) -> None:
        super().__init__()
        self.store = store
        self._users = store.enrolled()
        self.rate, self.burst = rate_per_minute / 60.0, float(burst)
        self._buckets: dict[int, tuple[float, float]] = {}
        self.limiting = True

    def enroll_many(self, count: int) -> list[bytes]:
        creds = [secrets.token_bytes(CREDENTIAL_SIZE) for _ in range(count)]
        hashes = [hashlib.sha256(c).digest() for c in creds]
        ids = self.store.enrol(hashes)  # durable before the credentials are handed out
        self._users.update(zip(hashes, ids, strict=True))
        return creds

    def enroll(self) -> bytes:
        return self.enroll_many(1)[0]

    def user(self, credential: bytes) -> int | None:
        user = super().user(credential)
        if user is not None and self.limiting:
            now = time.monotonic()
            tokens, last = self._buckets.get(user, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens < 1.0:
                raise RateLimited((1.0 - tokens) / self.rate)
            self._buckets[user] = (tokens - 1.0, now)
        return user


@dataclass
class _Round:
    shuffler: Shuffler
    deadline: float | None
    closed: bool = False
    inflight: dict[bytes, Any] = field(default_factory=dict)


_REASONS = {
    "round": (422, "wrong-round"), "group": (422, "wrong-group"), "decrypt": (400, "outdated-config"),
    "enrolment": (403, "enrolment"), "one-per-user": (409, "one-per-user"), "replay": (409, "replay"),
    "closed": (410, "round-closed"),
}  # fmt: skip


class SubmissionBody(StrictModel):
    submission: b64_field(MAX_SUBMISSION) = Field(description="the PIC submission (message type 1), standard base64")  # type: ignore[valid-type]


class SubmissionAnswer(StrictModel):
    status: Literal["admitted", "duplicate"]


class EnrolBody(StrictModel):
    count: int = Field(1, ge=1, le=1000, description="credentials to issue (each handed to one user)")


class EnrolAnswer(StrictModel):
    credentials: list[str] = Field(
        description="32-byte credentials, standard base64; the shuffler keeps only their SHA-256"
    )


class RoundKeyAnswer(StrictModel):
    key_id: str
    suite: str
    kem_public_key: str
    verify_key: str


class RoundKeyBody(StrictModel):
    suite: Literal["x25519", "pq-hybrid"] = "x25519"


class OpenBody(StrictModel):
    signed_params: b64_field(1 << 20)  # type: ignore[valid-type]
    deadline: float | None = Field(None, description="UNIX time after which submissions are refused (410)")


class OpenAnswer(StrictModel):
    round_id: str
    view: str = Field(description="the signed view announcement (message type 8), base64")


class KeyConfig(StrictModel):
    verify_key: str = Field(description="the shuffler's long-term Ed25519 key (hex); it signs batches and views")
    fingerprint: str
    rounds: list[dict[str, Any]] = Field(description="open rounds: round id, suite, the round's KEM public key (hex)")


class RoundStatus(StrictModel):
    round_id: str
    state: str
    deadline: float | None
    admitted: dict[str, int]
    delivered: list[int]
    error: str | None = None


class ShufflerService:
    """The state and logic behind the shuffler's routes (module docstring)."""

    def __init__(self, settings: ServiceSettings, store: Store, keys: KeyStore, peers: Peers) -> None:
        self.settings, self.store, self.keys, self.peers = settings, store, keys, peers
        self.metrics = Metrics(ROLE)
        self.identity = keys.identity(ROLE)
        self.service_token = keys.token("service")
        self.operator_token = keys.token("operator")
        self.enrolment = StoredEnrolment(store, settings.rate_per_minute, settings.rate_burst)
        self.committer = GroupCommitter(store, settings.commit_batch, settings.commit_wait_ms)
        self.rounds: dict[bytes, _Round] = {}
        self.lock = asyncio.Lock()  # round opening / closing
        self._server_key: VerifyKey | None = None
        self._task: asyncio.Task | None = None
        self.ready = False
        self.executor: Any = None  # a Dask client when --dask-scheduler is given (service.scale)

    async def server_key(self) -> VerifyKey:
        if self._server_key is None:
            self._server_key = await pinned_key(self.store, self.peers, "server", self.settings.server_verify_key)
        return self._server_key

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        if self.settings.dask_scheduler:
            from shuffledp.service.scale import connect

            self.executor = await asyncio.to_thread(connect, self.settings.dask_scheduler)
        rows = await asyncio.to_thread(self.store.list_rounds, ROLE, ["open", "closed"])
        for row in rows:
            self.rounds[row["round_id"]] = await asyncio.to_thread(self._rebuild, row, await self.server_key())
        self.ready = True
        self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
        await asyncio.to_thread(self.committer.close)

    def _rebuild(self, row: dict[str, Any], server_key: VerifyKey) -> _Round:
        rid = row["round_id"]
        params = SignedRoundParams.from_bytes(row["signed_params"], server_key=server_key).params
        kem = self.keys.load_kem(f"shuffler-round-{rid.hex()}")
        sh = Shuffler(server_key, suite=params.suite, identity=self.identity, enrolment=self.enrolment, kem=kem)
        sh.open(row["signed_params"])
        self.enrolment.limiting = False
        stored = self.store.submissions_of(rid)
        opened: list[Any] = [None] * len(stored)
        if self.executor is not None and stored:  # bulk unwrap on the cluster, admission replayed here in order
            from shuffledp.service.scale import unwrap_many

            opened = unwrap_many(self.executor, row["signed_params"], server_key.to_bytes(), kem, stored)
        try:
            for data, pre in zip(stored, opened, strict=True):
                with contextlib.suppress(ShuffleDPError):  # cannot happen for admitted rows; never stops a restart
                    sh.submit(data, opened=pre)
        finally:
            self.enrolment.limiting = True
        return _Round(sh, row["deadline"], closed=row["state"] != "open")

    async def _loop(self) -> None:
        await keep_stepping(self.step, self.settings.reconcile_seconds, log, "shuffler")

    async def step(self) -> None:
        """Move rounds on: close those past their deadline, release closed ones, deliver stored batches."""
        now = time.time()
        for rid, r in list(self.rounds.items()):
            if r.deadline is not None and now >= r.deadline:
                await self.close(rid)
        for row in await asyncio.to_thread(self.store.list_rounds, ROLE, ["shuffled"]):
            if not row["info"].get("delivered_all"):
                await self.deliver(row)

    # ------------------------------------------------------------------ operations
    def round_key(self, suite: str) -> RoundKeyAnswer:
        key = KemKeyPair.generate(suite)
        key_id = secrets.token_hex(8)
        self.keys.save_kem(f"shuffler-pending-{key_id}", key)
        return RoundKeyAnswer(key_id=key_id, suite=suite, kem_public_key=key.public_key.to_bytes().hex(),
                              verify_key=self.identity.verify_key.to_bytes().hex())  # fmt: skip

    async def open(self, signed: bytes, deadline: float | None) -> OpenAnswer:
        server_key = await self.server_key()
        try:
            params = SignedRoundParams.from_bytes(
                signed, server_key=server_key, shuffler_key=self.identity.verify_key
            ).params
        except (CryptoError, MessageFormatError) as exc:
            raise Problem(
                403, "signature", f"round parameters do not verify under the pinned server key: {exc}"
            ) from None
        rid = params.round_id
        async with self.lock:
            row = await asyncio.to_thread(self.store.get_round, ROLE, rid)
            if row is not None:
                if row["signed_params"] != signed:
                    raise Problem(409, "round-exists", f"round {rid.hex()} is already open under other parameters")
                return OpenAnswer(round_id=rid.hex(), view=b64(row["view"]))
            name = self._pending_key_for(params.shuffler_kem_key.to_bytes(), params.suite)
            if name is None:
                raise Problem(422, "unknown-key", "the parameters name a shuffler KEM key this shuffler did not issue",
                              field="shuffler_kem_key", allowed="a key from POST /v1/round-keys")  # fmt: skip
            kem = self.keys.load_kem(name)
            self.keys.save_kem(f"shuffler-round-{rid.hex()}", kem)
            sh = Shuffler(server_key, suite=params.suite, identity=self.identity, enrolment=self.enrolment, kem=kem)
            view = sh.open(signed)
            await asyncio.to_thread(self.store.put_round, ROLE, rid, "open", deadline=deadline, signed_params=signed,
                                    view=view, info={"groups": [g.group_id for g in params.groups]})  # fmt: skip
            self.keys.drop_kem(name)
            self.rounds[rid] = _Round(sh, deadline)
        log.info("shuffler opened round %s", rid.hex()[:8])
        return OpenAnswer(round_id=rid.hex(), view=b64(view))

    def _pending_key_for(self, public: bytes, suite: str) -> str | None:
        for path in self.keys.root.glob("shuffler-pending-*.kem"):
            name = path.name.removesuffix(".kem")
            try:
                key = self.keys.load_kem(name)
            except CryptoError:
                continue
            if key.suite.name == suite and key.public_key.to_bytes() == public:
                return name
        return None

    async def _gone(self, rid: bytes) -> Problem:
        row = await asyncio.to_thread(self.store.get_round, ROLE, rid)
        if row is None:
            return Problem(404, "unknown-round", f"round {rid.hex()} is not known to this shuffler; "
                           "GET /v1/key-config lists the open rounds")  # fmt: skip
        return Problem(
            410, "round-closed", f"round {rid.hex()} is {row['state']}; refetch GET /v1/key-config for open rounds"
        )

    async def submit(self, rid: bytes, data: bytes) -> tuple[str, int]:
        r = self.rounds.get(rid)
        if r is None:
            raise await self._gone(rid)
        if r.closed:
            raise Problem(
                410, "round-closed", f"round {rid.hex()} is closed; refetch GET /v1/key-config for open rounds"
            )
        if r.deadline is not None and time.time() >= r.deadline:
            raise Problem(410, "expired", f"round {rid.hex()} passed its deadline; submissions are refused")
        if data[5:21] != rid and len(data) >= 21:
            raise Problem(422, "wrong-round", "the submission is for another round than the one in the path",
                          field="submission", allowed=f"a submission for round {rid.hex()}")  # fmt: skip
        try:
            status = r.shuffler.submit(data)
        except RateLimited as exc:
            raise Problem(
                429,
                "rate-limited",
                "too many submission attempts for this enrolled user",
                headers={"Retry-After": str(max(1, round(exc.retry_after)))},
            ) from None
        except MessageFormatError as exc:
            status_code, code = _REASONS.get(exc.reason, (400, "malformed-submission"))
            raise Problem(status_code, code, str(exc), field="submission" if status_code != 410 else None) from None
        digest = hashlib.sha256(data).digest()[:16]
        if status == ADMITTED:
            fut = self.committer.submit({"round_id": rid, "group_id": int.from_bytes(data[21:23], "big"),
                                         "submission_id": digest, "data": data,
                                         "created_at": float(int(time.time()) // 60 * 60)})  # fmt: skip  # DAP: rounded time
            r.inflight[digest] = fut
            try:
                await asyncio.wrap_future(fut)
            except Exception:  # noqa: BLE001
                raise Problem(503, "not-processed", "the submission could not be stored; resend it unchanged",
                              headers={"Retry-After": "1"}) from None  # fmt: skip
            finally:
                r.inflight.pop(digest, None)
            self.metrics.submissions.labels("admitted").inc()
            return "admitted", 201
        pending = r.inflight.get(digest)
        if pending is not None:  # the first copy is still being committed: answer once it is durable
            try:
                await asyncio.wrap_future(pending)
            except Exception:  # noqa: BLE001
                raise Problem(503, "not-processed", "resend it unchanged", headers={"Retry-After": "1"}) from None
        self.metrics.submissions.labels("duplicate").inc()
        return "duplicate", 200

    async def close(self, rid: bytes) -> dict[str, Any]:
        """Stop admitting, wait for commits in flight, release and store every group's signed batch."""
        async with self.lock:
            row = await asyncio.to_thread(self.store.get_round, ROLE, rid)
            if row is None:
                raise Problem(404, "unknown-round", f"round {rid.hex()} is not known to this shuffler")
            r = self.rounds.get(rid)
            if r is not None:
                r.closed = True
                if row["state"] == "open":
                    await asyncio.to_thread(self.store.update_round, ROLE, rid, state="closed", expect="open")
                if r.inflight:
                    await asyncio.gather(
                        *(asyncio.wrap_future(f) for f in list(r.inflight.values())), return_exceptions=True
                    )
                try:
                    released = await asyncio.to_thread(self._release, rid, r)
                except AnonymityThresholdError as exc:
                    await asyncio.to_thread(
                        self.store.update_round, ROLE, rid, state="failed", info={"error": str(exc)}
                    )
                    self.rounds.pop(rid, None)
                    self.keys.drop_kem(f"shuffler-round-{rid.hex()}")
                    log.info("shuffler round %s failed: threshold not met", rid.hex()[:8])
                    return await self.status(rid)
                await asyncio.to_thread(self.store.put_batches, ROLE, rid, released, state="shuffled")
                for _, _, data in released:
                    self.metrics.batch_size.observe(int.from_bytes(data[71:75], "big"))
                self.metrics.round_seconds.labels("shuffled").observe(time.time() - row["created_at"])
                self.rounds.pop(rid, None)
                self.keys.drop_kem(f"shuffler-round-{rid.hex()}")
                log.info("shuffler released round %s", rid.hex()[:8])
        return await self.status(rid)

    @staticmethod
    def _release(rid: bytes, r: _Round) -> list[tuple[int, bytes, bytes]]:
        out = []
        for g in r.shuffler.params.groups:  # type: ignore[union-attr]
            data = r.shuffler.release(g.group_id)
            out.append((g.group_id, data[55:71], data))
        return out

    async def deliver(self, row: dict[str, Any]) -> None:
        rid = row["round_id"]
        delivered = set(row["info"].get("delivered", []))
        batches = await asyncio.to_thread(self.store.batches_of, ROLE, rid)
        for g, (_, data) in sorted(batches.items()):
            if g in delivered:
                continue
            r = await self.peers.client("server").post(f"/v1/rounds/{rid.hex()}/batches", content=data,
                                                       headers={"content-type": OCTETS})  # fmt: skip
            if r.status_code in (200, 201, 202):
                delivered.add(g)
                await asyncio.to_thread(self.store.update_round, ROLE, rid, info={"delivered": sorted(delivered)})
            else:
                log.warning("server refused batch of round %s group %d: %s", rid.hex()[:8], g, r.status_code)
                return
        if delivered >= set(batches):
            await asyncio.to_thread(self.store.update_round, ROLE, rid, info={"delivered_all": True})

    async def status(self, rid: bytes) -> dict[str, Any]:
        row = await asyncio.to_thread(self.store.get_round, ROLE, rid)
        if row is None:
            raise Problem(404, "unknown-round", f"round {rid.hex()} is not known to this shuffler")
        r = self.rounds.get(rid)
        admitted = {str(g.group_id): r.shuffler.count(g.group_id) for g in r.shuffler.params.groups} if r else {}  # type: ignore[union-attr]
        return {"round_id": rid.hex(), "state": row["state"], "deadline": row["deadline"], "admitted": admitted,
                "delivered": row["info"].get("delivered", []), "error": row["info"].get("error")}  # fmt: skip

    def key_config(self) -> KeyConfig:
        vk = self.identity.verify_key.to_bytes()
        rounds = [{"round_id": rid.hex(), "suite": r.shuffler.params.suite,  # type: ignore[union-attr]
                   "kem_public_key": r.shuffler.kem_public_key.to_bytes().hex(), "deadline": r.deadline}
                  for rid, r in self.rounds.items() if not r.closed]  # fmt: skip
        return KeyConfig(verify_key=vk.hex(), fingerprint=fingerprint(vk), rounds=rounds)


_RELAY_HEADERS = {"content-type"}
_ANSWERS = {status: SubmissionAnswer(status=status).model_dump_json().encode() for status in ("admitted", "duplicate")}  # type: ignore[arg-type]


def create_app(settings: ServiceSettings, *, store: Store | None = None, peers: Peers | None = None) -> FastAPI:
    """The shuffler's FastAPI application (routes below; the README lists them as a sequence of calls)."""
    store = store or Store(settings.database_url())
    keys = KeyStore(settings.data_dir)
    peers = peers or Peers({"server": settings.server_url, "board": settings.board_url})
    svc = ShufflerService(settings, store, keys, peers)

    def hot_route(app: FastAPI) -> None:
        """The submission route, before the shared ones: matched first."""

        duplicate = {"model": SubmissionAnswer, "description": "duplicate: this exact submission was admitted before"}

        @app.post(
            "/v1/rounds/{round_id}/submissions",
            response_model=SubmissionAnswer,
            status_code=201,
            tags=["clients"],
            responses={200: duplicate, **problems(400, 403, 404, 409, 410, 413, 422, 429, 503)},
            summary="submit one two-layer envelope (idempotent: an exact resend answers 200 duplicate)",
        )
        async def submit(round_id: str, body: SubmissionBody) -> Response:
            rid = parse_round_id(round_id)
            status, code = await svc.submit(rid, body.submission)
            return Response(
                _ANSWERS[status], status_code=code, media_type="application/json"
            )  # the hot path: no re-validation

    app = service_app(svc, "shuffledp PIC shuffler", __doc__, routes_first=hot_route)
    operator_only = bearer_first(lambda: svc.operator_token)
    service_only = bearer_first(lambda: svc.service_token)

    @app.get("/v1/key-config", response_model=KeyConfig, tags=["clients"],
             summary="the shuffler's long-term key and the KEM keys of open rounds")  # fmt: skip
    async def key_config(response: Response) -> KeyConfig:
        response.headers["Cache-Control"] = "public, max-age=86400"
        return svc.key_config()

    @app.get("/v1/rounds/{round_id}/key-config", tags=["clients"], responses=problems(404, 410, 422),
             summary="one round's KEM key (immutable while the round is open)")  # fmt: skip
    async def round_key_config(round_id: str, response: Response) -> dict[str, Any]:
        rid = parse_round_id(round_id)
        r = svc.rounds.get(rid)
        if r is None or r.closed:
            raise (
                await svc._gone(rid)
                if r is None
                else Problem(410, "outdated-config", "the round is closed; its key is retired")
            )
        response.headers["Cache-Control"] = "public, max-age=31536000, immutable"
        return {
            "round_id": round_id,
            "suite": r.shuffler.params.suite,  # type: ignore[union-attr]
            "kem_public_key": r.shuffler.kem_public_key.to_bytes().hex(),
        }

    @app.post("/v1/enrolments", dependencies=operator_only, response_model=EnrolAnswer, status_code=201, tags=["operator"],
              responses=problems(401, 422), summary="issue enrolment credentials (operator token)")  # fmt: skip
    async def enrol(body: EnrolBody) -> EnrolAnswer:
        creds = await asyncio.to_thread(svc.enrolment.enroll_many, body.count)
        return EnrolAnswer(credentials=[b64(c) for c in creds])

    @app.post("/v1/round-keys", dependencies=service_only, response_model=RoundKeyAnswer, status_code=201, tags=["server"],
              responses=problems(401, 422), summary="a fresh KEM key for the next round (service token)")  # fmt: skip
    async def round_keys(body: RoundKeyBody | None = None) -> RoundKeyAnswer:
        return await asyncio.to_thread(svc.round_key, (body or RoundKeyBody()).suite)

    @app.post("/v1/rounds", dependencies=service_only, response_model=OpenAnswer, status_code=201, tags=["server"],
              responses=problems(401, 403, 409, 422), summary="open a round under server-signed parameters")  # fmt: skip
    async def open_round(body: OpenBody) -> OpenAnswer:
        return await svc.open(body.signed_params, body.deadline)

    @app.get("/v1/rounds/{round_id}", response_model=RoundStatus, tags=["server"], responses=problems(404, 422),
             summary="a round's state at the shuffler")  # fmt: skip
    async def round_status(round_id: str) -> dict[str, Any]:
        return await svc.status(parse_round_id(round_id))

    @app.post("/v1/rounds/{round_id}/close", dependencies=service_only, response_model=RoundStatus, status_code=202, tags=["server"],
              responses={200: {"model": RoundStatus, "description": "released (or failed)"}, **problems(401, 404, 422)},
              summary="close a round: release its signed batches (service token); 202 while delivery is pending")  # fmt: skip
    async def close(round_id: str, response: Response) -> dict[str, Any]:
        status = await svc.close(parse_round_id(round_id))
        done = status["state"] == "failed" or (status["state"] == "shuffled" and len(status["delivered"]) > 0
                                                and len(status["delivered"]) >= len(await asyncio.to_thread(store.batches_of, ROLE, parse_round_id(round_id))))  # fmt: skip
        response.status_code = 200 if done else 202
        if not done:
            response.headers["Retry-After"] = "1"
        return status

    async def _relay(method: str, path: str, request: Request) -> Response:
        allowed = path == "v1/posts" if method == "POST" else path.startswith("v1/rounds/")
        if not allowed or ".." in path or "//" in path:
            raise Problem(
                404, "not-found", "the relay forwards only board reads (GET v1/rounds/...) and posts (POST v1/posts)"
            )
        body = await request.body() if method == "POST" else None
        headers = {k: v for k, v in request.headers.items() if k.lower() in _RELAY_HEADERS}
        try:
            r = await peers.client("board").request(method, "/" + path, content=body, headers=headers)
        except httpx.TransportError:  # the board is down or unreachable: nothing was relayed (or it is resendable)
            raise Problem(503, "not-processed", "the bulletin board could not be reached; resend after Retry-After",
                          headers={"Retry-After": "1"}) from None  # fmt: skip
        keep = {k: v for k, v in r.headers.items() if k.lower() in ("content-type", "retry-after", "cache-control")}
        return Response(r.content, status_code=r.status_code, headers=keep)

    @app.get("/v1/relay/board/{path:path}", tags=["clients"], responses=problems(404, 503),
             summary="anonymous relay of a board read (forwards no identifying header)")  # fmt: skip
    async def relay_get(path: str, request: Request) -> Response:
        return await _relay("GET", path, request)

    @app.post("/v1/relay/board/{path:path}", tags=["clients"], responses=problems(404, 413, 503),
              openapi_extra={"requestBody": {"content": {OCTETS: {"schema": {"type": "string", "format": "binary"}}}}},
              summary="anonymous relay of a post to the board (forwards no identifying header)")  # fmt: skip
    async def relay_post(path: str, request: Request) -> Response:
        return await _relay("POST", path, request)

    return app
