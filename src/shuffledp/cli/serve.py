"""``shuffledp serve shuffler|server|bulletin|all``: run a PIC service with uvicorn.

Settings come from the options given here, then ``SHUFFLEDP_*`` environment variables, then
the TOML file named by ``SHUFFLEDP_CONFIG`` (`shuffledp.service.settings`).  Logs are one
line per request naming the route template only: no body, no query string, no key.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from shuffledp.cli import _support as S

if TYPE_CHECKING:
    from shuffledp.service.settings import ServiceSettings

__all__ = [
    "app",
    "check_data_dir",
    "check_database",
    "check_host",
    "check_settings",
    "configure_logging",
    "load_settings",
    "log_start",
    "serve_cmd",
    "shown_database",
]

app = typer.Typer(help="Run the PIC services over HTTP.", cls=S.OneLineGroup)

_ROLES = ("shuffler", "server", "bulletin", "all")


def configure_logging(level: str = "INFO") -> None:
    """One line per event on stderr; uvicorn's access log (which prints paths and client addresses) stays off."""
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    logging.getLogger("uvicorn.access").disabled = True
    for noisy in ("httpx", "httpcore", "alembic"):  # httpx logs every URL it calls; alembic its plugins
        logging.getLogger(noisy).setLevel(logging.WARNING)


#: Settings given as options, and the option's name (errors name the option, the variable or the file's key).
OPTION_OF = {"db_url": "--db", "data_dir": "--data-dir", "dask_scheduler": "--dask-scheduler",
             "shuffler_url": "--shuffler-url", "server_url": "--server-url", "board_url": "--board-url"}  # fmt: skip


def _bad_option(ctx: typer.Context, option: str, message: str) -> typer.BadParameter:
    """A usage error about ``option``: one line ``error: <message> (see '... --help')``, exit status 2."""
    param = next((p for p in ctx.command.params if option in getattr(p, "opts", ())), None)
    return typer.BadParameter(message, ctx=ctx, param=param)


def _where(field: str, given: dict[str, Any]) -> str:
    """Where a setting came from, as the user wrote it: the option, the environment variable or the TOML key."""
    if field in given:
        return OPTION_OF.get(field, field)
    if f"SHUFFLEDP_{field.upper()}" in os.environ:
        return f"SHUFFLEDP_{field.upper()}"
    config = os.environ.get("SHUFFLEDP_CONFIG")
    return f"{field} in SHUFFLEDP_CONFIG ({config})" if config else field


def load_settings(ctx: typer.Context, given: dict[str, Any]) -> ServiceSettings:
    """The settings in force (options, then ``SHUFFLEDP_*``, then the ``SHUFFLEDP_CONFIG`` file); a bad value is
    one error line naming where it came from."""
    from pydantic import ValidationError

    from shuffledp.service.settings import ServiceSettings, SettingsError

    given = {k: v for k, v in given.items() if v is not None}
    try:
        return ServiceSettings(**given)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else "settings"
        if first["type"] == "extra_forbidden":
            config = os.environ.get("SHUFFLEDP_CONFIG")
            allowed = ", ".join(ServiceSettings.model_fields)
            raise SettingsError(
                f"SHUFFLEDP_CONFIG ({config}) has an unknown key {field!r}; allowed: {allowed}"
            ) from None
        msg = str(first["msg"]).removeprefix("Value error, ")
        msg = re.sub(r"^Input should be ", "must be ", msg).split(", unable to")[0]
        where = _where(field, given)
        message = f"{where} {msg}, got {first.get('input')!r}"
        if field in given:
            raise _bad_option(ctx, where, message) from None
        raise SettingsError(message) from None


def check_host(ctx: typer.Context, host: str) -> None:
    """``--host`` must be an IP address or a name that resolves (checked before anything starts)."""
    import ipaddress
    import socket

    try:
        ipaddress.ip_address(host)
        return
    except ValueError:
        pass
    if re.fullmatch(r"[\d.]+", host):
        raise _bad_option(ctx, "--host", f"--host must be an IP address or a host name to listen on, got {host!r}")
    try:
        socket.getaddrinfo(host, None)
    except (socket.gaierror, UnicodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise _bad_option(ctx, "--host", f"--host must be an address to listen on, got {host!r} ({reason})") from None


def check_data_dir(ctx: typer.Context, folder: Path, given: dict[str, Any]) -> None:
    """The data folder exists (created if needed, as the services would) and is writable."""
    where = _where("data_dir", given)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        reason = "it is a file, not a folder"
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
    else:
        if os.access(folder, os.W_OK | os.X_OK):
            return
        reason = "the folder is not writable"
    message = f"{where} must be a folder the services can create and write, got {str(folder)!r} ({reason})"
    if "data_dir" in given:
        raise _bad_option(ctx, where, message)
    from shuffledp.service.settings import SettingsError

    raise SettingsError(message)


def shown_database(url: str) -> str:
    """A database URL as it may be printed: its password hidden."""
    import sqlalchemy as sa

    return sa.engine.make_url(url).render_as_string(hide_password=True)


def check_database(ctx: typer.Context, url: str, where: str, is_option: bool) -> None:
    """Connect once to an explicitly given database (refused, unknown host, missing driver: one line naming it)."""
    import sqlalchemy as sa

    from shuffledp.service.settings import SettingsError
    from shuffledp.service.storage import make_engine

    shown = shown_database(url)
    try:
        engine = make_engine(url)
        try:
            with engine.connect():
                pass
        finally:
            engine.dispose()
    except (sa.exc.SQLAlchemyError, OSError, ImportError) as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().split("\n(Background")[0]
        if isinstance(exc, ImportError):
            reason = f"its driver is not installed ({exc})"
        message = f"{where}: cannot connect to {shown}: {reason}"
        if is_option:
            raise _bad_option(ctx, where, message) from None
        raise SettingsError(message) from None


def check_settings(
    ctx: typer.Context, given: dict[str, Any], host: str | None = None, folder: bool = True
) -> ServiceSettings:
    """Every setting checked before anything starts: values, the listening address, the folder (unless
    ``folder`` is False), the database."""
    settings = load_settings(ctx, given)
    if host is not None:
        check_host(ctx, host)
    if folder:
        check_data_dir(ctx, Path(settings.data_dir), given)
    if settings.db_url:
        check_database(ctx, settings.db_url, _where("db_url", given), given.get("db_url") is not None)
    return settings


def log_start(role: str, host: str, port: int, settings: ServiceSettings) -> None:
    """One line on stderr before uvicorn binds: which role, where, its API docs, its data folder and database
    (password hidden)."""
    base = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
    docs = ", ".join(f"{base}/{r}/docs" for r in ("shuffler", "server", "board")) if role == "all" else f"{base}/docs"
    database = shown_database(settings.database_url())
    logging.getLogger("shuffledp.serve").info(
        "starting %s on %s (API docs: %s; data in %s; database: %s)", role, base, docs, settings.data_dir, database
    )


@app.command("serve", cls=S.OneLineCommand)
def serve_cmd(
    ctx: typer.Context,
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

    given = {"db_url": db, "data_dir": data_dir, "dask_scheduler": dask_scheduler, "shuffler_url": shuffler_url,
             "server_url": server_url, "board_url": board_url}  # fmt: skip
    given = {k: v for k, v in given.items() if v is not None}
    settings = check_settings(ctx, given, host)
    configure_logging(settings.log_level)
    app_ = create(role, settings)
    log_start(role, host, port, settings)
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
