"""Attack 3: split view.  The server signs a second parameter set with the same round id and a
KEM key used for one victim only; the victim's report must never reach the server under it.
Clients also enforce a local policy: no local epsilon, threshold or task outside what they accept.
"""

import dataclasses

import numpy as np
import pytest
from pic_attack_harness import Rig

from shuffledp.crypto import KemKeyPair
from shuffledp.errors import ShuffleDPError
from shuffledp.protocols.pic.computation import PicTask
from shuffledp.protocols.pic.messages import SignedRoundParams


def test_a_client_that_skips_the_view_check_is_still_refused_by_the_shuffler():
    rng = np.random.default_rng(31)
    rig = Rig(PicTask("min-weight"), n=4)
    victim_key = KemKeyPair.generate("x25519")
    split = dataclasses.replace(rig.params, server_kem_key=victim_key.public_key)
    from shuffledp.protocols.pic.messages import Submission, encode_report, seal_report

    c = rig.client(0)  # a client with its keys, sealing under the split parameters by hand
    inner = seal_report(split, 0, encode_report(c.pseudonym, [0.25, -0.5], split.group(0).report))
    forged = Submission.seal(split, 0, rig.enrol(), bytes(16), inner).to_bytes()
    with pytest.raises(ShuffleDPError) as e:
        rig.submit(forged)
    assert e.value.reason == "decrypt"  # the outer layer is bound to the shuffler's parameter hash
    rig.honest(0, 1, rng)


def test_a_victim_only_parameter_set_does_not_reach_the_server():
    rng = np.random.default_rng(3)
    rig = Rig(PicTask("min-weight"), n=8, threshold=8)
    victim_key = KemKeyPair.generate("x25519")
    split = dataclasses.replace(rig.params, server_kem_key=victim_key.public_key)
    split_signed = SignedRoundParams.sign(split, rig.server.identity.signing_key).to_bytes()
    for g in (0, 1):
        rig.honest(g, 8, rng)
    delivered = False
    try:
        victim = rig.client(0, signed=split_signed)  # the client checks the shuffler's view announcement
        rig.submit(victim.seal(np.array([0.25, -0.5])), victim)
        delivered = True
    except ShuffleDPError:
        pass  # refused by the client (its view check) or by the shuffler
    batch = rig.release(0)
    opened = [e for e in _inner(rig, batch) if _opens(rig, split, victim_key, e)]
    assert not opened, "the server isolated the victim's report with a victim-only key"
    assert not delivered or rig.shuffler.rejected


def _inner(rig, batch):
    return rig.inner_envelopes(batch) if hasattr(rig, "inner_envelopes") else list(batch)


def _opens(rig, params, key, envelope):
    try:
        rig.open_inner(params, key, envelope) if hasattr(rig, "open_inner") else _old_open(params, key, envelope)
        return True
    except ShuffleDPError:
        return False


def _old_open(params, key, envelope):
    from shuffledp.protocols.pic.messages import Envelope

    Envelope.from_bytes(envelope, params).open(params, key)


@pytest.mark.parametrize("field,value", [("local_epsilon", 700.0), ("threshold", 1)])
def test_clients_refuse_parameters_outside_their_local_policy(field, value):
    from shuffledp.errors import PolicyError
    from shuffledp.protocols.pic.client import ClientPolicy  # the policy a client is given at join time

    rig = Rig(PicTask("min-weight"), n=8, **{field: value})  # signed and announced: one view, but a bad one
    policy = ClientPolicy(max_local_epsilon=10.0, min_threshold=5, tasks=("min-weight",))
    with pytest.raises(PolicyError) as e:
        rig.client(0, policy=policy)
    assert e.value.reason == field.replace("_", "-")


def test_clients_refuse_a_task_outside_their_policy():
    from shuffledp.errors import PolicyError
    from shuffledp.protocols.pic.client import ClientPolicy

    rig = Rig(PicTask("neighbors", k=2), n=8)
    with pytest.raises(PolicyError) as e:
        rig.client(0, policy=ClientPolicy(min_threshold=5, tasks=("min-weight",)))
    assert e.value.reason == "task"
