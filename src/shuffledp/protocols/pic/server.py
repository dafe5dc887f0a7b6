"""The PIC server (pic-usenix25 §5.1 steps 1, 4, 5): signed parameters, validation, f(L), the signed board.

Every report that fails a check is excluded and counted under a reason; none stops
the round:

============================  =====================================================
reason                        the report
============================  =====================================================
``length`` ``round`` ...      envelope framing (the ``MessageFormatError`` codes)
``decrypt``                   fails HPKE authentication: tampered, truncated inside,
                              or sealed for another round, group or key
``report``                    plaintext of the wrong size, or a non-finite x'
``domain``                    x' outside what the group's randomizer can output
``pseudonym``                 keys that do not load
``duplicate-pseudonym``       a pseudonym seen more than once in the round: every
                              copy is excluded (which one is genuine is unknowable)
============================  =====================================================
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from shuffledp.crypto import KemKeyPair, SigningKeyPair, VerifyKey
from shuffledp.errors import CryptoError, MessageFormatError
from shuffledp.protocols.pic.bulletin import BoardEntry, BoardHead, BoardSlice
from shuffledp.protocols.pic.computation import GroupReports, PicTask, evaluate
from shuffledp.protocols.pic.messages import (
    Envelope,
    GroupParams,
    Pseudonym,
    RoundParams,
    SignedRoundParams,
    decode_reports,
    new_round_id,
)
from shuffledp.protocols.pic.reports import group_randomizer, report_range


@dataclass
class GroupDecryption:
    """Step 4 for one group: the valid part of L, and what was excluded and why."""

    group_id: int
    received: int
    reports: GroupReports
    pseudonyms: list[Pseudonym]
    rejected: Counter[str] = field(default_factory=Counter)

    @property
    def valid(self) -> int:
        return len(self.pseudonyms)

    def keep(self, mask: np.ndarray, reason: str) -> None:
        """Exclude the rows where ``mask`` is False, counting them under ``reason``."""
        dropped = int(np.count_nonzero(~mask))
        if dropped:
            self.rejected[reason] += dropped
            r = self.reports
            self.reports = GroupReports(r.pseudonyms[mask], r.values[mask], r.estimates[mask])
            self.pseudonyms = [p for p, ok in zip(self.pseudonyms, mask, strict=True) if ok]


def _open_all(
    params: RoundParams, key: KemKeyPair, group_id: int, envelopes: Sequence[bytes]
) -> tuple[list[bytes], Counter[str]]:
    """Parse and decrypt envelopes; returns the plaintexts that opened and the refusals by reason."""
    plaintexts, rejected = [], Counter()
    for data in envelopes:
        try:
            env = Envelope.from_bytes(data, params)
            if env.group_id != group_id:
                raise MessageFormatError("group", f"envelope for group {env.group_id} in group {group_id}")
            plaintexts.append(env.open(params, key))
        except MessageFormatError as exc:
            rejected[exc.reason] += 1
        except CryptoError:
            rejected["decrypt"] += 1
    return plaintexts, rejected


_WORKER: dict[str, object] = {}
#: Fewest envelopes worth spreading over worker processes (below it, start-up costs more than it saves).
PARALLEL_MIN = 2000


def _worker_init(signed: bytes, verify_key: bytes, suite: str, secret: bytes) -> None:
    params = SignedRoundParams.from_bytes(signed, server_key=VerifyKey.from_bytes(verify_key)).params
    _WORKER.update(params=params, key=KemKeyPair.from_secret_bytes(suite, secret))


def _worker_open(group_id: int, envelopes: list[bytes]) -> tuple[list[bytes], Counter[str]]:
    return _open_all(_WORKER["params"], _WORKER["key"], group_id, envelopes)  # type: ignore[arg-type]


class Server:
    """One round's server: fresh KEM and signing keys, the round's groups and sizes.

    ``workers > 1`` decrypts in that many processes (each receives the round's KEM
    secret through its start-up pipe; the keys never leave this machine).  On the
    project's shared 2-core machine two workers did not beat one (8.0k against 8.4k
    reports/s at n = 10^4), so callers default to one.
    """

    def __init__(
        self,
        suite: str,
        groups: Sequence[GroupParams],
        output_payload_size: int,
        post_payload_size: int,
        *,
        bucket_bits: int = 0,
        workers: int = 1,
    ) -> None:
        self._kem = KemKeyPair.generate(suite)
        self._signing = SigningKeyPair.generate()
        self.params = RoundParams(
            new_round_id(), suite, self._kem.public_key, self._signing.verify_key, tuple(groups),
            output_payload_size, post_payload_size,
        )  # fmt: skip
        self.bucket_bits = bucket_bits
        self.workers = max(1, int(workers))
        self._signed = SignedRoundParams.sign(self.params, self._signing).to_bytes()
        self.view: tuple[list[GroupReports], list[np.ndarray]] | None = None  # (L, f(L)) once computed
        self.timings: dict[str, float] = {}  # seconds of f(L) ("task_s") and of sealing the board ("seal_s")

    @property
    def verify_key(self) -> VerifyKey:
        """The server's long-term signing key, which clients and the shuffler trust."""
        return self._signing.verify_key

    def signed_params(self) -> bytes:
        """Step 1: the signed round parameters."""
        return self._signed

    def _open(self, group_id: int, envelopes: Sequence[bytes]) -> tuple[list[bytes], Counter[str]]:
        if self.workers == 1 or len(envelopes) < PARALLEL_MIN:
            return _open_all(self.params, self._kem, group_id, envelopes)
        chunks = [list(envelopes[i :: self.workers]) for i in range(self.workers)]
        init = (self._signed, self.verify_key.to_bytes(), self.params.suite, self._kem.secret_bytes())
        with ProcessPoolExecutor(self.workers, initializer=_worker_init, initargs=init) as pool:
            parts = list(pool.map(_worker_open, [group_id] * len(chunks), chunks))
        return [p for part, _ in parts for p in part], sum((r for _, r in parts), Counter())

    def decrypt(self, group_id: int, envelopes: Sequence[bytes]) -> GroupDecryption:
        """Step 4 for one group: decrypt and validate the shuffled envelopes (module docstring)."""
        group = self.params.group(group_id)
        plaintexts, rejected = self._open(group_id, envelopes)
        decoded = decode_reports(plaintexts, self.params.suite, group.report)
        R = group_randomizer(group)
        values = decoded.values.astype(np.float64)
        estimates = R.estimate(values) if len(values) else np.zeros((0, values.shape[1]))
        reports = GroupReports(decoded.pseudonyms, values, np.asarray(estimates, dtype=np.float64))
        out = GroupDecryption(group_id, len(envelopes), reports, [None] * len(plaintexts), rejected)  # type: ignore[list-item]
        out.keep(decoded.well_formed, "report")
        out.keep(report_range(R)(out.reports.values), "domain")
        loaded = []
        for row in out.reports.pseudonyms:
            try:
                loaded.append(Pseudonym.from_bytes(self.params.suite, row.tobytes()))
            except MessageFormatError:
                loaded.append(None)
        out.pseudonyms = loaded  # type: ignore[assignment]
        out.keep(np.array([p is not None for p in loaded], dtype=bool), "pseudonym")
        return out

    def publish(self, task: PicTask, decrypted: Mapping[int, GroupDecryption]) -> bytes:
        """Steps 4-5: exclude repeated pseudonyms, compute f(L), seal each y, sign the board.

        ``decrypted`` maps every group id of the round (in group order, as the task's
        groups) to its `decrypt` result.  Returns the whole-board slice.
        """
        ids = [g.group_id for g in self.params.groups]
        if sorted(decrypted) != ids:
            raise MessageFormatError("group", f"publish needs every group of the round {ids}, got {sorted(decrypted)}")
        seen = Counter(p.to_bytes() for d in decrypted.values() for p in d.pseudonyms)
        for d in decrypted.values():
            d.keep(np.array([seen[p.to_bytes()] == 1 for p in d.pseudonyms], dtype=bool), "duplicate-pseudonym")
        while True:  # a pseudonym whose KEM key cannot be encrypted to (e.g. a low-order X25519 point) is
            # excluded and f(L) recomputed without it: outputs never name a user who cannot receive one
            L = [decrypted[g].reports for g in ids]
            start = time.perf_counter()
            outputs = evaluate(task, L)
            self.timings["task_s"] = time.perf_counter() - start
            entries, unusable = [], {}
            for g, ys in zip(ids, outputs, strict=True):
                ok = np.ones(len(ys), dtype=bool)
                for i, (p, y) in enumerate(zip(decrypted[g].pseudonyms, ys, strict=True)):
                    try:
                        entries.append(BoardEntry.seal(self.params, g, p, y.tobytes()))
                    except CryptoError:
                        ok[i] = False
                unusable[g] = ok
            if all(ok.all() for ok in unusable.values()):
                break
            for g, ok in unusable.items():
                decrypted[g].keep(ok, "pseudonym")
        self.view = (L, outputs)
        head = BoardHead.sign(self.params.round_id, entries, self.bucket_bits, self._signing)
        self.timings["seal_s"] = time.perf_counter() - start - self.timings["task_s"]
        return BoardSlice(head, None, tuple(entries)).to_bytes()

