"""Run the three PIC services as processes on loopback (the demo, the crash test and the load benchmark).

Each service is ``python -m shuffledp serve ROLE`` on a free loopback port with its own
database: a SQLite file per role under the data folder, or the one PostgreSQL database given
(rows are kept apart by role).  The processes share the data folder's key directory, as one
operator's machine would; a deployment gives each its own and copies the service token.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

__all__ = ["LocalServices", "free_port"]

ROLES = ("shuffler", "server", "bulletin")


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


@dataclass
class LocalServices:
    """Three service processes on loopback (module docstring)."""

    data_dir: Path
    db_url: str | None = None
    host: str = "127.0.0.1"
    dask_scheduler: str | None = None
    ports: dict[str, int] = field(default_factory=dict)
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)
    logs: dict[str, Path] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    _previous_sigterm: Any = field(default=None, repr=False)
    _sigterm_installed: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        self.data_dir = Path(self.data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        for role in ROLES:
            self.ports.setdefault(role, free_port(self.host))

    def url(self, role: str) -> str:
        return f"http://{self.host}:{self.ports[role]}"

    @property
    def viewer_url(self) -> str:
        return self.url("bulletin") + "/"

    def db_for(self, role: str) -> str:
        return self.db_url or f"sqlite:///{(self.data_dir / f'{role}.sqlite3').resolve()}"

    def token(self, name: str = "operator") -> str:
        return (self.data_dir / "keys" / f"{name}.token").read_text().strip()

    def start(self, role: str) -> None:
        cmd = [sys.executable, "-m", "shuffledp", "serve", role, "--host", self.host, "--port", str(self.ports[role]),
               "--data-dir", str(self.data_dir), "--db", self.db_for(role), "--shuffler-url", self.url("shuffler"),
               "--server-url", self.url("server"), "--board-url", self.url("bulletin")]  # fmt: skip
        if self.dask_scheduler and role != "bulletin":
            cmd += ["--dask-scheduler", self.dask_scheduler]
        log = self.data_dir / f"{role}.log"
        self.logs[role] = log
        with open(log, "ab") as out:
            self.procs[role] = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **self.env},
                                                start_new_session=True)  # fmt: skip

    def wait_ready(self, roles: tuple[str, ...] = ROLES, timeout: float = 60.0) -> None:
        end = time.monotonic() + timeout
        for role in roles:
            while True:
                proc = self.procs[role]
                if proc.poll() is not None:
                    raise RuntimeError(f"the {role} exited with {proc.returncode}; see {self.logs[role]}")
                try:
                    if httpx.get(self.url(role) + "/readyz", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > end:
                    raise TimeoutError(f"the {role} was not ready within {timeout:g} s; see {self.logs[role]}")
                time.sleep(0.05)

    def start_all(self) -> LocalServices:
        """Start the three services and wait until each is ready.

        In the main thread, SIGTERM is turned into ``SystemExit`` until `stop`, so a caller's
        ``finally`` (or ``with``) stops the services: by default SIGTERM ends Python without
        running them and the three processes, in sessions of their own, were left serving.
        """
        from shuffledp.service.keys import KeyStore

        keys = KeyStore(self.data_dir)
        keys.token("service"), keys.token("operator")  # created once here, before three processes race for them
        if threading.current_thread() is threading.main_thread() and not self._sigterm_installed:
            self._previous_sigterm = signal.signal(signal.SIGTERM, _exit_on_sigterm)
            self._sigterm_installed = True
        try:
            for role in ("server", "shuffler", "bulletin"):
                self.start(role)
            self.wait_ready()
        except BaseException:
            self.stop()  # never leave a half-started set of processes behind
            raise
        return self

    def kill(self, role: str) -> None:
        """SIGKILL: no clean-up, no flush (what the crash test needs)."""
        proc = self.procs[role]
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()

    def restart(self, role: str) -> None:
        self.kill(role)
        self.start(role)

    def stop(self) -> None:
        if self._sigterm_installed:
            signal.signal(signal.SIGTERM, self._previous_sigterm)
            self._sigterm_installed = False
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def __enter__(self) -> LocalServices:
        return self.start_all()

    def __exit__(self, *exc: object) -> None:
        self.stop()
