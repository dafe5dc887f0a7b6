"""The computation f(L) of a PIC round and the layout of each user's output y (§5.1 step 4, Remark 3).

L holds, per group, the valid reports ``pk || x'`` in shuffled order.  The server
first sorts each group by pseudonym, so f is a function of the *set* of reports
(the tasks are permutation-equivariant, ``tasks.base``, and the pseudonym order
also settles ties between identical reports): the real protocol and the ideal
functionality F_PIC then hand every user the same bytes, whatever permutation
each one drew.  Tasks run on the randomizer's unbiased estimates ``R.estimate(x')``
(post-processing: no privacy cost), first mapped into the task's domain (`PicTask.to_domain`):
every coordinate clipped to [-`ESTIMATE_BOUND`, `ESTIMATE_BOUND`], NaN to 0.  The map is
applied to reports that already passed the server's validation and is itself
post-processing of the released reports, so the privacy of every user is unchanged; it makes
f total, so no report, however extreme, stops a round (issue 17, attack 1).

Output y (Remark 3: "the public keys and noisy locations of the matched users"),
one fixed length per round so outputs leak nothing by size:

=========  ==================  ==============================================
count      2                   number of records that follow (big-endian)
records    k * (1 + P + R)     per partner: flags (1 byte) || pseudonym (P bytes) ||
                               its report x' (R bytes); unused records are zero
=========  ==================  ==============================================

with k the records per user (1 for matchings), P the pseudonym size and R the
report size (one report format per round).  Flag bit 0, *mutual*: the partner's own output
names this user too (always so in a one-to-one matching).

The ``shapley`` task (§7.3 "federated learning with incentives", full version Appendix E) has
no partners: one group, each report a sanitized gradient, and user i's output is its own
Shapley value for the cosine-similarity utility against the validation gradient v:

=========  ==================  ==============================================
count      2                   1 (big-endian), the one value that follows
value      8                   phi_i as a big-endian float64
=========  ==================  ==============================================

10 bytes for every user of every shapley round.  v is the *server's private input*
(`evaluate`'s ``validation``; `Server` and `RoundConfig` take it), never part of the signed
parameters: the signed ``task`` names f, the server supplies its own input, as every user
does (§4.2).  Values come from `shapley_values`: exact enumeration for groups of at most
`shuffledp.tasks.shapley.EXACT_MAX_PLAYERS` users, the unbiased permutation estimator with `SHAPLEY_PERMUTATIONS`
orders above, seeded by `shapley_seed` from public round data (the round id and the sorted
pseudonyms, both on the signed board), so the real server and F_PIC agree bit for bit and
anyone holding v and L can recompute f.  Publishing v, or a commitment to it, in the signed
parameters would let users audit it but reveal (or pin) the server's validation data, which
§7.3 keeps with the server.  phi_i is a function of L and v, so releasing it to user i is
post-processing of the shuffled reports: the group's epsilon_c is unchanged.

Exposure and posts (§5.3, issue 17 item 6).  An honest client posts to, and reads posts
from, only its *mutual* partners (`Client.post_to`, `Client.read_post`).  A corrupted
user C learns an honest user's identity only through a post exchanged with it, so the
honest users a coalition C can expose are among the mutual partners of its members, and
C's mutual partners are among the k users its own output names: |U| <= k |C| whatever
reports the coalition places (`PicTask.exposure`).  Without the mutual rule a corrupted
user placed where many honest users count it among their k nearest (a hub) would be
contacted by all of them: its in-degree, which k |C| does not bound.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from shuffledp.errors import DomainError, MessageFormatError
from shuffledp.protocols.pic.messages import Pseudonym, ReportFormat
from shuffledp.tasks import NO_MATCH, k_nearest_neighbors, min_weight_matching, radius_matching, shapley_values
from shuffledp.tasks.shapley import DEFAULT_PERMUTATIONS

__all__ = [
    "GroupReports",
    "OutputRecord",
    "PicTask",
    "SHAPLEY_PERMUTATIONS",
    "TASK_NAMES",
    "decode_output",
    "decode_value",
    "evaluate",
    "output_size",
    "shapley_seed",
]

TASK_NAMES = ("min-weight", "max-matching", "neighbors", "shapley")
#: Orders the ``shapley`` task's estimator averages (groups above `EXACT_MAX_PLAYERS` users, `shapley_values`).  Fixed with the
#: task's name, so the signed parameters pin f (a different T would be a different task).
SHAPLEY_PERMUTATIONS = DEFAULT_PERMUTATIONS
_SHAPLEY_LABEL = b"shuffledp/pic/shapley/v1\0"
_VALUE = 8
#: The task's domain is the box [-ESTIMATE_BOUND, ESTIMATE_BOUND]^d.  Locations live in [-1, 1]^d, so an
#: honest estimate beyond 10^6 has negligible probability at any local epsilon the planner accepts;
#: an attacker's report at 1e200 becomes "very far away", not an error.
ESTIMATE_BOUND = 1e6
_COUNT = 2


@dataclass(frozen=True)
class PicTask:
    """f of a round: ``min-weight`` / ``max-matching`` between two groups (§7.1), the
    ``k`` nearest neighbours within one group (§7.2, with a fixed k so outputs have one size),
    or each user's ``shapley`` value within one group (§7.3, Appendix E; no partners)."""

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

    def to_json(self) -> dict[str, Any]:
        """The task as the signed round parameters carry it."""
        return {"k": self.k, "name": self.name, "radius": float(self.radius)}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> PicTask:
        return cls(obj["name"], radius=obj["radius"], k=obj["k"])

    @property
    def n_groups(self) -> int:
        return 2 if self.name in ("min-weight", "max-matching") else 1

    @property
    def has_partners(self) -> bool:
        """Whether outputs name partners (and users may post to them); ``shapley`` outputs hold a value only."""
        return self.name != "shapley"

    def check_validation(self, validation: Any, dim: int) -> np.ndarray | None:
        """The server's private input of this task, checked: v (``dim`` finite floats) for ``shapley``, else None.

        Raises `DomainError` naming ``validation`` if a shapley task lacks it (or it has the wrong
        length or a non-finite entry), or if another task is given one.
        """
        if self.name != "shapley":
            if validation is not None:
                raise DomainError(f"validation applies to the shapley task only, not {self.name}")
            return None
        if validation is None:
            raise DomainError("validation (the server's validation gradient v) is required for the shapley task")
        v = np.asarray(validation, dtype=np.float64)
        if v.shape != (dim,) or not np.all(np.isfinite(v)):
            raise DomainError(f"validation must be {dim} finite numbers (the model dimension), got shape {v.shape}")
        return v

    def partner_group(self, group: int) -> int:
        """Index (in L) of the group whose reports fill ``group``'s outputs."""
        return group if self.name == "neighbors" else 1 - group

    def exposure(self, corrupted: int) -> int:
        """|U| of §5.3: honest users a coalition of ``corrupted`` users can expose through posts.

        Honest clients exchange posts only with mutual partners (module docstring), and a
        corrupted user's mutual partners are among the k its output names: at most one per
        corrupted user in a matching (|U| <= |C|, so n' >= |G| - 2|C|), at most k for neighbours,
        wherever the coalition places its reports (``tests/protocols/pic/attacks/test_exposure_count.py``).
        A ``shapley`` output names no one and no posts are exchanged: |U| = 0, n' = |G| - |C|.
        """
        return corrupted * self.k if self.has_partners else 0

    @staticmethod
    def to_domain(estimates: np.ndarray) -> np.ndarray:
        """Map validated estimates into the task's domain: NaN -> 0, then clip to +-`ESTIMATE_BOUND`.

        Post-processing of released reports (privacy unchanged); with it every task runs on
        any report the server accepts (module docstring).
        """
        out = np.nan_to_num(
            np.asarray(estimates, dtype=np.float64), nan=0.0, posinf=ESTIMATE_BOUND, neginf=-ESTIMATE_BOUND
        )
        return np.clip(out, -ESTIMATE_BOUND, ESTIMATE_BOUND)

    def partners(self, points: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Per group, an (n_g, k) int64 array of partner indices into the partner group (NO_MATCH = -1).

        Neighbours in a group of n <= k: each user gets its n - 1 others, the rest NO_MATCH.
        """
        if len(points) != self.n_groups:
            raise DomainError(f"task {self.name} runs on {self.n_groups} group(s), got {len(points)}")
        if not self.has_partners:
            raise DomainError(f"task {self.name} has no partners (its outputs are values)")
        if self.name == "neighbors":
            n = len(points[0])
            out = np.full((n, self.k), NO_MATCH, dtype=np.int64)
            k = min(self.k, n - 1)
            if k >= 1:
                out[:, :k] = k_nearest_neighbors(points[0], k).indices.reshape(n, k)
            return [out]
        if self.name == "min-weight":
            m = min_weight_matching(points[0], points[1])
        else:
            m = radius_matching(points[0], points[1], self.radius)
        return [m.partner_a[:, None], m.partner_b[:, None]]


MUTUAL = 1


class OutputRecord(NamedTuple):
    """One partner in an output y: its pseudonym, its report x', and whether it names this user back."""

    pseudonym: bytes
    report: np.ndarray
    mutual: bool


def output_size(suite: str, fmt: ReportFormat, task: PicTask) -> int:
    """Bytes of every output y of a round (module docstring)."""
    if not task.has_partners:
        return _COUNT + _VALUE
    return _COUNT + task.k * (1 + Pseudonym.size(suite) + fmt.size)


def shapley_seed(round_id: bytes, pseudonyms: np.ndarray) -> int:
    """Seed of the ``shapley`` estimator: SHA-256 of a label, the round id and the group's pseudonyms
    (rows of ``pseudonyms``, in the order given: `evaluate` passes them sorted), as a 128-bit integer.

    Public once the board is (the round id is signed in step 1, the pseudonyms key the board's
    entries) and unknown to any user before the round closes (it holds everyone's one-time keys),
    so no user can fit its report to the orders drawn.
    """
    h = hashlib.sha256(_SHAPLEY_LABEL + bytes(round_id))
    h.update(np.ascontiguousarray(pseudonyms, dtype=np.uint8).tobytes())
    return int.from_bytes(h.digest()[:16], "big")


def _shapley_outputs(
    task: PicTask, group: GroupReports, order: np.ndarray, validation: np.ndarray, round_id: bytes
) -> np.ndarray:
    """(n, 10) uint8: row i is report i's output ``count = 1 || phi_i`` (big-endian float64)."""
    n = len(order)
    out = np.zeros((n, _COUNT + _VALUE), dtype=np.uint8)
    if n == 0:
        return out
    pseudonyms = group.pseudonyms[order]
    values = shapley_values(
        task.to_domain(group.estimates[order]), validation, n_permutations=SHAPLEY_PERMUTATIONS,
        rng=np.random.default_rng(shapley_seed(round_id, pseudonyms)),
    ).values  # fmt: skip
    out[order, :_COUNT] = np.array([0, 1], dtype=np.uint8)
    out[order, _COUNT:] = values.astype(">f8").view(np.uint8).reshape(n, _VALUE)
    return out


def _mutual(task: PicTask, idx: np.ndarray) -> np.ndarray:
    """(n, k) bool: record r of user i is mutual (a matching always is; neighbours: i is among j's)."""
    present = idx != NO_MATCH
    if task.n_groups == 2:
        return present
    n, k = idx.shape
    rows = np.repeat(np.arange(n, dtype=np.int64), k).reshape(n, k)
    forward = rows[present] * max(n, 1) + idx[present]
    backward = idx[present] * max(n, 1) + rows[present]
    out = np.zeros_like(present)
    out[present] = np.isin(backward, forward)
    return out


@dataclass(frozen=True)
class GroupReports:
    """One group of L: pseudonyms (n, P) uint8, reports x' (n, R-length) and the estimates the task uses."""

    pseudonyms: np.ndarray
    values: np.ndarray
    estimates: np.ndarray

    def record_bytes(self, fmt: ReportFormat) -> np.ndarray:
        """(n, P + R) uint8: pseudonym || x' in the round's report format, one row per report."""
        return np.concatenate([self.pseudonyms, fmt.encode_many(self.values)], axis=1)


def evaluate(
    task: PicTask,
    groups: Sequence[GroupReports],
    fmt: ReportFormat,
    *,
    validation: Any = None,
    round_id: bytes = b"",
) -> list[np.ndarray]:
    """f(L): per group, an (n_g, output size) uint8 array, row i the output y of report i.

    ``validation`` is the server's private input v of a ``shapley`` task (None for the others);
    ``round_id`` enters the shapley estimator's seed (`shapley_seed`).
    """
    orders = [np.lexsort(g.pseudonyms.T[::-1]) for g in groups]
    if not task.has_partners:
        if len(groups) != task.n_groups:
            raise DomainError(f"task {task.name} runs on {task.n_groups} group(s), got {len(groups)}")
        v = task.check_validation(validation, groups[0].estimates.shape[1])
        return [_shapley_outputs(task, groups[0], orders[0], v, round_id)]  # type: ignore[arg-type]
    task.check_validation(validation, 0)
    partners = task.partners([task.to_domain(g.estimates[o]) for g, o in zip(groups, orders, strict=True)])
    outputs = []
    for g, (_group, order, idx) in enumerate(zip(groups, orders, partners, strict=True)):
        p = task.partner_group(g)
        records = groups[p].record_bytes(fmt)[orders[p]]
        records = np.concatenate([records, np.zeros((1, records.shape[1]), np.uint8)])  # row -1: no partner
        flags = (_mutual(task, idx) * MUTUAL).astype(np.uint8)[:, :, None]
        rows = np.concatenate([flags, records[np.where(idx == NO_MATCH, -1, idx)]], axis=2)
        rows = rows.reshape(len(idx), idx.shape[1] * (1 + records.shape[1]))
        count = np.count_nonzero(idx != NO_MATCH, axis=1).astype(">u2").view(np.uint8).reshape(-1, _COUNT)
        out = np.empty((len(order), _COUNT + rows.shape[1]), dtype=np.uint8)
        out[order] = np.concatenate([count, rows], axis=1)
        outputs.append(out)
    return outputs


def decode_value(y: bytes) -> float:
    """The value of a ``shapley`` output y (``count = 1 || phi`` big-endian float64, module docstring)."""
    y = bytes(y)
    if len(y) != _COUNT + _VALUE:
        raise MessageFormatError("length", f"a shapley output is {_COUNT + _VALUE} bytes, got {len(y)}")
    if int.from_bytes(y[:_COUNT], "big") != 1:
        raise MessageFormatError("field", f"a shapley output holds one value, it announces {y[:_COUNT].hex()}")
    return float(np.frombuffer(y, dtype=">f8", offset=_COUNT)[0])


def decode_output(y: bytes, suite: str, fmt: ReportFormat) -> list[OutputRecord]:
    """The records of an output y of a task with partners: ``[(partner pseudonym, partner report x', mutual), ...]``
    (a ``shapley`` output holds a value instead: `decode_value`)."""
    width = 1 + Pseudonym.size(suite) + fmt.size
    if len(y) < _COUNT or (len(y) - _COUNT) % width:
        raise MessageFormatError("length", f"output is {len(y)} bytes; expected 2 + k * {width}")
    if isinstance(y, (bytearray, memoryview)):
        y = bytes(y)
    count = int.from_bytes(y[:_COUNT], "big")
    if count > (len(y) - _COUNT) // width:
        raise MessageFormatError("field", f"output announces {count} records but holds room for fewer")
    p = Pseudonym.size(suite)
    out = []
    for i in range(count):
        rec = y[_COUNT + i * width : _COUNT + (i + 1) * width]
        if rec[0] & ~MUTUAL:
            raise MessageFormatError("field", f"output record {i} has unknown flags {rec[0]:#04x}")
        out.append(OutputRecord(rec[1 : 1 + p], fmt.decode_one(rec[1 + p :]), bool(rec[0] & MUTUAL)))
    return out
