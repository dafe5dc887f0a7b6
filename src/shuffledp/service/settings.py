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
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource


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
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=Path(config)))
        return tuple(sources)

    def database_url(self) -> str:
        """The SQLAlchemy URL in force (the SQLite file under ``data_dir`` by default)."""
        if self.db_url:
            return self.db_url
        return f"sqlite:///{(Path(self.data_dir) / 'pic.sqlite3').resolve()}"
