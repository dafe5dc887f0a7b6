"""PIC roles over bytes: the security acceptance of issue 8 (shuffler, server refusals, signatures, sizes)."""

import gc

import numpy as np
import pytest
from scipy import stats

from shuffledp.crypto import KemKeyPair, SigningKeyPair
from shuffledp.errors import AnonymityThresholdError, CryptoError, MessageFormatError, ProtocolError
from shuffledp.protocols.pic.bulletin import BoardHead, BoardSlice, BulletinBoard
from shuffledp.protocols.pic.client import Client, VerifiedDownloads
from shuffledp.protocols.pic.computation import PicTask, output_size
from shuffledp.protocols.pic.messages import Envelope, GroupParams, Post, ReportFormat
from shuffledp.protocols.pic.server import Server
from shuffledp.protocols.pic.shuffler import Shuffler, csprng_permutation

LOC = ReportFormat("float64", 2)
N = 12


def _server(threshold=N, suite="x25519"):
    groups = [GroupParams(g, name, "minkowski", 3.0, LOC, threshold, 1e-3, {"dim": 2}) for g, name in enumerate(("a", "b"))]
    return Server(suite, groups, output_size(suite, LOC, 1), 16)


def _clients(server, rng, n=N):
    signed = server.signed_params()
    out = {}
    for g in (0, 1):
        row = []
        for _ in range(n):
            c = Client(server.verify_key, g)
            c.join(signed)
            row.append((c, c.prepare(rng.uniform(-1, 1, 2), rng)))
        out[g] = row
    return out


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


def test_shuffler_holds_no_secret_key_and_cannot_decrypt():
    rng = np.random.default_rng(1)
    server = _server()
    shuffler = Shuffler(server.signed_params(), server.verify_key)
    for _c, env in _clients(server, rng)[0]:
        shuffler.submit(env)
    assert _secret_holders(shuffler) == []
    assert _secret_holders(server)  # the walk does find keys where they are
    secret = server._kem.secret_bytes()
    reachable = [o for o in gc.get_referents(*gc.get_referents(shuffler)) if isinstance(o, (bytes, bytearray))]
    assert all(secret not in b for b in reachable)
    env = Envelope.from_bytes(shuffler.release(0)[0], shuffler.params)
    with pytest.raises(CryptoError):  # any key but the server's fails
        env.open(shuffler.params, KemKeyPair.generate("x25519"))


def test_refused_envelopes_are_counted_and_the_round_completes():
    rng = np.random.default_rng(2)
    server = _server(threshold=N - 2)
    other = _server()
    shuffler = Shuffler(server.signed_params(), server.verify_key)
    clients = _clients(server, rng)
    envs = [e for _, e in clients[0]]
    tampered = bytearray(envs[0])
    tampered[-5] ^= 1
    replay_group = envs[1][:21] + (1).to_bytes(2, "big") + envs[1][23:]  # group 0's ciphertext sent to group 1
    foreign = _clients(other, rng, 1)[0][0][1]  # an envelope of another round
    replay_round = foreign[:5] + server.params.round_id + foreign[21:]  # relabelled to this round
    for env in [bytes(tampered), *envs[1:]]:
        shuffler.submit(env)
    refusals = {envs[2]: "duplicate", envs[3][:-1]: "length", foreign: "round"}
    for env, reason in refusals.items():
        with pytest.raises(MessageFormatError) as e:
            shuffler.submit(env)
        assert e.value.reason == reason
    shuffler.submit(replay_round)
    for _, env in clients[1]:
        shuffler.submit(env)
    shuffler.submit(replay_group)
    assert dict(shuffler.rejected) == {"duplicate": 1, "length": 1, "round": 1}
    d0 = server.decrypt(0, shuffler.release(0))
    d1 = server.decrypt(1, shuffler.release(1))
    assert (d0.received, d0.valid, dict(d0.rejected)) == (N + 1, N - 1, {"decrypt": 2})
    assert (d1.received, d1.valid, dict(d1.rejected)) == (N + 1, N, {"decrypt": 1})
    board = server.publish(PicTask("min-weight"), {0: d0, 1: d1})
    assert BoardSlice.from_bytes(board).head.entry_count == 2 * N - 1


def test_server_counts_bad_reports_by_reason():
    rng = np.random.default_rng(3)
    server = _server(threshold=1)
    good = _clients(server, rng, 3)[0]
    c = good[0][0]
    far = c.seal([50.0, 0.0])  # outside Minkowski's cube [-1-r, 1+r]^2
    nan = Envelope.seal(server.params, 0, c.pseudonym.to_bytes() + np.array([np.nan, 0.0], "<f8").tobytes()).to_bytes()
    short = Envelope.seal(server.params, 0, c.pseudonym.to_bytes() + b"\x00" * 8).to_bytes()
    low_order = b"\x00" * 32 + good[1][0].pseudonym.to_bytes()[32:]  # X25519 zero point: nothing can be sealed to it
    bad_key = Envelope.seal(server.params, 0, low_order + bytes(16)).to_bytes()
    d = server.decrypt(0, [e for _, e in good] + [far, nan, short, bad_key])
    assert d.valid == 4 and dict(d.rejected) == {"domain": 1, "report": 2}
    workers = server.decrypt(1, [e for _, e in _clients(server, rng, 4)[1]])
    board = BoardSlice.from_bytes(server.publish(PicTask("min-weight"), {0: d, 1: workers}))
    assert d.valid == 3 and dict(d.rejected) == {"domain": 1, "report": 2, "pseudonym": 1}
    assert board.head.entry_count == 3 + 4


def test_repeated_pseudonyms_are_all_excluded():
    rng = np.random.default_rng(8)
    server = _server(threshold=1)
    good = _clients(server, rng, 3)[0]
    second = good[0][0].seal([0.5, 0.5])  # user 0 sends a second, different report
    d = server.decrypt(0, [e for _, e in good] + [second, good[1][1]])  # and user 1's envelope is replayed
    assert d.valid == 5
    empty = server.decrypt(1, [])
    server.publish(PicTask("max-matching"), {0: d, 1: empty})
    assert d.valid == 1 and dict(d.rejected) == {"duplicate-pseudonym": 4}


def test_group_below_threshold_is_not_released():
    rng = np.random.default_rng(4)
    server = _server(threshold=N)
    shuffler = Shuffler(server.signed_params(), server.verify_key)
    for _, env in _clients(server, rng)[0][:-1]:
        shuffler.submit(env)
    with pytest.raises(AnonymityThresholdError, match=f"holds {N - 1} envelopes, below its anonymity threshold {N}"):
        shuffler.release(0)


def test_clients_refuse_bad_round_params_and_boards():
    rng = np.random.default_rng(5)
    server, impostor = _server(), _server()
    with pytest.raises(CryptoError):
        Client(server.verify_key, 0).join(impostor.signed_params())
    signed = bytearray(server.signed_params())
    signed[-1] ^= 1
    with pytest.raises(CryptoError):
        Client(server.verify_key, 0).join(bytes(signed))
    clients = _clients(server, rng)
    d = {g: server.decrypt(g, [e for _, e in clients[g]]) for g in (0, 1)}
    board = BoardSlice.from_bytes(server.publish(PicTask("min-weight"), d))
    forged = BoardHead.sign(board.head.round_id, board.entries, 0, SigningKeyPair.generate())
    with pytest.raises(CryptoError, match="pic/board"):
        clients[0][0][0].retrieve(BoardSlice(forged, None, board.entries).to_bytes())
    with pytest.raises(MessageFormatError, match="do not match"):
        clients[0][0][0].retrieve(BoardSlice(board.head, None, board.entries[1:]).to_bytes())
    y = clients[0][0][0].retrieve(board.to_bytes())
    assert len(y) == server.params.output_payload_size


def test_a_shared_verification_cache_still_refuses_tampered_bytes():
    server = _server()
    shared = VerifiedDownloads(server.verify_key)
    Client(server.verify_key, 0, shared).join(server.signed_params())
    tampered = bytearray(server.signed_params())
    tampered[-1] ^= 1
    with pytest.raises(CryptoError):
        Client(server.verify_key, 0, shared).join(bytes(tampered))
    impostor = _server()
    with pytest.raises(CryptoError):  # a cache trusting another key is not used
        Client(server.verify_key, 0, VerifiedDownloads(impostor.verify_key)).join(impostor.signed_params())


def test_posts_between_partners_and_bad_signatures():
    rng = np.random.default_rng(6)
    server = _server()
    clients = _clients(server, rng)
    d = {g: server.decrypt(g, [e for _, e in clients[g]]) for g in (0, 1)}
    board = BulletinBoard(server.verify_key)
    board.publish(server.publish(PicTask("min-weight"), d))
    download = board.download(server.params.round_id)
    for row in clients.values():
        for c, _ in row:
            c.retrieve(download)
    a = clients[0][0][0]
    partner = a.partners[0][0]
    b = next(c for c, _ in clients[1] if c.pseudonym.to_bytes() == partner)
    assert b.partners[0][0] == a.pseudonym.to_bytes()
    post = a.post_to(partner, b"pick me up")
    assert b.read_post(post) == (a.pseudonym.to_bytes(), b"pick me up")
    bad = bytearray(post)
    bad[-1] ^= 1
    with pytest.raises(CryptoError, match="post signature"):
        b.read_post(bytes(bad))
    stranger = clients[0][1][0]  # not b's partner: its signature is not accepted
    forged = Post.create(server.params, stranger._keys, b.pseudonym, b"hi").to_bytes()
    with pytest.raises(CryptoError):
        b.read_post(forged)
    with pytest.raises(ProtocolError, match="only to partners"):
        a.post_to(clients[1][5][0].pseudonym.to_bytes() if clients[1][5][0] is not b else clients[1][6][0].pseudonym.to_bytes(), b"x")


@pytest.mark.parametrize("suite", ["x25519", "pq-hybrid"])
def test_every_envelope_has_one_length_whatever_the_report(suite):
    server = _server(suite=suite)
    c = Client(server.verify_key, 1)
    c.join(server.signed_params())
    reports = ([0.0, 0.0], [1e300, -1e-300], [np.pi, -np.e], [-1.0, 1.0])
    assert {len(c.seal(x)) for x in reports} == {server.params.envelope_size}
    if suite == "x25519":
        assert server.params.envelope_size == 152


def test_one_time_keys_per_round():
    server = _server()
    c = Client(server.verify_key, 0)
    c.join(server.signed_params())
    with pytest.raises(ProtocolError, match="never reused"):
        c.join(server.signed_params())
    other = Client(server.verify_key, 0)
    other.join(server.signed_params())
    assert other.pseudonym != c.pseudonym


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


def test_shuffler_release_is_a_permutation_of_what_it_accepted():
    rng = np.random.default_rng(7)
    server = _server()
    shuffler = Shuffler(server.signed_params(), server.verify_key)
    envs = [e for _, e in _clients(server, rng)[0]]
    for e in envs:
        shuffler.submit(e)
    assert sorted(shuffler.release(0)) == sorted(envs)
    with pytest.raises(MessageFormatError) as e:
        shuffler.submit(envs[0])
    assert e.value.reason == "closed"
