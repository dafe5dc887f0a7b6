"""Progress on stderr (rich), silenced when stderr is not a terminal.

`ProgressReporter` draws bars for experiments; `DelayedStatus` is a
spinner for one long computation (e.g. ``shuffledp amplify``) that appears only once
the computation has run for ``delay`` seconds, so quick answers never flicker;
`PhaseProgress` follows a job of several phases (``shuffledp demo``).  Nothing of it
ever reaches stdout.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any, TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

T = TypeVar("T")


class ProgressReporter:
    """Wraps iterables in rich progress bars on stderr."""

    def __init__(self, enabled: bool = True) -> None:
        self.console = Console(stderr=True)
        self.enabled = enabled and self.console.is_terminal

    def track(self, items: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
        if not self.enabled:
            yield from items
            return
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=self.console, transient=True) as bar:
            task = bar.add_task(description, total=total if total is not None else len(items))  # type: ignore[arg-type]
            for item in items:
                yield item
                bar.advance(task)

    @contextmanager
    def status(self, message: str) -> Iterator[None]:
        if not self.enabled:
            yield
            return
        with self.console.status(message):
            yield


class DelayedStatus:
    """A rich spinner on ``console`` (stderr by default) shown only after ``delay`` seconds.

    Use as a context manager and call `update` with what is being computed. Nothing
    is drawn when the console is not a terminal (pipes, ``--json`` consumers, tests) or
    when the block finishes within ``delay``; the spinner is transient (erased on exit).
    """

    def __init__(self, message: str, *, delay: float = 1.0, console: Console | None = None) -> None:
        self.console = console if console is not None else Console(stderr=True)
        self.message = message
        self.delay = delay
        self._lock = threading.Lock()
        self._status = None
        self._timer: threading.Timer | None = None
        self._closed = False

    def __enter__(self) -> DelayedStatus:
        if self.console.is_terminal:
            self._timer = threading.Timer(self.delay, self._show)
            self._timer.daemon = True
            self._timer.start()
        return self

    def _show(self) -> None:
        with self._lock:
            if not self._closed:
                self._status = self.console.status(self.message)
                self._status.start()

    def update(self, message: str) -> None:
        """Say what is being computed now."""
        with self._lock:
            self.message = message
            if self._status is not None:
                self._status.update(message)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
            if self._status is not None:
                self._status.stop()


class PhaseProgress:
    """Progress of a multi-phase job on ``console`` (stderr by default), called as ``note(phase, done, total)``.

    On a terminal each phase gets a rich bar that advances.  Elsewhere (pipes, CI logs) no bar is
    drawn: each phase writes one plain line, ``phase: done/total``, once it is over (the next phase
    starts, or the block ends), so a log holds a few lines rather than every update.
    """

    def __init__(self, console: Console | None = None) -> None:
        self.console = console if console is not None else Console(stderr=True)
        self.live = self.console.is_terminal
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        self._bar = Progress(*columns, console=self.console) if self.live else None
        self._tasks: dict[str, Any] = {}
        self._last: tuple[str, int, int] | None = None  # the phase running (plain lines): its latest count

    def __enter__(self) -> PhaseProgress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._bar is not None:
            self._bar.stop()
        self._close_phase()

    def _close_phase(self) -> None:
        if self._last is not None:
            phase, done, total = self._last
            self.console.print(f"{phase}: {done}/{total}", soft_wrap=True, highlight=False)
            self._last = None

    def __call__(self, phase: str, done: int, total: int) -> None:
        if self._bar is None:
            if self._last is not None and self._last[0] != phase:
                self._close_phase()
            self._last = (phase, done, total)
            return
        if phase not in self._tasks:
            self._tasks[phase] = self._bar.add_task(phase, total=total)
        self._bar.update(self._tasks[phase], completed=done, total=total)
