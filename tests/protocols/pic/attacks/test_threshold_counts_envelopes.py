"""Attack 4: the threshold must count distinct enrolled people with valid reports, not envelopes.

One honest envelope plus 49 random-byte envelopes of the right size met threshold 50; one
sybil with fresh one-time keys filled a group alone.  The shuffler admits one envelope per
enrolled user per group, and the server re-checks that the *valid* reports meet the threshold.
"""

import contextlib
import secrets

import numpy as np
import pytest
from pic_attack_harness import Rig

from shuffledp.errors import AnonymityThresholdError, ShuffleDPError
from shuffledp.protocols.pic.computation import PicTask


def _try_round(rig):
    try:
        rig.run_server()
    except AnonymityThresholdError:
        return False
    return True


def test_random_envelopes_do_not_fill_a_group():
    rng = np.random.default_rng(4)
    rig = Rig(PicTask("min-weight"), n=50)
    honest = rig.honest(0, 1, rng)[0]
    size = len(rig.envelope(honest, [0.0, 0.0]))
    prefix = rig.envelope(honest, [0.0, 0.0])[:23]
    for _ in range(49):
        with contextlib.suppress(ShuffleDPError):
            rig.submit(prefix + secrets.token_bytes(size - 23))
    rig.honest(1, 50, rng)
    assert not _try_round(rig), "a group of one honest report was published"


def test_one_sybil_with_fresh_keys_does_not_fill_a_group():
    rng = np.random.default_rng(5)
    rig = Rig(PicTask("min-weight"), n=50)
    rig.honest(0, 1, rng)
    sybil = rig.enrol() if hasattr(rig, "enrol") else None
    for _ in range(49):
        c = rig.client(0, credential=sybil) if sybil is not None else rig.client(0)
        with contextlib.suppress(ShuffleDPError):
            rig.submit(rig.envelope(c, rng.uniform(-1, 1, 2)), c)
    rig.honest(1, 50, rng)
    assert not _try_round(rig), "one enrolled attacker filled a group of 50"


def test_server_refuses_to_publish_when_valid_reports_fall_below_the_threshold():
    rng = np.random.default_rng(6)
    rig = Rig(PicTask("min-weight"), n=10, threshold=10)
    for g in (0, 1):
        rig.honest(g, 10, rng)
    batches = {g: rig.release(g) for g in (0, 1)}
    junk = rig.corrupt_batch(batches[0], count=2) if hasattr(rig, "corrupt_batch") else _old_corrupt(batches[0], 2)
    batches[0] = junk
    with pytest.raises(AnonymityThresholdError, match="valid"):
        rig.run_server(batches)


def _old_corrupt(batch, count):
    out = list(batch)
    for i in range(count):
        e = bytearray(out[i])
        e[-1] ^= 1
        out[i] = bytes(e)
    return out
