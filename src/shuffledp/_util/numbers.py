"""The one rule for writing a number, in a table and in JSON, for every writer of shuffledp.

The command line (`shuffledp.cli._output` re-exports this module), the experiments'
``summary.md`` tables, the privacy ledger and ``round.json`` all write numbers through it:

* **Table cells** (`number`): ``digits`` significant digits (``digits=None``: the shortest
  text that reads back to the same float64, Python's ``repr``: ``0.7``, not
  ``0.7000000000000001``).  Infinity is ``inf`` (``-inf`` below zero) -- an epsilon that a
  bound cannot certify, a bound outside its regime.  A dash ``-`` (`MISSING`) means "no
  value": not computed, or does not apply to that row (a NaN too); never infinity.  A cell
  holds the number only: *why* a value is infinite or missing goes in a note under the
  table (or a column of its own), not in the cell.
* **JSON values** (`json_value`, `json_text`): strict JSON (every parser reads it), floats in
  the shortest round-trip form, infinity as the string ``"inf"`` (``"-inf"``) --
  ``float("inf")`` reads it back -- and ``null`` for "not computed / does not apply" (a NaN
  too), never for infinity.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["INFINITY", "MISSING", "json_text", "json_value", "number"]

#: How infinity is written, in tables and (as a string) in JSON.
INFINITY = "inf"

#: A table cell without a value: not computed, or does not apply to that row (never infinity).
MISSING = "-"


def _infinity(value: float) -> str:
    return INFINITY if value > 0 else "-" + INFINITY


#: `number`'s ``toward``: the decimal rounding that keeps a printed value on the safe side of the float.
_TOWARD = {"up": ROUND_CEILING, "down": ROUND_FLOOR}


def _directed(real: float, digits: int, toward: str) -> str:
    """``real`` at ``digits`` significant digits, rounded ``toward`` "up" or "down" (the exact binary value is
    rounded, so the text reads back to a float on that side of ``real``, or ``real`` itself)."""
    if toward not in _TOWARD:
        raise ValueError(f"toward must be 'up', 'down' or None, got {toward!r}")
    shortest = repr(real)
    if len(Decimal(shortest).normalize().as_tuple().digits) <= digits:  # already short: exact
        return f"{float(shortest):.{digits}g}"
    rounded = Context(prec=digits, rounding=_TOWARD[toward]).plus(Decimal(real))
    return f"{float(rounded):.{digits}g}"


def number(value: Any, digits: int | None = 6, *, toward: str | None = None) -> str:
    """A table cell: ``digits`` significant digits, ``inf`` for infinity, ``-`` for a missing value.

    ``digits=None`` writes the shortest text that reads back to the same float.  Integers are
    written whole, booleans as ``yes``/``no``, text as it is.  ``toward="up"`` (``"down"``)
    rounds a float up (down) instead of to nearest, so that a printed guarantee typed back in is
    never on the wrong side: an epsilon up, a noise parameter toward more noise.

    Examples
    --------
    >>> number(0.123456789), number(float("inf")), number(None), number(3), number(True)
    ('0.123457', 'inf', '-', '3', 'yes')
    >>> number(0.7, None), number(float("-inf"), 3), number(float("nan"))
    ('0.7', '-inf', '-')
    >>> number(0.7511875, toward="up"), number(0.7511875, toward="down"), number(0.5, toward="up")
    ('0.751188', '0.751187', '0.5')
    """
    if value is None:
        return MISSING
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, str):
        return value
    real = float(value)
    if math.isnan(real):
        return MISSING
    if math.isinf(real):
        return _infinity(real)
    if digits is None:
        return repr(real)
    return f"{real:.{digits}g}" if toward is None else _directed(real, digits, toward)


def json_value(value: Any) -> Any:
    """``value`` with every number made strict-JSON-safe (this module's rule), containers walked.

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
        real = float(value)
        if math.isnan(real):
            return None
        return _infinity(real) if math.isinf(real) else real
    if isinstance(value, Mapping):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [json_value(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def json_text(payload: Any, *, indent: int | None = None, sort_keys: bool = False) -> str:
    """``payload`` as strict JSON text (shortest round-trip floats, infinity as ``"inf"``).

    Examples
    --------
    >>> json_text({"budget": 7 * 0.1, "upper": float("inf")})
    '{"budget": 0.7000000000000001, "upper": "inf"}'
    """
    return json.dumps(json_value(payload), indent=indent, sort_keys=sort_keys, allow_nan=False)
