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
version    1     `VERSION` (1)
type       1     `MessageType`
=========  ====  ===========================================================

Report plaintext (step 2; inside the envelope, so no header: HPKE ``info`` binds
protocol, version, round and group)

=========  ======================  =====================================================
field      size                    meaning
=========  ======================  =====================================================
pseudonym  suite public key + 32   one-time KEM public key (outputs) || Ed25519 key (posts)
report     ``ReportFormat.size``   x' = R_i(x): float64 / int64 little-endian, or packed bits
=========  ======================  =====================================================

Envelope (client -> shuffler -> server, step 2-3), type 1; fixed length per round

=========  =================================  ==========================================
field      size                               meaning
=========  =================================  ==========================================
header     5
round_id   16
group_id   2                                  the sender's group G_i
sealed     ``sealed_size(suite, report size)``  HPKE enc || ct of the padded report plaintext
=========  =================================  ==========================================

With the x25519 suite and 2-D float64 reports: 5 + 16 + 2 + 32 + (64 + 16 + 1) + 16 = 152 bytes.

Board entry, board head and board slice (steps 5-6): see `.bulletin`.

Signed round parameters (step 1), type 2

=========  ====  ==============================================================
header     5
body_len   4     length of body
body       n     canonical JSON of `RoundParams` (sorted keys, no spaces, ASCII)
signature  64    Ed25519 by the server over header || body_len || body, context "pic/round-params"
=========  ====  ==============================================================

Post (Remark 3: A -> B through a public board), type 6

==============  ====  ==========================================================
header          5
round_id        16
recipient_len   2
recipient       p     B's pseudonym (the address)
sealed_len      4
sealed          s     c = HPKE to B's KEM key of the padded message p, purpose "post"
signature       64    Sign_sk_A over all preceding bytes (so over c), context "pic/post"
==============  ====  ==========================================================
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
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
    "PROTOCOL",
    "VERSION",
    "DecodedReports",
    "Envelope",
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
    "output_context",
    "post_context",
    "report_context",
]

# ---------------------------------------------------------------- HPKE contexts


@lru_cache(maxsize=4096)
def report_context(round_id: bytes, group_id: int) -> HpkeContext:
    """Context of a report envelope: binds it to its round and group (replays elsewhere fail)."""
    return HpkeContext(PROTOCOL, VERSION, "report", round_id, group_id)


@lru_cache(maxsize=4096)
def output_context(round_id: bytes, group_id: int) -> HpkeContext:
    """Context of an output y sealed to a pseudonym on the board."""
    return HpkeContext(PROTOCOL, VERSION, "output", round_id, group_id)


@lru_cache(maxsize=4096)
def post_context(round_id: bytes) -> HpkeContext:
    """Context of a post message p (Remark 3); posts may cross groups, so no group is bound."""
    return HpkeContext(PROTOCOL, VERSION, "post", round_id, None)


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


@dataclass(frozen=True)
class RoundParams:
    """Global parameters of one PIC round, published and signed by the server (step 1).

    ``report_payload_size`` defaults to the largest report plaintext of any group, so every
    envelope of the round has one length (metric-privacy-shuffler §8).
    """

    round_id: bytes
    suite: str
    server_kem_key: KemPublicKey
    server_verify_key: VerifyKey
    groups: tuple[GroupParams, ...]
    output_payload_size: int
    post_payload_size: int
    report_payload_size: int | None = None

    def __post_init__(self) -> None:
        check_round_id(self.round_id)
        try:
            suite = get_suite(self.suite)
        except CryptoError as exc:
            raise MessageFormatError("field", str(exc)) from None
        object.__setattr__(self, "suite", suite.name)
        if not isinstance(self.server_kem_key, KemPublicKey) or self.server_kem_key.suite is not suite:
            raise MessageFormatError("field", f"server_kem_key must be a KemPublicKey of suite {self.suite!r}")
        if not isinstance(self.server_verify_key, VerifyKey):
            raise MessageFormatError("field", "server_verify_key must be a VerifyKey")
        groups = tuple(self.groups)
        if not groups or not all(isinstance(g, GroupParams) for g in groups):
            raise MessageFormatError("field", "groups must be a non-empty sequence of GroupParams")
        ids = [g.group_id for g in groups]
        if len(set(ids)) != len(ids):
            raise MessageFormatError("field", f"group ids must be distinct, got {ids}")
        object.__setattr__(self, "groups", tuple(sorted(groups, key=lambda g: g.group_id)))
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
    def envelope_size(self) -> int:
        """Length of every envelope of this round."""
        return _ENVELOPE_PREFIX + sealed_size(self.suite, self.report_payload_size)

    def canonical_bytes(self) -> bytes:
        """The canonical JSON body that the server signs."""
        return canonical_json(
            {
                "groups": [g.to_json() for g in self.groups],
                "output_payload_size": self.output_payload_size,
                "post_payload_size": self.post_payload_size,
                "protocol": PROTOCOL,
                "report_payload_size": self.report_payload_size,
                "round_id": self.round_id.hex(),
                "server_kem_key": self.server_kem_key.to_bytes().hex(),
                "server_verify_key": self.server_verify_key.to_bytes().hex(),
                "suite": self.suite,
                "version": VERSION,
            }
        )

    @classmethod
    def from_canonical_bytes(cls, body: bytes) -> RoundParams:
        """Parse a body; it must be exactly the canonical encoding of the parameters it holds."""
        try:
            obj = json.loads(body.decode("ascii"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise MessageFormatError("field", f"round parameters are not ASCII JSON: {exc}") from None
        keys = ("groups", "output_payload_size", "post_payload_size", "protocol", "report_payload_size", "round_id",
                "server_kem_key", "server_verify_key", "suite", "version")  # fmt: skip
        _check_keys(obj, keys, "round parameters")
        if obj["protocol"] != PROTOCOL or obj["version"] != VERSION:
            raise MessageFormatError(
                "version",
                f"round parameters are for {obj['protocol']!r} version {obj['version']!r}; "
                f"this build speaks {PROTOCOL!r} version {VERSION}",
            )
        if not isinstance(obj["groups"], list):
            raise MessageFormatError("field", "round parameters groups must be a list")
        try:
            params = cls(
                round_id=bytes.fromhex(obj["round_id"]),
                suite=obj["suite"],
                server_kem_key=KemPublicKey.from_bytes(obj["suite"], bytes.fromhex(obj["server_kem_key"])),
                server_verify_key=VerifyKey.from_bytes(bytes.fromhex(obj["server_verify_key"])),
                groups=tuple(GroupParams.from_json(g) for g in obj["groups"]),
                output_payload_size=obj["output_payload_size"],
                post_payload_size=obj["post_payload_size"],
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
    def from_bytes(cls, data: bytes, *, server_key: VerifyKey) -> SignedRoundParams:
        """Parse, check the signature with the server key the client trusts, and that the body announces that key."""
        r = Reader(data, MessageType.ROUND_PARAMS)
        body = r.sized(4, "body")
        signature = r.take(SIGNATURE_SIZE, "signature")
        r.done()
        server_key.verify(signature, cls._signed_part(body), context=_ROUND_PARAMS_CONTEXT)
        params = RoundParams.from_canonical_bytes(body)
        if params.server_verify_key != server_key:
            raise CryptoError("round parameters announce a server_verify_key other than the trusted server key")
        return cls(params, signature)


# ---------------------------------------------------------------- envelopes (steps 2-3)

_ENVELOPE_PREFIX = HEADER_SIZE + ROUND_ID_SIZE + 2


@dataclass(frozen=True)
class Envelope:
    """``HPKE_server(pseudonym || x')`` addressed to a (round, group), as the shuffler sees it."""

    round_id: bytes
    group_id: int
    sealed: bytes

    def __post_init__(self) -> None:
        check_round_id(self.round_id)
        check_group_id(self.group_id)

    @classmethod
    def seal(cls, params: RoundParams, group_id: int, plaintext: bytes) -> Envelope:
        """Pad and encrypt a report plaintext to the server under this round and group."""
        params.group(group_id)
        sealed = seal(
            params.server_kem_key, plaintext, report_context(params.round_id, group_id), params.report_payload_size
        )
        return cls(params.round_id, group_id, sealed)

    def open(self, params: RoundParams, server_key: KemKeyPair) -> bytes:
        """Decrypt with the server's key; raises ``CryptoError`` if it fails."""
        return unseal(server_key, self.sealed, report_context(self.round_id, self.group_id), params.report_payload_size)

    def to_bytes(self) -> bytes:
        return header(MessageType.ENVELOPE) + self.round_id + self.group_id.to_bytes(2, "big") + self.sealed

    @classmethod
    def from_bytes(cls, data: bytes, params: RoundParams | None = None) -> Envelope:
        """Parse; with ``params``, also require this round, a known group and the round's exact length."""
        r = Reader(data, MessageType.ENVELOPE)
        round_id = r.take(ROUND_ID_SIZE, "round_id")
        group_id = r.uint(2, "group_id")
        sealed = r.data[r.pos :]
        if params is not None:
            if round_id != params.round_id:
                raise MessageFormatError(
                    "round", f"envelope is for round {round_id.hex()}, not {params.round_id.hex()}"
                )
            params.group(group_id)
            if len(r.data) != params.envelope_size:
                raise MessageFormatError(
                    "length", f"envelope is {len(r.data)} bytes; this round's envelopes are {params.envelope_size}"
                )
        return cls(round_id, group_id, sealed)


# ---------------------------------------------------------------- posts (Remark 3)

_POST_CONTEXT = "pic/post"


@dataclass(frozen=True)
class Post:
    """``(pk_B, c = Enc_pk_B(p), Sign_sk_A(c))`` of Remark 3.

    The signature covers the header, round id, recipient and c, so a post cannot be
    replayed to another round or recipient.  The sender is not named: B tries the
    signature against the matched pseudonyms in its own output (as in Remark 3).
    As in the paper the signature is outside the encryption, so anyone holding the
    board's pseudonyms can find A by trial verification: a post reveals publicly that
    pseudonyms A and B were matched (the server knows this already; no report is revealed).
    """

    round_id: bytes
    recipient: bytes
    sealed: bytes
    signature: bytes

    def __post_init__(self) -> None:
        check_round_id(self.round_id)
        check_int(len(self.recipient), "recipient pseudonym length", 1, 2**16 - 1)

    @classmethod
    def create(cls, params: RoundParams, sender: OneTimeKeys, recipient: Pseudonym, message: bytes) -> Post:
        """Encrypt ``message`` (at most ``params.post_payload_size`` bytes) to B and sign it with A's key."""
        sealed = seal(recipient.kem_key, message, post_context(params.round_id), params.post_payload_size)
        post = cls(params.round_id, recipient.to_bytes(), sealed, b"")
        return replace(post, signature=sender.signing.sign(post._signed_part(), context=_POST_CONTEXT))

    def _signed_part(self) -> bytes:
        return header(MessageType.POST) + self.round_id + sized(self.recipient, 2) + sized(self.sealed, 4)

    def to_bytes(self) -> bytes:
        return self._signed_part() + self.signature

    @classmethod
    def from_bytes(cls, data: bytes) -> Post:
        r = Reader(data, MessageType.POST)
        post = cls(
            r.take(ROUND_ID_SIZE, "round_id"),
            r.sized(2, "recipient"),
            r.sized(4, "sealed"),
            r.take(SIGNATURE_SIZE, "signature"),
        )
        r.done()
        return post

    def sender_among(self, candidates: Iterable[Pseudonym]) -> Pseudonym:
        """The candidate whose key signed this post; ``CryptoError`` if none did."""
        signed = self._signed_part()
        for candidate in candidates:
            try:
                candidate.verify_key.verify(self.signature, signed, context=_POST_CONTEXT)
            except CryptoError:
                continue
            return candidate
        raise CryptoError("post signature does not verify under any expected sender's key")

    def open(
        self, params: RoundParams, recipient: OneTimeKeys, senders: Iterable[Pseudonym]
    ) -> tuple[Pseudonym, bytes]:
        """Verify the signature against the expected senders, then decrypt: ``(sender, p)``."""
        if self.round_id != params.round_id:
            raise MessageFormatError("round", f"post is for round {self.round_id.hex()}, not {params.round_id.hex()}")
        if self.recipient != recipient.pseudonym.to_bytes():
            raise MessageFormatError("pseudonym", "post is addressed to another pseudonym")
        sender = self.sender_among(senders)
        return sender, unseal(recipient.kem, self.sealed, post_context(self.round_id), params.post_payload_size)
