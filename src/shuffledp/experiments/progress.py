"""Progress bars for long runs (rich), silenced when not on a terminal."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterable, Iterator, TypeVar

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
