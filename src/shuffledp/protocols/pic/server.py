"""The PIC server (pic-usenix25 §5.1 steps 1, 4, 5): signed parameters, validation, f(L), the signed board.

The server receives each group as one `SignedBatch` from the shuffler and refuses, with a
named reason counted in `Server.refused_batches`, a batch that is not signed by the round's
shuffler ("signature"), was altered ("count", "digest"), is for another round or view
("round", "view", "group"), was seen before ("replay"), follows a batch of the same group
("closed") or holds fewer envelopes than the group's threshold ("short").

Inside an accepted batch, every report that fails a check is excluded and counted under a
reason; none stops the round:

============================  =====================================================
reason                        the report
============================  =====================================================
``decrypt``                   fails HPKE authentication: tampered, or sealed for
                              another round, group, key or parameter set
``report``                    plaintext of the wrong size, or a non-finite x'
``domain``                    x' outside what the group's randomizer can output
``pseudonym``                 keys that do not load, or that nothing can be sealed to
``duplicate-pseudonym``       a pseudonym seen more than once in the round: every
                              copy is excluded (which one is genuine is unknowable)
============================  =====================================================

Valid reports are then mapped into the task's domain before f (`PicTask.to_domain`:
post-processing, privacy unchanged), so no valid report stops the round either.  Before
signing the board the server re-checks that every group still holds at least its threshold
of *valid* reports, and refuses to publish otherwise (`AnonymityThresholdError`).
"""

from __future__ import annotations

import functools
import multiprocessing
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from shuffledp.crypto import KemKeyPair, KemPublicKey, VerifyKey
from shuffledp.errors import AnonymityThresholdError, CryptoError, EnvelopeSizeError, MessageFormatError, ProtocolError
from shuffledp.protocols.pic._wire import as_bytes
from shuffledp.protocols.pic.batches import SignedBatch
from shuffledp.protocols.pic.bulletin import BoardEntry, BoardHead, BoardSlice, choose_bucket_bits
from shuffledp.protocols.pic.computation import GroupReports, PicTask, evaluate, output_size
from shuffledp.protocols.pic.identity import SigningIdentity
from shuffledp.protocols.pic.messages import (
    GroupParams,
    Pseudonym,
    RoundParams,
    SignedRoundParams,
    decode_reports,
    new_round_id,
    open_report,
)
from shuffledp.protocols.pic.reports import group_randomizer, report_range

__all__ = ["GroupDecryption", "Server"]


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
    """Decrypt inner envelopes; returns the plaintexts that opened and the refusals by reason."""
    plaintexts, rejected = [], Counter()
    for data in envelopes:
        try:
            plaintexts.append(open_report(params, key, group_id, data))
        except CryptoError:
            rejected["decrypt"] += 1
    return plaintexts, rejected


def _seal_all(
    params: RoundParams, group_id: int, pseudonyms: Sequence[Pseudonym], outputs: Sequence[bytes]
) -> tuple[list[BoardEntry], np.ndarray]:
    """Seal each output to its pseudonym; returns the entries and which pseudonyms could receive one."""
    entries, ok = [], np.ones(len(outputs), dtype=bool)
    for i, (p, y) in enumerate(zip(pseudonyms, outputs, strict=True)):
        try:
            entries.append(BoardEntry.seal(params, group_id, p, y))
        except EnvelopeSizeError:
            raise  # a bug of ours, not the user's key: never hide it as an exclusion
        except CryptoError:
            ok[i] = False
    return entries, ok


_WORKER: dict[str, object] = {}
#: Fewest envelopes worth spreading over worker processes (below it, start-up costs more than it saves).
PARALLEL_MIN = 2000


@functools.cache
def _worker_context() -> multiprocessing.context.BaseContext:
    """Workers start from a fork server that imported this module once: forking the caller itself can deadlock
    when it runs threads (JAX, a web server's pool), and spawning would import the library in every worker."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    return context


def _worker_init(signed: bytes, verify_key: bytes, suite: str, secret: bytes) -> None:
    params = SignedRoundParams.from_bytes(signed, server_key=VerifyKey.from_bytes(verify_key)).params
    _WORKER.update(params=params, key=KemKeyPair.from_secret_bytes(suite, secret))


def _worker_open(group_id: int, envelopes: list[bytes]) -> tuple[list[bytes], Counter[str]]:
    return _open_all(_WORKER["params"], _WORKER["key"], group_id, envelopes)  # type: ignore[arg-type]


class Server:
    """One round's server: a fresh KEM key, its long-term signing identity, the round's groups and task.

    ``shuffler`` is the round's shuffler as ``(KEM public key, verify key)``: the server names
    both in the signed parameters (clients seal the outer layer to the first; the second
    signs the batches the server accepts).  ``identity`` is the long-term signing key that
    clients pin (`.identity`); None makes an ephemeral one (simulations).

    ``workers > 1`` decrypts in that many processes (each receives the round's KEM
    secret through its start-up pipe; the keys never leave this machine).  On the
    project's shared 2-core machine two workers did not beat one, so callers default to one.
    """

    def __init__(
        self,
        suite: str,
        groups: Sequence[GroupParams],
        task: PicTask,
        shuffler: tuple[KemPublicKey, VerifyKey],
        *,
        identity: SigningIdentity | None = None,
        post_payload_size: int = 16,
        output_payload_size: int | None = None,
        bucket_bits: int = 0,
        min_bucket_size: int = 10,  # ClientPolicy's and RoundConfig's default: a default client accepts a default server
        workers: int = 1,
        kem: KemKeyPair | None = None,
        round_id: bytes | None = None,
        validation: Any = None,
    ) -> None:
        """``kem`` and ``round_id`` restore a round a service stored (same key, same id: the same signed
        parameters, since Ed25519 signatures are deterministic); None draws fresh ones (§8).

        ``validation``: the server's private input v of a ``shapley`` task (§7.3, Appendix E), a
        vector of the model dimension; it never enters the signed parameters.  `DomainError` if a
        shapley task lacks it or another task is given one."""
        groups = tuple(groups)
        dim = int(groups[0].randomizer_params.get("dim", groups[0].report.length)) if groups else 0
        self._validation = task.check_validation(validation, dim)
        self._kem = kem if kem is not None else KemKeyPair.generate(suite)
        self.identity = identity or SigningIdentity.ephemeral()
        self.task = task
        if output_payload_size is None:
            output_payload_size = output_size(suite, groups[0].report, task)
        self.params = RoundParams(
            round_id if round_id is not None else new_round_id(), suite, self._kem.public_key, self.identity.verify_key, groups,
            output_payload_size, post_payload_size, shuffler[0], shuffler[1], task.to_json(),
            bucket_bits, min_bucket_size,
        )  # fmt: skip
        self.workers = max(1, int(workers))
        for g in groups:  # build each R_i now (Minkowski solves for its radius: ~12 ms), not inside the first batch
            report_range(group_randomizer(g))
        self._signed = SignedRoundParams.sign(self.params, self.identity.signing_key).to_bytes()
        self._received: dict[int, GroupDecryption] = {}
        self._batch_ids: set[bytes] = set()
        self.refused_batches: Counter[str] = Counter()
        self.view: tuple[list[GroupReports], list[np.ndarray]] | None = None  # (L, f(L)) once computed
        self.board_bucket_bits: int | None = None
        # wall seconds of f(L) ("task_s") and of sealing the board ("seal_s"); CPU seconds of this thread beside
        # them ("task_cpu_s", "seal_cpu_s")
        self.timings: dict[str, float] = {}

    @property
    def verify_key(self) -> VerifyKey:
        """The server's long-term signing key, which clients and the shuffler pin."""
        return self.identity.verify_key

    def signed_params(self) -> bytes:
        """Step 1: the signed round parameters."""
        return self._signed

    def _refuse(self, reason: str, message: str) -> MessageFormatError:
        self.refused_batches[reason] += 1
        return MessageFormatError(reason, message)

    def receive(self, batch: bytes) -> GroupDecryption:
        """Step 3 -> 4: verify one group's signed batch from the shuffler, then decrypt and validate it."""
        params = self.params
        try:
            b = SignedBatch.from_bytes(as_bytes(batch, "batch"))
            b.verify(params.shuffler_verify_key)
        except MessageFormatError as exc:
            raise self._refuse(exc.reason, str(exc)) from None
        if b.round_id != params.round_id:
            raise self._refuse("round", f"batch is for round {b.round_id.hex()}, not {params.round_id.hex()}")
        if b.params_hash != params.digest:
            raise self._refuse("view", "batch was admitted under another parameter set")
        if b.group_id not in {g.group_id for g in params.groups}:
            raise self._refuse("group", f"batch is for unknown group {b.group_id}")
        if b.batch_id in self._batch_ids:
            raise self._refuse("replay", f"batch {b.batch_id.hex()} was already received")
        if b.group_id in self._received:
            raise self._refuse("closed", f"group {b.group_id} already has its batch")
        group = params.group(b.group_id)
        if b.count < group.threshold:
            raise self._refuse(
                "short", f"batch of {b.count} envelopes for group {group.name}, below its threshold {group.threshold}"
            )
        self._batch_ids.add(b.batch_id)
        decrypted = self.decrypt(b.group_id, list(b.envelopes))
        self._received[b.group_id] = decrypted
        return decrypted

    def _open(self, group_id: int, envelopes: Sequence[bytes]) -> tuple[list[bytes], Counter[str]]:
        if self.workers == 1 or len(envelopes) < PARALLEL_MIN:
            return _open_all(self.params, self._kem, group_id, envelopes)
        chunks = [list(envelopes[i :: self.workers]) for i in range(self.workers)]
        init = (self._signed, self.verify_key.to_bytes(), self.params.suite, self._kem.secret_bytes())
        with ProcessPoolExecutor(
            self.workers, mp_context=_worker_context(), initializer=_worker_init, initargs=init
        ) as pool:
            parts = list(pool.map(_worker_open, [group_id] * len(chunks), chunks))
        return [p for part, _ in parts for p in part], sum((r for _, r in parts), Counter())

    def _seal(
        self, group_id: int, pseudonyms: Sequence[Pseudonym], outputs: Sequence[bytes]
    ) -> tuple[list[BoardEntry], np.ndarray]:
        """Board sealing of one group (in process; a service may route it elsewhere, `shuffledp.service.scale`)."""
        return _seal_all(self.params, group_id, pseudonyms, outputs)

    def decrypt(self, group_id: int, envelopes: Sequence[bytes]) -> GroupDecryption:
        """Step 4 for one group: decrypt and validate inner envelopes (module docstring).

        Called by `receive` on a verified batch; the result counts toward the board only
        through `receive`.
        """
        group = self.params.group(group_id)
        plaintexts, rejected = self._open(group_id, envelopes)
        decoded = decode_reports(plaintexts, self.params.suite, group.report)
        R = group_randomizer(group)
        values = decoded.values.astype(np.float64)
        out = GroupDecryption(group_id, len(envelopes), GroupReports(decoded.pseudonyms, values, values),
                              [None] * len(plaintexts), rejected)  # type: ignore[list-item]  # fmt: skip
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
        r = out.reports
        estimates = R.estimate(r.values) if len(r.values) else np.zeros_like(r.values)
        out.reports = GroupReports(r.pseudonyms, r.values, np.asarray(estimates, dtype=np.float64))
        return out

    def publish(self) -> bytes:
        """Steps 4-5: exclude repeated pseudonyms, re-check the thresholds, compute f(L), seal each y, sign the board.

        Needs every group's batch (`receive`).  Returns the whole-board slice.  Raises
        `AnonymityThresholdError` (and publishes nothing) when a group's valid reports fall
        below its threshold.
        """
        ids = [g.group_id for g in self.params.groups]
        if sorted(self._received) != ids:
            raise ProtocolError(f"publish needs a verified batch for every group {ids}, got {sorted(self._received)}")
        decrypted = self._received
        seen = Counter(p.to_bytes() for d in decrypted.values() for p in d.pseudonyms)
        for d in decrypted.values():
            d.keep(np.array([seen[p.to_bytes()] == 1 for p in d.pseudonyms], dtype=bool), "duplicate-pseudonym")
        fmt = self.params.groups[0].report
        while True:  # a pseudonym whose KEM key cannot be encrypted to (e.g. a low-order X25519 point) is
            # excluded and f(L) recomputed without it: outputs never name a user who cannot receive one
            self._check_thresholds()
            L = [decrypted[g].reports for g in ids]
            start, cpu = time.perf_counter(), time.thread_time()
            outputs = evaluate(self.task, L, fmt, validation=self._validation, round_id=self.params.round_id)
            self.timings["task_s"] = time.perf_counter() - start
            self.timings["task_cpu_s"] = time.thread_time() - cpu
            entries, unusable = [], {}
            for g, ys in zip(ids, outputs, strict=True):
                sealed, ok = self._seal(g, decrypted[g].pseudonyms, [y.tobytes() for y in ys])
                entries += sealed
                unusable[g] = ok
            if all(ok.all() for ok in unusable.values()):
                break
            for g, ok in unusable.items():
                decrypted[g].keep(ok, "pseudonym")
        self.view = (L, outputs)
        bits = choose_bucket_bits(
            [e.pseudonym for e in entries],
            self.params.bucket_bits,
            self.params.min_bucket_size,
            [e.group_id for e in entries],
        )
        self.board_bucket_bits = bits
        head = BoardHead.sign(self.params.round_id, entries, bits, self.identity.signing_key)
        self.timings["seal_s"] = time.perf_counter() - start - self.timings["task_s"]
        self.timings["seal_cpu_s"] = time.thread_time() - cpu - self.timings["task_cpu_s"]
        return BoardSlice(head, None, tuple(entries)).to_bytes()

    def _check_thresholds(self) -> None:
        for g in self.params.groups:
            valid = self._received[g.group_id].valid
            if valid < g.threshold:
                raise AnonymityThresholdError(
                    f"group {g.group_id} ({g.name}) has {valid} valid reports, below its anonymity threshold "
                    f"{g.threshold}; the server refuses to publish the board"
                )
