"""Attack 9: ``outputs_verified`` must catch a server that alters one report and drops another.

The check compares each user's output with an independent F_PIC evaluation on the reports the
clients submitted, not on the server's own list.
"""

import numpy as np
from pic_attack_harness import MaliciousServer

import shuffledp.protocols.pic.round as round_module
from shuffledp.datasets import synthetic_instance
from shuffledp.protocols.pic.computation import PicTask
from shuffledp.protocols.pic.round import RoundConfig, run_round


class AlterAndDrop(MaliciousServer):
    alter = {0: {0: [0.9, 0.9]}}
    drop = {1: [2]}


def test_a_server_that_alters_and_drops_reports_is_caught(monkeypatch):
    rng = np.random.default_rng(14)
    inst = synthetic_instance(30, 30, rng)
    monkeypatch.setattr(round_module, "Server", AlterAndDrop)
    config = RoundConfig(PicTask("min-weight"), "minkowski", 2.0, min_fraction=0.9)
    result = run_round([("users", inst.users), ("workers", inst.workers)], config, rng)
    assert result.metrics["outputs_verified"] is False


def test_an_honest_server_passes_the_independent_check():
    rng = np.random.default_rng(15)
    inst = synthetic_instance(30, 30, rng)
    config = RoundConfig(PicTask("min-weight"), "minkowski", 2.0)
    result = run_round([("users", inst.users), ("workers", inst.workers)], config, rng)
    assert result.metrics["outputs_verified"] is True
