"""pic-crowdsourcing (PIC §7.1, Figs 5-7): F_PIC rounds, budgets from the round's plan, hand-computed metrics."""

import math
from pathlib import Path

import numpy as np
import pytest

from shuffledp.datasets import SpatialInstance, synthetic_instance
from shuffledp.experiments.pic_common import COLUMNS, findings_line, ideal_partners, plan, randomize_groups
from shuffledp.experiments.pic_crowdsourcing import MAX_MATCHING, MIN_WEIGHT, claims, run_instance
from shuffledp.experiments.progress import ProgressReporter
from shuffledp.experiments.registry import ExperimentContext
from shuffledp.protocols.pic.round import RoundConfig, plan_groups
from shuffledp.tasks import min_weight_matching, radius_matching


def _ctx(tmp_path: Path) -> ExperimentContext:
    return ExperimentContext(quick=True, seed=3, out_dir=tmp_path, progress=ProgressReporter(False))


def test_f_pic_outputs_decode_to_the_matching_of_the_estimates():
    inst = synthetic_instance(60, 40, np.random.default_rng(0))
    A, B = inst.groups()
    groups, _ = plan(MIN_WEIGHT, "minkowski", 2.0, [("users", 60), ("workers", 40)])
    reports, est = randomize_groups(groups, [A, B], np.random.default_rng(1))
    for task, direct in ((MIN_WEIGHT, min_weight_matching(*est)), (MAX_MATCHING, radius_matching(*est, 0.4))):
        pa, pb = ideal_partners(task, groups, reports, np.random.default_rng(2))
        assert np.array_equal(pa, direct.partner_a) and np.array_equal(pb, direct.partner_b)


def test_pic_budgets_are_the_round_plan(tmp_path):
    inst = synthetic_instance(50, 30, np.random.default_rng(4))
    rows = run_instance(
        inst, "synthetic", 0, _ctx(tmp_path), (0,), randomizers=(("Laplace", "laplace"),), epsilons=(1.0,)
    )
    _, privacy = plan_groups(RoundConfig(MIN_WEIGHT, "laplace", 1.0), [("users", 50), ("workers", 30)])
    pic = {r["metric"]: r for r in rows if r["model"] == "PIC"}
    assert pic["l2_error"]["local_epsilon"] == privacy[0].local_epsilon
    assert pic["l2_error_workers"]["local_epsilon"] == privacy[1].local_epsilon
    assert privacy[0].delta == pytest.approx(0.01 / 50)
    ldp = {r["metric"]: r for r in rows if r["model"] == "LDP"}
    assert ldp["l2_error"]["local_epsilon"] == 1.0
    assert all(set(r) == set(COLUMNS) for r in rows)
    assert {r["metric"] for r in rows} == {
        "l2_error",
        "l2_error_users",
        "l2_error_workers",
        "travel_cost",
        "success_ratio",
    }


def test_non_private_reference_on_a_hand_computed_instance(tmp_path):
    """Users (0,0), (0.5,0); workers (0,0.3), (0.9,0.9): min-weight pairs them in order, cost 0.3 + sqrt(0.16 + 0.81);
    within radius 0.4 only the first pair is allowed (0.985 > 0.4), so 1 success of min(2, 2)."""
    A = np.array([[0.0, 0.0], [0.5, 0.0]])
    B = np.array([[0.0, 0.3], [0.9, 0.9]])
    inst = SpatialInstance("hand", A, B, np.full(2, 0.4), (-1.0, 1.0), "test")
    rows = run_instance(
        inst, "hand", 0, _ctx(tmp_path), (0,), randomizers=(("Minkowski", "minkowski"),), epsilons=(5.0,)
    )
    ref = {r["metric"]: r["value"] for r in rows if r["model"] == "non-private"}
    assert ref["travel_cost"] == pytest.approx(0.3 + math.sqrt(0.4**2 + 0.9**2))
    assert ref["success_ratio"] == pytest.approx(0.5)
    assert ref["l2_error"] == 0.0
    for r in rows:
        if r["metric"] == "success_ratio":
            assert 0.0 <= r["value"] <= 1.0


def _row(dataset, model, randomizer, eps, metric, value):
    return {"dataset": dataset, "instance": 0, "model": model, "randomizer": randomizer, "epsilon": eps,
            "local_epsilon": eps, "metric": metric, "value": value}  # fmt: skip


def test_claims_verdicts():
    from shuffledp.experiments.pic_common import EPSILONS, RANDOMIZERS

    rows = []
    for d in ("gmission", "everysender"):
        for k, (label, _) in enumerate(RANDOMIZERS):
            for e in EPSILONS:
                for model, scale in (("LDP", 2.0), ("PIC", 1.0)):
                    bonus = 0.0 if label == "Minkowski" else 0.1 * (k + 1)
                    rows += [_row(d, model, label, e, "l2_error", scale * (1 + bonus)),
                             _row(d, model, label, e, "travel_cost", scale * (10 + bonus)),
                             _row(d, model, label, e, "success_ratio", (0.5 - bonus / 10) / scale)]  # fmt: skip
        rows += [_row(d, "non-private", "non-private", math.nan, "success_ratio", 1.0)]
    verdicts = [c.verdict for c in claims(rows)]
    assert verdicts == ["held"] * 6
    assert findings_line(claims(rows)) == "paper's claims: 6 held, 0 partly held, 0 not held"
    rows = [dict(r, value=r["value"] * 3) if r["model"] == "PIC" and r["metric"] == "l2_error" else r for r in rows]
    first = claims(rows)[0]
    assert first.verdict == "partly" and "exceptions" in first.ours
    assert findings_line(claims(rows)).startswith(
        "paper's claims: 5 held, 1 partly held, 0 not held (not fully: PIC model"
    )
