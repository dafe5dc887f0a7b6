"""One way to time a protocol step: CPU time of the calling thread, with wall time beside it.

The project's machine is shared (2 cores, other workers), so wall time measures the
neighbours' load as much as the code; ``time.thread_time`` charges only the calling
thread (not a progress bar's refresh thread, not other processes).  The PIC round
(`shuffledp.protocols.pic.round`), the ``pic-costs`` experiment (PIC Table 8) and
``benchmarks/bench_pic.py`` all time through this module.
"""

from __future__ import annotations

import time
from collections.abc import Callable, MutableMapping
from typing import TypeVar

from shuffledp._util.validation import check_positive_int

T = TypeVar("T")


def cpu_wall(func: Callable[[], T]) -> tuple[T, float, float]:
    """Run ``func()``; return (its result, CPU seconds of this thread, wall seconds).

    Examples
    --------
    >>> value, cpu, wall = cpu_wall(lambda: sum(range(1000)))
    >>> value, cpu >= 0.0, wall >= 0.0
    (499500, True, True)
    """
    start, cpu = time.perf_counter(), time.thread_time()
    out = func()
    return out, time.thread_time() - cpu, time.perf_counter() - start


def accumulate(totals: MutableMapping[str, float], key: str, func: Callable[[], T]) -> T:
    """Run ``func()``; add its CPU seconds under ``key`` and its wall seconds under ``key + "_wall"``."""
    out, cpu, wall = cpu_wall(func)
    totals[key] = totals.get(key, 0.0) + cpu
    totals[key + "_wall"] = totals.get(key + "_wall", 0.0) + wall
    return out


def cpu_per_call(func: Callable[[], object], calls: int) -> tuple[float, float]:
    """(CPU, wall) seconds per call of ``func`` over ``calls`` calls, after one warm-up call."""
    calls = check_positive_int(calls, "calls")
    func()

    def many() -> None:
        for _ in range(calls):
            func()

    _, cpu, wall = cpu_wall(many)
    return cpu / calls, wall / calls


__all__ = ["accumulate", "cpu_per_call", "cpu_wall"]
