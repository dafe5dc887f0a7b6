"""``shuffledp serve shuffler|server|bulletin|all``: run a PIC service with uvicorn.

Settings come from the options given here, then ``SHUFFLEDP_*`` environment variables, then
the TOML file named by ``SHUFFLEDP_CONFIG`` (`shuffledp.service.settings`).  Logs are one
line per request naming the route template only: no body, no query string, no key.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer

from shuffledp.cli import _support as S

app = typer.Typer(help="Run the PIC services over HTTP.", cls=S.OneLineGroup)

_ROLES = ("shuffler", "server", "bulletin", "all")


def configure_logging(level: str = "INFO") -> None:
    """One line per event on stderr; uvicorn's access log (which prints paths and client addresses) stays off."""
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    logging.getLogger("uvicorn.access").disabled = True
    for noisy in ("httpx", "httpcore", "alembic"):  # httpx logs every URL it calls; alembic its plugins
        logging.getLogger(noisy).setLevel(logging.WARNING)


@app.command("serve", cls=S.OneLineCommand)
def serve_cmd(
    role: Annotated[
        str,
        typer.Argument(
            parser=S.choice_option("ROLE", lambda: list(_ROLES), "role"),
            help="shuffler, server, bulletin or all (the three in one process).",
        ),
    ],
    host: Annotated[str, typer.Option("--host", help="Address to listen on (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port.", parser=S.count_option("--port", 1, 65535))] = 8700,
    db: Annotated[
        str | None,
        typer.Option("--db", help="SQLAlchemy URL (postgresql://...); default: a SQLite file under --data-dir."),
    ] = None,
    data_dir: Annotated[
        Path | None, typer.Option("--data-dir", help="Folder of keys (0700/0600) and the default database.")
    ] = None,
    dask_scheduler: Annotated[
        str | None,
        typer.Option(
            "--dask-scheduler", help="Run unwrap/decrypt/seal on this Dask scheduler (needs shuffledp\\[scale])."
        ),
    ] = None,
    shuffler_url: Annotated[str | None, typer.Option("--shuffler-url", help="Where the shuffler listens.")] = None,
    server_url: Annotated[str | None, typer.Option("--server-url", help="Where the server listens.")] = None,
    board_url: Annotated[str | None, typer.Option("--board-url", help="Where the bulletin board listens.")] = None,
) -> None:
    """Run one PIC service (or all three) until interrupted."""
    import uvicorn

    from shuffledp.service.apps import create
    from shuffledp.service.settings import ServiceSettings

    given = {"db_url": db, "data_dir": data_dir, "dask_scheduler": dask_scheduler, "shuffler_url": shuffler_url,
             "server_url": server_url, "board_url": board_url}  # fmt: skip
    settings = ServiceSettings(**{k: v for k, v in given.items() if v is not None})
    configure_logging(settings.log_level)
    app_ = create(role, settings)
    uvicorn.run(
        app_,
        host=host,
        port=port,
        access_log=False,
        log_level="warning",
        timeout_graceful_shutdown=5,
        timeout_keep_alive=75,
        loop="auto",
        http="auto",
    )  # uvloop and httptools when installed (they are dependencies)
