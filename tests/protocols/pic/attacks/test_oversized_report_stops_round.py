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


# Deliverable 2: arbitrary finite reports (huge, tiny, duplicates, all equal) at every task, through a real
# round; the round completes and every user's output is F_PIC's on the same list of reports.
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from shuffledp.protocols.pic.ideal import ideal_pic  # noqa: E402

_finite = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 1.7976931348623157e308, -1.7976931348623157e308, 1e154, 1e-154]),
)
_report = st.lists(_finite, min_size=2, max_size=2)


@st.composite
def _groups(draw):
    """1 or 2 groups of 2..6 reports; sometimes all equal, sometimes with duplicates."""
    out = []
    for _ in range(2):
        n = draw(st.integers(2, 6))
        mode = draw(st.sampled_from(["free", "equal", "duplicates"]))
        if mode == "equal":
            out.append([draw(_report)] * n)
        elif mode == "duplicates":
            base = draw(st.lists(_report, min_size=1, max_size=2))
            out.append([base[i % len(base)] for i in range(n)])
        else:
            out.append(draw(st.lists(_report, min_size=n, max_size=n)))
    return out


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
@settings(max_examples=25, deadline=None)
@given(groups=_groups())
def test_any_finite_reports_complete_the_round_as_f_pic(task, groups):
    groups = groups[: task.n_groups]
    n = max(len(g) for g in groups)
    rig = Rig(task, n=n, threshold=min(len(g) for g in groups))
    for gid, reports in enumerate(groups):
        for x in reports:
            c = rig.client(gid)
            rig.submit(rig.envelope(c, x), c)
    rig.run_server()
    outputs = rig.retrieve_all()
    inputs = {}
    for gid, row in rig.clients.items():
        pseudonyms = np.array([np.frombuffer(c.pseudonym.to_bytes(), np.uint8) for c in row])
        inputs[gid] = (pseudonyms, np.array(groups[gid], dtype=np.float64))
    ideal = ideal_pic(rig.params, task, inputs, randomized=True)
    for gid, row in rig.clients.items():
        for c, y in zip(row, ideal.outputs[gid]):
            assert outputs[c] == y
