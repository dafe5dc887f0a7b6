"""The one output rule of the ``shuffledp`` command line: numbers, JSON, tables, progress.

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

import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import typer
from rich.console import Console
from rich.table import Table

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

#: How infinity is written in every command's JSON.
INFINITY = "inf"

#: Standard output (tables, results); progress goes to stderr.
console = Console()


def json_value(value: Any) -> Any:
    """``value`` with every number made strict-JSON-safe (the rule of this module's docstring).

    Examples
    --------
    >>> json_value({"a": float("inf"), "b": [np.float64(0.5), float("nan")], "c": np.int64(3)})
    {'a': 'inf', 'b': [0.5, None], 'c': 3}
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        if math.isnan(number):
            return None
        if math.isinf(number):
            return INFINITY if number > 0 else "-" + INFINITY
        return number
    if isinstance(value, Mapping):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [json_value(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def json_text(payload: Any, *, indent: int | None = None) -> str:
    """``payload`` as strict JSON text (shortest round-trip floats, infinity as ``"inf"``).

    Examples
    --------
    >>> json_text({"budget": 7 * 0.1, "upper": float("inf")})
    '{"budget": 0.7000000000000001, "upper": "inf"}'
    """
    return json.dumps(json_value(payload), indent=indent, allow_nan=False)


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


def number(value: Any, digits: int = 6) -> str:
    """A table cell: ``digits`` significant digits, ``inf`` for infinity, ``-`` for a missing value.

    Examples
    --------
    >>> number(0.123456789), number(float("inf")), number(None), number(3), number(True)
    ('0.123457', 'inf', '-', '3', 'yes')
    """
    if value is None:
        return "-"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, str):
        return value
    number_ = float(value)
    if math.isnan(number_):
        return "-"
    if math.isinf(number_):
        return INFINITY if number_ > 0 else "-" + INFINITY
    return f"{number_:.{digits}g}"


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
