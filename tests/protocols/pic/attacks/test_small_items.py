"""Attack 10, the smaller items: bits reports, the PrivHS range, bytes-like input, the ledger's n'
against the round record, and a long-term server signing identity that clients can pin.
"""

import numpy as np
import pytest
from pic_attack_harness import LOC, Rig

from shuffledp.errors import MessageFormatError, ShuffleDPError
from shuffledp.protocols.pic.client import Client
from shuffledp.protocols.pic.computation import PicTask
from shuffledp.protocols.pic.messages import ReportFormat
from shuffledp.protocols.pic.reports import group_randomizer


def test_bits_reports_are_served_not_excluded_as_pseudonyms():
    rig = Rig(PicTask("neighbors", k=1), n=6, randomizer="unary", fmt=ReportFormat("bits", 8), dim=8)
    for i in range(6):
        c = rig.client(0)
        rig.submit(rig.envelope(c, np.eye(8)[i % 8]), c)
    rig.run_server()
    assert rig.decrypted[0].valid == 6 and dict(rig.decrypted[0].rejected) == {}
    assert all(y is not None for y in rig.retrieve_all().values())


def test_privhs_reports_must_be_plus_or_minus_b_per_coordinate():
    rng = np.random.default_rng(16)
    rig = Rig(PicTask("neighbors", k=1), n=5, threshold=4, randomizer="privhs")
    B = group_randomizer(rig.params.group(0)).bound
    for _ in range(4):
        c = rig.client(0)
        rig.submit(rig.envelope(c, rng.choice([-B, B], 2)), c)
    inside = rig.client(0)
    rig.submit(rig.envelope(inside, [0.5 * B, 0.0]), inside)  # in the box, but no honest client sends it
    rig.run_server()
    assert dict(rig.decrypted[0].rejected) == {"domain": 1}


def test_bytearrays_are_accepted_or_refused_by_name():
    rig = Rig(PicTask("min-weight"), n=2)
    c = rig.client(0, signed=bytearray(rig.signed))
    assert rig.submit(bytearray(rig.envelope(c, [0.0, 0.0])), c) == "admitted"
    with pytest.raises(MessageFormatError) as e:
        rig.submit("not bytes")
    assert e.value.reason == "field"


def test_round_record_and_ledger_agree_when_few_reports_stay_anonymous():
    from shuffledp.accounting.ledger import PrivacyLedger
    from shuffledp.protocols.pic.round import RoundConfig, plan_groups
    from shuffledp.randomizers import make_randomizer

    config = RoundConfig(PicTask("min-weight"), "minkowski", 1.0, corrupted=3)
    _, plans = plan_groups(config, [("users", 100), ("workers", 100)])
    p = plans[0]
    p.settle(received=100, valid=5, invalid={"decrypt": 95})  # valid <= |C| + |U|
    R = make_randomizer("minkowski", p.local_epsilon, dim=2)
    row = PrivacyLedger().record(
        round_id="r",
        group="users",
        randomizer="minkowski",
        local_epsilon=p.local_epsilon,
        params=R.amplification_parameters(),
        received=100,
        valid=5,
        corrupted=3,
        exposed=p.exposure,
        delta=p.delta,
    )
    assert p.n_prime == row.n_prime
    assert p.epsilon_c is not None and np.isfinite(p.epsilon_c)


def test_the_server_signing_identity_is_long_term_and_pinned(tmp_path):
    from shuffledp.protocols.pic.identity import SigningIdentity

    path = tmp_path / "server.key"
    identity = SigningIdentity.create(path)
    again = SigningIdentity.load(path)
    assert again.verify_key == identity.verify_key
    r1, r2 = Rig(PicTask("min-weight"), n=2, identity=again), Rig(PicTask("min-weight"), n=2, identity=again)
    assert r1.server.verify_key == r2.server.verify_key == identity.verify_key
    assert r1.params.round_id != r2.params.round_id  # fresh rounds, fresh KEM keys, one identity
    rotated = SigningIdentity.rotate(path)
    assert rotated.verify_key != identity.verify_key and SigningIdentity.load(path).verify_key == rotated.verify_key
    with pytest.raises(ShuffleDPError, match="already holds"):  # never overwritten by accident
        SigningIdentity.create(path)
    new = Rig(PicTask("min-weight"), n=2, identity=rotated)
    pinned_old = Client(identity.verify_key, 0, shuffler_key=new.shuffler.verify_key, credential=new.enrol())
    with pytest.raises(ShuffleDPError):  # a client pinned to the old identity refuses the rotated server
        pinned_old.join(new.signed, new.view)


def test_a_default_client_joins_a_round_of_a_default_server():
    # the server's default minimum bucket size was 1 and a default ClientPolicy refused it ("below this client's 10")
    from shuffledp.protocols.pic.client import ClientPolicy
    from shuffledp.protocols.pic.messages import GroupParams
    from shuffledp.protocols.pic.server import Server
    from shuffledp.protocols.pic.shuffler import Shuffler

    identity_key = Rig(PicTask("min-weight"), n=2).server.verify_key
    shuffler = Shuffler(identity_key)
    groups = [
        GroupParams(g, name, "laplace", 2.0, LOC, 10, 1e-3, {"dim": 2}) for g, name in enumerate(("users", "workers"))
    ]
    server = Server("x25519", groups, PicTask("min-weight"), (shuffler.kem_public_key, shuffler.verify_key))
    ClientPolicy().check(server.params, 0)  # raises PolicyError when the defaults disagree


def test_an_identity_file_others_can_read_is_refused(tmp_path):
    import os

    from shuffledp.protocols.pic.identity import SigningIdentity

    path = tmp_path / "server.key"
    SigningIdentity.create(path)
    os.chmod(path, 0o644)
    with pytest.raises(ShuffleDPError, match=r"mode 0644: others can read the signing key.*chmod 600"):
        SigningIdentity.load(path)
    os.chmod(path, 0o600)
    assert SigningIdentity.load(path).verify_key is not None


@pytest.mark.parametrize(
    "field, value",
    [
        ("max_local_epsilon", -1.0),
        ("max_local_epsilon", float("nan")),
        ("min_threshold", -5),
        ("min_threshold", 2.5),
        ("tasks", ("sorting",)),  # an unknown task (shapley is one since issue 19)
        ("tasks", "min-weight"),
        ("max_bucket_bits", 17),
        ("min_bucket_size", 0),
    ],
)
def test_a_client_policy_that_means_nothing_is_refused(field, value):
    from shuffledp.errors import DomainError
    from shuffledp.protocols.pic.client import ClientPolicy

    with pytest.raises(DomainError, match=field):
        ClientPolicy(**{field: value})
    assert ClientPolicy.permissive().max_local_epsilon == float("inf")
