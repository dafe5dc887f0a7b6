"""Links between the services: one httpx client per peer (an ASGI transport in all-in-one mode), TOFU key pins."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from shuffledp.crypto import VerifyKey
from shuffledp.errors import CryptoError
from shuffledp.service.storage import Store

#: Domain of the server's signature on "this round failed" (its reason), pushed to the board.
FAILURE_CONTEXT = "pic/round-failed"
MAX_FAILURE_REASON = 1000


def failure_message(round_id: bytes, reason: str) -> bytes:
    """The bytes the server signs to tell the board (and its readers) that a round failed, and why."""
    return b"PIC round failed\0" + round_id + reason.encode("utf-8")


class Peers:
    """HTTP clients for the other services; ``transports`` maps a base URL to an in-process transport."""

    def __init__(self, urls: dict[str, str], transports: dict[str, Any] | None = None, timeout: float = 120.0) -> None:
        self.urls = dict(urls)
        self.transports = transports or {}
        self.timeout = timeout
        self._clients: dict[str, httpx.AsyncClient] = {}

    def client(self, name: str) -> httpx.AsyncClient:
        if name not in self._clients:
            base = self.urls[name]
            transport = self.transports.get(name)
            limits = httpx.Limits(max_connections=32, max_keepalive_connections=32)  # keep-alive for all of them
            self._clients[name] = httpx.AsyncClient(
                base_url=base, timeout=self.timeout, transport=transport, limits=limits
            )
        return self._clients[name]

    async def aclose(self) -> None:
        for c in self._clients.values():
            await c.aclose()
        self._clients.clear()


async def pinned_key(store: Store, peers: Peers, name: str, configured: str | None) -> VerifyKey:
    """The long-term verify key of peer ``name``: from the settings if given, else fetched once from its
    key-configuration endpoint and pinned in the database (trust on first use); a changed key is refused."""
    if configured:
        return VerifyKey.from_bytes(bytes.fromhex(configured))
    pinned = await asyncio.to_thread(store.get_pin, f"verify-key:{name}")
    if pinned is None:
        r = await peers.client(name).get("/v1/key-config")
        r.raise_for_status()
        fetched = bytes.fromhex(r.json()["verify_key"])
        pinned = await asyncio.to_thread(store.pin, f"verify-key:{name}", fetched)
        if pinned != fetched:
            raise CryptoError(f"the {name}'s key changed since it was pinned; refusing the new key")
    return VerifyKey.from_bytes(pinned)


async def keep_stepping(
    step: Callable[[], Awaitable[None]], period: float, log: logging.Logger, name: str, max_delay: float = 2.0
) -> None:
    """Run ``step`` every ``period`` seconds until cancelled (a service's background step).

    A failing step (a peer down, a peer refusing) must neither stop the loop nor flood the log:
    the first failure of a kind is one WARNING line naming the exception type (no traceback, no
    message: it could quote a URL or input); while the step keeps failing, the wait doubles up to
    ``max_delay`` and further failures of the same kind log at DEBUG; the first success after
    failures is one INFO line.
    """
    failing: str | None = None
    failures = 0
    while True:
        delay = period
        try:
            await step()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the loop must survive a peer being down
            kind = type(exc).__name__
            failures += 1
            if kind != failing:
                log.warning("%s step: %s; retrying with back-off (every %g s at most)", name, kind, max_delay)
                failing = kind
            else:
                log.debug("%s step: %s again (%d failures)", name, kind, failures)
            delay = min(max_delay, period * 2 ** min(failures, 20))
        else:
            if failing is not None:
                log.info("%s step: working again after %d failed attempts", name, failures)
            failing, failures = None, 0
        await asyncio.sleep(delay)
