"""SIGTERM to a process running the local services (``shuffledp demo``) stops the three services too."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

SCRIPT = """
import sys, time
from shuffledp.service.local import LocalServices
services = LocalServices(sys.argv[1])
try:
    services.start_all()
    print(" ".join(str(p.pid) for p in services.procs.values()), flush=True)
    time.sleep(600)
finally:
    services.stop()
"""


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_sigterm_to_the_parent_stops_every_service(tmp_path):
    parent = subprocess.Popen([sys.executable, "-c", SCRIPT, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    pids: list[int] = []
    try:
        pids = [int(p) for p in parent.stdout.readline().split()]
        assert len(pids) == 3 and all(alive(p) for p in pids)
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(timeout=30) == 128 + signal.SIGTERM
        end = time.monotonic() + 15
        while any(alive(p) for p in pids) and time.monotonic() < end:
            time.sleep(0.1)
        assert not [p for p in pids if alive(p)], "services left serving after SIGTERM to their parent"
    finally:
        parent.kill()
        for p in pids:
            if alive(p):
                os.kill(p, signal.SIGKILL)
