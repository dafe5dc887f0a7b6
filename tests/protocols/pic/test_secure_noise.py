"""Deployment noise (issue 17, item 11): a cipher keystream keyed from the OS, selectable; simulations keep numpy."""

import numpy as np
import pytest
from scipy import stats

pytest.importorskip("randomgen")

from shuffledp.errors import CryptoError  # noqa: E402
from shuffledp.protocols.pic import client as client_module  # noqa: E402
from shuffledp.protocols.pic.noise import secure_generator  # noqa: E402


def test_chacha20_has_twenty_rounds_and_a_fresh_key_each_time():
    a, b = secure_generator(), secure_generator()
    state = a.bit_generator.state["state"]
    assert type(a.bit_generator).__name__ == "ChaCha" and state["rounds"] == 20
    assert not np.array_equal(state["keysetup"], b.bit_generator.state["state"]["keysetup"])
    assert a.integers(0, 2**63, 4).tolist() != b.integers(0, 2**63, 4).tolist()


def test_aes_counter_is_available_and_unknown_kinds_are_named():
    assert type(secure_generator("aes-ctr").bit_generator).__name__ == "AESCounter"
    with pytest.raises(CryptoError, match="chacha20, aes-ctr"):
        secure_generator("pcg64")


@pytest.mark.parametrize("kind", ["chacha20", "aes-ctr"])
def test_secure_draws_have_the_right_distribution(kind):
    g = secure_generator(kind)
    assert stats.kstest(g.laplace(size=20_000), "laplace").pvalue > 1e-4
    assert stats.kstest(g.random(20_000), "uniform").pvalue > 1e-4


def test_a_deployed_client_draws_noise_from_the_secure_generator(monkeypatch):
    from shuffledp.protocols.pic.client import Client, ClientPolicy
    from shuffledp.protocols.pic.computation import PicTask
    from shuffledp.protocols.pic.identity import SigningIdentity
    from shuffledp.protocols.pic.messages import GroupParams, ReportFormat
    from shuffledp.protocols.pic.server import Server
    from shuffledp.protocols.pic.shuffler import Shuffler

    used = []
    monkeypatch.setattr(client_module, "secure_generator", lambda: used.append(1) or secure_generator())
    ident = SigningIdentity.ephemeral()
    shuffler = Shuffler(ident.verify_key)
    group = GroupParams(0, "u", "laplace", 1.0, ReportFormat("float64", 2), 2, 1e-3, {"dim": 2})
    server = Server(
        "x25519", [group], PicTask("neighbors"), (shuffler.kem_public_key, shuffler.verify_key), identity=ident
    )
    view = shuffler.open(server.signed_params())
    c = Client(server.verify_key, 0, shuffler_key=shuffler.verify_key, credential=shuffler.enrolment.enroll(),
               policy=ClientPolicy.permissive())  # fmt: skip
    c.join(server.signed_params(), view)
    c.prepare([0.0, 0.0])  # deployment: no rng given
    c2 = Client(server.verify_key, 0, shuffler_key=shuffler.verify_key, credential=shuffler.enrolment.enroll(),
                policy=ClientPolicy.permissive())  # fmt: skip
    c2.join(server.signed_params(), view)
    c2.prepare([0.0, 0.0], np.random.default_rng(0))  # simulation: numpy's generator, reproducible
    assert used == [1]
