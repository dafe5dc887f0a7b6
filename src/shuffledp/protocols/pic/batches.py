"""The shuffler's signed messages: the batch it releases to the server, and its view announcement.

Both are signed with the shuffler's Ed25519 key, named (``shuffler_verify_key``) in the
server-signed round parameters, so the shuffler -> server link is authenticated end to end
whatever carries the bytes (DAP: authenticated server-to-server links).

Signed batch (shuffler -> server, step 3), type 7

============  =====  ===========================================================
header        5
round_id      16
group_id      2
params_hash   32     `RoundParams.digest` of the view the shuffler admitted under
batch_id      16     random; the server accepts each batch id once
count         4      inner envelopes that follow (distinct admitted users)
inner_size    4      bytes of each inner envelope (`RoundParams.inner_size`)
digest        32     SHA-256("pic/batch" || the inner envelopes, in the shuffled order)
signature     64     Ed25519 by the shuffler over the 111 bytes above, context "pic/batch"
envelopes     count * inner_size
============  =====  ===========================================================

View announcement (shuffler -> board -> clients), type 8: the parameter hash the shuffler
holds for a round; clients refuse to submit under any other (OHTTP: one key configuration
for everyone, a second one splits the anonymity set).

============  =====  ===========================================================
header        5
round_id      16
params_hash   32
signature     64     Ed25519 by the shuffler over the 53 bytes above, context "pic/view"
============  =====  ===========================================================
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from shuffledp.crypto import SIGNATURE_SIZE, SigningKeyPair, VerifyKey
from shuffledp.errors import CryptoError, MessageFormatError
from shuffledp.protocols.pic._wire import ROUND_ID_SIZE, MessageType, Reader, check_group_id, check_round_id, header

__all__ = ["SignedBatch", "ViewAnnouncement", "batch_digest"]

BATCH_ID_SIZE = 16
HASH_SIZE = 32
_BATCH_CONTEXT = "pic/batch"
_VIEW_CONTEXT = "pic/view"
_BATCH_PREFIX = 5 + ROUND_ID_SIZE + 2 + HASH_SIZE + BATCH_ID_SIZE + 4 + 4 + HASH_SIZE


def batch_digest(envelopes: Sequence[bytes]) -> bytes:
    """SHA-256 over the ordered inner envelopes (fixed size each, so unambiguous)."""
    h = hashlib.sha256(b"pic/batch")
    for e in envelopes:
        h.update(e)
    return h.digest()


@dataclass(frozen=True)
class SignedBatch:
    """One group's shuffled inner envelopes, as the shuffler released and signed them."""

    round_id: bytes
    group_id: int
    params_hash: bytes
    batch_id: bytes
    envelopes: tuple[bytes, ...]
    inner_size: int
    digest: bytes
    count: int
    signature: bytes

    @classmethod
    def sign(
        cls, round_id: bytes, group_id: int, params_hash: bytes, envelopes: Sequence[bytes], inner_size: int,
        key: SigningKeyPair,
    ) -> SignedBatch:  # fmt: skip
        """Sign a batch under a fresh random batch id."""
        check_round_id(round_id)
        check_group_id(group_id)
        envelopes = tuple(bytes(e) for e in envelopes)
        if any(len(e) != inner_size for e in envelopes):
            raise MessageFormatError("length", f"every inner envelope of a batch must be {inner_size} bytes")
        batch = cls(round_id, group_id, params_hash, secrets.token_bytes(BATCH_ID_SIZE), envelopes, inner_size,
                    batch_digest(envelopes), len(envelopes), b"")  # fmt: skip
        return cls(**{**batch.__dict__, "signature": key.sign(batch._signed_part(), context=_BATCH_CONTEXT)})

    def _signed_part(self) -> bytes:
        return (
            header(MessageType.BATCH) + self.round_id + self.group_id.to_bytes(2, "big") + self.params_hash
            + self.batch_id + self.count.to_bytes(4, "big") + self.inner_size.to_bytes(4, "big") + self.digest
        )  # fmt: skip

    def to_bytes(self) -> bytes:
        return self._signed_part() + self.signature + b"".join(self.envelopes)

    @classmethod
    def from_bytes(cls, data: bytes) -> SignedBatch:
        """Parse (structure only; `verify` checks the signature, count and digest)."""
        r = Reader(data, MessageType.BATCH)
        round_id = r.take(ROUND_ID_SIZE, "round_id")
        group_id = r.uint(2, "group_id")
        params_hash = r.take(HASH_SIZE, "params_hash")
        batch_id = r.take(BATCH_ID_SIZE, "batch_id")
        count = r.uint(4, "count")
        inner_size = r.uint(4, "inner_size")
        digest = r.take(HASH_SIZE, "digest")
        signature = r.take(SIGNATURE_SIZE, "signature")
        rest = r.data[r.pos :]
        if inner_size == 0 or len(rest) % inner_size:
            raise MessageFormatError(
                "length", f"batch body of {len(rest)} bytes is not a whole number of {inner_size}-byte envelopes"
            )
        envelopes = tuple(rest[i : i + inner_size] for i in range(0, len(rest), inner_size))
        return cls(round_id, group_id, params_hash, batch_id, envelopes, inner_size, digest, count, signature)

    def verify(self, shuffler_key: VerifyKey) -> None:
        """Raise `MessageFormatError` ("signature", "count" or "digest") unless the shuffler signed exactly these envelopes."""
        try:
            shuffler_key.verify(self.signature, self._signed_part(), context=_BATCH_CONTEXT)
        except CryptoError:
            raise MessageFormatError("signature", "batch is not signed by the round's shuffler") from None
        if len(self.envelopes) != self.count:
            raise MessageFormatError("count", f"batch signs {self.count} envelopes but carries {len(self.envelopes)}")
        if batch_digest(self.envelopes) != self.digest:
            raise MessageFormatError("digest", "batch envelopes do not match the signed digest")


@dataclass(frozen=True)
class ViewAnnouncement:
    """The shuffler's signed statement "round r runs under parameter hash h" (one view for everyone)."""

    round_id: bytes
    params_hash: bytes
    signature: bytes

    @classmethod
    def sign(cls, round_id: bytes, params_hash: bytes, key: SigningKeyPair) -> ViewAnnouncement:
        check_round_id(round_id)
        body = header(MessageType.VIEW) + round_id + params_hash
        return cls(round_id, params_hash, key.sign(body, context=_VIEW_CONTEXT))

    def to_bytes(self) -> bytes:
        return header(MessageType.VIEW) + self.round_id + self.params_hash + self.signature

    @classmethod
    def from_bytes(cls, data: bytes, *, shuffler_key: VerifyKey) -> ViewAnnouncement:
        """Parse and verify under the shuffler key the caller trusts."""
        r = Reader(data, MessageType.VIEW)
        view = cls(
            r.take(ROUND_ID_SIZE, "round_id"), r.take(HASH_SIZE, "params_hash"), r.take(SIGNATURE_SIZE, "signature")
        )
        r.done()
        shuffler_key.verify(view.signature, r.data[:-SIGNATURE_SIZE], context=_VIEW_CONTEXT)
        return view
