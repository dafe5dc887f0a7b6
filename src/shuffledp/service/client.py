"""Client SDK of the PIC services (httpx; `PicServiceClient` and `AsyncPicServiceClient` offer the same calls).

Retries follow Oblivious HTTP's rule: a request is sent again only when the answer says it
was **not processed** -- a ``503`` problem of type ``not-processed``, a ``429`` (rate limit:
nothing was done), or a connection that could not be opened (nothing was sent) -- waiting
the ``Retry-After`` seconds (bounded).  A connection that breaks before any answer (a pooled
keep-alive connection the server had just closed) is resent only for idempotent calls:
reads, and submissions and posts, whose exact resend answers "duplicate".  Any other error raises `ServiceError` with the
problem document.  Submissions are also idempotent (an exact resend answers "duplicate"), so
a caller may resend after a timeout of its own.

Board reads and posts go through the shuffler's anonymous relay when ``relay=True`` (the
default when no board URL is given): the board never sees who reads which bucket or posts to
whom.  ``head`` and ``download_bucket`` make the client usable as the ``board`` argument of
`shuffledp.protocols.pic.Client.fetch_output`.

Examples
--------
>>> from shuffledp.service.client import PicServiceClient
>>> c = PicServiceClient("http://127.0.0.1:8701", server_url="http://127.0.0.1:8702")
>>> c.board_path("/v1/rounds")
'/v1/relay/board/v1/rounds'
>>> c.close()
"""

from __future__ import annotations

import asyncio
import base64
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from shuffledp.errors import ShuffleDPError

__all__ = ["AsyncPicServiceClient", "PicServiceClient", "ServiceError"]

OCTETS = "application/octet-stream"
NOT_PROCESSED = "urn:shuffledp:pic:problem:not-processed"


class ServiceError(ShuffleDPError):
    """An error answer of a PIC service: ``status``, ``code`` (the problem type's last part) and the ``problem``."""

    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        self.status, self.problem = status, problem
        self.code = str(problem.get("type", "")).rsplit(":", 1)[-1]
        super().__init__(f"{status} {self.code}: {problem.get('detail', '')}")


@dataclass
class _Op:
    service: str  # "shuffler", "server" or "board"
    method: str
    path: str
    json: Any = None
    content: bytes | None = None
    token: str | None = None
    ok: tuple[int, ...] = (200, 201, 202)
    parse: str = "json"  # "json", "bytes" or "status"
    headers: dict[str, str] = field(default_factory=dict)
    idempotent: bool = False  # a resend cannot do anything twice (reads; submissions and posts by design)


#: The request never left: always safe to resend.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout)
#: The connection broke before an answer (e.g. a pooled keep-alive connection the server had just
#: closed): the request may have been processed, so only idempotent calls are resent.
_BROKEN = (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)


def _not_processed(r: httpx.Response) -> bool:
    if r.status_code == 429:
        return True
    if r.status_code == 503:
        try:
            return r.json().get("type") in (NOT_PROCESSED, "urn:shuffledp:pic:problem:not-ready")
        except ValueError:
            return False
    return False


def _retry_after(r: httpx.Response | None, attempt: int) -> float:
    if r is not None:
        try:
            return min(5.0, float(r.headers.get("retry-after", "")))
        except ValueError:
            pass
    return min(2.0, 0.05 * 2**attempt)


def _result(op: _Op, r: httpx.Response) -> Any:
    if r.status_code not in op.ok:
        try:
            problem = r.json()
        except ValueError:
            problem = {"type": "about:blank", "detail": r.text[:200]}
        raise ServiceError(r.status_code, problem)
    if op.parse == "bytes":
        return r.content
    if op.parse == "status":
        return r.status_code, r.json()
    return r.json()


class _Calls:
    """The calls, as descriptions both clients execute (module docstring)."""

    def __init__(self, shuffler_url: str, server_url: str | None = None, board_url: str | None = None, *,
                 relay: bool | None = None, operator_token: str | None = None, service_token: str | None = None,
                 retries: int = 5) -> None:  # fmt: skip
        self.urls = {"shuffler": shuffler_url, "server": server_url or shuffler_url, "board": board_url or shuffler_url}
        self.relay = (board_url is None) if relay is None else relay
        self.operator_token, self.service_token, self.retries = operator_token, service_token, retries

    def board_path(self, path: str) -> str:
        return "/v1/relay/board" + path if self.relay else path

    def _board(self, method: str, path: str, **kw: Any) -> _Op:
        return _Op("shuffler" if self.relay else "board", method, self.board_path(path), idempotent=True, **kw)

    # clients
    def _key_config(self, service: str) -> _Op:
        return _Op(service, "GET", "/v1/key-config", idempotent=True)

    def _submit(self, round_id: bytes, submission: bytes) -> _Op:
        return _Op("shuffler", "POST", f"/v1/rounds/{round_id.hex()}/submissions",
                   json={"submission": base64.b64encode(submission).decode()}, ok=(200, 201), idempotent=True)  # fmt: skip

    def _params(self, round_id: bytes) -> _Op:
        return self._board("GET", f"/v1/rounds/{round_id.hex()}/params", parse="bytes", ok=(200,))

    def _view(self, round_id: bytes) -> _Op:
        return self._board("GET", f"/v1/rounds/{round_id.hex()}/view", parse="bytes", ok=(200,))

    def _head(self, round_id: bytes) -> _Op:
        return self._board("GET", f"/v1/rounds/{round_id.hex()}/head", parse="bytes", ok=(200,))

    def _bucket(self, round_id: bytes, bucket: int) -> _Op:
        return self._board("GET", f"/v1/rounds/{round_id.hex()}/buckets/{bucket}", parse="bytes", ok=(200,))

    def _download(self, round_id: bytes) -> _Op:
        return self._board("GET", f"/v1/rounds/{round_id.hex()}/board", parse="bytes", ok=(200,))

    def _post(self, data: bytes) -> _Op:
        return self._board("POST", "/v1/posts", content=data, headers={"content-type": OCTETS}, ok=(200, 201))

    def _posts_for(self, round_id: bytes, recipient: bytes) -> _Op:
        return self._board("GET", f"/v1/rounds/{round_id.hex()}/posts/{recipient.hex()}", ok=(200,))

    def _board_round(self, round_id: bytes) -> _Op:
        return self._board("GET", f"/v1/rounds/{round_id.hex()}", ok=(200,))

    # operator
    def _enrol(self, count: int) -> _Op:
        return _Op("shuffler", "POST", "/v1/enrolments", json={"count": count}, token=self.operator_token, ok=(201,))

    def _create(self, spec: dict[str, Any]) -> _Op:
        return _Op("server", "POST", "/v1/rounds", json=spec, token=self.operator_token, ok=(201,))

    def _close(self, round_id: bytes) -> _Op:
        return _Op("server", "POST", f"/v1/rounds/{round_id.hex()}/close", token=self.operator_token)

    def _round(self, round_id: bytes) -> _Op:
        return _Op("server", "GET", f"/v1/rounds/{round_id.hex()}", ok=(200,), idempotent=True)

    def _request(self, op: _Op) -> dict[str, Any]:
        headers = dict(op.headers)
        if op.token:
            headers["authorization"] = f"Bearer {op.token}"
        return {"method": op.method, "url": self.urls[op.service] + op.path, "json": op.json, "content": op.content,
                "headers": headers}  # fmt: skip


def _b64list(answer: dict[str, Any]) -> list[bytes]:
    return [base64.b64decode(c) for c in answer["credentials"]]


class PicServiceClient(_Calls):
    """Synchronous client (module docstring)."""

    def __init__(self, *args: Any, timeout: float = 60.0, http: httpx.Client | None = None, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.http = http or httpx.Client(timeout=timeout)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> PicServiceClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _do(self, op: _Op) -> Any:
        for attempt in range(self.retries + 1):
            try:
                r = self.http.request(**self._request(op))
            except (httpx.ConnectError, httpx.ConnectTimeout, *_BROKEN) as exc:
                if attempt == self.retries or not (op.idempotent or isinstance(exc, _NOT_SENT)):
                    raise
                time.sleep(_retry_after(None, attempt))
                continue
            if _not_processed(r) and attempt < self.retries:
                time.sleep(_retry_after(r, attempt))
                continue
            return _result(op, r)
        raise AssertionError("unreachable")

    def _poll(self, op: _Op, timeout: float) -> Any:
        """Repeat a read while the board answers 425 (not published yet), up to ``timeout`` seconds."""
        end = time.monotonic() + timeout
        while True:
            try:
                return self._do(op)
            except ServiceError as exc:
                if exc.status != 425 or time.monotonic() > end:
                    raise
            time.sleep(0.1)

    def key_config(self, service: str) -> dict[str, Any]:
        return self._do(self._key_config(service))

    def submit(self, round_id: bytes, submission: bytes) -> str:
        """Send a submission; "admitted", or "duplicate" for an exact resend."""
        return self._do(self._submit(round_id, submission))["status"]

    def round_params(self, round_id: bytes) -> bytes:
        return self._do(self._params(round_id))

    def view(self, round_id: bytes) -> bytes:
        return self._do(self._view(round_id))

    def head(self, round_id: bytes, timeout: float = 0.0) -> bytes:
        return self._poll(self._head(round_id), timeout)

    def download_bucket(self, round_id: bytes, bucket: int) -> bytes:
        return self._do(self._bucket(round_id, bucket))

    def download(self, round_id: bytes, timeout: float = 0.0) -> bytes:
        return self._poll(self._download(round_id), timeout)

    def post(self, data: bytes) -> str:
        return self._do(self._post(data))["status"]

    def posts_for(self, round_id: bytes, recipient: bytes) -> list[bytes]:
        return [base64.b64decode(p) for p in self._do(self._posts_for(round_id, recipient))["posts"]]

    def board_round(self, round_id: bytes) -> dict[str, Any]:
        return self._do(self._board_round(round_id))

    def enrol(self, count: int = 1) -> list[bytes]:
        return _b64list(self._do(self._enrol(count)))

    def create_round(self, spec: dict[str, Any]) -> dict[str, Any]:
        return self._do(self._create(spec))

    def close_round(self, round_id: bytes) -> dict[str, Any]:
        return self._do(self._close(round_id))

    def round_info(self, round_id: bytes) -> dict[str, Any]:
        return self._do(self._round(round_id))

    def wait_round(
        self, round_id: bytes, states: tuple[str, ...] = ("published", "failed"), timeout: float = 120.0
    ) -> dict[str, Any]:
        """Poll the server until the round reaches one of ``states``."""
        end = time.monotonic() + timeout
        while True:
            info = self.round_info(round_id)
            if info["state"] in states:
                return info
            if time.monotonic() > end:
                raise TimeoutError(f"round {round_id.hex()} still {info['state']} after {timeout:g} s")
            time.sleep(0.1)


class AsyncPicServiceClient(_Calls):
    """Asynchronous client with the calls of `PicServiceClient` (used by the load generator and the demo)."""

    def __init__(self, *args: Any, timeout: float = 60.0, http: httpx.AsyncClient | None = None, **kw: Any) -> None:
        super().__init__(*args, **kw)
        # a few pooled keep-alive connections: httpcore's pool slows down sharply past a few dozen (130 req/s at 64)
        self.http = http or httpx.AsyncClient(
            timeout=timeout, limits=httpx.Limits(max_connections=32, max_keepalive_connections=32)
        )

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> AsyncPicServiceClient:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def _do(self, op: _Op) -> Any:
        for attempt in range(self.retries + 1):
            try:
                r = await self.http.request(**self._request(op))
            except (httpx.ConnectError, httpx.ConnectTimeout, *_BROKEN) as exc:
                if attempt == self.retries or not (op.idempotent or isinstance(exc, _NOT_SENT)):
                    raise
                await asyncio.sleep(_retry_after(None, attempt))
                continue
            if _not_processed(r) and attempt < self.retries:
                await asyncio.sleep(_retry_after(r, attempt))
                continue
            return _result(op, r)
        raise AssertionError("unreachable")

    async def _poll(self, op: _Op, timeout: float) -> Any:
        end = time.monotonic() + timeout
        while True:
            try:
                return await self._do(op)
            except ServiceError as exc:
                if exc.status != 425 or time.monotonic() > end:
                    raise
            await asyncio.sleep(0.1)

    async def key_config(self, service: str) -> dict[str, Any]:
        return await self._do(self._key_config(service))

    async def submit(self, round_id: bytes, submission: bytes) -> str:
        return (await self._do(self._submit(round_id, submission)))["status"]

    async def round_params(self, round_id: bytes) -> bytes:
        return await self._do(self._params(round_id))

    async def view(self, round_id: bytes) -> bytes:
        return await self._do(self._view(round_id))

    async def head(self, round_id: bytes, timeout: float = 0.0) -> bytes:
        return await self._poll(self._head(round_id), timeout)

    async def download_bucket(self, round_id: bytes, bucket: int) -> bytes:
        return await self._do(self._bucket(round_id, bucket))

    async def download(self, round_id: bytes, timeout: float = 0.0) -> bytes:
        return await self._poll(self._download(round_id), timeout)

    async def post(self, data: bytes) -> str:
        return (await self._do(self._post(data)))["status"]

    async def posts_for(self, round_id: bytes, recipient: bytes) -> list[bytes]:
        return [base64.b64decode(p) for p in (await self._do(self._posts_for(round_id, recipient)))["posts"]]

    async def board_round(self, round_id: bytes) -> dict[str, Any]:
        return await self._do(self._board_round(round_id))

    async def enrol(self, count: int = 1) -> list[bytes]:
        return _b64list(await self._do(self._enrol(count)))

    async def create_round(self, spec: dict[str, Any]) -> dict[str, Any]:
        return await self._do(self._create(spec))

    async def close_round(self, round_id: bytes) -> dict[str, Any]:
        return await self._do(self._close(round_id))

    async def round_info(self, round_id: bytes) -> dict[str, Any]:
        return await self._do(self._round(round_id))

    async def wait_round(
        self, round_id: bytes, states: tuple[str, ...] = ("published", "failed"), timeout: float = 120.0
    ) -> dict[str, Any]:
        end = time.monotonic() + timeout
        while True:
            info = await self.round_info(round_id)
            if info["state"] in states:
                return info
            if time.monotonic() > end:
                raise TimeoutError(f"round {round_id.hex()} still {info['state']} after {timeout:g} s")
            await asyncio.sleep(0.1)
