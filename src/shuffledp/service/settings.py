"""Settings of the PIC services (pydantic-settings): environment variables ``SHUFFLEDP_*`` and a TOML file.

Precedence, highest first: keyword arguments (the CLI's options), environment variables
(``SHUFFLEDP_DB_URL``, ``SHUFFLEDP_DATA_DIR``, ...), the TOML file named by
``SHUFFLEDP_CONFIG`` (keys as the field names below), then the defaults.

Examples
--------
>>> from shuffledp.service.settings import ServiceSettings
>>> s = ServiceSettings(data_dir="/tmp/pic-example")
>>> s.database_url().startswith("sqlite:///")
True
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource

from shuffledp.errors import ShuffleDPError

__all__ = ["ServiceSettings", "SettingsError"]

#: Schemes of a Dask scheduler address (``distributed``'s comm backends).
_DASK_SCHEMES = ("tcp", "tls", "inproc", "ucx", "ws", "wss")


class SettingsError(ShuffleDPError, ValueError):
    """A setting that cannot be used (a missing or unreadable ``SHUFFLEDP_CONFIG`` file, ...); the message names it."""


class ServiceSettings(BaseSettings):
    """Everything a shuffler, server or bulletin board reads at start-up (module docstring)."""

    model_config = SettingsConfigDict(env_prefix="SHUFFLEDP_", extra="forbid")

    data_dir: Path = Field(
        Path("pic-data"), description="folder of the keys (mode 0700, files 0600) and the default SQLite file"
    )
    db_url: str | None = Field(None, description="SQLAlchemy URL; None: sqlite:///<data_dir>/pic.sqlite3 (WAL)")
    shuffler_url: str = "http://127.0.0.1:8701"
    server_url: str = "http://127.0.0.1:8702"
    board_url: str = "http://127.0.0.1:8703"
    #: pinned long-term keys (hex); None: trust on first use, pinned in the database afterwards
    server_verify_key: str | None = None
    shuffler_verify_key: str | None = None
    max_body_bytes: int = Field(16 * 1024, ge=1024, description="largest JSON body of a client request")
    max_bulk_bytes: int = Field(1 << 30, ge=1 << 20, description="largest batch or board upload (server-to-server)")
    rate_per_minute: float = Field(30.0, gt=0, description="submission attempts per enrolled user and minute")
    rate_burst: int = Field(10, ge=1)
    commit_batch: int = Field(1024, ge=1, description="most submissions in one commit (group commit)")
    commit_wait_ms: float = Field(2.0, ge=0, description="how long a commit waits for more submissions")
    round_ttl_seconds: float = Field(3600.0, gt=0, description="default time a round stays open")
    reconcile_seconds: float = Field(0.2, gt=0, description="period of the background step that moves rounds on")
    dask_scheduler: str | None = None
    log_level: str = "INFO"

    @field_validator("shuffler_url", "server_url", "board_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        try:
            parts = urlsplit(value)
            ok = parts.scheme in ("http", "https") and bool(parts.hostname) and (parts.port is None or parts.port > 0)
        except ValueError:  # a port that is not a number
            ok = False
        if not ok:
            raise ValueError("must be an http(s) URL such as http://127.0.0.1:8701")
        return value

    @field_validator("db_url")
    @classmethod
    def _database_url(cls, value: str | None) -> str | None:
        if value is None:
            return value
        import sqlalchemy as sa

        try:
            sa.engine.make_url(value).get_dialect()
        except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ValueError):
            raise ValueError(
                "must be a SQLAlchemy URL of a supported database (sqlite:///path or postgresql://user@host/db)"
            ) from None
        return value

    @field_validator("dask_scheduler")
    @classmethod
    def _dask_address(cls, value: str | None) -> str | None:
        if value is None:
            return value
        scheme, _, rest = value.rpartition("://")
        if (scheme and scheme not in _DASK_SCHEMES) or not re.fullmatch(r"\[?[\w.:-]+\]?:\d{1,5}", rest):
            raise ValueError("must be a Dask scheduler address such as tcp://127.0.0.1:8786")
        import importlib.util

        if importlib.util.find_spec("distributed") is None:
            raise ValueError("needs the scale extra (Dask's distributed): pip install 'shuffledp[scale]'")
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        config = os.environ.get("SHUFFLEDP_CONFIG")
        if config:
            if not Path(config).is_file():
                raise SettingsError(f"SHUFFLEDP_CONFIG must name a TOML file, got {config!r} (no such file)")
            try:
                sources.append(TomlConfigSettingsSource(settings_cls, toml_file=Path(config)))
            except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as exc:
                raise SettingsError(f"SHUFFLEDP_CONFIG ({config}) is not a readable TOML file: {exc}") from None
        return tuple(sources)

    def database_url(self) -> str:
        """The SQLAlchemy URL in force (the SQLite file under ``data_dir`` by default)."""
        if self.db_url:
            return self.db_url
        return f"sqlite:///{(Path(self.data_dir) / 'pic.sqlite3').resolve()}"
