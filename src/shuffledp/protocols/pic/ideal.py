"""The ideal functionality F_PIC (pic-usenix25 §4.2, Figure 2), as a drop-in for tests and fast simulation.

A trusted party takes every user's input, randomizes it with its group's R_i,
shuffles each group with an independent uniform permutation pi_i, computes
f(L), sends y_{i, pi_i(j)} to user u_{i,j} and (L, f(L)) to the server.  No
cryptography is involved.  Users are identified by their pseudonyms (the only
public handle the real protocol has), so a real round and F_PIC on the same
randomized reports must give every user the same bytes (``computation``).  The
server's private input (the validation gradient v of a ``shapley`` round, §7.3)
is an input of F_PIC like the users' ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from shuffledp.errors import ShapeError
from shuffledp.protocols.pic.computation import GroupReports, PicTask, evaluate
from shuffledp.protocols.pic.messages import RoundParams
from shuffledp.protocols.pic.reports import group_randomizer
from shuffledp.protocols.pic.shuffler import csprng_permutation

__all__ = ["IdealResult", "ideal_pic"]


@dataclass(frozen=True)
class IdealResult:
    """What F_PIC hands out: ``outputs[g][j]`` to user j of group g; ``L`` and ``f_L`` to the server."""

    outputs: dict[int, list[bytes]]
    reports: dict[int, np.ndarray]
    L: list[GroupReports]
    f_L: list[np.ndarray]


def ideal_pic(
    params: RoundParams,
    task: PicTask,
    inputs: Mapping[int, tuple[np.ndarray, np.ndarray]],
    rng: np.random.Generator | None = None,
    *,
    randomized: bool = False,
    validation: np.ndarray | None = None,
) -> IdealResult:
    """Run F_PIC on ``inputs[group_id] = (pseudonyms (n, P) uint8, X (n, d))`` and the server's
    ``validation`` gradient (``shapley`` rounds only).

    With ``randomized=True`` the X are taken as already randomized reports x' (to
    compare with a real round on the same reports); otherwise each group's R_i
    randomizes them with ``rng``.  ``reports`` holds the x' of each user, in input order.
    """
    ids = [g.group_id for g in params.groups]
    if sorted(inputs) != ids:
        raise ShapeError(f"inputs must hold every group of the round {ids}, got {sorted(inputs)}")
    L, inverse, reports = [], {}, {}
    for g in params.groups:
        pseudonyms, X = inputs[g.group_id]
        R = group_randomizer(g)
        Xp = np.asarray(X, dtype=np.float64) if randomized else R.randomize(X, rng)
        if len(pseudonyms) != len(Xp):
            raise ShapeError(f"group {g.group_id}: {len(pseudonyms)} pseudonyms for {len(Xp)} inputs")
        pi = csprng_permutation(len(Xp))
        inverse[g.group_id] = np.argsort(pi)
        reports[g.group_id] = Xp
        L.append(GroupReports(np.asarray(pseudonyms, dtype=np.uint8)[pi], Xp[pi], np.asarray(R.estimate(Xp[pi]))))
    f_L = evaluate(task, L, params.groups[0].report, validation=validation, round_id=params.round_id)
    outputs = {gid: [y.tobytes() for y in ys[inverse[gid]]] for gid, ys in zip(ids, f_L, strict=True)}
    return IdealResult(outputs, reports, L, f_L)
