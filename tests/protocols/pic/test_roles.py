"""PIC roles over bytes: the shuffler, the server's refusals, signatures and sizes (issues 8 and 17)."""

import gc
import secrets

import numpy as np
import pytest
from scipy import stats

from shuffledp.crypto import KemKeyPair, SigningKeyPair
from shuffledp.errors import AnonymityThresholdError, CryptoError, MessageFormatError, ProtocolError
from shuffledp.protocols.pic.batches import SignedBatch
from shuffledp.protocols.pic.bulletin import BoardHead, BoardSlice, BulletinBoard
from shuffledp.protocols.pic.client import Client, ClientPolicy, VerifiedDownloads
from shuffledp.protocols.pic.computation import PicTask
from shuffledp.protocols.pic.identity import SigningIdentity
from shuffledp.protocols.pic.messages import (
    GroupParams,
    ReportFormat,
    Submission,
    encode_report,
    open_report,
    seal_report,
)
from shuffledp.protocols.pic.server import Server
from shuffledp.protocols.pic.shuffler import ADMITTED, DUPLICATE, Shuffler, csprng_permutation

LOC = ReportFormat("float64", 2)
N = 12
ANY = ClientPolicy.permissive()


class World:
    """A shuffler, a server naming it, the view on a board; clients with fresh enrolments."""

    def __init__(self, threshold=N, suite="x25519", task=None):
        task = PicTask("min-weight") if task is None else task
        groups = [
            GroupParams(g, name, "minkowski", 3.0, LOC, threshold, 1e-3, {"dim": 2})
            for g, name in enumerate(("a", "b"))
        ]
        identity = SigningIdentity.ephemeral()
        self.shuffler = Shuffler(identity.verify_key, suite=suite)
        self.server = Server(
            suite, groups, task, (self.shuffler.kem_public_key, self.shuffler.verify_key), identity=identity
        )
        self.params = self.server.params
        self.signed = self.server.signed_params()
        self.view = self.shuffler.open(self.signed)

    def client(self, g, credential=None, downloads=None):
        c = Client(self.server.verify_key, g, shuffler_key=self.shuffler.verify_key,
                   credential=credential or self.shuffler.enrolment.enroll(), policy=ANY, downloads=downloads)  # fmt: skip
        c.join(self.signed, self.view)
        return c

    def clients(self, rng, n=N):
        return {
            g: [(c, c.prepare(rng.uniform(-1, 1, 2), rng)) for c in (self.client(g) for _ in range(n))] for g in (0, 1)
        }

    def submit_all(self, clients):
        for row in clients.values():
            for _, sub in row:
                self.shuffler.submit(sub)

    def run(self, clients):
        self.submit_all(clients)
        for g in (0, 1):
            self.server.receive(self.shuffler.release(g))
        return self.server.publish()


def _secret_holders(root):
    """Every object reachable from ``root`` that is (or holds) secret key material."""
    from cryptography.hazmat.primitives.asymmetric import ed25519, x25519

    secret_types = (KemKeyPair, SigningKeyPair, x25519.X25519PrivateKey, ed25519.Ed25519PrivateKey)
    seen, stack, found = set(), [root], []
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, type):
            continue
        seen.add(id(obj))
        if isinstance(obj, secret_types):
            found.append(obj)
        stack.extend(gc.get_referents(obj))
    return found


def test_shuffler_holds_no_server_key_and_cannot_open_reports():
    rng = np.random.default_rng(1)
    w = World()
    w.submit_all(w.clients(rng))
    server_secret = w.server._kem.secret_bytes()
    held = [k.secret_bytes() for k in _secret_holders(w.shuffler) if isinstance(k, (KemKeyPair, SigningKeyPair))]
    assert held and server_secret not in held  # only its own keys
    reachable = [o for o in gc.get_referents(*gc.get_referents(w.shuffler)) if isinstance(o, (bytes, bytearray))]
    assert all(server_secret not in b for b in reachable)
    inner = SignedBatch.from_bytes(w.shuffler.release(0)).envelopes[0]
    with pytest.raises(CryptoError):  # any key but the server's fails
        open_report(w.params, w.shuffler._kem, 0, inner)


def test_refused_submissions_are_counted_and_the_round_completes():
    rng = np.random.default_rng(2)
    w = World(threshold=N - 1)
    other = World()
    clients = w.clients(rng)
    subs = [s for _, s in clients[0]]
    tampered = bytearray(subs[0])
    tampered[-5] ^= 1
    moved_group = subs[1][:21] + (1).to_bytes(2, "big") + subs[1][23:]  # group 0's ciphertext sent to group 1
    foreign = other.clients(rng, 1)[0][0][1]  # a submission of another round
    relabelled = foreign[:5] + w.params.round_id + foreign[21:]
    refusals = {bytes(tampered): "decrypt", moved_group: "decrypt", subs[3][:-1]: "length", foreign: "round",
                relabelled: "decrypt"}  # fmt: skip
    for sub, reason in refusals.items():
        with pytest.raises(MessageFormatError) as e:
            w.shuffler.submit(sub)
        assert e.value.reason == reason
    for sub in subs[1:]:
        assert w.shuffler.submit(sub) == ADMITTED
    assert w.shuffler.submit(subs[2]) == DUPLICATE  # resending the same bytes is idempotent
    for _, sub in clients[1]:
        w.shuffler.submit(sub)
    assert dict(w.shuffler.rejected) == {"decrypt": 3, "length": 1, "round": 1}
    assert w.shuffler.count(0) == N - 1 and w.shuffler.count(1) == N
    d0 = w.server.receive(w.shuffler.release(0))
    d1 = w.server.receive(w.shuffler.release(1))
    assert (d0.received, d0.valid, d1.received, d1.valid) == (N - 1, N - 1, N, N)
    assert BoardSlice.from_bytes(w.server.publish()).head.entry_count == 2 * N - 1


def _submit_plaintext(w, g, plaintext):
    """An enrolled (malicious) user's submission around an arbitrary report plaintext."""
    inner = seal_report(w.params, g, plaintext)
    w.shuffler.submit(
        Submission.seal(w.params, g, w.shuffler.enrolment.enroll(), secrets.token_bytes(16), inner).to_bytes()
    )


def test_server_counts_bad_reports_by_reason_and_refuses_to_publish_below_threshold():
    rng = np.random.default_rng(3)
    w = World(threshold=3)
    good = [w.client(0) for _ in range(4)]
    for c in good:
        w.shuffler.submit(c.prepare(rng.uniform(-1, 1, 2), rng))
    p = good[0].pseudonym.to_bytes()
    _submit_plaintext(w, 0, encode_report(good[0].pseudonym, [50.0, 0.0], LOC))  # outside Minkowski's cube
    _submit_plaintext(w, 0, p + np.array([np.nan, 0.0], "<f8").tobytes())
    _submit_plaintext(w, 0, p + b"\x00" * 8)
    low_order = b"\x00" * 32 + good[1].pseudonym.to_bytes()[32:]  # X25519 zero point: nothing can be sealed to it
    _submit_plaintext(w, 0, low_order + bytes(16))
    _submit_plaintext(w, 0, encode_report(good[1].pseudonym, [0.1, 0.1], LOC))  # good[1]'s pseudonym, a second time
    d = w.server.receive(w.shuffler.release(0))
    assert d.valid == 6 and dict(d.rejected) == {"domain": 1, "report": 2}
    for _ in range(3):
        w.shuffler.submit(w.client(1).prepare(rng.uniform(-1, 1, 2), rng))
    w.server.receive(w.shuffler.release(1))
    board = BoardSlice.from_bytes(w.server.publish())
    # good[1]'s pseudonym came twice: which copy is genuine is unknowable, so both are excluded
    assert d.valid == 3 and dict(d.rejected) == {"domain": 1, "report": 2, "pseudonym": 1, "duplicate-pseudonym": 2}
    assert board.head.entry_count == 3 + 3


def test_valid_reports_below_the_threshold_stop_the_board():
    rng = np.random.default_rng(8)
    w = World(threshold=3)
    for c in [w.client(0) for _ in range(3)]:
        w.shuffler.submit(c.prepare(rng.uniform(-1, 1, 2), rng))
    _submit_plaintext(w, 0, encode_report(w.client(0).pseudonym, [50.0, 0.0], LOC))
    w.server.receive(w.shuffler.release(0))
    for _ in range(3):
        w.shuffler.submit(w.client(1).prepare(rng.uniform(-1, 1, 2), rng))
    w.server.receive(w.shuffler.release(1))
    w.server._received[0].keep(np.array([True, True, False]), "test")  # one more report excluded
    with pytest.raises(AnonymityThresholdError, match="has 2 valid reports, below its anonymity threshold 3"):
        w.server.publish()


def test_group_below_threshold_is_not_released():
    rng = np.random.default_rng(4)
    w = World(threshold=N)
    for _, sub in w.clients(rng)[0][:-1]:
        w.shuffler.submit(sub)
    with pytest.raises(
        AnonymityThresholdError, match=f"{N - 1} distinct enrolled users, below its anonymity threshold {N}"
    ):
        w.shuffler.release(0)


def test_clients_refuse_bad_round_params_views_and_boards():
    rng = np.random.default_rng(5)
    w, impostor = World(), World()
    cred = w.shuffler.enrolment.enroll()
    fresh = lambda: Client(w.server.verify_key, 0, shuffler_key=w.shuffler.verify_key, credential=cred, policy=ANY)  # noqa: E731
    with pytest.raises(CryptoError):
        fresh().join(impostor.signed, w.view)
    signed = bytearray(w.signed)
    signed[-1] ^= 1
    with pytest.raises(CryptoError):
        fresh().join(bytes(signed), w.view)
    with pytest.raises(CryptoError):  # a view signed by another shuffler
        fresh().join(w.signed, impostor.view)
    clients = w.clients(rng)
    board = BoardSlice.from_bytes(w.run(clients))
    forged = BoardHead.sign(board.head.round_id, board.entries, 0, SigningKeyPair.generate())
    c = clients[0][0][0]
    with pytest.raises(CryptoError, match="pic/board"):
        c.retrieve(BoardSlice(forged, None, board.entries).to_bytes())
    with pytest.raises(MessageFormatError, match="do not match"):
        c.retrieve(BoardSlice(board.head, None, board.entries[1:]).to_bytes())
    assert len(c.retrieve(board.to_bytes())) == w.params.output_payload_size


def test_a_shared_verification_cache_still_refuses_tampered_bytes():
    w = World()
    shared = VerifiedDownloads(w.server.verify_key, w.shuffler.verify_key)
    w.client(0, downloads=shared)
    tampered = bytearray(w.signed)
    tampered[-1] ^= 1
    with pytest.raises(CryptoError):
        Client(w.server.verify_key, 0, shuffler_key=w.shuffler.verify_key, credential=bytes(32), policy=ANY,
               downloads=shared).join(bytes(tampered), w.view)  # fmt: skip


def test_posts_between_mutual_partners_only():
    rng = np.random.default_rng(6)
    w = World()
    clients = w.clients(rng)
    board = BulletinBoard(w.server.verify_key)
    board.publish(w.run(clients))
    download = board.download(w.params.round_id)
    for row in clients.values():
        for c, _ in row:
            c.retrieve(download)
    a = clients[0][0][0]
    partner = a.partners[0].pseudonym
    b = next(c for c, _ in clients[1] if c.pseudonym.to_bytes() == partner)
    assert b.partners[0].pseudonym == a.pseudonym.to_bytes() and a.partners[0].mutual
    post = a.post_to(partner, b"pick me up")
    assert b.read_post(post) == (a.pseudonym.to_bytes(), b"pick me up")
    bad = bytearray(post)
    bad[-1] ^= 1
    with pytest.raises(CryptoError, match="does not open"):
        b.read_post(bytes(bad))
    stranger = next(c for c, _ in clients[0] if c is not a)  # not b's partner: b does not accept its posts
    from shuffledp.protocols.pic.messages import Post

    forged = Post.create(w.params, stranger._keys, b.pseudonym, b"hi").to_bytes()
    with pytest.raises(CryptoError):
        b.read_post(forged)
    other = next(c for c, _ in clients[1] if c is not b).pseudonym.to_bytes()
    with pytest.raises(ProtocolError, match="only to mutual partners"):
        a.post_to(other, b"x")


@pytest.mark.parametrize("suite", ["x25519", "pq-hybrid"])
def test_every_submission_has_one_length_whatever_the_report(suite):
    w = World(suite=suite)
    c = w.client(1)
    reports = ([0.0, 0.0], [1e300, -1e-300], [np.pi, -np.e], [-1.0, 1.0])
    assert {len(c.seal(x)) for x in reports} == {w.params.envelope_size}
    if suite == "x25519":
        assert w.params.envelope_size == 249 <= 256 and w.params.inner_size == 129


def test_one_time_keys_per_round():
    w = World()
    c = w.client(0)
    with pytest.raises(ProtocolError, match="never reused"):
        c.join(w.signed, w.view)
    assert w.client(0).pseudonym != c.pseudonym


def test_csprng_permutation_is_uniform():
    """10^4 shuffles of 8 items: where item 0 lands is uniform (chi-square), and so is the whole permutation's
    first pair (56 cells)."""
    n, trials = 8, 10_000
    perms = np.array([csprng_permutation(n) for _ in range(trials)])
    assert all(sorted(p) == list(range(n)) for p in perms[:50])
    landing = np.argmax(perms == 0, axis=1)
    assert stats.chisquare(np.bincount(landing, minlength=n)).pvalue > 1e-3
    pairs = perms[:, 0] * n + perms[:, 1]
    counts = np.bincount(pairs, minlength=n * n)[[i * n + j for i in range(n) for j in range(n) if i != j]]
    assert counts.sum() == trials and stats.chisquare(counts).pvalue > 1e-3


def test_shuffler_release_is_a_signed_permutation_of_what_it_admitted():
    rng = np.random.default_rng(7)
    w = World()
    clients = w.clients(rng)
    inner = []
    for _c, sub in clients[0]:
        w.shuffler.submit(sub)
        inner.append(Submission.from_bytes(sub).open(w.params, w.shuffler._kem)[2])
    batch = SignedBatch.from_bytes(w.shuffler.release(0))
    batch.verify(w.shuffler.verify_key)
    assert sorted(batch.envelopes) == sorted(inner) and batch.count == N
    assert batch.params_hash == w.params.digest and batch.round_id == w.params.round_id
    with pytest.raises(MessageFormatError) as e:
        w.shuffler.submit(clients[0][0][1])
    assert e.value.reason == "closed"
