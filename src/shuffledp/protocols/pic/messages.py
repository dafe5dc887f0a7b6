"""Wire messages of the PIC protocol (pic-usenix25 §5.1, Remarks 2-3), as versioned bytes.

Every message starts with the same 5-byte header; integers are unsigned big-endian;
``round_id`` is 16 random bytes chosen by the server.  ``to_bytes``/``from_bytes``
invert each other, and ``from_bytes`` checks everything, raising
`MessageFormatError` (a ``ProtocolError``) whose ``reason``
names what was wrong; a bad signature raises `CryptoError`.

Header (all messages)

=========  ====  ===========================================================
field      size  meaning
=========  ====  ===========================================================
magic      3     ``b"PIC"``
version    1     `VERSION` (2)
type       1     `MessageType`
=========  ====  ===========================================================

Every HPKE envelope binds, through ``info``, the protocol, version, purpose, round, group
and ``params_hash`` = `RoundParams.digest`, the SHA-256 of the signed parameters: one view.

Report plaintext (step 2; inside the inner envelope, so no header)

=========  ======================  =====================================================
field      size                    meaning
=========  ======================  =====================================================
pseudonym  suite public key + 32   one-time KEM public key (outputs) || Ed25519 key (posts)
report     ``ReportFormat.size``   x' = R_i(x): float64 / int64 little-endian, or packed bits
=========  ======================  =====================================================

Inner envelope (client -> server, through the shuffler): ``HPKE_server`` of the padded report
plaintext, purpose "report"; no header, `RoundParams.inner_size` bytes
(x25519, 2-D float64: 32 + (64 + 16 + 1) + 16 = 129 B).

Submission (client -> shuffler, step 2), type 1: the outer envelope, fixed length per round

=========  ==================================  ===========================================
field      size                                meaning
=========  ==================================  ===========================================
header     5
round_id   16
group_id   2                                   the sender's group G_i
sealed     ``sealed_size(suite, 48 + inner)``  HPKE_shuffler, purpose "submission", of
                                               credential (32) || submission id (16) || inner
=========  ==================================  ===========================================

With the x25519 suite and 2-D float64 reports: 23 + 32 + (177 + 1) + 16 = 249 bytes (<= 256).
The credential is the client's enrolment secret (the shuffler admits one submission per
enrolled user per round and group); the submission id is 16 random bytes (idempotent
resubmission, replay refused), as DAP's report ids.

Signed batch (shuffler -> server, step 3) and view announcement (shuffler -> board): `.batches`.
Board entry, board head and board slice (steps 5-6): `.bulletin`.

Signed round parameters (step 1), type 2

=========  ====  ==============================================================
header     5
body_len   4     length of body
body       n     canonical JSON of `RoundParams` (sorted keys, no spaces, ASCII)
signature  64    Ed25519 by the server over header || body_len || body, context "pic/round-params"
=========  ====  ==============================================================

Post (Remark 3: A -> B through a public board), type 6; fixed length per round

==============  ====  ==========================================================
header          5
round_id        16
recipient_len   2
recipient       p     B's pseudonym (the address)
sealed_len      4
sealed          s     HPKE to B's KEM key, purpose "post", info binding (params hash,
                      A's pseudonym, B's pseudonym), of post id (16) || len (2) ||
                      p padded to post_payload_size || Sign_A(params hash, A, B, id, p)
==============  ====  ==========================================================
"""

from __future__ import annotations

import hashlib
import json
import math
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from shuffledp.crypto import (
    SIGNATURE_SIZE,
    HpkeContext,
    KemKeyPair,
    KemPublicKey,
    SigningKeyPair,
    Suite,
    VerifyKey,
    get_suite,
    seal,
    sealed_size,
    unseal,
)
from shuffledp.crypto.signing import VERIFY_KEY_SIZE
from shuffledp.errors import CryptoError, MessageFormatError
from shuffledp.protocols.pic._wire import (
    HEADER_SIZE,
    PROTOCOL,
    ROUND_ID_SIZE,
    VERSION,
    MessageType,
    Reader,
    check_group_id,
    check_int,
    check_round_id,
    header,
    new_round_id,
    sized,
)

__all__ = [
    "CREDENTIAL_SIZE",
    "PROTOCOL",
    "SUBMISSION_ID_SIZE",
    "VERSION",
    "DecodedReports",
    "Submission",
    "GroupParams",
    "MessageType",
    "OneTimeKeys",
    "Post",
    "Pseudonym",
    "ReportFormat",
    "RoundParams",
    "SignedRoundParams",
    "canonical_json",
    "decode_reports",
    "encode_report",
    "new_round_id",
    "open_report",
    "output_context",
    "post_context",
    "report_context",
    "seal_report",
    "submission_context",
]

# ---------------------------------------------------------------- HPKE contexts


@lru_cache(maxsize=4096)
def report_context(round_id: bytes, group_id: int, params_hash: bytes) -> HpkeContext:
    """Inner envelope (client -> server): bound to its round, group and the hash of the signed parameters."""
    return HpkeContext(PROTOCOL, VERSION, "report", round_id, group_id, params_hash)


@lru_cache(maxsize=4096)
def submission_context(round_id: bytes, group_id: int, params_hash: bytes) -> HpkeContext:
    """Outer envelope (client -> shuffler): bound like the inner one, for another purpose and key."""
    return HpkeContext(PROTOCOL, VERSION, "submission", round_id, group_id, params_hash)


@lru_cache(maxsize=4096)
def output_context(round_id: bytes, group_id: int, params_hash: bytes = b"") -> HpkeContext:
    """Context of an output y sealed to a pseudonym on the board."""
    return HpkeContext(PROTOCOL, VERSION, "output", round_id, group_id, params_hash)


def post_context(round_id: bytes, sender: bytes, recipient: bytes, params_hash: bytes = b"") -> HpkeContext:
    """Context of a post (Remark 3): binds the round, the parameter hash, and the sender's and the
    recipient's pseudonyms, so a ciphertext cannot be re-attributed to another sender."""
    return HpkeContext(
        PROTOCOL, VERSION, "post", round_id, None, sized(params_hash, 1) + sized(sender, 2) + sized(recipient, 2)
    )


# ---------------------------------------------------------------- pseudonyms and keys


@dataclass(frozen=True)
class Pseudonym:
    """A user's one-time public identity: KEM key (to receive outputs) and Ed25519 key (to sign posts).

    The KEM key uses the round's suite, so in a pq-hybrid round the outputs are
    post-quantum protected too: they sit on a public board, where "harvest now,
    decrypt later" threatens them as much as the reports (privacy-conservative choice;
    the pseudonym grows from 64 to 1248 bytes).
    """

    kem_key: KemPublicKey
    verify_key: VerifyKey

    @staticmethod
    def size(suite: str | Suite) -> int:
        """Bytes of a pseudonym in ``suite``."""
        return get_suite(suite).public_key_size + VERIFY_KEY_SIZE

    def to_bytes(self) -> bytes:
        """KEM public key || Ed25519 public key."""
        return self.kem_key.to_bytes() + self.verify_key.to_bytes()

    @classmethod
    def from_bytes(cls, suite: str | Suite, data: bytes) -> Pseudonym:
        """Parse and validate (length, key encodings); failures have reason "pseudonym"."""
        s = get_suite(suite)
        if len(data) != cls.size(s):
            raise MessageFormatError(
                "pseudonym", f"pseudonym is {len(data)} bytes; suite {s.name!r} uses {cls.size(s)}"
            )
        try:
            return cls(
                KemPublicKey.from_bytes(s, data[: s.public_key_size]), VerifyKey.from_bytes(data[s.public_key_size :])
            )
        except CryptoError as exc:
            raise MessageFormatError("pseudonym", f"invalid pseudonym: {exc}") from None


@dataclass(frozen=True)
class OneTimeKeys:
    """A user's fresh key pairs for one round (§8: never reuse them across rounds)."""

    kem: KemKeyPair
    signing: SigningKeyPair

    @classmethod
    def generate(cls, suite: str | Suite) -> OneTimeKeys:
        return cls(KemKeyPair.generate(suite), SigningKeyPair.generate())

    @property
    def pseudonym(self) -> Pseudonym:
        return Pseudonym(self.kem.public_key, self.signing.verify_key)


# ---------------------------------------------------------------- reports x'

_DTYPES = {"float64": np.dtype("<f8"), "int64": np.dtype("<i8")}
REPORT_KINDS = ("float64", "int64", "bits")


@dataclass(frozen=True)
class ReportFormat:
    """How a group's randomized report x' is encoded.

    ``float64``/``int64``: ``length`` little-endian numbers (8 bytes each);
    ``bits``: ``length`` bits packed most-significant first, unused trailing bits zero.
    """

    kind: str
    length: int

    def __post_init__(self) -> None:
        if self.kind not in REPORT_KINDS:
            raise MessageFormatError(
                "field", f"report kind must be one of {', '.join(REPORT_KINDS)}; got {self.kind!r}"
            )
        check_int(self.length, "report length", 1, 2**20)

    @property
    def size(self) -> int:
        """Bytes of one encoded report."""
        return (self.length + 7) // 8 if self.kind == "bits" else 8 * self.length

    def encode(self, values: Any) -> bytes:
        """Encode one report (a sequence of ``length`` numbers, or 0/1 values for ``bits``)."""
        arr = np.asarray(values)
        if arr.shape != (self.length,) or arr.dtype.kind not in "biuf":
            raise MessageFormatError(
                "field", f"report must be {self.length} numbers, got shape {arr.shape} of dtype {arr.dtype}"
            )
        if self.kind == "float64":
            out = arr.astype(np.float64)
            if not np.all(np.isfinite(out)):
                raise MessageFormatError("field", "float64 report must be finite")
        else:
            with np.errstate(invalid="ignore"):  # NaN or out-of-range floats: caught by the comparison below
                out = arr.astype(np.int64)
            if not np.array_equal(out, arr):
                raise MessageFormatError("field", f"{self.kind} report must hold integers, got {arr.tolist()}")
            if self.kind == "bits":
                if np.any((out != 0) & (out != 1)):
                    raise MessageFormatError("field", f"bits report must hold only 0 and 1, got {arr.tolist()}")
                return np.packbits(out.astype(np.uint8)).tobytes()
        return out.astype(_DTYPES[self.kind]).tobytes()

    def decode_many(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Decode an (n, size) uint8 array; returns (values (n, length), well-formed mask (n,))."""
        if self.kind == "bits":
            bits = np.unpackbits(rows, axis=1)
            ok = ~np.any(bits[:, self.length :], axis=1)
            return bits[:, : self.length].astype(np.int64), ok
        wire = _DTYPES[self.kind]
        values = np.ascontiguousarray(rows).view(wire).astype(wire.newbyteorder("="))  # (n, length), native order
        ok = np.all(np.isfinite(values), axis=1) if self.kind == "float64" else np.ones(len(rows), dtype=bool)
        return values, ok

    def encode_many(self, values: np.ndarray) -> np.ndarray:
        """Encode decoded reports (n, length) back to their wire bytes, an (n, size) uint8 array."""
        values = np.asarray(values)
        if self.kind == "bits":
            return np.packbits(values.astype(np.uint8), axis=1).reshape(len(values), self.size)
        wire = np.ascontiguousarray(values, dtype=_DTYPES[self.kind])
        return wire.view(np.uint8).reshape(len(values), self.size)

    def decode_one(self, data: bytes) -> np.ndarray:
        """One report's wire bytes as float64 values (length,)."""
        values, _ = self.decode_many(np.frombuffer(data, dtype=np.uint8).reshape(1, self.size))
        return values[0].astype(np.float64)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "length": self.length}


def encode_report(pseudonym: Pseudonym, values: Any, fmt: ReportFormat) -> bytes:
    """The report plaintext ``pseudonym || x'`` of step 2."""
    return pseudonym.to_bytes() + fmt.encode(values)


@dataclass(frozen=True)
class DecodedReports:
    """Reports parsed in bulk by the server (step 4); rows with ``well_formed`` False hold zeros."""

    pseudonyms: np.ndarray  # (n, pseudonym size) uint8
    values: np.ndarray  # (n, length)
    well_formed: np.ndarray  # (n,) bool: right length and a decodable x'


def decode_reports(payloads: Sequence[bytes], suite: str | Suite, fmt: ReportFormat) -> DecodedReports:
    """Split decrypted report plaintexts into pseudonyms and x' (vectorised over reports).

    A payload of the wrong length or with an undecodable x' (non-finite float, nonzero
    padding bits) is marked not well-formed; the pseudonym keys themselves are checked
    later, when the server loads them to seal the output.
    """
    p = Pseudonym.size(suite)
    width = p + fmt.size
    lengths = np.fromiter(map(len, payloads), dtype=np.int64, count=len(payloads))
    right = lengths == width
    rows = np.zeros((len(payloads), width), dtype=np.uint8)
    if right.any():
        blob = b"".join(payload for payload, ok in zip(payloads, right, strict=True) if ok)
        rows[right] = np.frombuffer(blob, dtype=np.uint8).reshape(-1, width)
    values, decodable = fmt.decode_many(rows[:, p:])
    ok = right & decodable
    values[~ok] = 0
    pseudonyms = rows[:, :p]
    pseudonyms[~ok] = 0
    return DecodedReports(pseudonyms, values, ok)


# ---------------------------------------------------------------- round parameters (step 1)


@dataclass(frozen=True)
class GroupParams:
    """One group G_i of a round: its randomizer R_i, local epsilon, report format, threshold, delta."""

    group_id: int
    name: str
    randomizer: str
    local_epsilon: float
    report: ReportFormat
    threshold: int
    delta: float
    randomizer_params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_group_id(self.group_id)
        for attr in ("name", "randomizer"):
            if not isinstance(getattr(self, attr), str) or not getattr(self, attr):
                raise MessageFormatError(
                    "field", f"group {self.group_id} {attr} must be a non-empty string, got {getattr(self, attr)!r}"
                )
        eps, delta = _as_float(self.local_epsilon), _as_float(self.delta)
        if not (math.isfinite(eps) and eps > 0):
            raise MessageFormatError(
                "field", f"group {self.group_id} local_epsilon must be a finite number > 0, got {self.local_epsilon!r}"
            )
        if not 0.0 < delta < 1.0:
            raise MessageFormatError("field", f"group {self.group_id} delta must lie in (0, 1), got {self.delta!r}")
        object.__setattr__(self, "local_epsilon", eps)
        object.__setattr__(self, "delta", delta)
        check_int(self.threshold, f"group {self.group_id} threshold", 1, 2**32 - 1)
        if not isinstance(self.report, ReportFormat):
            raise MessageFormatError(
                "field", f"group {self.group_id} report must be a ReportFormat, got {self.report!r}"
            )
        if not isinstance(self.randomizer_params, Mapping):
            raise MessageFormatError("field", f"group {self.group_id} randomizer_params must be a mapping")
        canonical_json(dict(self.randomizer_params))  # JSON-serialisable now, not at signing time

    def to_json(self) -> dict[str, Any]:
        return {
            "delta": self.delta,
            "group_id": self.group_id,
            "local_epsilon": self.local_epsilon,
            "name": self.name,
            "randomizer": self.randomizer,
            "randomizer_params": dict(self.randomizer_params),
            "report": self.report.to_json(),
            "threshold": self.threshold,
        }

    @classmethod
    def from_json(cls, obj: Any) -> GroupParams:
        _check_keys(
            obj,
            ("delta", "group_id", "local_epsilon", "name", "randomizer", "randomizer_params", "report", "threshold"),
            "group",
        )
        _check_keys(obj["report"], ("kind", "length"), "report")
        return cls(
            group_id=obj["group_id"],
            name=obj["name"],
            randomizer=obj["randomizer"],
            local_epsilon=obj["local_epsilon"],
            report=ReportFormat(obj["report"]["kind"], obj["report"]["length"]),
            threshold=obj["threshold"],
            delta=obj["delta"],
            randomizer_params=obj["randomizer_params"],
        )


def _as_float(value: Any) -> float:
    """A real number as float; NaN for anything else (bools and strings included)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return math.nan
    return float(value)


def _check_keys(obj: Any, keys: tuple[str, ...], what: str) -> None:
    if not isinstance(obj, dict) or set(obj) != set(keys):
        got = sorted(obj) if isinstance(obj, dict) else type(obj).__name__
        raise MessageFormatError("field", f"{what} must have exactly the keys {list(keys)}, got {got}")


def canonical_json(obj: Any) -> bytes:
    """Deterministic JSON: sorted keys, no whitespace, ASCII only, no NaN/infinity."""
    try:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()
    except (TypeError, ValueError) as exc:
        raise MessageFormatError("field", f"round parameters are not JSON-serialisable: {exc}") from None


#: Keys of a round's task description (`computation.PicTask` is built from it).
TASK_KEYS = ("k", "name", "radius")
#: Bytes of the enrolment credential a client presents (inside the outer layer) to the shuffler.
CREDENTIAL_SIZE = 32
#: Bytes of the random submission id (DAP-style report id: idempotent resubmission, replay refused).
SUBMISSION_ID_SIZE = 16
#: Largest bucket_bits of a board (Remark 2's bucketed retrieval).
MAX_BUCKET_BITS = 16
_PARAMS_HASH_LABEL = b"shuffledp/pic/round-params-hash"


@dataclass(frozen=True)
class RoundParams:
    """Global parameters of one PIC round, published and signed by the server (step 1).

    Everything a client, the shuffler and the server must agree on is here, and every
    envelope (inner and outer), output and post commits to `digest`, the hash of these
    parameters: a second parameter set (a split view) yields envelopes the shuffler cannot
    open.  ``report_payload_size`` defaults to the largest report plaintext of any group, so
    every envelope of the round has one length (metric-privacy-shuffler §8).

    ``shuffler_kem_key`` receives the outer layer; ``shuffler_verify_key`` signs the batches
    and the view announcement.  ``bucket_bits`` is the most bits the board may bucket by
    (Remark 2); the board uses the largest b <= bucket_bits whose every bucket holds at least
    ``min_bucket_size`` entries.  ``task`` is ``{"name", "k", "radius"}``.
    """

    round_id: bytes
    suite: str
    server_kem_key: KemPublicKey
    server_verify_key: VerifyKey
    groups: tuple[GroupParams, ...]
    output_payload_size: int
    post_payload_size: int
    shuffler_kem_key: KemPublicKey
    shuffler_verify_key: VerifyKey
    task: Mapping[str, Any]
    bucket_bits: int = 0
    min_bucket_size: int = 1
    report_payload_size: int | None = None

    def __post_init__(self) -> None:
        check_round_id(self.round_id)
        try:
            suite = get_suite(self.suite)
        except CryptoError as exc:
            raise MessageFormatError("field", str(exc)) from None
        object.__setattr__(self, "suite", suite.name)
        for name in ("server_kem_key", "shuffler_kem_key"):
            key = getattr(self, name)
            if not isinstance(key, KemPublicKey) or key.suite is not suite:
                raise MessageFormatError("field", f"{name} must be a KemPublicKey of suite {self.suite!r}")
        for name in ("server_verify_key", "shuffler_verify_key"):
            if not isinstance(getattr(self, name), VerifyKey):
                raise MessageFormatError("field", f"{name} must be a VerifyKey")
        if self.server_verify_key == self.shuffler_verify_key:
            raise MessageFormatError("field", "the server and the shuffler must sign with different keys")
        groups = tuple(self.groups)
        if not groups or not all(isinstance(g, GroupParams) for g in groups):
            raise MessageFormatError("field", "groups must be a non-empty sequence of GroupParams")
        ids = [g.group_id for g in groups]
        if len(set(ids)) != len(ids):
            raise MessageFormatError("field", f"group ids must be distinct, got {ids}")
        object.__setattr__(self, "groups", tuple(sorted(groups, key=lambda g: g.group_id)))
        task = self.task
        _check_keys(task, TASK_KEYS, "task")
        if not isinstance(task["name"], str) or not task["name"]:
            raise MessageFormatError("field", f"task name must be a non-empty string, got {task['name']!r}")
        check_int(task["k"], "task k", 1, 1000)
        if not (math.isfinite(_as_float(task["radius"])) and task["radius"] >= 0):
            raise MessageFormatError("field", f"task radius must be a finite number >= 0, got {task['radius']!r}")
        object.__setattr__(self, "task", {"k": task["k"], "name": task["name"], "radius": float(task["radius"])})
        check_int(self.bucket_bits, "bucket_bits", 0, MAX_BUCKET_BITS)
        check_int(self.min_bucket_size, "min_bucket_size", 1, 2**32 - 1)
        needed = Pseudonym.size(suite) + max(g.report.size for g in groups)
        if self.report_payload_size is None:
            object.__setattr__(self, "report_payload_size", needed)
        check_int(self.report_payload_size, "report_payload_size", needed, 2**20)
        check_int(self.output_payload_size, "output_payload_size", 0, 2**20)
        check_int(self.post_payload_size, "post_payload_size", 0, 2**20)

    @cached_property
    def _group_index(self) -> dict[int, GroupParams]:
        return {g.group_id: g for g in self.groups}

    def group(self, group_id: int) -> GroupParams:
        """The group ``group_id``; an unknown group is a ``MessageFormatError`` (reason "group")."""
        if group_id in self._group_index:
            return self._group_index[group_id]
        raise MessageFormatError(
            "group", f"round has no group {group_id!r}; groups are {[g.group_id for g in self.groups]}"
        )

    @cached_property
    def digest(self) -> bytes:
        """SHA-256 of the canonical parameters (domain-separated): the one view every party commits to."""
        return hashlib.sha256(_PARAMS_HASH_LABEL + self.canonical_bytes()).digest()

    @cached_property
    def inner_size(self) -> int:
        """Bytes of every inner envelope ``HPKE_server(pk || x')`` (what the server receives)."""
        return sealed_size(self.suite, self.report_payload_size)

    @cached_property
    def submission_payload_size(self) -> int:
        """Plaintext of the outer layer: credential || submission id || inner envelope."""
        return CREDENTIAL_SIZE + SUBMISSION_ID_SIZE + self.inner_size

    @cached_property
    def envelope_size(self) -> int:
        """Bytes of every submission (outer envelope) of this round: what a network observer sees sent."""
        return _SUBMISSION_PREFIX + sealed_size(self.suite, self.submission_payload_size)

    @cached_property
    def _canonical(self) -> bytes:
        return canonical_json(
            {
                "bucket_bits": self.bucket_bits,
                "groups": [g.to_json() for g in self.groups],
                "min_bucket_size": self.min_bucket_size,
                "output_payload_size": self.output_payload_size,
                "post_payload_size": self.post_payload_size,
                "protocol": PROTOCOL,
                "report_payload_size": self.report_payload_size,
                "round_id": self.round_id.hex(),
                "server_kem_key": self.server_kem_key.to_bytes().hex(),
                "server_verify_key": self.server_verify_key.to_bytes().hex(),
                "shuffler_kem_key": self.shuffler_kem_key.to_bytes().hex(),
                "shuffler_verify_key": self.shuffler_verify_key.to_bytes().hex(),
                "suite": self.suite,
                "task": dict(self.task),
                "version": VERSION,
            }
        )

    def canonical_bytes(self) -> bytes:
        """The canonical JSON body that the server signs."""
        return self._canonical

    _KEYS = ("bucket_bits", "groups", "min_bucket_size", "output_payload_size", "post_payload_size", "protocol",
             "report_payload_size", "round_id", "server_kem_key", "server_verify_key", "shuffler_kem_key",
             "shuffler_verify_key", "suite", "task", "version")  # fmt: skip

    @classmethod
    def from_canonical_bytes(cls, body: bytes) -> RoundParams:
        """Parse a body; it must be exactly the canonical encoding of the parameters it holds."""
        try:
            obj = json.loads(body.decode("ascii"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise MessageFormatError("field", f"round parameters are not ASCII JSON: {exc}") from None
        if isinstance(obj, dict) and (obj.get("protocol"), obj.get("version")) != (PROTOCOL, VERSION):
            raise MessageFormatError(
                "version",
                f"round parameters are for {obj.get('protocol')!r} version {obj.get('version')!r}; "
                f"this build speaks {PROTOCOL!r} version {VERSION}",
            )
        _check_keys(obj, cls._KEYS, "round parameters")
        if not isinstance(obj["groups"], list):
            raise MessageFormatError("field", "round parameters groups must be a list")
        try:
            suite = obj["suite"]
            params = cls(
                round_id=bytes.fromhex(obj["round_id"]),
                suite=suite,
                server_kem_key=KemPublicKey.from_bytes(suite, bytes.fromhex(obj["server_kem_key"])),
                server_verify_key=VerifyKey.from_bytes(bytes.fromhex(obj["server_verify_key"])),
                groups=tuple(GroupParams.from_json(g) for g in obj["groups"]),
                output_payload_size=obj["output_payload_size"],
                post_payload_size=obj["post_payload_size"],
                shuffler_kem_key=KemPublicKey.from_bytes(suite, bytes.fromhex(obj["shuffler_kem_key"])),
                shuffler_verify_key=VerifyKey.from_bytes(bytes.fromhex(obj["shuffler_verify_key"])),
                task=obj["task"],
                bucket_bits=obj["bucket_bits"],
                min_bucket_size=obj["min_bucket_size"],
                report_payload_size=obj["report_payload_size"],
            )
        except (CryptoError, TypeError, ValueError) as exc:
            if isinstance(exc, MessageFormatError):
                raise
            raise MessageFormatError("field", f"invalid round parameters: {exc}") from None
        if params.canonical_bytes() != bytes(body):
            raise MessageFormatError("canonical", "round parameters are not in canonical form")
        return params


_ROUND_PARAMS_CONTEXT = "pic/round-params"


@dataclass(frozen=True)
class SignedRoundParams:
    """Round parameters with the server's Ed25519 signature (step 1)."""

    params: RoundParams
    signature: bytes

    @classmethod
    def sign(cls, params: RoundParams, key: SigningKeyPair) -> SignedRoundParams:
        """Sign ``params``; ``key`` must be the one the parameters announce."""
        if key.verify_key != params.server_verify_key:
            raise CryptoError("the signing key is not the server_verify_key announced in the round parameters")
        return cls(params, key.sign(cls._signed_part(params.canonical_bytes()), context=_ROUND_PARAMS_CONTEXT))

    @staticmethod
    def _signed_part(body: bytes) -> bytes:
        return header(MessageType.ROUND_PARAMS) + sized(body, 4)

    def to_bytes(self) -> bytes:
        return self._signed_part(self.params.canonical_bytes()) + self.signature

    @classmethod
    def from_bytes(
        cls, data: bytes, *, server_key: VerifyKey, shuffler_key: VerifyKey | None = None
    ) -> SignedRoundParams:
        """Parse, check the signature with the server key the client trusts, and that the body announces
        that key (and, given ``shuffler_key``, that it names the shuffler the caller trusts)."""
        r = Reader(data, MessageType.ROUND_PARAMS)
        body = r.sized(4, "body")
        signature = r.take(SIGNATURE_SIZE, "signature")
        r.done()
        server_key.verify(signature, cls._signed_part(body), context=_ROUND_PARAMS_CONTEXT)
        params = RoundParams.from_canonical_bytes(body)
        if params.server_verify_key != server_key:
            raise CryptoError("round parameters announce a server_verify_key other than the trusted server key")
        if shuffler_key is not None and params.shuffler_verify_key != shuffler_key:
            raise CryptoError("round parameters name a shuffler other than the trusted shuffler key")
        return cls(params, signature)


# ---------------------------------------------------------------- envelopes (steps 2-3): two layers

_SUBMISSION_PREFIX = HEADER_SIZE + ROUND_ID_SIZE + 2


def seal_report(params: RoundParams, group_id: int, plaintext: bytes) -> bytes:
    """The inner envelope ``HPKE_server(pk || x')``: padded, bound to (round, group, params hash)."""
    params.group(group_id)
    ctx = report_context(params.round_id, group_id, params.digest)
    return seal(params.server_kem_key, plaintext, ctx, params.report_payload_size)


def open_report(params: RoundParams, key: KemKeyPair, group_id: int, inner: bytes) -> bytes:
    """Decrypt an inner envelope with the server's key; ``CryptoError`` if it fails."""
    ctx = report_context(params.round_id, group_id, params.digest)
    return unseal(key, inner, ctx, params.report_payload_size)


@dataclass(frozen=True)
class Submission:
    """The outer envelope a client sends to the shuffler (Prochlo's nested encryption).

    ``sealed`` is ``HPKE_shuffler(credential || submission_id || inner)``, bound to the round,
    the group and the parameter hash.  The shuffler opens it, admits the sender, and forwards
    only ``inner`` (in a signed batch): no byte string crosses the shuffler unchanged.
    """

    round_id: bytes
    group_id: int
    sealed: bytes

    def __post_init__(self) -> None:
        check_round_id(self.round_id)
        check_group_id(self.group_id)

    @classmethod
    def seal(
        cls, params: RoundParams, group_id: int, credential: bytes, submission_id: bytes, inner: bytes
    ) -> Submission:
        """Wrap an inner envelope for the shuffler."""
        if len(credential) != CREDENTIAL_SIZE or len(submission_id) != SUBMISSION_ID_SIZE:
            raise MessageFormatError(
                "field", f"credential and submission id must be {CREDENTIAL_SIZE} and {SUBMISSION_ID_SIZE} bytes"
            )
        if len(inner) != params.inner_size:
            raise MessageFormatError("length", f"inner envelope is {len(inner)} bytes, expected {params.inner_size}")
        ctx = submission_context(params.round_id, group_id, params.digest)
        sealed = seal(params.shuffler_kem_key, credential + submission_id + inner, ctx, params.submission_payload_size)
        return cls(params.round_id, group_id, sealed)

    def open(self, params: RoundParams, shuffler_key: KemKeyPair) -> tuple[bytes, bytes, bytes]:
        """``(credential, submission_id, inner)``; ``CryptoError`` for another key, round, group or view."""
        ctx = submission_context(self.round_id, self.group_id, params.digest)
        plain = unseal(shuffler_key, self.sealed, ctx, params.submission_payload_size)
        if len(plain) != params.submission_payload_size:
            raise MessageFormatError("length", f"submission plaintext is {len(plain)} bytes")
        a, b = CREDENTIAL_SIZE, CREDENTIAL_SIZE + SUBMISSION_ID_SIZE
        return plain[:a], plain[a:b], plain[b:]

    def to_bytes(self) -> bytes:
        return header(MessageType.SUBMISSION) + self.round_id + self.group_id.to_bytes(2, "big") + self.sealed

    @classmethod
    def from_bytes(cls, data: bytes, params: RoundParams | None = None) -> Submission:
        """Parse; with ``params``, also require this round, a known group and the round's exact length."""
        r = Reader(data, MessageType.SUBMISSION)
        round_id = r.take(ROUND_ID_SIZE, "round_id")
        group_id = r.uint(2, "group_id")
        sealed = r.data[r.pos :]
        if params is not None:
            if round_id != params.round_id:
                raise MessageFormatError(
                    "round", f"submission is for round {round_id.hex()}, not {params.round_id.hex()}"
                )
            params.group(group_id)
            if len(r.data) != params.envelope_size:
                raise MessageFormatError(
                    "length", f"submission is {len(r.data)} bytes; this round's submissions are {params.envelope_size}"
                )
        return cls(round_id, group_id, sealed)


# ---------------------------------------------------------------- posts (Remark 3)

_POST_CONTEXT = "pic/post"
#: Bytes of a post's random id (inside the encryption): a recipient accepts each id once.
POST_ID_SIZE = 16


@dataclass(frozen=True)
class Post:
    """A post of Remark 3 from A to B, sign-inside-encrypt: ``(pk_B, HPKE_B(id || p || Sign_A(...)))``.

    The board sees only the round, the recipient's pseudonym and a fixed-size ciphertext: the
    sender is hidden from the board operator and from anyone holding the board's pseudonyms
    (no trial verification is possible: the signature is encrypted).  The HPKE ``info`` binds
    the round, the parameter hash and both pseudonyms, and the signature (context "pic/post")
    covers them with the post id and the message, so a partner can neither strip and re-sign
    the ciphertext (it opens only under the true sender's pseudonym) nor redirect it.  B finds
    the sender by trying its few partners; the random post id lets B refuse a replay.
    """

    round_id: bytes
    recipient: bytes
    sealed: bytes

    def __post_init__(self) -> None:
        check_round_id(self.round_id)
        check_int(len(self.recipient), "recipient pseudonym length", 1, 2**16 - 1)

    @staticmethod
    def payload_size(params: RoundParams) -> int:
        return POST_ID_SIZE + 2 + params.post_payload_size + SIGNATURE_SIZE

    @staticmethod
    def _signed(params: RoundParams, sender: bytes, recipient: bytes, post_id: bytes, message: bytes) -> bytes:
        return params.digest + sized(sender, 2) + sized(recipient, 2) + post_id + sized(message, 2)

    @classmethod
    def create(cls, params: RoundParams, sender: OneTimeKeys, recipient: Pseudonym, message: bytes) -> Post:
        """Sign ``message`` (at most ``params.post_payload_size`` bytes) with A's key, then encrypt all to B."""
        if len(message) > params.post_payload_size:
            raise MessageFormatError(
                "length", f"post message is {len(message)} bytes; this round allows {params.post_payload_size}"
            )
        me, you = sender.pseudonym.to_bytes(), recipient.to_bytes()
        post_id = secrets.token_bytes(POST_ID_SIZE)
        signature = sender.signing.sign(cls._signed(params, me, you, post_id, message), context=_POST_CONTEXT)
        plain = post_id + sized(message, 2) + bytes(params.post_payload_size - len(message)) + signature
        ctx = post_context(params.round_id, me, you, params.digest)
        return cls(params.round_id, you, seal(recipient.kem_key, plain, ctx, cls.payload_size(params)))

    def to_bytes(self) -> bytes:
        return header(MessageType.POST) + self.round_id + sized(self.recipient, 2) + sized(self.sealed, 4)

    @classmethod
    def from_bytes(cls, data: bytes) -> Post:
        r = Reader(data, MessageType.POST)
        post = cls(r.take(ROUND_ID_SIZE, "round_id"), r.sized(2, "recipient"), r.sized(4, "sealed"))
        r.done()
        return post

    def open(
        self, params: RoundParams, recipient: OneTimeKeys, senders: Iterable[Pseudonym]
    ) -> tuple[Pseudonym, bytes, bytes]:
        """Decrypt under each expected sender in turn, verify its signature: ``(sender, post id, p)``.

        Raises ``CryptoError`` if no expected sender sent it.
        """
        if self.round_id != params.round_id:
            raise MessageFormatError("round", f"post is for round {self.round_id.hex()}, not {params.round_id.hex()}")
        you = recipient.pseudonym.to_bytes()
        if self.recipient != you:
            raise MessageFormatError("pseudonym", "post is addressed to another pseudonym")
        for sender in senders:
            me = sender.to_bytes()
            try:
                plain = unseal(recipient.kem, self.sealed, post_context(params.round_id, me, you, params.digest),
                               self.payload_size(params))  # fmt: skip
            except CryptoError:
                continue
            post_id, n = plain[:POST_ID_SIZE], int.from_bytes(plain[POST_ID_SIZE : POST_ID_SIZE + 2], "big")
            if n > params.post_payload_size:
                raise MessageFormatError("length", f"post announces a {n}-byte message")
            message = plain[POST_ID_SIZE + 2 : POST_ID_SIZE + 2 + n]
            sender.verify_key.verify(plain[-SIGNATURE_SIZE:], self._signed(params, me, you, post_id, message),
                                     context=_POST_CONTEXT)  # fmt: skip
            return sender, post_id, message
        raise CryptoError("post does not open under any expected sender's pseudonym")
