"""What the PIC-paper experiments (§7.1-7.2) share: the randomizers, the budgets, the ideal round.

Local budgets in the PIC model always come from the PIC round's own planning,
`shuffledp.protocols.pic.round.plan_groups` (delta = 0.01 / n_i per group, the
population n' the round's rules give, the variation-ratio bound with each
randomizer's own parameters), so any change to how a round derives its local
epsilon reaches these experiments unchanged.  Randomizers are built with the
registry's defaults at dimension 2, exactly as a round builds them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from shuffledp._util.numbers import number
from shuffledp.experiments.registry import NOT_TESTABLE, VERDICTS, Claim
from shuffledp.protocols.pic.computation import PicTask
from shuffledp.protocols.pic.ideal import ideal_pic
from shuffledp.protocols.pic.identity import SigningIdentity
from shuffledp.protocols.pic.messages import GroupParams, Pseudonym
from shuffledp.protocols.pic.reports import group_randomizer
from shuffledp.protocols.pic.round import GroupPrivacy, RoundConfig, plan_groups
from shuffledp.protocols.pic.server import Server
from shuffledp.protocols.pic.shuffler import Shuffler
from shuffledp.tasks import NO_MATCH

__all__ = [
    "COLUMNS",
    "EPSILONS",
    "LDP",
    "NON_PRIVATE",
    "PIC",
    "RANDOMIZERS",
    "findings_line",
    "fmt_num",
    "ideal_partners",
    "plan",
    "population_fraction",
    "randomize_groups",
]

#: Byte offset of the first record's partner pseudonym in an output: 2 count bytes, 1 flag byte (computation.py).
_FIRST_PSEUDONYM = 3

#: (label, registry name): the seven randomizers of §7.1 (Minkowski Response and the six it is compared with).
RANDOMIZERS: tuple[tuple[str, str], ...] = (
    ("Minkowski", "minkowski"),
    ("Laplace", "laplace"),
    ("PlanarLaplace", "planar_laplace"),
    ("Staircase", "staircase"),
    ("SquareWave", "square_wave"),
    ("PrivUnit", "privunit"),
    ("PrivUnitG", "privunit_g"),
)
#: x values of Figs 5-14: local epsilon (LDP model) and epsilon_c (PIC model).
EPSILONS: tuple[float, ...] = (0.5, 1.0, 2.0, 3.0, 4.0, 5.0)
LDP, PIC, NON_PRIVATE = "LDP", "PIC", "non-private"
#: Columns of the tidy results of both experiments.
COLUMNS = ["dataset", "instance", "model", "randomizer", "epsilon", "local_epsilon", "metric", "value"]


@lru_cache(maxsize=4096)
def _plan(
    task: PicTask, randomizer: str, epsilon_c: float, sizes: tuple[tuple[str, int], ...], min_fraction: float,
    deanonymized: int,
):  # fmt: skip
    config = RoundConfig(task, randomizer, epsilon_c, min_fraction=min_fraction, deanonymized=deanonymized)
    return plan_groups(config, sizes)


def plan(
    task: PicTask, randomizer: str, epsilon_c: float, sizes: Sequence[tuple[str, int]], min_fraction: float = 1.0,
    deanonymized: int = 0,
) -> tuple[list[GroupParams], list[GroupPrivacy]]:  # fmt: skip
    """The round's own plan (`plan_groups`, cached): per group its parameters and privacy record.

    ``min_fraction`` sets the shuffler threshold ceil(min_fraction * n_i), the population
    the local epsilon is calibrated for; ``deanonymized`` users per group are taken off it
    (`RoundConfig.deanonymized`).
    """
    key = tuple((str(n), int(s)) for n, s in sizes)
    return _plan(task, randomizer, float(epsilon_c), key, float(min_fraction), int(deanonymized))


def population_fraction(n: int, fraction: float) -> float:
    """The ``min_fraction`` whose threshold ceil(min_fraction * n) is exactly floor(fraction * n) (§7.2's n')."""
    target = math.floor(fraction * n)
    return (target - 0.5) / n


def randomize_groups(
    groups: Sequence[GroupParams], X: Sequence[np.ndarray], rng: np.random.Generator
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(reports x', the server's estimates) of each group with its R_i, as a round's clients and server compute them."""
    reports = [group_randomizer(g).randomize(x, rng) for g, x in zip(groups, X, strict=True)]
    estimates = [np.asarray(group_randomizer(g).estimate(y)) for g, y in zip(groups, reports, strict=True)]
    return reports, estimates


def ideal_partners(
    task: PicTask,
    groups: Sequence[GroupParams],
    reports: Sequence[np.ndarray],
    rng: np.random.Generator,
    suite: str = "x25519",
) -> list[np.ndarray]:
    """Run F_PIC (`ideal_pic`) on already randomized reports; per group, each user's partner index (NO_MATCH if none).

    Users get random pseudonyms; each output y is decoded to the pseudonym of the
    partner it names, and that back to the partner's index in its group.
    """
    identity = SigningIdentity.ephemeral()
    shuffler = Shuffler(identity.verify_key, suite=suite)
    server = Server(suite, list(groups), task, (shuffler.kem_public_key, shuffler.verify_key), identity=identity)
    P = Pseudonym.size(suite)
    pseudonyms = [rng.integers(0, 256, size=(len(y), P), dtype=np.uint8) for y in reports]
    inputs = {g.group_id: (p, y) for g, p, y in zip(groups, pseudonyms, reports, strict=True)}
    result = ideal_pic(server.params, task, inputs, rng, randomized=True)
    owners = [{row.tobytes(): j for j, row in enumerate(p)} for p in pseudonyms]
    partners = []
    for gi, g in enumerate(groups):
        outputs = result.outputs[g.group_id]
        size = len(outputs[0]) if outputs else 0
        Y = np.frombuffer(b"".join(outputs), dtype=np.uint8).reshape(len(outputs), size)
        count = Y[:, 0].astype(np.int64) * 256 + Y[:, 1]
        lookup = owners[task.partner_group(gi)]
        partner = np.full(len(outputs), NO_MATCH, dtype=np.int64)
        for j in np.flatnonzero(count > 0):
            partner[j] = lookup[Y[j, _FIRST_PSEUDONYM : _FIRST_PSEUDONYM + P].tobytes()]
        partners.append(partner)
    return partners


def fmt_num(value: Any, digits: int = 3) -> str:
    """A number for a summary table, by the one rule (`shuffledp._util.numbers.number`): ``digits``
    significant digits, ``inf`` for infinity, ``-`` for None or NaN (no value)."""
    return number(value, digits)


def findings_line(claims: list[Claim]) -> str:
    """REPORT.md's line for an experiment: how many of the paper's claims held, partly held or not."""
    counts = {v: sum(1 for c in claims if c.verdict == v) for v in VERDICTS}
    missed = [c.claim for c in claims if c.verdict not in ("held", NOT_TESTABLE)]
    line = f"paper's claims: {counts['held']} held, {counts['partly']} partly held, {counts['not']} not held"
    if counts[NOT_TESTABLE]:
        line += f", {counts[NOT_TESTABLE]} not testable"
    return line + (f" (not fully: {'; '.join(missed)})" if missed else "")
