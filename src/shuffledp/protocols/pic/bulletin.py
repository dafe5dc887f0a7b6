"""The bulletin board of PIC (pic-usenix25 §5.1 steps 5-6, Remark 2): signed, bucketed, append-only.

The server publishes one board per round: an entry ``(pk, Enc_pk(y))`` per valid
report and a signed head.  Entries are content-addressed (id = SHA-256 of the
entry's bytes) and bucketed by the first ``b`` bits of SHA-256(pseudonym); the
head signs each bucket's entry count and digest, so a user may download only its
own bucket and still verify it (Remark 2's retrieval: the server and the board
learn only the bucket, whose size is the user's retrieval anonymity set; b = 0 is
the full download of the paper).  Posts of Remark 3 are appended to the same board.

Wire layouts (integers big-endian; header as in `.messages`):

Board entry (step 5), type 3; its id is SHA-256 of its bytes

==============  ====  =====================================================
header          5
round_id        16
group_id        2
pseudonym_len   2
pseudonym       p     the recipient's pseudonym pk_{i, pi_i(j)}
sealed_len      4
sealed          s     HPKE to the pseudonym's KEM key of the padded output y, purpose "output"
==============  ====  =====================================================

Board head (step 5, signed; bucketed retrieval of Remark 2), type 4

==============  ========  ===========================================================
header          5
round_id        16
bucket_bits     1         b in [0, 16]: entries are bucketed by the first b bits of SHA-256(pseudonym)
entry_count     4
buckets         36 * 2^b  per bucket: count (4) || SHA-256("pic/bucket" || sorted entry ids) (32)
signature       64        Ed25519 by the server over all preceding bytes, context "pic/board"
==============  ========  ===========================================================

Board slice (a download: the whole board or one bucket), type 5

==============  ====  ===============================================================
header          5
head_len        4
head            h     the signed board head
bucket          4     the bucket, or 0xFFFFFFFF for the whole board
entry_count     4
entries         ...   entry_count times: entry_len (4) || board entry
==============  ====  ===============================================================
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from shuffledp.crypto import SIGNATURE_SIZE, SigningKeyPair, VerifyKey, seal, unseal
from shuffledp.errors import MessageFormatError, ShapeError
from shuffledp.protocols.pic._wire import (
    ROUND_ID_SIZE,
    MessageType,
    Reader,
    check_group_id,
    check_int,
    check_round_id,
    header,
    sized,
)
from shuffledp.protocols.pic.messages import MAX_BUCKET_BITS, OneTimeKeys, Post, Pseudonym, RoundParams, output_context

__all__ = ["BoardEntry", "BoardHead", "BoardSlice", "BulletinBoard", "bucket_digest", "bucket_of", "choose_bucket_bits"]

WHOLE_BOARD = 0xFFFFFFFF


@dataclass(frozen=True)
class BoardEntry:
    """``(pk, Enc_pk(y))`` of step 5: a pseudonym and its sealed output."""

    round_id: bytes
    group_id: int
    pseudonym: bytes
    sealed: bytes

    def __post_init__(self) -> None:
        check_round_id(self.round_id)
        check_group_id(self.group_id)
        check_int(len(self.pseudonym), "pseudonym length", 1, 2**16 - 1)

    @classmethod
    def seal(cls, params: RoundParams, group_id: int, pseudonym: Pseudonym, output: bytes) -> BoardEntry:
        """Pad and encrypt output y to the pseudonym's KEM key."""
        ctx = output_context(params.round_id, group_id, params.digest)
        sealed = seal(pseudonym.kem_key, output, ctx, params.output_payload_size)
        return cls(params.round_id, group_id, pseudonym.to_bytes(), sealed)

    def open(self, params: RoundParams, keys: OneTimeKeys) -> bytes:
        """Decrypt the output with the user's one-time key, under the round the user took part in."""
        if self.round_id != params.round_id:
            raise MessageFormatError(
                "round", f"board entry is for round {self.round_id.hex()}, not {params.round_id.hex()}"
            )
        ctx = output_context(params.round_id, self.group_id, params.digest)
        return unseal(keys.kem, self.sealed, ctx, params.output_payload_size)

    def to_bytes(self) -> bytes:
        return (
            header(MessageType.BOARD_ENTRY)
            + self.round_id
            + self.group_id.to_bytes(2, "big")
            + sized(self.pseudonym, 2)
            + sized(self.sealed, 4)
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> BoardEntry:
        r = Reader(data, MessageType.BOARD_ENTRY)
        entry = cls(
            r.take(ROUND_ID_SIZE, "round_id"), r.uint(2, "group_id"), r.sized(2, "pseudonym"), r.sized(4, "sealed")
        )
        r.done()
        return entry

    @cached_property
    def entry_id(self) -> bytes:
        """Content address: SHA-256 of the entry's bytes."""
        return hashlib.sha256(self.to_bytes()).digest()


def bucket_of(pseudonym: bytes, bucket_bits: int) -> int:
    """The board bucket of a pseudonym: the first ``bucket_bits`` bits of SHA-256(pseudonym)."""
    check_int(bucket_bits, "bucket_bits", 0, MAX_BUCKET_BITS)
    return int.from_bytes(hashlib.sha256(pseudonym).digest()[:4], "big") >> (32 - bucket_bits)


def choose_bucket_bits(
    pseudonyms: Sequence[bytes], max_bits: int, min_size: int, groups: Sequence[int] | None = None
) -> int:
    """The largest b <= ``max_bits`` for which every group's share of every bucket is empty or holds at least
    ``min_size`` entries (0 if none).

    A user who downloads only its bucket hides among its own group's entries of that bucket
    (Remark 2; the other group's outputs do not hide its report), so the board never uses more
    bits than its signed minimum bucket size allows for every group; b = 0 (the whole board) is
    always allowed.  ``groups`` gives each pseudonym's group (default: one group).

    Examples
    --------
    >>> keys = [bytes([i]) * 32 for i in range(40)]
    >>> choose_bucket_bits(keys, 4, 5) >= choose_bucket_bits(keys, 4, 5, groups=[i % 2 for i in range(40)])
    True
    """
    check_int(max_bits, "bucket_bits", 0, MAX_BUCKET_BITS)
    if not pseudonyms:
        return 0
    top = np.array([bucket_of(p, max_bits) for p in pseudonyms], dtype=np.int64)
    group = np.zeros(top.size, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    if group.shape != top.shape:
        raise ShapeError(f"groups must give one group per pseudonym ({top.size}), got {group.size}")
    for b in range(max_bits, 0, -1):
        cells = (group - group.min()) * (1 << b) + (top >> (max_bits - b))  # (group, bucket) pairs
        counts = np.bincount(cells)
        if counts[counts > 0].min() >= min_size:
            return b
    return 0


def bucket_digest(entry_ids: Iterable[bytes]) -> bytes:
    """SHA-256 over a bucket's entry ids in sorted order (fixed 32-byte ids: unambiguous)."""
    return hashlib.sha256(b"pic/bucket" + b"".join(sorted(entry_ids))).digest()


_BOARD_CONTEXT = "pic/board"


@dataclass(frozen=True)
class BoardHead:
    """The server's signed summary of a board: per bucket, the entry count and digest."""

    round_id: bytes
    bucket_bits: int
    counts: tuple[int, ...]
    digests: tuple[bytes, ...]
    signature: bytes

    def __post_init__(self) -> None:
        check_round_id(self.round_id)
        n = 1 << check_int(self.bucket_bits, "bucket_bits", 0, MAX_BUCKET_BITS)
        if len(self.counts) != n or len(self.digests) != n:
            raise MessageFormatError(
                "field", f"a board head with bucket_bits {self.bucket_bits} needs {n} bucket counts and digests"
            )

    @property
    def entry_count(self) -> int:
        return sum(self.counts)

    @classmethod
    def sign(cls, round_id: bytes, entries: Sequence[BoardEntry], bucket_bits: int, key: SigningKeyPair) -> BoardHead:
        """Bucket the entries, digest each bucket and sign the head."""
        check_round_id(round_id)
        n_buckets = 1 << check_int(bucket_bits, "bucket_bits", 0, MAX_BUCKET_BITS)
        ids: list[list[bytes]] = [[] for _ in range(n_buckets)]
        if len({e.pseudonym for e in entries}) != len(entries):
            raise MessageFormatError("pseudonym", "a board holds at most one entry per pseudonym")
        for entry in entries:
            if entry.round_id != round_id:
                raise MessageFormatError(
                    "round", f"board entry for round {entry.round_id.hex()} on the board of {round_id.hex()}"
                )
            ids[bucket_of(entry.pseudonym, bucket_bits)].append(entry.entry_id)
        counts = tuple(len(b) for b in ids)
        digests = tuple(bucket_digest(b) for b in ids)
        head = cls(round_id, bucket_bits, counts, digests, b"")
        return replace(head, signature=key.sign(head._signed_part(), context=_BOARD_CONTEXT))

    def _signed_part(self) -> bytes:
        buckets = b"".join(c.to_bytes(4, "big") + d for c, d in zip(self.counts, self.digests, strict=True))
        return (
            header(MessageType.BOARD_HEAD)
            + self.round_id
            + bytes([self.bucket_bits])
            + self.entry_count.to_bytes(4, "big")
            + buckets
        )

    def to_bytes(self) -> bytes:
        return self._signed_part() + self.signature

    def verify(self, server_key: VerifyKey) -> None:
        """Raise ``CryptoError`` unless the server signed this head."""
        server_key.verify(self.signature, self._signed_part(), context=_BOARD_CONTEXT)

    @classmethod
    def from_bytes(cls, data: bytes) -> BoardHead:
        """Parse (structure only; call `verify` with the trusted server key)."""
        r = Reader(data, MessageType.BOARD_HEAD)
        round_id = r.take(ROUND_ID_SIZE, "round_id")
        bits = r.uint(1, "bucket_bits")
        if bits > MAX_BUCKET_BITS:
            raise MessageFormatError("field", f"board head bucket_bits is {bits}; at most {MAX_BUCKET_BITS} allowed")
        total = r.uint(4, "entry_count")
        counts, digests = [], []
        for _ in range(1 << bits):
            counts.append(r.uint(4, "bucket count"))
            digests.append(r.take(32, "bucket digest"))
        signature = r.take(SIGNATURE_SIZE, "signature")
        r.done()
        if sum(counts) != total:
            raise MessageFormatError(
                "field", f"board head entry_count {total} differs from the bucket counts' sum {sum(counts)}"
            )
        return cls(round_id, bits, tuple(counts), tuple(digests), signature)


@dataclass(frozen=True)
class BoardSlice:
    """A download from the board: the signed head and the entries of one bucket (or all)."""

    head: BoardHead
    bucket: int | None  # None: the whole board
    entries: tuple[BoardEntry, ...]

    def to_bytes(self) -> bytes:
        bucket = WHOLE_BOARD if self.bucket is None else self.bucket
        return (
            header(MessageType.BOARD_SLICE)
            + sized(self.head.to_bytes(), 4)
            + bucket.to_bytes(4, "big")
            + len(self.entries).to_bytes(4, "big")
            + b"".join(sized(e.to_bytes(), 4) for e in self.entries)
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> BoardSlice:
        """Parse (structure only; call `verify`)."""
        r = Reader(data, MessageType.BOARD_SLICE)
        head = BoardHead.from_bytes(r.sized(4, "head"))
        bucket = r.uint(4, "bucket")
        count = r.uint(4, "entry_count")
        if count > len(r.data):  # every entry takes more than one byte: refuse absurd counts early
            raise MessageFormatError("length", f"board slice claims {count} entries in {len(r.data)} bytes")
        entries = tuple(BoardEntry.from_bytes(r.sized(4, "entry")) for _ in range(count))
        r.done()
        return cls(head, None if bucket == WHOLE_BOARD else bucket, entries)

    def verify(self, server_key: VerifyKey) -> tuple[BoardEntry, ...]:
        """Check the head's signature and that the entries are exactly the signed ones; return them.

        Raises ``CryptoError`` for a bad signature and ``MessageFormatError`` (reason "digest")
        if an entry was added, dropped or altered.
        """
        self.head.verify(server_key)
        bits = self.head.bucket_bits
        wanted = range(1 << bits) if self.bucket is None else [self.bucket]
        if self.bucket is not None and not 0 <= self.bucket < (1 << bits):
            raise MessageFormatError(
                "field", f"bucket {self.bucket} does not exist on a board with {1 << bits} buckets"
            )
        ids: dict[int, list[bytes]] = {b: [] for b in wanted}
        for entry in self.entries:
            if entry.round_id != self.head.round_id:
                raise MessageFormatError(
                    "round", f"board entry for round {entry.round_id.hex()} in a slice of {self.head.round_id.hex()}"
                )
            b = bucket_of(entry.pseudonym, bits)
            if b not in ids:
                raise MessageFormatError("digest", f"board slice of bucket {self.bucket} holds an entry of bucket {b}")
            ids[b].append(entry.entry_id)
        for b, found in ids.items():
            if len(found) != self.head.counts[b] or bucket_digest(found) != self.head.digests[b]:
                raise MessageFormatError("digest", f"entries of bucket {b} do not match the signed board head")
        return self.entries

    def find(self, pseudonym: Pseudonym) -> BoardEntry:
        """The entry addressed to ``pseudonym`` (verify the slice first)."""
        raw = pseudonym.to_bytes()
        matches = [e for e in self.entries if e.pseudonym == raw]
        if len(matches) != 1:
            raise MessageFormatError(
                "pseudonym", f"board slice holds {len(matches)} entries for this pseudonym, expected 1"
            )
        return matches[0]


@dataclass
class _RoundBoard:
    """One round's published board, indexed for downloads."""

    head: BoardHead
    full: bytes  # the published whole-board slice, served as is
    buckets: list[list[BoardEntry]]
    pseudonyms: frozenset[bytes]


class BulletinBoard:
    """An append-only public board: one signed board per round, plus posts (Remark 3).

    Talks bytes only.  It accepts a round's board once, and only if the head verifies
    under the server key it was given and the entries are exactly the signed ones;
    entries are never replaced.  Posts must address a pseudonym of a published round;
    an exact duplicate post is stored once.
    """

    def __init__(self, server_key: VerifyKey) -> None:
        self._server_key = server_key
        self._views: dict[bytes, bytes] = {}
        self._rounds: dict[bytes, _RoundBoard] = {}
        self._entries: dict[bytes, bytes] = {}
        self._posts: dict[bytes, dict[bytes, list[bytes]]] = {}  # round -> recipient -> posts
        self._post_ids: set[bytes] = set()

    def publish(self, board: bytes) -> BoardHead:
        """Store a round's whole-board slice (the server's upload); returns its verified head."""
        sl = BoardSlice.from_bytes(board)
        if sl.bucket is not None:
            raise MessageFormatError("field", f"publish the whole board, not bucket {sl.bucket}")
        entries = sl.verify(self._server_key)
        round_id = sl.head.round_id
        if round_id in self._rounds:
            raise MessageFormatError("round", f"round {round_id.hex()} is already on the board; boards are append-only")
        buckets: list[list[BoardEntry]] = [[] for _ in sl.head.counts]
        for entry in entries:
            buckets[bucket_of(entry.pseudonym, sl.head.bucket_bits)].append(entry)
        self._rounds[round_id] = _RoundBoard(sl.head, bytes(board), buckets, frozenset(e.pseudonym for e in entries))
        self._entries.update((e.entry_id, e.to_bytes()) for e in entries)
        self._posts[round_id] = {}
        return sl.head

    def publish_view(self, announcement: bytes) -> None:
        """Store the shuffler's signed view announcement of a round (once; clients verify it)."""
        r = Reader(announcement, MessageType.VIEW)
        round_id = r.take(ROUND_ID_SIZE, "round_id")
        if round_id in self._views:
            raise MessageFormatError("round", f"round {round_id.hex()} already has a view announcement")
        self._views[round_id] = bytes(announcement)

    def view(self, round_id: bytes) -> bytes:
        """The shuffler's view announcement of a round, for clients to check before they submit."""
        if round_id not in self._views:
            raise MessageFormatError("round", f"no view announced for round {round_id.hex()}")
        return self._views[round_id]

    def head(self, round_id: bytes) -> bytes:
        """The signed board head alone: enough for a client to find and verify its bucket."""
        return self._round(round_id).head.to_bytes()

    def _round(self, round_id: bytes) -> _RoundBoard:
        if round_id not in self._rounds:
            raise MessageFormatError("round", f"no board published for round {round_id.hex()}")
        return self._rounds[round_id]

    def download(self, round_id: bytes) -> bytes:
        """The whole board of a round (a `BoardSlice` with every entry)."""
        return self._round(round_id).full

    def download_bucket(self, round_id: bytes, bucket: int) -> bytes:
        """The signed head and the entries of one bucket."""
        rb = self._round(round_id)
        check_int(bucket, "bucket", 0, len(rb.buckets) - 1)
        return BoardSlice(rb.head, bucket, tuple(rb.buckets[bucket])).to_bytes()

    def bucket_sizes(self, round_id: bytes) -> tuple[int, ...]:
        """Entries per bucket: each user's retrieval anonymity set is the size of its bucket."""
        return self._round(round_id).head.counts

    def entry(self, entry_id: bytes) -> bytes:
        """An entry by its content address."""
        if entry_id not in self._entries:
            raise MessageFormatError("field", f"no board entry with id {bytes(entry_id).hex()}")
        return self._entries[entry_id]

    def post(self, data: bytes) -> bytes:
        """Append a post; returns its id (SHA-256 of its bytes)."""
        post = Post.from_bytes(data)
        rb = self._round(post.round_id)
        if post.recipient not in rb.pseudonyms:
            raise MessageFormatError("pseudonym", "post is addressed to a pseudonym that is not on this round's board")
        post_id = hashlib.sha256(data).digest()
        if post_id not in self._post_ids:
            self._post_ids.add(post_id)
            self._posts[post.round_id].setdefault(post.recipient, []).append(bytes(data))
        return post_id

    def posts_for(self, round_id: bytes, recipient: bytes) -> list[bytes]:
        """Every post addressed to ``recipient`` in a round, in arrival order."""
        self._round(round_id)
        return list(self._posts[round_id].get(bytes(recipient), []))
