"""The one output rule of the ``shuffledp`` command line: numbers, JSON, tables, progress.

Numbers follow the rule every writer of shuffledp shares (`shuffledp._util.numbers`, re-exported
here: `number`, `json_value`, `json_text`, `INFINITY`): infinity is ``inf`` in a table and the
string ``"inf"`` in JSON, a dash or ``null`` means "no value / does not apply", never infinity.

* **JSON** (``--json``, and files such as ``round.json``): one object on stdout, strict
  (``json.loads`` and every other parser read it).  Every command's ``--json`` has one shape
  (`emit_result`): ``{"inputs": {...}, <results>...}`` -- ``inputs`` echoes the options that
  shaped the answer, defaults filled in, named like the option (``--eps-geo`` is ``eps_geo``);
  the results are fields beside it at the top level (``seconds`` holds timings where a
  command measures them).  Floats are written in the shortest form
  that reads back to the same float64 (``0.7``, not ``0.7000000000000001``; Python's
  ``repr``).  Infinity is the string ``"inf"`` (``"-inf"`` below zero) in every command --
  JSON has no infinity, and ``float("inf")`` reads the string back; ``null`` means "not
  computed / does not apply", never infinity.  NaN is never written (it becomes ``null``).
* **Tables** (the default on a terminal): rich tables on stdout, numbers with 6
  significant digits (`number`), infinity as ``inf``, a missing value as ``-``.  A cell
  holds the number only: why a value is infinite or missing goes in a note under the table.
* **Progress**: rich spinners and bars on stderr, drawn only when stderr is a terminal
  and only for work that lasts over a second (`status`), so stdout stays clean for pipes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from shuffledp._util.numbers import INFINITY, json_text, json_value, number
from shuffledp._util.progress import DelayedStatus, PhaseProgress, ProgressReporter

__all__ = [
    "INFINITY",
    "PhaseProgress",
    "console",
    "emit_json",
    "emit_result",
    "json_text",
    "json_value",
    "number",
    "progress",
    "status",
    "table",
]

#: Standard output (tables, results); progress goes to stderr.
console = Console()


def emit_json(payload: Any) -> None:
    """Print ``payload`` as one strict JSON object on stdout."""
    typer.echo(json_text(payload))


def emit_result(inputs: Mapping[str, Any], results: Mapping[str, Any]) -> None:
    """Print a command's ``--json`` answer in the one shape: ``{"inputs": inputs, **results}``.

    Examples
    --------
    >>> emit_result({"n": 10}, {"epsilon": float("inf"), "seconds": {"total": 0.5}})
    {"inputs": {"n": 10}, "epsilon": "inf", "seconds": {"total": 0.5}}
    """
    if "inputs" in results:
        raise ValueError("a result field may not be named 'inputs': it holds the options")
    emit_json({"inputs": dict(inputs), **results})


def table(
    columns: Iterable[str],
    rows: Iterable[Iterable[Any]],
    *,
    title: str | None = None,
    whole: Iterable[str] = (),
    edge: bool = True,
) -> None:
    """Print a rich table on stdout; numbers through `number`.

    The columns named in ``whole`` are never wrapped (names and numbers stay readable at 80
    columns); when ``whole`` is given, the other columns wrap and fold long words instead of
    cutting them off.  ``edge=False`` drops the outer border (two more columns for the text).
    """
    whole = set(whole)
    out = Table(title=title, show_edge=edge)
    for column in columns:
        if column in whole:
            out.add_column(column, no_wrap=True)
        else:
            out.add_column(column, overflow="fold" if whole else "ellipsis")
    for row in rows:
        out.add_row(*(number(cell) for cell in row))
    console.print(out)


def status(message: str) -> DelayedStatus:
    """A spinner on stderr, shown once the block has run for a second (terminals only)."""
    return DelayedStatus(message)


def progress() -> ProgressReporter:
    """Progress bars on stderr (terminals only)."""
    return ProgressReporter()
