"""Attack 6 (issue item 6, deliverable 7): the exposure count |U| must bound the honest users whose
pseudonym a coalition C learns through outputs and posts, wherever C places its reports.

A corrupted user placed at the centre of a cluster is among the k nearest neighbours of many
honest users (large in-degree).  An honest client posts only where the rules let it; count the
honest users whose posts reach the coalition and compare with ``PicTask.exposure(|C|)``.
"""

import numpy as np
import pytest
from pic_attack_harness import Rig

from shuffledp.errors import ShuffleDPError
from shuffledp.protocols.pic.computation import PicTask


def _ring(n, rng):
    """Honest reports on a ring of radius 0.3 around the origin (small jitter)."""
    angles = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.column_stack([np.cos(angles), np.sin(angles)]) * 0.3 + rng.normal(0, 1e-3, (n, 2))


@pytest.mark.parametrize("k", [1, 3, 5])
def test_a_hub_reaches_no_more_honest_users_than_the_exposure_rule_charges(k):
    rng = np.random.default_rng(8)
    task = PicTask("neighbors", k=k)
    n = {1: 5, 3: 12, 5: 12}[k]  # ring points closer to each other than to the centre: fewer than k
    rig = Rig(task, n=n + 1, threshold=n + 1)
    honest = []
    for x in _ring(n, rng):
        c = rig.client(0)
        rig.submit(rig.envelope(c, x), c)
        honest.append(c)
    hub = rig.client(0)
    rig.submit(rig.envelope(hub, [0.0, 0.0]), hub)  # the adversary's chosen x': everyone's nearest
    rig.run_server()
    rig.retrieve_all()
    hub_id = hub.pseudonym.to_bytes()
    reached = 0
    for c in honest:
        try:
            c.post_to(hub_id, b"my phone number")
            reached += 1
        except ShuffleDPError:
            pass  # the client's rules keep it from contacting the hub
    assert reached <= task.exposure(1), (
        f"one corrupted user reached {reached} honest users, |U| charged {task.exposure(1)}"
    )


def test_a_coalition_of_two_hubs_reaches_at_most_k_per_member():
    rng = np.random.default_rng(18)
    task = PicTask("neighbors", k=3)
    rig = Rig(task, n=18, threshold=18)
    honest = []
    for centre in ([0.5, 0.5], [-0.5, -0.5]):
        for x in _ring(8, rng) + centre:  # only the two ring neighbours are closer than the centre
            c = rig.client(0)
            rig.submit(rig.envelope(c, x), c)
            honest.append(c)
    hubs = []
    for centre in ([0.5, 0.5], [-0.5, -0.5]):
        h = rig.client(0)
        rig.submit(rig.envelope(h, centre), h)
        hubs.append(h.pseudonym.to_bytes())
    rig.run_server()
    rig.retrieve_all()
    reached = set()
    for c in honest:
        for hub in hubs:
            try:
                c.post_to(hub, b"my phone number")
                reached.add(id(c))
            except ShuffleDPError:
                pass
    in_degree = sum(1 for c in honest for r in c.partners if r.pseudonym in hubs)
    assert in_degree > task.exposure(2)  # the attack works on the k-NN graph ...
    assert len(reached) <= task.exposure(2)  # ... but not through the mutual-only post rule
