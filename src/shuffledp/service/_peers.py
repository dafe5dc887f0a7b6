"""Links between the services: one httpx client per peer (an ASGI transport in all-in-one mode), TOFU key pins."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from shuffledp.crypto import VerifyKey
from shuffledp.errors import CryptoError
from shuffledp.service.storage import Store


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
