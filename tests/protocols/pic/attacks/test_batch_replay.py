"""Attack 5: the shuffler -> server link.  Batches must be signed by the shuffler (round, group,
batch id, count, digest); the server refuses altered, replayed and short batches with a named
reason, and one replayed envelope no longer costs its sender the output.
"""

import numpy as np
import pytest
from pic_attack_harness import Rig

from shuffledp.errors import ShuffleDPError
from shuffledp.protocols.pic.computation import PicTask


def _round(n=10, threshold=None, seed=7):
    rng = np.random.default_rng(seed)
    rig = Rig(PicTask("min-weight"), n=n, threshold=threshold)
    for g in (0, 1):
        rig.honest(g, n, rng)
    return rig


def test_a_replayed_envelope_in_a_batch_is_refused_and_its_sender_still_served():
    rig = _round()
    batches = {g: rig.release(g) for g in (0, 1)}
    replayed = rig.append_copy(batches[0]) if hasattr(rig, "append_copy") else list(batches[0]) + [batches[0][3]]
    try:
        rig.deliver(0, replayed)
    except ShuffleDPError as exc:
        assert getattr(exc, "reason", None) in {"signature", "digest", "count"}
        assert sum(rig.server.refused_batches.values()) == 1
    rig.run_server(batches) if hasattr(rig, "append_copy") else rig.run_server({0: replayed, 1: batches[1]})
    assert all(y is not None for y in rig.retrieve_all().values()), "a user lost its output to a replay"


def test_a_short_unsigned_batch_is_refused():
    rig = _round(threshold=10)
    batch = rig.release(0)
    short = rig.forge_batch(batch, keep=2) if hasattr(rig, "forge_batch") else list(batch)[:2]
    with pytest.raises(ShuffleDPError) as e:
        rig.deliver(0, short)
    assert getattr(e.value, "reason", None) in {"signature", "short"}


def test_a_batch_replayed_to_the_server_is_refused():
    rig = _round()
    batch = rig.release(0)
    rig.deliver(0, batch)
    with pytest.raises(ShuffleDPError) as e:
        rig.deliver(0, batch)
    assert getattr(e.value, "reason", None) == "replay"
