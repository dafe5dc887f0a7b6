"""Parallel decryption starts its workers from a fork server, never by forking the caller.

Forking a process that runs threads (JAX's pool, a web server's executor) can deadlock the child on a lock
another thread held; CI saw "os.fork() was called ... JAX is multithreaded" from this pool. The test runs
a parallel round in a fresh interpreter that imported JAX and reads JAX's fork warning from its stderr.
"""

import subprocess
import sys

import pytest

pytest.importorskip("jax", reason="needs the fl extra (JAX warns when a process running it forks)")

SCRIPT = """
import warnings
warnings.simplefilter("always")
import jax.numpy as jnp
jnp.ones(3).block_until_ready()  # JAX's threads are running
import numpy as np
from shuffledp.datasets import synthetic_instance
from shuffledp.protocols.pic import server as server_module
from shuffledp.protocols.pic.computation import PicTask
from shuffledp.protocols.pic.round import RoundConfig, run_round
server_module.PARALLEL_MIN = 1
rng = np.random.default_rng(3)
inst = synthetic_instance(30, 30, rng)
result = run_round([("users", inst.users), ("workers", inst.workers)],
                   RoundConfig(PicTask("max-matching"), "minkowski", 1.0, workers=2), rng)
assert result.metrics["outputs_verified"] is True
print("ok", [p.valid_reports for p in result.privacy])
"""


def test_parallel_round_in_a_process_running_jax():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "os.fork() was called" not in done.stderr, done.stderr[-2000:]
    assert done.stdout.strip() == "ok [30, 30]"
