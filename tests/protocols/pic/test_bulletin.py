"""The bulletin board: signed bucketed heads, verified downloads, content addresses, append-only posts."""

import hashlib
import secrets

import numpy as np
import pytest
from scipy import stats

from shuffledp.crypto import KemKeyPair, SigningKeyPair
from shuffledp.errors import CryptoError, MessageFormatError
from shuffledp.protocols.pic.bulletin import (
    BoardEntry,
    BoardHead,
    BoardSlice,
    BulletinBoard,
    bucket_digest,
    bucket_of,
)
from shuffledp.protocols.pic.messages import (
    GroupParams,
    OneTimeKeys,
    Post,
    Pseudonym,
    ReportFormat,
    RoundParams,
    SignedRoundParams,
    Submission,
    decode_reports,
    encode_report,
    new_round_id,
    open_report,
    seal_report,
)

TASK = {"k": 1, "name": "min-weight", "radius": 0.4}


def _params(suite, server_kem, server_sig, groups, output_size, post_size):
    """Round parameters naming a fresh shuffler."""
    shuffler_kem, shuffler_sig = KemKeyPair.generate(suite), SigningKeyPair.generate()
    params = RoundParams(new_round_id(), suite, server_kem.public_key, server_sig.verify_key, groups, output_size,
                         post_size, shuffler_kem.public_key, shuffler_sig.verify_key, TASK)  # fmt: skip
    return params, shuffler_kem


N_USERS = 40
BITS = 2


class Round:
    """A server, its round parameters and N_USERS users with their board entries."""

    def __init__(self, bucket_bits=BITS):
        self.sig = SigningKeyPair.generate()
        group = GroupParams(0, "users", "minkowski", 3.0, ReportFormat("float64", 2), 2, 1e-6)
        self.params, _ = _params("x25519", KemKeyPair.generate("x25519"), self.sig, (group,), 32, 16)
        self.users = [OneTimeKeys.generate("x25519") for _ in range(N_USERS)]
        self.outputs = [f"output of user {i}".encode() for i in range(N_USERS)]
        self.entries = [
            BoardEntry.seal(self.params, 0, u.pseudonym, y) for u, y in zip(self.users, self.outputs, strict=True)
        ]
        self.head = BoardHead.sign(self.params.round_id, self.entries, bucket_bits, self.sig)
        self.full = BoardSlice(self.head, None, tuple(self.entries)).to_bytes()


@pytest.fixture(scope="module")
def rnd():
    return Round()


@pytest.fixture()
def board(rnd):
    b = BulletinBoard(rnd.sig.verify_key)
    b.publish(rnd.full)
    return b


def test_every_user_verifies_the_full_board_and_decrypts_its_own_output(rnd, board):
    sl = BoardSlice.from_bytes(board.download(rnd.params.round_id))
    entries = sl.verify(rnd.sig.verify_key)
    assert len(entries) == N_USERS
    for user, y in zip(rnd.users, rnd.outputs, strict=True):
        assert sl.find(user.pseudonym).open(rnd.params, user) == y


def test_bucket_downloads_partition_the_board_and_verify(rnd, board):
    seen = []
    sizes = board.bucket_sizes(rnd.params.round_id)
    assert len(sizes) == 2**BITS and sum(sizes) == N_USERS
    for b in range(2**BITS):
        sl = BoardSlice.from_bytes(board.download_bucket(rnd.params.round_id, b))
        entries = sl.verify(rnd.sig.verify_key)
        assert len(entries) == sizes[b]
        assert all(bucket_of(e.pseudonym, BITS) == b for e in entries)
        seen += [e.entry_id for e in entries]
    assert sorted(seen) == sorted(e.entry_id for e in rnd.entries)
    user = rnd.users[7]
    mine = BoardSlice.from_bytes(board.download_bucket(rnd.params.round_id, bucket_of(user.pseudonym.to_bytes(), BITS)))
    mine.verify(rnd.sig.verify_key)
    assert mine.find(user.pseudonym).open(rnd.params, user) == rnd.outputs[7]


def test_entries_are_content_addressed(rnd, board):
    for e in rnd.entries[:5]:
        data = board.entry(e.entry_id)
        assert hashlib.sha256(data).digest() == e.entry_id
        assert BoardEntry.from_bytes(data) == e
    with pytest.raises(MessageFormatError, match="no board entry"):
        board.entry(b"\x00" * 32)


def test_output_opens_only_for_its_user_and_round(rnd):
    entry, user = rnd.entries[3], rnd.users[3]
    with pytest.raises(CryptoError, match="decryption failed"):
        entry.open(rnd.params, rnd.users[4])
    moved = BoardEntry(new_round_id(), 0, entry.pseudonym, entry.sealed)
    with pytest.raises(MessageFormatError, match="board entry is for round") as e:
        moved.open(rnd.params, user)
    assert e.value.reason == "round"
    other_group = BoardEntry(entry.round_id, 1, entry.pseudonym, entry.sealed)
    with pytest.raises(CryptoError, match="decryption failed"):
        other_group.open(rnd.params, user)


def test_board_entry_layout(rnd):
    e = rnd.entries[0]
    data = e.to_bytes()
    pseudonym, sealed = e.pseudonym, e.sealed
    assert data == (
        b"PIC\x02\x03" + e.round_id + b"\x00\x00" + len(pseudonym).to_bytes(2, "big") + pseudonym
        + len(sealed).to_bytes(4, "big") + sealed
    )  # fmt: skip
    assert len(sealed) == 32 + 33 + 16  # every output is sealed at one size


def test_head_layout_and_digests(rnd):
    head = BoardHead.from_bytes(rnd.head.to_bytes())
    assert head == rnd.head
    assert len(head.to_bytes()) == 5 + 16 + 1 + 4 + 36 * 2**BITS + 64
    for b in range(2**BITS):
        ids = [e.entry_id for e in rnd.entries if bucket_of(e.pseudonym, BITS) == b]
        assert head.counts[b] == len(ids)
        assert head.digests[b] == hashlib.sha256(b"pic/bucket" + b"".join(sorted(ids))).digest()


def test_bucket_of_is_the_hash_prefix():
    for i in range(50):
        x = i.to_bytes(4, "big") * 16
        h = hashlib.sha256(x).digest()
        assert bucket_of(x, 0) == 0
        assert bucket_of(x, 8) == h[0]
        assert bucket_of(x, 12) == (h[0] << 4) | (h[1] >> 4)
        assert bucket_of(x, 16) == int.from_bytes(h[:2], "big")


def test_buckets_are_uniform_over_random_pseudonyms():
    rng = np.random.default_rng(20261123)
    counts = np.bincount([bucket_of(rng.bytes(64), 4) for _ in range(8000)], minlength=16)  # 500 expected per bucket
    assert stats.chisquare(counts).pvalue > 1e-3


def test_bucket_digest_ignores_order_but_not_content():
    ids = [hashlib.sha256(bytes([i])).digest() for i in range(5)]
    assert bucket_digest(ids) == bucket_digest(ids[::-1])
    assert bucket_digest(ids) != bucket_digest(ids[:4])


# ---------------------------------------------------------------- refusals


def _publish(rnd, entries, head=None):
    BulletinBoard(rnd.sig.verify_key).publish(BoardSlice(head or rnd.head, None, tuple(entries)).to_bytes())


def test_board_with_an_entry_dropped_added_or_altered_is_refused(rnd):
    extra = BoardEntry.seal(rnd.params, 0, OneTimeKeys.generate("x25519").pseudonym, b"forged")
    altered = BoardEntry(rnd.entries[0].round_id, 0, rnd.entries[0].pseudonym, rnd.entries[1].sealed)
    for entries in (rnd.entries[1:], rnd.entries + [extra], [altered] + rnd.entries[1:]):
        with pytest.raises(MessageFormatError, match="do not match the signed board head") as e:
            _publish(rnd, entries)
        assert e.value.reason == "digest"


def test_board_with_a_bad_signature_is_refused(rnd):
    forged = BoardHead.sign(rnd.params.round_id, rnd.entries, BITS, SigningKeyPair.generate())
    with pytest.raises(CryptoError, match="invalid pic/board signature"):
        _publish(rnd, rnd.entries, forged)
    data = bytearray(rnd.head.to_bytes())
    data[30] ^= 1  # a bucket count
    with pytest.raises((CryptoError, MessageFormatError)):
        BoardHead.from_bytes(bytes(data)).verify(rnd.sig.verify_key)


def test_slice_smuggling_an_entry_of_another_bucket_is_refused(rnd, board):
    sl = BoardSlice.from_bytes(board.download_bucket(rnd.params.round_id, 0))
    stranger = next(e for e in rnd.entries if bucket_of(e.pseudonym, BITS) != 0)
    bad = BoardSlice(sl.head, 0, sl.entries + (stranger,))
    with pytest.raises(MessageFormatError, match="holds an entry of bucket") as e:
        BoardSlice.from_bytes(bad.to_bytes()).verify(rnd.sig.verify_key)
    assert e.value.reason == "digest"


def test_board_is_append_only(rnd, board):
    with pytest.raises(MessageFormatError, match="already on the board") as e:
        board.publish(rnd.full)
    assert e.value.reason == "round"
    with pytest.raises(MessageFormatError, match="whole board"):
        BulletinBoard(rnd.sig.verify_key).publish(BoardSlice(rnd.head, 0, ()).to_bytes())


def test_head_refuses_duplicate_pseudonyms_and_foreign_entries(rnd):
    with pytest.raises(MessageFormatError, match="one entry per pseudonym"):
        BoardHead.sign(rnd.params.round_id, rnd.entries + rnd.entries[:1], BITS, rnd.sig)
    with pytest.raises(MessageFormatError, match="on the board of") as e:
        BoardHead.sign(new_round_id(), rnd.entries, BITS, rnd.sig)
    assert e.value.reason == "round"


def test_unknown_round_and_bucket_are_named(rnd, board):
    with pytest.raises(MessageFormatError, match="no board published for round"):
        board.download(new_round_id())
    with pytest.raises(MessageFormatError, match=r"bucket must be an integer in \[0, 3\], got 4"):
        board.download_bucket(rnd.params.round_id, 4)


def test_parsers_refuse_bad_headers(rnd):
    for parse, data in ((BoardEntry.from_bytes, rnd.entries[0].to_bytes()), (BoardSlice.from_bytes, rnd.full)):
        with pytest.raises(MessageFormatError) as e:
            parse(b"XIC" + data[3:])
        assert e.value.reason == "magic"
        with pytest.raises(MessageFormatError) as e:
            parse(data[:-1])
        assert e.value.reason == "length"
    head = rnd.head.to_bytes()
    with pytest.raises(MessageFormatError, match="at most 16") as e:
        BoardHead.from_bytes(head[:21] + b"\x11" + head[22:])


# ---------------------------------------------------------------- posts


def test_posts_reach_their_recipient_once(rnd, board):
    a, b = rnd.users[0], rnd.users[1]
    post = Post.create(rnd.params, a, b.pseudonym, b"meet at 9").to_bytes()
    first = board.post(post)
    assert board.post(post) == first == hashlib.sha256(post).digest()
    got = board.posts_for(rnd.params.round_id, b.pseudonym.to_bytes())
    assert got == [post]
    sender, _, message = Post.from_bytes(got[0]).open(rnd.params, b, [a.pseudonym])
    assert (sender, message) == (a.pseudonym, b"meet at 9")
    assert board.posts_for(rnd.params.round_id, a.pseudonym.to_bytes()) == []


def test_posts_to_strangers_or_unknown_rounds_are_refused(rnd, board):
    stranger = OneTimeKeys.generate("x25519")
    with pytest.raises(MessageFormatError, match="not on this round's board") as e:
        board.post(Post.create(rnd.params, rnd.users[0], stranger.pseudonym, b"hi").to_bytes())
    assert e.value.reason == "pseudonym"
    other = Round(bucket_bits=0)
    with pytest.raises(MessageFormatError, match="no board published"):
        board.post(Post.create(other.params, other.users[0], other.users[1].pseudonym, b"hi").to_bytes())


# ---------------------------------------------------------------- the messages composed (steps 1-6)


@pytest.mark.parametrize("suite", ["x25519", "pq-hybrid"])
def test_one_round_through_the_wire_messages(suite):
    """Step 1 params -> step 2 envelopes -> step 3 shuffle -> step 4 decrypt -> step 5 board -> step 6 retrieval."""
    kem, sig = KemKeyPair.generate(suite), SigningKeyPair.generate()
    group = GroupParams(0, "users", "minkowski", 3.0, ReportFormat("float64", 2), 2, 1e-6)
    params, shuffler_kem = _params(suite, kem, sig, (group,), 16, 16)
    published = SignedRoundParams.sign(params, sig).to_bytes()

    n = 12
    client_params = SignedRoundParams.from_bytes(published, server_key=sig.verify_key).params
    users = [OneTimeKeys.generate(suite) for _ in range(n)]
    reports = np.arange(2 * n, dtype=np.float64).reshape(n, 2) / (2 * n)
    wire = [
        Submission.seal(client_params, 0, secrets.token_bytes(32), secrets.token_bytes(16),
                        seal_report(client_params, 0, encode_report(u.pseudonym, x, group.report))).to_bytes()
        for u, x in zip(users, reports, strict=True)
    ]  # fmt: skip
    inner = [Submission.from_bytes(w, params).open(params, shuffler_kem)[2] for w in wire]
    secrets.SystemRandom().shuffle(inner)  # F_Shuffle stand-in

    plaintexts = [open_report(params, kem, 0, w) for w in inner]
    dec = decode_reports(plaintexts, suite, group.report)
    assert dec.well_formed.all()
    # f: each user's output is its own report's row sum, as 8 bytes
    entries = [
        BoardEntry.seal(params, 0, Pseudonym.from_bytes(suite, p.tobytes()), np.float64(x.sum()).tobytes())
        for p, x in zip(dec.pseudonyms, dec.values, strict=True)
    ]
    head = BoardHead.sign(params.round_id, entries, 1, sig)
    board = BulletinBoard(sig.verify_key)
    board.publish(BoardSlice(head, None, tuple(entries)).to_bytes())

    for u, x in zip(users, reports, strict=True):
        sl = BoardSlice.from_bytes(board.download_bucket(params.round_id, bucket_of(u.pseudonym.to_bytes(), 1)))
        sl.verify(sig.verify_key)
        y = np.frombuffer(sl.find(u.pseudonym).open(client_params, u), dtype=np.float64)[0]
        assert y == x.sum()
