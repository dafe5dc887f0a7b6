"""The ``shapley`` PIC task (pic-usenix25 §7.3, full version Appendix E): each user of a federated-learning
round receives its own Shapley value, the same from the real protocol and from F_PIC, with no partners."""

import secrets

import numpy as np
import pytest

from shuffledp.accounting import anonymous_population
from shuffledp.errors import DomainError, MessageFormatError, ProtocolError
from shuffledp.protocols.pic.bulletin import BulletinBoard
from shuffledp.protocols.pic.client import Client, ClientPolicy, VerifiedDownloads
from shuffledp.protocols.pic.computation import (
    SHAPLEY_PERMUTATIONS,
    GroupReports,
    PicTask,
    decode_output,
    decode_value,
    evaluate,
    shapley_seed,
)
from shuffledp.protocols.pic.ideal import ideal_pic
from shuffledp.protocols.pic.identity import SigningIdentity
from shuffledp.protocols.pic.messages import Pseudonym
from shuffledp.protocols.pic.reports import group_randomizer
from shuffledp.protocols.pic.round import RoundConfig, plan_groups, run_round
from shuffledp.protocols.pic.server import Server
from shuffledp.protocols.pic.shuffler import Shuffler
from shuffledp.tasks import exact_shapley, shapley_values
from shuffledp.tasks import shapley as shapley_module
from shuffledp.tasks.shapley import EXACT_MAX_PLAYERS

DIM, N = 5, 8
SHAPLEY = PicTask("shapley")


def _data(seed, n=N):
    """True gradients in [-1, 1]^DIM (the randomizers' domain) and a validation gradient aligned with most."""
    rng = np.random.default_rng(seed)
    v = rng.uniform(-1, 1, DIM)
    G = np.clip(0.6 * v + rng.normal(0, 0.4, (n, DIM)), -1, 1)
    return G, v


def _config(v, randomizer="laplace", epsilon_c=4.0, **kwargs):
    return RoundConfig(SHAPLEY, randomizer, epsilon_c, dim=DIM, validation=v, **kwargs)


def _estimates(config, G, seed):
    """The estimates the server sees in a round run with ``default_rng(seed)``: randomization is the round's first draw."""
    (group,), _ = plan_groups(config, [("users", len(G))])
    R = group_randomizer(group)
    return R.estimate(R.randomize(G, np.random.default_rng(seed)))


@pytest.mark.parametrize("randomizer", ["laplace", "minkowski"])
def test_each_user_receives_its_exact_shapley_value_on_the_estimates_the_server_saw(randomizer):
    G, v = _data(1)
    config = _config(v, randomizer)
    real = run_round([("users", G)], config, np.random.default_rng(2))
    assert real.metrics["outputs_verified"] is True  # every output equals F_PIC's on the clients' own reports
    expected = exact_shapley(_estimates(config, G, 2), v)
    assert real.values[0] == expected.tolist()  # bit for bit, user by user
    ideal = run_round([("users", G)], config, np.random.default_rng(2), ideal=True)
    assert ideal.values == real.values and ideal.outputs_digest() == real.outputs_digest()
    assert real.identity_outputs == [[[] for _ in range(N)]]  # no partner records
    assert real.utility["shapley_sum"] == pytest.approx(sum(expected))  # efficiency: sum phi = U(N)
    truth = exact_shapley(G, v)
    assert real.utility["shapley_error"] == pytest.approx(np.mean(np.abs(expected - truth)))


def test_permuting_the_submissions_changes_no_user_s_value():
    G, v = _data(3)
    config = _config(v)
    plain = run_round([("users", G)], config, np.random.default_rng(4))
    reversed_ = run_round([("users", G)], config, np.random.default_rng(4), channel=lambda g, subs: subs[::-1])
    assert reversed_.metrics["outputs_verified"] is True
    assert reversed_.values == plain.values  # new keys, new order on the wire: the same value for each user


@pytest.mark.parametrize("n", [N, EXACT_MAX_PLAYERS + 1])  # exact enumeration, and the seeded permutation estimator
def test_f_pic_is_equivariant_and_its_estimator_seed_is_the_public_one(n):
    G, v = _data(5, n)
    config = _config(v)
    (group,), _ = plan_groups(config, [("users", n)])
    params = Server("x25519", [group], SHAPLEY, _shuffler_keys(), validation=v).params
    P = Pseudonym.size("x25519")
    pseudonyms = np.frombuffer(secrets.token_bytes(P * n), dtype=np.uint8).reshape(n, P)
    X = group_randomizer(group).randomize(G, np.random.default_rng(6))
    out = ideal_pic(params, SHAPLEY, {0: (pseudonyms, X)}, randomized=True, validation=v).outputs[0]
    perm = np.random.default_rng(7).permutation(n)
    permuted = ideal_pic(params, SHAPLEY, {0: (pseudonyms[perm], X[perm])}, randomized=True, validation=v).outputs[0]
    assert permuted == [out[i] for i in perm]  # user perm[j]'s output, whatever position it took
    order = np.lexsort(pseudonyms.T[::-1])
    seed = shapley_seed(params.round_id, pseudonyms[order])
    E = group_randomizer(group).estimate(X)
    sv = shapley_values(E[order], v, n_permutations=SHAPLEY_PERMUTATIONS, rng=np.random.default_rng(seed))
    assert sv.method == ("exact" if n <= EXACT_MAX_PLAYERS else "permutation")
    assert [decode_value(y) for y in out] == sv.values[np.argsort(order)].tolist()


def test_the_estimator_seed_follows_the_round_id_and_the_pseudonyms():
    rows = np.arange(64, dtype=np.uint8).reshape(2, 32)
    assert shapley_seed(b"a" * 16, rows) == shapley_seed(b"a" * 16, rows.copy())
    assert shapley_seed(b"b" * 16, rows) != shapley_seed(b"a" * 16, rows)
    assert shapley_seed(b"a" * 16, rows[::-1]) != shapley_seed(b"a" * 16, rows)


def _shuffler_keys():
    s = Shuffler(SigningIdentity.ephemeral().verify_key)
    return s.kem_public_key, s.verify_key


class _World:
    """One shapley round by hand: shuffler, server holding v, board, N clients."""

    def __init__(self, v):
        config = _config(v)
        (group,), _ = plan_groups(config, [("users", N)])
        identity = SigningIdentity.ephemeral()
        self.shuffler = Shuffler(identity.verify_key)
        self.server = Server("x25519", [group], SHAPLEY, (self.shuffler.kem_public_key, self.shuffler.verify_key),
                             identity=identity, validation=v)  # fmt: skip
        signed = self.server.signed_params()
        self.board = BulletinBoard(self.server.verify_key)
        self.board.publish_view(self.shuffler.open(signed))
        view = self.board.view(self.server.params.round_id)
        downloads = VerifiedDownloads(self.server.verify_key, self.shuffler.verify_key)
        self.clients = []
        for _ in range(N):
            c = Client(self.server.verify_key, 0, shuffler_key=self.shuffler.verify_key,
                       credential=self.shuffler.enrolment.enroll(), policy=ClientPolicy.permissive(),
                       downloads=downloads)  # fmt: skip
            c.join(signed, view)
            self.clients.append(c)

    def run(self, G, rng):
        for c, x in zip(self.clients, G):
            self.shuffler.submit(c.prepare(x, rng))
        self.server.receive(self.shuffler.release(0))
        self.board.publish(self.server.publish())
        download = self.board.download(self.server.params.round_id)
        for c in self.clients:
            c.retrieve(download)


def test_clients_read_their_value_and_all_outputs_have_one_size():
    G, v = _data(8)
    world = _World(v)
    world.run(G, np.random.default_rng(9))
    assert world.server.params.output_payload_size == 10  # count (2) || phi (8, big-endian float64)
    assert {len(c.output) for c in world.clients} == {10}
    L, f_L = world.server.view
    assert {row.size for row in f_L[0]} == {10}
    sent = np.array([c.report for c in world.clients])
    expected = exact_shapley(group_randomizer(world.server.params.groups[0]).estimate(sent), v)
    assert [c.value for c in world.clients] == expected.tolist()
    assert all(c.partners == [] for c in world.clients)
    assert world.clients[0].output[:2] == b"\x00\x01"
    assert np.frombuffer(world.clients[0].output[2:], ">f8")[0] == world.clients[0].value


def test_a_shapley_round_offers_and_accepts_no_posts():
    G, v = _data(10)
    world = _World(v)
    world.run(G, np.random.default_rng(11))
    a, b = world.clients[:2]
    assert a.post_targets() == []
    with pytest.raises(ProtocolError, match="no partners"):
        a.post_to(b.pseudonym.to_bytes(), b"hello")
    with pytest.raises(ProtocolError, match="no partners"):
        b.read_post(b"\x00" * 200)
    result = run_round([("users", G)], _config(v), np.random.default_rng(12))
    assert result.metrics["posts_sent"] == 0 and result.metrics["posts_verified"] is True


def test_exposure_is_zero_so_n_prime_is_the_valid_reports_less_the_coalition():
    v = _data(13)[1]
    assert SHAPLEY.exposure(7) == 0 and not SHAPLEY.has_partners
    _, (plan,) = plan_groups(_config(v, corrupted=3), [("users", 50)])
    assert plan.exposure == 0 and plan.n_prime_planned == anonymous_population(50, 3, 0) == 47
    assert "|U| = 0" in plan.exposure_rule
    plan.settle(50, 48, {"domain": 2})
    assert plan.n_prime == 45
    neighbors = PicTask("neighbors", k=1)
    assert neighbors.exposure(3) == 3  # the other one-group task still pays for its partners


def test_decoders_refuse_the_other_layout():
    G, v = _data(14)
    world = _World(v)
    world.run(G, np.random.default_rng(15))
    y = world.clients[0].output
    fmt = world.server.params.groups[0].report
    with pytest.raises(MessageFormatError):
        decode_output(y, "x25519", fmt)
    with pytest.raises(MessageFormatError):
        decode_value(y + b"\x00")
    with pytest.raises(MessageFormatError):
        decode_value(b"\x00\x02" + y[2:])


def test_bad_shapley_configurations_are_refused_by_field():
    G, v = _data(16)
    with pytest.raises(DomainError, match="^k "):
        PicTask("shapley", k=2)
    with pytest.raises(DomainError, match="1 group"):
        run_round([("a", G), ("b", G)], _config(v), np.random.default_rng(0))
    with pytest.raises(DomainError, match="^validation"):
        RoundConfig(SHAPLEY, "laplace", 4.0, dim=DIM)  # the server's v is missing
    with pytest.raises(DomainError, match="^validation"):
        RoundConfig(SHAPLEY, "laplace", 4.0, dim=DIM, validation=v[:-1])
    with pytest.raises(DomainError, match="^validation"):
        RoundConfig(SHAPLEY, "laplace", 4.0, dim=DIM, validation=np.r_[v[:-1], np.nan])
    with pytest.raises(DomainError, match="^validation applies to the shapley task only"):
        RoundConfig(PicTask("min-weight"), "laplace", 4.0, dim=DIM, validation=v)
    (group,), _ = plan_groups(_config(v), [("users", N)])
    with pytest.raises(DomainError, match="^validation"):
        Server("x25519", [group], SHAPLEY, _shuffler_keys())
    E = np.zeros((3, DIM))
    reports = GroupReports(np.zeros((3, 32), np.uint8), E, E)
    with pytest.raises(DomainError, match="1 group"):
        evaluate(SHAPLEY, [reports, reports], group.report, validation=v)
    with pytest.raises(DomainError, match="no partners"):
        SHAPLEY.partners([E])
    assert RoundConfig(SHAPLEY, "laplace", 4.0, dim=DIM, validation=list(v)).validation.dtype == np.float64


def test_a_round_above_the_exact_limit_agrees_with_f_pic_through_the_seeded_estimator():
    G, v = _data(17, EXACT_MAX_PLAYERS + 1)  # above the exact limit: the estimator, seeded from the round's public data
    config = _config(v)
    real = run_round([("users", G)], config, np.random.default_rng(18))
    assert real.metrics["outputs_verified"] is True  # F_PIC drew the same orders as the server
    exact = shapley_module._exact(_estimates(config, G, 18), v)  # enumeration past the public limit, for the test
    assert real.values[0] != exact.tolist()  # an estimate ...
    assert sum(real.values[0]) == pytest.approx(exact.sum())  # ... whose every order sums to U(N)
