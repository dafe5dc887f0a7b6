"""The PIC bulletin board as an HTTP service: parameters and views, signed boards and buckets, posts, a viewer.

It runs `shuffledp.protocols.pic.BulletinBoard` (rebuilt at start from the database) and
stores everything it accepts before answering.  It accepts a round's parameters only if the
pinned server key signed them and the view announcement only if the shuffler named in them
signed it; a board only if the server signed its head and the entries are exactly the signed
ones (so only the server can publish: the signature is the authentication, no token).
Posts are accepted from anyone for a pseudonym of a published round (they are signed and
encrypted between partners; the board sees only the recipient's pseudonym) and should reach
the board through an anonymous channel: the shuffler's relay (``/v1/relay/board/...``).

The viewer (``/`` and ``/rounds/{round_id}``, Jinja2, server-rendered) lists the rounds,
their parameters, state, group sizes, the privacy ledger derived from what is signed (local
epsilon and delta from the parameters, the valid reports per group from the board's entries,
|C| = 0 assumed; the server's own record states its |C|) and the signature status.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging
import math
import time
from collections import Counter
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape
from pydantic import Field

from shuffledp.accounting.ledger import PrivacyLedger
from shuffledp.crypto import VerifyKey
from shuffledp.crypto.kem import fingerprint
from shuffledp.errors import CryptoError, MessageFormatError, ShuffleDPError
from shuffledp.protocols.pic import BulletinBoard, PicTask, ViewAnnouncement
from shuffledp.protocols.pic.bulletin import BoardSlice, bucket_of
from shuffledp.protocols.pic.messages import RoundParams, SignedRoundParams
from shuffledp.protocols.pic.reports import group_randomizer
from shuffledp.service._http import (
    OCTETS,
    Metrics,
    Problem,
    StrictModel,
    b64_field,
    octets_body,
    octets_response,
    parse_round_id,
    problems,
    service_app,
)
from shuffledp.service._peers import FAILURE_CONTEXT, MAX_FAILURE_REASON, Peers, failure_message, pinned_key
from shuffledp.service.settings import ServiceSettings
from shuffledp.service.storage import GroupCommitter, Store

__all__ = ["BoardService", "FailureBody", "PostAnswer", "RoundBody", "create_app"]

log = logging.getLogger("shuffledp.service.bulletin")
ROLE = "board"
_TEMPLATES = Environment(loader=FileSystemLoader(Path(__file__).with_name("templates")), autoescape=select_autoescape())


class RoundBody(StrictModel):
    signed_params: b64_field(1 << 20)  # type: ignore[valid-type]
    view: b64_field(4096)  # type: ignore[valid-type]


class FailureBody(StrictModel):
    reason: str = Field(min_length=1, max_length=MAX_FAILURE_REASON, description="why the round failed")
    signature: b64_field(64) = Field(description="the server's Ed25519 signature of the failure (base64)")  # type: ignore[valid-type]


class PostAnswer(StrictModel):
    status: str
    post_id: str


class BoardService:
    """The state and logic behind the board's routes (module docstring)."""

    def __init__(self, settings: ServiceSettings, store: Store, peers: Peers) -> None:
        self.settings, self.store, self.peers = settings, store, peers
        self.metrics = Metrics(ROLE)
        self.board: BulletinBoard | None = None
        self.server_key: VerifyKey | None = None
        self.params: dict[bytes, tuple[bytes, RoundParams]] = {}
        self.failed: dict[bytes, tuple[str, bytes]] = {}  # round id -> (reason, the server's signature)
        self.ready = False
        self._task: asyncio.Task | None = None
        self.posts = GroupCommitter(store, settings.commit_batch, settings.commit_wait_ms, insert=store.insert_posts)
        self._inflight: dict[bytes, Any] = {}
        self._adding = asyncio.Lock()

    async def start(self) -> None:
        self._task = asyncio.create_task(self._connect())

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
        await asyncio.to_thread(self.posts.close)

    async def _connect(self) -> None:
        """Pin the server key (configured, or fetched once), then rebuild the board from the database."""
        while True:
            try:
                key = await pinned_key(self.store, self.peers, "server", self.settings.server_verify_key)
                break
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the server may start after the board
                await asyncio.sleep(0.2)
        await asyncio.to_thread(self._rebuild, key)
        self.ready = True

    def _rebuild(self, key: VerifyKey) -> None:
        board = BulletinBoard(key)
        for row in self.store.list_rounds(ROLE):
            params = SignedRoundParams.from_bytes(row["signed_params"], server_key=key).params
            self.params[row["round_id"]] = (row["signed_params"], params)
            board.publish_view(row["view"])
            if row["board"] is not None:
                board.publish(row["board"])
            if row["state"] == "failed":
                self.failed[row["round_id"]] = (row["info"]["error"], bytes.fromhex(row["info"]["failure_signature"]))
        for data in self.store.all_posts():
            board.post(data)
        self.server_key, self.board = key, board

    def _board(self) -> BulletinBoard:
        if self.board is None:
            raise Problem(
                503, "not-ready", "the board is starting (pinning the server key)", headers={"Retry-After": "1"}
            )
        return self.board

    async def add_round(self, signed: bytes, view: bytes) -> int:
        board = self._board()
        try:
            params = SignedRoundParams.from_bytes(signed, server_key=self.server_key).params  # type: ignore[arg-type]
        except (CryptoError, MessageFormatError) as exc:
            raise Problem(
                403, "signature", f"round parameters do not verify under the pinned server key: {exc}"
            ) from None
        try:
            announced = ViewAnnouncement.from_bytes(view, shuffler_key=params.shuffler_verify_key)
        except (CryptoError, MessageFormatError) as exc:
            raise Problem(403, "signature", f"the view is not signed by the round's shuffler: {exc}") from None
        if announced.round_id != params.round_id or announced.params_hash != params.digest:
            raise Problem(422, "wrong-view", "the view announces another parameter set", field="view")
        rid = params.round_id
        async with self._adding:  # concurrent announcements of one new round: one stores it, the others see it
            if rid not in self.params:
                stored = await asyncio.to_thread(self.store.put_round, ROLE, rid, "open", signed_params=signed,
                                                 view=view)  # fmt: skip
                if stored:
                    board.publish_view(view)
                    self.params[rid] = (signed, params)
                    return 201
                row = await asyncio.to_thread(self.store.get_round, ROLE, rid)  # another process stored it first
                if row is None or row["signed_params"] != signed:
                    raise Problem(409, "round-exists", f"round {rid.hex()} is already stored with other parameters")
                return 200
        if self.params[rid][0] != signed:
            raise Problem(409, "round-exists", f"round {rid.hex()} is already on the board with other parameters")
        return 200

    async def publish(self, rid: bytes, data: bytes) -> int:
        board = self._board()
        if rid not in self.params:
            raise Problem(404, "unknown-round", f"round {rid.hex()} has no parameters on this board")
        row = await asyncio.to_thread(self.store.get_round, ROLE, rid)
        if row is not None and row["board"] is not None:
            if row["board"] == data:
                return 200
            raise Problem(409, "board-exists", f"round {rid.hex()} already has its board; boards are append-only")
        if rid in self.failed:
            raise Problem(410, "round-failed", f"round {rid.hex()} failed: {self.failed[rid][0]}")
        try:
            sl = BoardSlice.from_bytes(data)
            if sl.head.round_id != rid:
                raise Problem(422, "wrong-round", "the board is for another round than the path's", field="body")
            sl.verify(self.server_key)  # type: ignore[arg-type]
        except CryptoError:
            raise Problem(403, "signature", "the board head is not signed by the server") from None
        except MessageFormatError as exc:
            raise Problem(400, "malformed-board", str(exc), field="body") from None
        await asyncio.to_thread(self.store.update_round, ROLE, rid, state="published", board=data)
        try:
            board.publish(data)
        except MessageFormatError as exc:
            raise Problem(400, "malformed-board", str(exc), field="body") from None
        return 201

    async def fail(self, rid: bytes, reason: str, signature: bytes) -> int:
        """Mark a round failed on the server's signed word: its board will never come, readers get 410."""
        board = self._board()
        try:
            self.server_key.verify(signature, failure_message(rid, reason), context=FAILURE_CONTEXT)  # type: ignore[union-attr]
        except CryptoError:
            raise Problem(403, "signature", "the failure is not signed by the server") from None
        async with self._adding:
            if rid in self.failed:
                if self.failed[rid][0] != reason:
                    raise Problem(409, "round-exists", f"round {rid.hex()} already failed for another reason")
                return 200
            if rid in board._rounds or not await asyncio.to_thread(
                self.store.update_round, ROLE, rid, expect="open", state="failed",
                info={"error": reason, "failure_signature": signature.hex()},
            ):  # fmt: skip
                raise Problem(409, "board-exists", f"round {rid.hex()} has its board; a published round cannot fail")
            self.failed[rid] = (reason, signature)
        log.info("board: round %s failed", rid.hex()[:8])
        return 201

    async def post(self, data: bytes) -> tuple[str, int]:
        """Append a post: validated by the protocol board, then committed (group commit) before the answer."""
        board = self._board()
        post_id = hashlib.sha256(data).digest()
        seen = post_id in board._post_ids
        try:
            board.post(data)
        except MessageFormatError as exc:
            if exc.reason == "round":
                raise Problem(422, "wrong-round", "the post's round has no published board", field="body") from None
            if exc.reason == "pseudonym":
                raise Problem(422, "unknown-recipient", str(exc), field="body") from None
            raise Problem(400, "malformed-post", str(exc), field="body") from None
        if seen:  # an exact resend: answer once the first copy is durable
            pending = self._inflight.get(post_id)
            if pending is not None:
                await asyncio.wrap_future(pending)
            return post_id.hex(), 200
        from shuffledp.protocols.pic.messages import Post

        p = Post.from_bytes(data)
        fut = self.posts.submit({"post_id": post_id, "round_id": p.round_id, "recipient": p.recipient, "data": data,
                                 "created_at": float(int(time.time()) // 60 * 60)})  # fmt: skip
        self._inflight[post_id] = fut
        try:
            await asyncio.wrap_future(fut)
        except Exception:  # noqa: BLE001
            raise Problem(
                503, "not-processed", "the post could not be stored; resend it", headers={"Retry-After": "1"}
            ) from None
        finally:
            self._inflight.pop(post_id, None)
        return post_id.hex(), 201

    # ------------------------------------------------------------------ what the viewer and JSON API show
    def summary(self, rid: bytes) -> dict[str, Any]:
        signed, params = self.params[rid]
        board = self._board()
        published = rid in board._rounds
        out: dict[str, Any] = {
            "round_id": rid.hex(), "params_hash": params.digest.hex(), "suite": params.suite, "task": dict(params.task),
            "server_key": fingerprint(params.server_verify_key.to_bytes()),
            "shuffler_key": fingerprint(params.shuffler_verify_key.to_bytes()),
            "bucket_bits_max": params.bucket_bits, "min_bucket_size": params.min_bucket_size,
            "state": "published" if published else "failed" if rid in self.failed else "open",
            "groups": [{"group_id": g.group_id, "name": g.name, "randomizer": g.randomizer, "local_epsilon": g.local_epsilon,
                        "threshold": g.threshold, "delta": g.delta} for g in params.groups],
            "signatures": {"params": _verifies(lambda: SignedRoundParams.from_bytes(signed, server_key=self.server_key)),
                           "view": _verifies(lambda: ViewAnnouncement.from_bytes(board.view(rid), shuffler_key=params.shuffler_verify_key))},
        }  # fmt: skip
        if rid in self.failed:
            reason, signature = self.failed[rid]
            out["error"] = reason
            out["signatures"]["failure"] = _verifies(lambda: self.server_key.verify(  # type: ignore[union-attr]
                signature, failure_message(rid, reason), context=FAILURE_CONTEXT))  # fmt: skip
        if published:
            rb = board._rounds[rid]
            out["signatures"]["board"] = _verifies(lambda: rb.head.verify(self.server_key))
            out["board"] = {"entries": rb.head.entry_count, "bucket_bits": rb.head.bucket_bits,
                            "posts": sum(len(v) for v in board._posts.get(rid, {}).values())}  # fmt: skip
            out["ledger"] = _ledger(params, rb)
        return out


def _verifies(check: Any) -> str:
    try:
        check()
    except (CryptoError, MessageFormatError, ShuffleDPError):
        return "INVALID"
    return "verified"


def _ledger(params: RoundParams, rb: Any) -> list[dict[str, Any]]:
    """The privacy ledger of a published round from what is signed (|C| = 0 assumed)."""
    bits = rb.head.bucket_bits
    entries = [e for bucket in rb.buckets for e in bucket]
    task = PicTask.from_json(params.task)
    ledger = PrivacyLedger()
    rows = []
    for g in params.groups:
        mine = [e for e in entries if e.group_id == g.group_id]
        smallest = min(Counter(bucket_of(e.pseudonym, bits) for e in mine).values(), default=0) if bits else None
        R = group_randomizer(g)
        row = ledger.record(round_id=params.round_id.hex(), group=g.name, randomizer=g.randomizer,
                            local_epsilon=g.local_epsilon, params=R.amplification_parameters(), received=len(mine),
                            valid=len(mine), corrupted=0, exposed=task.exposure(0), delta=g.delta, bucket_bits=bits,
                            smallest_bucket=smallest)  # fmt: skip
        d = ledger.to_dict()["rows"][-1]
        eps = d["epsilon_c"]
        rows.append({"group": g.name, "local_epsilon": g.local_epsilon, "valid": len(mine), "n_prime": row.n_prime,
                     "epsilon_c": eps if isinstance(eps, (int, float)) and math.isfinite(eps) else "inf",
                     "delta": g.delta, "rule": row.rule})  # fmt: skip
    return rows


def create_app(settings: ServiceSettings, *, store: Store | None = None, peers: Peers | None = None) -> FastAPI:
    """The bulletin board's FastAPI application."""
    store = store or Store(settings.database_url())
    peers = peers or Peers({"server": settings.server_url})
    svc = BoardService(settings, store, peers)
    app = service_app(svc, "shuffledp PIC bulletin board", __doc__, bulk_path="/board")

    def known(round_id: str) -> bytes:
        rid = parse_round_id(round_id)
        svc._board()
        if rid not in svc.params:
            raise Problem(404, "unknown-round", f"round {round_id} is not on this board")
        return rid

    def published(rid: bytes) -> Any:
        board = svc._board()
        if rid in svc.failed:
            raise Problem(
                410, "round-failed", f"round {rid.hex()} failed and will not be published: {svc.failed[rid][0]}"
            )
        if rid not in board._rounds:
            raise Problem(425, "not-published", "the round's board is not published yet; poll again",
                          headers={"Retry-After": "1"})  # fmt: skip
        return board._rounds[rid]

    immutable = {"Cache-Control": "public, max-age=31536000, immutable"}

    @app.post("/v1/rounds", status_code=201, tags=["server"], responses={200: {"description": "already stored"},
              **problems(400, 403, 409, 422, 503)}, summary="store a round's signed parameters and the shuffler's view")  # fmt: skip
    async def add_round(body: RoundBody, response: Response) -> dict[str, str]:
        response.status_code = await svc.add_round(body.signed_params, body.view)
        return {"status": "stored"}

    @app.get("/v1/rounds", tags=["clients"], summary="every round on the board")
    async def rounds() -> list[dict[str, Any]]:
        svc._board()
        return [svc.summary(rid) for rid in svc.params]

    @app.get("/v1/rounds/{round_id}", tags=["clients"], responses=problems(404, 422, 503),
             summary="a round: parameters, state, groups, ledger, signature status")  # fmt: skip
    async def round_summary(round_id: str) -> dict[str, Any]:
        return svc.summary(known(round_id))

    @app.get("/v1/rounds/{round_id}/params", response_class=Response, tags=["clients"],
             responses={**octets_response("signed round parameters (type 2)"), **problems(404, 422, 503)})  # fmt: skip
    async def params(round_id: str) -> Response:
        return Response(svc.params[known(round_id)][0], media_type=OCTETS, headers=immutable)

    @app.get("/v1/rounds/{round_id}/view", response_class=Response, tags=["clients"],
             responses={**octets_response("the shuffler's view announcement (type 8)"), **problems(404, 422, 503)})  # fmt: skip
    async def view(round_id: str) -> Response:
        return Response(svc._board().view(known(round_id)), media_type=OCTETS, headers=immutable)

    @app.post("/v1/rounds/{round_id}/board", status_code=201, tags=["server"], openapi_extra=octets_body(
              "the whole-board slice (type 5) the server signed"), responses={200: {"description": "already stored"},
              **problems(400, 403, 404, 409, 410, 413, 422, 503)}, summary="publish a round's signed board (server signature)")  # fmt: skip
    async def publish(round_id: str, request: Request, response: Response) -> dict[str, str]:
        rid = known(round_id)
        response.status_code = await svc.publish(rid, await request.body())
        return {"status": "published"}

    @app.post("/v1/rounds/{round_id}/failure", status_code=201, tags=["server"],
              responses={200: {"description": "already stored"}, **problems(403, 404, 409, 422, 503)},
              summary="mark a round failed, with the reason (server signature); its reads answer 410 round-failed")  # fmt: skip
    async def failure(round_id: str, body: FailureBody, response: Response) -> dict[str, str]:
        response.status_code = await svc.fail(known(round_id), body.reason, body.signature)
        return {"status": "failed"}

    @app.get("/v1/rounds/{round_id}/head", response_class=Response, tags=["clients"],
             responses={**octets_response("the signed board head (type 4)"), **problems(404, 410, 422, 425, 503)})  # fmt: skip
    async def head(round_id: str) -> Response:
        return Response(published(known(round_id)).head.to_bytes(), media_type=OCTETS, headers=immutable)

    @app.get("/v1/rounds/{round_id}/board", response_class=Response, tags=["clients"],
             responses={**octets_response("the whole board (type 5)"), **problems(404, 410, 422, 425, 503)})  # fmt: skip
    async def whole(round_id: str) -> Response:
        return Response(published(known(round_id)).full, media_type=OCTETS, headers=immutable)

    @app.get("/v1/rounds/{round_id}/buckets/{bucket}", response_class=Response, tags=["clients"],
             responses={**octets_response("one bucket with the signed head (type 5)"), **problems(404, 410, 422, 425, 503)})  # fmt: skip
    async def bucket(round_id: str, bucket: int) -> Response:
        rid = known(round_id)
        rb = published(rid)
        if not 0 <= bucket < len(rb.buckets):
            raise Problem(404, "unknown-bucket", f"bucket {bucket} does not exist", field="bucket",
                          allowed=f"0 .. {len(rb.buckets) - 1}")  # fmt: skip
        return Response(svc._board().download_bucket(rid, bucket), media_type=OCTETS, headers=immutable)

    @app.post("/v1/posts", status_code=201, response_model=PostAnswer, tags=["clients"],
              openapi_extra=octets_body("a post (type 6), signed and encrypted to a mutual partner"),
              responses={200: {"model": PostAnswer, "description": "duplicate: stored before"},
                         **problems(400, 413, 422, 503)}, summary="append a post (send it through the shuffler's relay)")  # fmt: skip
    async def post(request: Request, response: Response) -> PostAnswer:
        post_id, code = await svc.post(await request.body())
        response.status_code = code
        return PostAnswer(status="stored" if code == 201 else "duplicate", post_id=post_id)

    @app.get("/v1/rounds/{round_id}/posts/{recipient}", tags=["clients"], responses=problems(404, 410, 422, 425, 503),
             summary="posts addressed to a pseudonym (hex), base64 each, in arrival order")  # fmt: skip
    async def posts_for(round_id: str, recipient: str) -> dict[str, list[str]]:
        rid = known(round_id)
        published(rid)
        try:
            raw = bytes.fromhex(recipient)
        except ValueError:
            raise Problem(422, "invalid-field", "recipient must be the pseudonym in hex", field="recipient",
                          allowed="hex digits") from None  # fmt: skip
        return {"posts": [base64.b64encode(p).decode() for p in svc._board().posts_for(rid, raw)]}

    @app.get("/", response_class=HTMLResponse, tags=["viewer"], summary="the board viewer: every round")
    async def index(request: Request) -> HTMLResponse:
        svc._board()
        rows = [svc.summary(rid) for rid in svc.params]
        html = _TEMPLATES.get_template("index.html").render(rounds=rows, now=time.strftime("%Y-%m-%d %H:%M:%S"),
                                                            base=request.scope.get("root_path", ""))  # fmt: skip
        return HTMLResponse(html)

    @app.get("/rounds/{round_id}", response_class=HTMLResponse, tags=["viewer"], responses=problems(404, 422, 503),
             summary="the board viewer: one round")  # fmt: skip
    async def round_page(round_id: str, request: Request) -> HTMLResponse:
        s = svc.summary(known(round_id))
        s["digest"] = hashlib.sha256(svc.params[parse_round_id(round_id)][0]).hexdigest()
        return HTMLResponse(_TEMPLATES.get_template("round.html").render(r=s, base=request.scope.get("root_path", "")))

    return app
