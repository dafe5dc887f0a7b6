"""Attack 1: one user sends a huge but finite report x' = [1e200, -1e200]; the round must still complete.

Laplace reports can be any finite vector, so the server's range check lets it through; the
server must then map it into the task's domain (post-processing) so f never fails, and every
honest user still gets the output F_PIC gives on the same list.
"""

import numpy as np
import pytest

from pic_attack_harness import Rig
from shuffledp.protocols.pic.computation import PicTask

TASKS = [PicTask("min-weight"), PicTask("max-matching", radius=0.4), PicTask("neighbors", k=3)]


@pytest.mark.xfail(strict=True, reason="issue 17: fails on 4b2a048, fixed later on this branch")
@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
@pytest.mark.parametrize("bad", [[1e200, -1e200], [1e308, -1e308], [-1.7e308, 5e-324]])
def test_one_oversized_report_does_not_stop_the_round(task, bad):
    rng = np.random.default_rng(1)
    rig = Rig(task, n=10)
    for g in range(task.n_groups):
        rig.honest(g, 9 if g == 0 else 10, rng)
    attacker = rig.client(0)
    rig.submit(rig.envelope(attacker, bad), attacker)
    rig.run_server()
    outputs = rig.retrieve_all()
    assert all(y is not None for y in outputs.values())  # every user, the attacker too, is served
