"""Shared helpers of the benchmark scripts: timing and JSON output.

A run writes ``results/bench/NAME.json`` (git-ignored), so benchmarking never
dirties the tree.  ``SHUFFLEDP_BENCH_RECORD=1`` (``make bench-record``) writes the
numbers of record instead, the tracked ``benchmarks/results/NAME.json``.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

_HERE = Path(__file__).resolve().parent
#: Tracked JSON of record, refreshed only on request.
RECORD = _HERE / "results"
#: Scratch output of an ordinary run (under the git-ignored /results/).
SCRATCH = _HERE.parent / "results" / "bench"


def output_dir() -> Path:
    """Where this run writes: the record if ``SHUFFLEDP_BENCH_RECORD=1``, else the scratch directory."""
    return RECORD if os.environ.get("SHUFFLEDP_BENCH_RECORD") == "1" else SCRATCH


def best_seconds(func: Callable[[], Any], repeats: int = 3) -> float:
    """Best wall time of ``repeats`` calls (after one warm-up call)."""
    func()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def write_json(name: str, payload: dict[str, Any]) -> Path:
    directory = output_dir()
    directory.mkdir(parents=True, exist_ok=True)
    payload = {
        "machine": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "cpus": os.cpu_count(),
            "arch": platform.machine(),
        },
        **payload,
    }
    path = directory / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"wrote {path}")
    return path
