"""What the three PIC services share at the HTTP boundary.

* RFC 9457 problem answers (``application/problem+json``): every refusal is a `Problem` with
  a ``type`` of its own (``urn:shuffledp:pic:problem:<code>``), a ``title``, the ``status``,
  a ``detail``, and where a field is at fault its ``field`` and what is ``allowed``;
* request-size limits (`BodyLimit`: 413 before the body is read past the limit);
* strict request models (`StrictModel`, base64 fields that must be canonical standard base64);
* Prometheus metrics on a registry per service, and one DEBUG log line per request that names
  the route template (never the path's values, a query string, a header or a body);
* the application of a role (`service_app`): its service started and stopped with it, ready
  while the service is and its database answers.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, Protocol

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from pydantic import BaseModel, BeforeValidator, ConfigDict, PlainSerializer, WithJsonSchema
from starlette.exceptions import HTTPException as StarletteHTTPException

from shuffledp.service.settings import ServiceSettings

log = logging.getLogger("shuffledp.service")
PROBLEM = "application/problem+json"
PROBLEM_PREFIX = "urn:shuffledp:pic:problem:"
OCTETS = "application/octet-stream"


class Problem(Exception):
    """An RFC 9457 answer: raise it from any handler."""

    def __init__(
        self, status: int, code: str, detail: str, *, field: str | None = None, allowed: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:  # fmt: skip
        super().__init__(detail)
        self.status, self.code, self.detail = status, code, detail
        self.field, self.allowed, self.headers = field, allowed, headers or {}

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": PROBLEM_PREFIX + self.code, "title": self.code.replace("-", " "),
                               "status": self.status, "detail": self.detail}  # fmt: skip
        if self.field is not None:
            out["field"] = self.field
        if self.allowed is not None:
            out["allowed"] = self.allowed
        return out

    def response(self) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.status, media_type=PROBLEM, headers=self.headers)


async def http_problem(_: Request, exc: StarletteHTTPException) -> JSONResponse:
    """Starlette's own refusals (no such path, method not allowed) as problems like every other answer.

    A body FastAPI could not decode as JSON for a reason other than syntax (bytes that are not UTF-8, nesting
    past the parser's depth, an integer past Python's digit limit) is the same ``malformed-json`` as bad syntax.
    """
    if exc.status_code == 400 and isinstance(exc.__cause__, (UnicodeDecodeError, RecursionError, ValueError)):
        return Problem(400, "malformed-json", "the body is not valid JSON", allowed="a JSON object").response()
    code = {404: "not-found", 405: "method-not-allowed"}.get(exc.status_code, "http-error")
    return Problem(exc.status_code, code, str(exc.detail)).response()


class ProblemModel(BaseModel):
    """The RFC 9457 problem document every error answer carries."""

    type: str
    title: str
    status: int
    detail: str
    field: str | None = None
    allowed: str | None = None


def problems(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries for the documented error statuses of an operation."""
    return {
        c: {"model": ProblemModel, "content": {PROBLEM: {}}, "description": _STATUS_TEXT.get(c, "refused")}
        for c in codes
    }


_STATUS_TEXT = {
    400: "malformed body (JSON, base64 or protocol bytes), or a submission that does not open (outdated-config)",
    401: "missing or wrong bearer token", 403: "signature or enrolment refused", 404: "no such round, bucket or resource",
    409: "duplicate: replay of an id, a second submission of a user, another batch or board for the same round",
    410: "the round is closed or expired", 413: "body larger than the limit", 422: "a field outside what is allowed "
    "(wrong round, wrong group, schema)", 425: "not yet: the round has not reached that state", 429: "rate limit",
    503: "not processed: retry after the Retry-After seconds",
}  # fmt: skip


class StrictModel(BaseModel):
    """Request bodies: unknown fields are refused, types are not coerced."""

    model_config = ConfigDict(extra="forbid", strict=True)


def _b64(value: Any) -> bytes:
    if not isinstance(value, str):
        raise ValueError("must be a string of standard base64")
    try:
        raw = base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise ValueError("must be standard base64 (A-Z a-z 0-9 + /, padded with =)") from None
    if base64.b64encode(raw).decode("ascii") != value:
        raise ValueError("must be canonical standard base64 (padded, no line breaks)")
    return raw


def b64_field(max_bytes: int) -> Any:
    """A bytes field carried as standard base64 in JSON (documented as ``format: byte`` with its length limit)."""
    max_chars = 4 * ((max_bytes + 2) // 3)
    return Annotated[
        bytes,
        BeforeValidator(_b64),
        PlainSerializer(lambda b: base64.b64encode(b).decode("ascii"), return_type=str),
        WithJsonSchema({"type": "string", "format": "byte", "maxLength": max_chars}),
    ]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def octets_body(description: str) -> dict[str, Any]:
    """``openapi_extra`` declaring a raw protocol-message body."""
    return {"requestBody": {"required": True, "description": description,
                            "content": {OCTETS: {"schema": {"type": "string", "format": "binary"}}}}}  # fmt: skip


def octets_response(description: str) -> dict[int | str, dict[str, Any]]:
    return {200: {"description": description, "content": {OCTETS: {"schema": {"type": "string", "format": "binary"}}}}}


class Metrics:
    """The Prometheus metrics of one service (its own registry, so several services share a process)."""

    def __init__(self, service: str) -> None:
        self.service = service
        self.registry = CollectorRegistry()
        self.requests = Counter("shuffledp_http_requests", "HTTP requests by route and status", ["route", "status"],
                                registry=self.registry)  # fmt: skip
        self.latency = Histogram("shuffledp_http_request_seconds", "HTTP request latency", ["route"], registry=self.registry,
                                 buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10))  # fmt: skip
        self.submissions = Counter("shuffledp_submissions", "submissions by result (admitted, duplicate)", ["result"],
                                   registry=self.registry)  # fmt: skip
        self.refusals = Counter("shuffledp_refusals", "refused requests by reason", ["reason"], registry=self.registry)
        self.round_seconds = Histogram("shuffledp_round_duration_seconds", "time from a round's creation to each state",
                                       ["state"], registry=self.registry,
                                       buckets=(0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600, 86400))  # fmt: skip
        self.batch_size = Histogram("shuffledp_batch_size", "envelopes per released or received batch", registry=self.registry,
                                    buckets=(10, 100, 1000, 5000, 10_000, 50_000, 100_000, 1_000_000, 10_000_000))  # fmt: skip

    def refuse(self, problem: Problem) -> Problem:
        self.refusals.labels(problem.code).inc()
        return problem

    def exposition(self) -> Response:
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)


class BodyLimit:
    """ASGI middleware: refuse (413) a body above ``limit_for(path)`` bytes, by Content-Length or while reading;
    count and time every request by route template (metrics), with one DEBUG log line naming only the template.

    Pure ASGI (no ``BaseHTTPMiddleware``, which costs a task and a copy per request on the submission path).
    """

    def __init__(self, app: Any, limit_for: Callable[[str], int], metrics: Metrics | None = None) -> None:
        self.app, self.limit_for, self.metrics = app, limit_for, metrics

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Awaitable[dict]], send: Callable) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start = time.perf_counter()
        status = [500]

        async def sending(message: dict) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self._limited(scope, receive, sending)
        finally:
            if self.metrics is not None:
                route = getattr(scope.get("route"), "path", "-")
                elapsed = time.perf_counter() - start
                self.metrics.requests.labels(route, str(status[0])).inc()
                self.metrics.latency.labels(route).observe(elapsed)
                if log.isEnabledFor(logging.DEBUG):
                    log.debug(
                        "%s %s %s %s %.1fms", self.metrics.service, scope["method"], route, status[0], 1e3 * elapsed
                    )

    async def _limited(self, scope: dict[str, Any], receive: Callable[[], Awaitable[dict]], send: Callable) -> None:
        limit = self.limit_for(scope["path"])
        too_big = Problem(413, "body-too-large", f"request bodies of this endpoint are limited to {limit} bytes",
                          allowed=f"at most {limit} bytes")  # fmt: skip
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = limit + 1
                if declared > limit:
                    if self.metrics is not None:
                        self.metrics.refusals.labels(too_big.code).inc()
                    return await too_big.response()(scope, receive, send)
        seen, exceeded = 0, False

        async def limited() -> dict:
            nonlocal seen, exceeded
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    exceeded = True
                    raise _TooBig
            return message

        async def unless_exceeded(message: dict) -> None:
            # a JSON route catches the read error itself and answers 400 ("error parsing the body"): that answer
            # is dropped, and the 413 below goes out instead (a streamed body has no Content-Length to check)
            if not exceeded:
                await send(message)

        with contextlib.suppress(_TooBig):  # a route that does not catch the read error
            await self.app(scope, limited, unless_exceeded)
        if exceeded:
            if self.metrics is not None:
                self.metrics.refusals.labels(too_big.code).inc()
            await too_big.response()(scope, receive, send)


class _TooBig(Exception):
    pass


def install(
    app: FastAPI, metrics: Metrics, ready: Callable[[], Awaitable[bool]], limit_for: Callable[[str], int]
) -> None:
    """Problem handlers, /healthz, /readyz, /metrics, the size limit and the request log line."""

    @app.exception_handler(Problem)
    async def _problem(_: Request, exc: Problem) -> JSONResponse:
        metrics.refusals.labels(exc.code).inc()
        return exc.response()

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {"loc": ("body",), "msg": "invalid", "type": "invalid"}
        if first.get("type") == "json_invalid":
            p = Problem(400, "malformed-json", "the body is not valid JSON", allowed="a JSON object")
        else:
            field = ".".join(str(x) for x in first.get("loc", ()) if x != "body") or "body"
            msg = str(first.get("msg", "invalid")).removeprefix("Value error, ")
            p = Problem(422, "invalid-field", f"field {field!r}: {msg}", field=field, allowed=msg)
        metrics.refusals.labels(p.code).inc()
        return p.response()

    app.add_exception_handler(StarletteHTTPException, http_problem)  # type: ignore[arg-type]

    @app.exception_handler(Exception)
    async def _crash(_: Request, exc: Exception) -> JSONResponse:
        log.error("internal error %s", type(exc).__name__)  # no message: it could quote input
        return Problem(500, "internal", "internal error; nothing was stored by this request").response()

    @app.get("/healthz", tags=["operations"], summary="the process is alive")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", tags=["operations"], summary="the service can serve (database reachable, keys loaded)",
             responses=problems(503))  # fmt: skip
    async def readyz() -> dict[str, str]:
        if not await ready():
            raise Problem(
                503, "not-ready", "the service is starting or cannot reach its database", headers={"Retry-After": "1"}
            )
        return {"status": "ready"}

    @app.get("/metrics", tags=["operations"], summary="Prometheus metrics", response_class=Response,
             responses={200: {"content": {"text/plain": {}}, "description": "Prometheus text format"}})  # fmt: skip
    async def metrics_endpoint() -> Response:
        return metrics.exposition()

    app.add_middleware(BodyLimit, limit_for=limit_for, metrics=metrics)


class Pingable(Protocol):
    """A store whose database can be asked whether it answers."""

    def ping(self) -> bool: ...


class RoleService(Protocol):
    """What `service_app` needs of a role's service object (shuffler, server or board); read only."""

    @property
    def settings(self) -> ServiceSettings: ...

    @property
    def store(self) -> Pingable: ...

    @property
    def metrics(self) -> Metrics: ...

    @property
    def ready(self) -> bool: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


def service_app(
    svc: RoleService, title: str, doc: str, *, bulk_path: str | None = None,
    routes_first: Callable[[FastAPI], None] | None = None,
) -> FastAPI:  # fmt: skip
    """The FastAPI application of one role, with `install`'s handlers, probes and limits.

    ``doc``'s first paragraph is the OpenAPI description.  ``svc`` starts and stops with the
    application (``app.state.service``); ``/readyz`` answers ready while ``svc.ready`` holds and
    its store's ``ping()`` succeeds.  Bodies are limited to ``max_body_bytes``, or
    ``max_bulk_bytes`` on paths ending in ``bulk_path``.  ``routes_first(app)`` adds routes before
    the shared ones, so that they are matched first (a hot path).
    """
    settings, store = svc.settings, svc.store

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await svc.start()
        yield
        await svc.stop()

    app = FastAPI(title=title, version="1", lifespan=lifespan, description=doc.split("\n\n")[0])
    app.state.service = svc

    async def ready() -> bool:
        try:
            return svc.ready and await asyncio.to_thread(store.ping)
        except Exception:  # noqa: BLE001
            return False

    if routes_first is not None:
        routes_first(app)

    def limit_for(path: str) -> int:
        return settings.max_bulk_bytes if bulk_path and path.endswith(bulk_path) else settings.max_body_bytes

    install(app, svc.metrics, ready, limit_for)
    return app


def bearer(request: Request, token: str) -> None:
    """Refuse (401) a request without ``Authorization: Bearer <token>``."""
    import hmac

    got = request.headers.get("authorization", "")
    if not hmac.compare_digest(got.encode(), f"Bearer {token}".encode()):
        raise Problem(401, "unauthorized", "this endpoint needs the bearer token of its caller",
                      headers={"WWW-Authenticate": "Bearer"})  # fmt: skip


def bearer_first(token: Callable[[], str]) -> list[Any]:
    """Route ``dependencies``: `bearer` before the body is read or validated (an unauthenticated caller gets 401,
    never a 422 about a body it may not send)."""

    def check(request: Request) -> None:
        bearer(request, token())

    return [Depends(check)]


def parse_round_id(value: str) -> bytes:
    """A round id in a path: 32 lowercase hex digits (16 bytes)."""
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raw = b""
    if len(raw) != 16 or raw.hex() != value:
        raise Problem(422, "wrong-round", f"round id {value[:40]!r} is not 32 lowercase hex digits", field="round_id",
                      allowed="32 lowercase hex digits (16 bytes)")  # fmt: skip
    return raw
