"""A group's randomizer R_i as the PIC roles use it: built from the signed parameters, and its report range.

The client builds R_i from `GroupParams` (``randomizer``,
``local_epsilon`` and ``randomizer_params``, which carry the input ``dim``);
the server builds the same object to validate reports and to estimate locations.
`report_range` says which reports R_i can emit, so the server can refuse
an x' no honest client could have sent (step 4, "domain").
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from shuffledp.protocols.pic.messages import GroupParams, ReportFormat, canonical_json
from shuffledp.randomizers.base import LocalRandomizer
from shuffledp.randomizers.registry import make_randomizer

__all__ = ["group_randomizer", "report_format", "report_range"]

#: Relative slack on a bounded report range: covers float64 rounding in the samplers only.
_RANGE_SLACK = 1e-9


@lru_cache(maxsize=64)
def _build(canonical: bytes, name: str, epsilon: float) -> LocalRandomizer:
    return make_randomizer(name, epsilon, **json.loads(canonical))


def group_randomizer(group: GroupParams) -> LocalRandomizer:
    """R_i of ``group`` (cached: building some randomizers solves for a radius)."""
    return _build(canonical_json(dict(group.randomizer_params)), group.randomizer, group.local_epsilon)


def report_format(randomizer: LocalRandomizer) -> ReportFormat:
    """The wire format of R's reports: float64 vectors of R's output length (one probe draw)."""
    probe = randomizer.randomize(
        randomizer.domain.sample_uniform(1, np.random.default_rng(0)), np.random.default_rng(0)
    )
    return ReportFormat("float64", int(np.asarray(probe).reshape(1, -1).shape[1]))


def report_range(randomizer: LocalRandomizer) -> Callable[[np.ndarray], np.ndarray]:
    """A vectorised test ``Y -> (n,) bool``: which rows R can output.

    Bounded ranges: Minkowski Response (cube [-1-r, 1+r]^d or l2 ball of radius 1+r,
    §6.2), SquareWave ([-b, 1+b] per coordinate), PrivHS (exactly +-B in each coordinate) and
    PrivUnit (the unit sphere).  The Laplace family, Staircase and PrivUnitG can
    output any real vector, so only finiteness (checked by the decoder) applies.
    """
    kind = type(randomizer).__name__
    grow = 1.0 + _RANGE_SLACK
    if kind == "MinkowskiResponse":
        bound = (1.0 + randomizer.radius) * grow
        if randomizer.norm == "linf":
            return lambda Y: np.all(np.abs(Y) <= bound, axis=1)
        return lambda Y: np.linalg.norm(Y, axis=1) <= bound
    if kind == "SquareWave":
        b = randomizer.half_width
        return lambda Y: np.all((-b * grow <= Y) & ((1.0 + b) * grow >= Y), axis=1)
    if kind == "PrivHS":  # honest reports are exactly +-B in every coordinate
        B = randomizer.bound
        return lambda Y: np.all(np.abs(np.abs(Y) - B) <= _RANGE_SLACK * B, axis=1)
    if kind == "PrivUnit":
        return lambda Y: np.abs(np.linalg.norm(Y, axis=1) - 1.0) <= _RANGE_SLACK
    return lambda Y: np.ones(len(Y), dtype=bool)
