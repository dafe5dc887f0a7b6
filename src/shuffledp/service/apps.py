"""Building the services: one per process (``shuffledp serve shuffler|server|bulletin``) or all in one.

All-in-one mounts the three applications under ``/shuffler``, ``/server`` and ``/board`` of
one process and one database, and links them through in-process ASGI transports (no socket
between them); every route, check and stored state is the same as with three processes.
"""

from __future__ import annotations

from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import httpx
from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from shuffledp.service import bulletin_app, server_app, shuffler_app
from shuffledp.service._http import http_problem
from shuffledp.service._peers import Peers
from shuffledp.service.settings import ServiceSettings
from shuffledp.service.storage import Store

__all__ = ["all_in_one", "create"]

ROLES = ("shuffler", "server", "bulletin")


def create(role: str, settings: ServiceSettings) -> FastAPI:
    """The application of one role (``shuffler``, ``server``, ``bulletin``) or ``all``."""
    if role == "shuffler":
        return shuffler_app.create_app(settings)
    if role == "server":
        return server_app.create_app(settings)
    if role in ("bulletin", "board"):
        return bulletin_app.create_app(settings)
    if role == "all":
        return all_in_one(settings)
    raise ValueError(f"role must be one of shuffler, server, bulletin, all; got {role!r}")


class _LateASGI:
    """An ASGI callable resolved on first use (the apps link to each other before all exist)."""

    def __init__(self, holder: dict[str, Any], name: str) -> None:
        self.holder, self.name = holder, name

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.holder[self.name](scope, receive, send)


def all_in_one(settings: ServiceSettings) -> FastAPI:
    """Shuffler, server and board in one process and one database (module docstring)."""
    store = Store(settings.database_url())
    holder: dict[str, Any] = {}
    transports = {name: httpx.ASGITransport(app=_LateASGI(holder, name)) for name in ("shuffler", "server", "board")}
    urls = {name: f"http://{name}" for name in transports}
    shuffler = shuffler_app.create_app(settings, store=store, peers=Peers(urls, transports))
    server = server_app.create_app(settings, store=store, peers=Peers(urls, transports))
    board = bulletin_app.create_app(settings, store=store, peers=Peers(urls, transports))
    holder.update(shuffler=shuffler, server=server, board=board)

    @asynccontextmanager
    async def lifespan(_: FastAPI):  # noqa: ANN202
        async with AsyncExitStack() as stack:
            for app in (server, shuffler, board):
                await stack.enter_async_context(app.router.lifespan_context(app))
            yield

    root = FastAPI(title="shuffledp PIC (all in one)", version="1", lifespan=lifespan,
                   description="The shuffler, server and bulletin board of PIC in one process: see /shuffler/docs, "
                   "/server/docs and /board/docs.")  # fmt: skip
    root.add_exception_handler(StarletteHTTPException, http_problem)  # type: ignore[arg-type]
    root.mount("/shuffler", shuffler)
    root.mount("/server", server)
    root.mount("/board", board)
    root.state.apps = holder

    @root.get("/", include_in_schema=False)
    async def _home() -> RedirectResponse:
        return RedirectResponse("/board/")

    @root.get("/healthz", include_in_schema=False)
    async def _health() -> dict[str, str]:
        return {"status": "ok"}

    return root
