"""Helpers shared by the service tests (imported by name: pytest puts this folder on sys.path)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SMALL_SPEC = {"task": {"name": "min-weight"}, "randomizer": "minkowski", "epsilon_c": 2.0, "ttl_seconds": 600.0}


def read_logs(services: Any) -> str:
    return "".join(Path(p).read_text(errors="replace") for p in services.logs.values())
