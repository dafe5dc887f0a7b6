"""The computation f(L) of a PIC round and the layout of each user's output y (§5.1 step 4, Remark 3).

L holds, per group, the valid reports ``pk || x'`` in shuffled order.  The server
first sorts each group by pseudonym, so f is a function of the *set* of reports
(the tasks are permutation-equivariant, ``tasks.base``, and the pseudonym order
also settles ties between identical reports): the real protocol and the ideal
functionality F_PIC then hand every user the same bytes, whatever permutation
each one drew.  Tasks run on the randomizer's unbiased estimates ``R.estimate(x')``
(post-processing: no privacy cost).

Output y (Remark 3: "the public keys and noisy locations of the matched users"),
one fixed length per round so outputs leak nothing by size:

=========  ==================  ==============================================
count      2                   number of records that follow (big-endian)
records    k * (P + R)         per partner: pseudonym (P bytes) || its report x' (R bytes);
                               unused records are zero
=========  ==================  ==============================================

with k the records per user (1 for matchings), P the pseudonym size and R the
report size (one report format per round).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from shuffledp.errors import DomainError, MessageFormatError
from shuffledp.protocols.pic.messages import Pseudonym, ReportFormat
from shuffledp.tasks import NO_MATCH, k_nearest_neighbors, min_weight_matching, radius_matching

TASK_NAMES = ("min-weight", "max-matching", "neighbors")
_COUNT = 2


@dataclass(frozen=True)
class PicTask:
    """f of a round: ``min-weight`` / ``max-matching`` between two groups (§7.1), or the
    ``k`` nearest neighbours within one group (§7.2, with a fixed k so outputs have one size)."""

    name: str
    radius: float = 0.4
    k: int = 1

    def __post_init__(self) -> None:
        if self.name not in TASK_NAMES:
            raise DomainError(f"task must be one of {', '.join(TASK_NAMES)}; got {self.name!r}")
        if not (isinstance(self.radius, (int, float)) and math.isfinite(self.radius) and self.radius >= 0):
            raise DomainError(f"radius must be a finite number >= 0, got {self.radius!r}")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or not 1 <= self.k <= 1000:
            raise DomainError(f"k must be an integer in [1, 1000], got {self.k!r}")
        if self.name != "neighbors" and self.k != 1:
            raise DomainError(f"k applies to the neighbors task only; {self.name} has one partner per user")

    @property
    def n_groups(self) -> int:
        return 1 if self.name == "neighbors" else 2

    def partner_group(self, group: int) -> int:
        """Index (in L) of the group whose reports fill ``group``'s outputs."""
        return group if self.name == "neighbors" else 1 - group

    def exposure(self, corrupted: int) -> int:
        """|U| of §5.3: users de-anonymised by corrupted users' post-computation messages.

        A corrupted user learns the pseudonym of each partner it contacts: at most one per
        corrupted user in a matching (|U| <= |C|, so n' >= |G| - 2|C|), at most k for neighbours.
        """
        return corrupted * self.k

    def partners(self, points: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Per group, an (n_g, k) int64 array of partner indices into the partner group (NO_MATCH = -1)."""
        if len(points) != self.n_groups:
            raise DomainError(f"task {self.name} runs on {self.n_groups} group(s), got {len(points)}")
        if self.name == "neighbors":
            n = len(points[0])
            if n <= self.k:
                raise DomainError(f"neighbors with k={self.k} needs more than {self.k} valid reports, got {n}")
            table = k_nearest_neighbors(points[0], self.k)
            return [table.indices.reshape(n, self.k)]
        if self.name == "min-weight":
            m = min_weight_matching(points[0], points[1])
        else:
            m = radius_matching(points[0], points[1], self.radius)
        return [m.partner_a[:, None], m.partner_b[:, None]]


def output_size(suite: str, fmt: ReportFormat, k: int) -> int:
    """Bytes of every output y of a round."""
    return _COUNT + k * (Pseudonym.size(suite) + fmt.size)


@dataclass(frozen=True)
class GroupReports:
    """One group of L: pseudonyms (n, P) uint8, reports x' (n, R-length) and the estimates the task uses."""

    pseudonyms: np.ndarray
    values: np.ndarray
    estimates: np.ndarray

    def record_bytes(self) -> np.ndarray:
        """(n, P + R) uint8: pseudonym || x' (little-endian float64), one row per report."""
        wire = np.ascontiguousarray(self.values, dtype="<f8").view(np.uint8).reshape(len(self.values), 8 * self.values.shape[1])
        return np.concatenate([self.pseudonyms, wire], axis=1)


def evaluate(task: PicTask, groups: Sequence[GroupReports]) -> list[np.ndarray]:
    """f(L): per group, an (n_g, output size) uint8 array, row i the output y of report i."""
    orders = [np.lexsort(g.pseudonyms.T[::-1]) for g in groups]
    partners = task.partners([g.estimates[o] for g, o in zip(groups, orders, strict=True)])
    outputs = []
    for g, (_group, order, idx) in enumerate(zip(groups, orders, partners, strict=True)):
        p = task.partner_group(g)
        records = groups[p].record_bytes()[orders[p]]
        records = np.concatenate([records, np.zeros((1, records.shape[1]), np.uint8)])  # row -1: no partner
        rows = records[np.where(idx == NO_MATCH, -1, idx)].reshape(len(idx), idx.shape[1] * records.shape[1])
        count = np.count_nonzero(idx != NO_MATCH, axis=1).astype(">u2").view(np.uint8).reshape(-1, _COUNT)
        out = np.empty((len(order), _COUNT + rows.shape[1]), dtype=np.uint8)
        out[order] = np.concatenate([count, rows], axis=1)
        outputs.append(out)
    return outputs


def decode_output(y: bytes, suite: str, fmt: ReportFormat) -> list[tuple[bytes, np.ndarray]]:
    """The records of an output y: ``[(partner pseudonym, partner report x'), ...]``."""
    width = Pseudonym.size(suite) + fmt.size
    if len(y) < _COUNT or (len(y) - _COUNT) % width:
        raise MessageFormatError("length", f"output is {len(y)} bytes; expected 2 + k * {width}")
    count = int.from_bytes(y[:_COUNT], "big")
    if count > (len(y) - _COUNT) // width:
        raise MessageFormatError("field", f"output announces {count} records but holds room for fewer")
    p = Pseudonym.size(suite)
    out = []
    for i in range(count):
        rec = y[_COUNT + i * width : _COUNT + (i + 1) * width]
        out.append((rec[:p], np.frombuffer(rec[p:], dtype="<f8").astype(np.float64)))
    return out
