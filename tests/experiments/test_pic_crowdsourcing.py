"""pic-crowdsourcing (PIC §7.1, Figs 5-7): F_PIC rounds, budgets from the round's plan, hand-computed metrics."""

import math
from pathlib import Path

import numpy as np
import pytest

from shuffledp.datasets import SpatialInstance, synthetic_instance
from shuffledp.experiments import pic_crowdsourcing as pcs
from shuffledp.experiments.pic_common import COLUMNS, findings_line, ideal_partners, plan, randomize_groups
from shuffledp.experiments.pic_crowdsourcing import (
    MATCHES_IDEAL,
    MAX_MATCHING,
    MIN_WEIGHT,
    REAL_SECONDS,
    claims,
    matches_ideal,
    real_round_rows,
    run_instance,
    run_real_round,
)
from shuffledp.experiments.progress import ProgressReporter
from shuffledp.experiments.registry import ExperimentContext
from shuffledp.protocols.pic.round import plan_groups, run_round
from shuffledp.tasks import NO_MATCH, min_weight_matching, radius_matching


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
    _, privacy = plan_groups(pcs.round_config("laplace", 1.0), [("users", 50), ("workers", 30)])
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


def test_pic_rounds_are_priced_at_n_i_minus_1_reports_as_appendix_b(tmp_path):
    """Appendix B: n' = n_i - 1 per group; our accountant's n counts the victim's report, as n' = |G - C| does."""
    from shuffledp.accounting import local_epsilon
    from shuffledp.randomizers.registry import make_randomizer

    sizes = [("users", 50), ("workers", 30)]
    inst = synthetic_instance(50, 30, np.random.default_rng(4))
    rows = run_instance(
        inst, "synthetic", 0, _ctx(tmp_path), (0,), randomizers=(("Laplace", "laplace"),), epsilons=(1.0,)
    )
    pic = {r["metric"]: r["local_epsilon"] for r in rows if r["model"] == "PIC"}
    for metric, (_, n) in zip(("l2_error", "l2_error_workers"), sizes, strict=True):
        priced = local_epsilon(1.0, n - 1, 0.01 / n, family=lambda e: make_randomizer("laplace", e, dim=2))
        assert pic[metric] == priced
    A, B = inst.groups()
    result = run_round([("users", A), ("workers", B)], pcs.round_config("laplace", 1.0), np.random.default_rng(0),
                       ideal=True)  # fmt: skip
    assert [(p.n_prime_planned, p.n_prime) for p in result.privacy] == [(49, 49), (29, 29)]


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


def _claim_rows():
    """Rows where every paper claim holds: PIC halves LDP's costs, Minkowski best by 20% or more and more so as x
    grows, PrivUnit second by l2 error but last by travel cost, clear matching ratio 1."""
    from shuffledp.experiments.pic_common import EPSILONS, RANDOMIZERS

    rows = []
    for d in ("gmission", "everysender"):
        for k, (label, _) in enumerate(RANDOMIZERS):
            for e in EPSILONS:
                for model, scale in (("LDP", 2.0), ("PIC", 1.0)):
                    gap = 0.0 if label == "Minkowski" else 0.2 * (0.5 if label == "PrivUnit" else k) * (1 + e)
                    travel = 0.0 if label == "Minkowski" else 1.0 + (10.0 if label == "PrivUnit" else k)
                    rows += [_row(d, model, label, e, "l2_error", scale * (1 + gap)),
                             _row(d, model, label, e, "travel_cost", scale * (10 + travel)),
                             _row(d, model, label, e, "success_ratio", (0.5 - 0.1 * (gap > 0) - min(gap, 3) / 10) / scale)]  # fmt: skip
        rows += [_row(d, "non-private", "non-private", math.nan, "success_ratio", 1.0)]
    return rows


def test_claims_verdicts():
    rows = _claim_rows()
    found = claims(rows)
    assert [c.verdict for c in found] == ["held"] * len(found)
    assert findings_line(found) == f"paper's claims: {len(found)} held, 0 partly held, 0 not held"
    rows = [dict(r, value=r["value"] * 3) if (r["model"], r["metric"], r["randomizer"]) == ("PIC", "l2_error", "Minkowski")
            else r for r in rows]  # fmt: skip
    fig5 = next(c for c in claims(rows) if c.claim.startswith("Fig. 5: the error is higher in the LDP model"))
    assert fig5.verdict == "partly" and "exceptions" in fig5.ours
    assert "eps0 = 1.00 x:" in fig5.ours  # the rows' PIC local epsilon is x itself: no amplification


def test_claims_cover_every_statement_of_section_7_1_with_a_verdict():
    """§7.1's statements on Figs 5-7, each a claim with our numbers: on par / significantly lower (LDP), lowest and
    growing advantage (PIC), PIC above LDP, PrivUnit's travel cost, the matching ratios."""
    names = [c.claim for c in claims(_claim_rows())]
    for start in ("Fig. 5, LDP model: Minkowski's single-report error is on par", "Fig. 5, LDP model: Minkowski's "
                  "error is significantly lower", "Fig. 5, PIC model: Minkowski has the lowest", "Fig. 5, PIC model: "
                  "Minkowski's advantage grows", "Fig. 5: the error is higher in the LDP model", "Fig. 7: the PIC "
                  "model enhances the matching ratio", "Fig. 6: PrivUnit has good single-report errors",
                  "Fig. 6, PIC model: Minkowski has the lowest travel cost", "Fig. 7: the matching ratio over clear",
                  "Fig. 7, PIC model: Minkowski significantly outperforms"):  # fmt: skip
        assert any(n.startswith(start) for n in names), start
    # Minkowski's error doubled at eps <= 1 (about 1.7x the best other's: not on par), divided by x above
    rows = [dict(r, value=r["value"] * (2.0 if r["epsilon"] <= 1 else 1 / r["epsilon"]))
            if r["randomizer"] == "Minkowski" and r["metric"] == "l2_error" else r for r in _claim_rows()]  # fmt: skip
    verdicts = {c.claim.split(" (")[0]: c for c in claims(rows)}
    assert (
        verdicts[
            "Fig. 5, LDP model: Minkowski's single-report error is on par with the others for epsilon <= 1"
        ].verdict
        == "not"
    )
    grows = verdicts["Fig. 5, PIC model: Minkowski's advantage grows as epsilon_c grows"]
    assert grows.verdict == "held"  # Minkowski's error falls as 1/x while the others' rise: the advantage grows
    rows = [dict(r, value=r["value"] * r["epsilon"]) if r["randomizer"] == "Minkowski" and r["metric"] == "l2_error" and r["model"] == "PIC" else r
            for r in _claim_rows()]  # fmt: skip
    grows = next(c for c in claims(rows) if c.claim.startswith("Fig. 5, PIC model: Minkowski's advantage grows"))
    assert grows.verdict != "held" and "fell at" in grows.ours


def test_real_protocol_round_gives_its_f_pic_twins_outputs(tmp_path):
    """Full mode's real round (run_round: HPKE, shuffler, signed board) on a small instance: every output is
    F_PIC's on the same reports, and those are the reports of the twin F_PIC round in `run_instance`."""
    inst = synthetic_instance(40, 30, np.random.default_rng(0))
    real = run_real_round(inst, _ctx(tmp_path), (0, 0))
    assert real.result.metrics["outputs_verified"] is True  # a real round, with its own check
    assert real.matches
    values = {r["metric"]: r["value"] for r in real_round_rows(real, "synthetic", 0)}
    assert values[MATCHES_IDEAL] == 1.0 and values[REAL_SECONDS] > 0.0
    twin = run_instance(inst, "synthetic", 0, _ctx(tmp_path), (0, 0), randomizers=(("Minkowski", "minkowski"),),
                        epsilons=(0.5, 1.0))  # fmt: skip
    (cost,) = [r["value"] for r in twin if r["model"] == "PIC" and r["epsilon"] == 1.0 and r["metric"] == "travel_cost"]
    assert real.result.utility["travel_cost"] == cost


def test_a_real_round_that_differs_from_f_pic_is_reported(tmp_path):
    inst = synthetic_instance(40, 30, np.random.default_rng(0))
    real = run_real_round(inst, _ctx(tmp_path), (0, 0))
    identity, reports = real.result.identity_outputs, real.reports
    i, j = np.flatnonzero(real.ideal[0] != NO_MATCH)[:2]
    swapped = [p.copy() for p in real.ideal]
    swapped[0][[i, j]] = swapped[0][[j, i]]
    dropped = [p.copy() for p in real.ideal]
    dropped[0][i] = NO_MATCH
    moved = [y.copy() for y in reports]
    moved[1][real.ideal[0][i]] += 1e-9  # user i's partner reported something else
    assert matches_ideal(MIN_WEIGHT, identity, reports, real.ideal)
    assert not matches_ideal(MIN_WEIGHT, identity, reports, swapped)
    assert not matches_ideal(MIN_WEIGHT, identity, reports, dropped)
    assert not matches_ideal(MIN_WEIGHT, identity, moved, real.ideal)
    assert not matches_ideal(MIN_WEIGHT, identity[:1], reports, real.ideal)
    # the claim: held when every data set's real round matched, partly when one did not
    real_rows = [r for d in ("gmission", "everysender") for r in real_round_rows(real, d, 0)]
    last = claims(_claim_rows() + real_rows)[-1]
    assert last.claim.startswith("The real protocol gives F_PIC's outputs") and last.verdict == "held"
    real_rows[0]["value"] = 0.0
    last = claims(_claim_rows() + real_rows)[-1]
    assert last.verdict == "partly" and "gmission #0: NOT equal" in last.ours
    assert not any(c.claim.startswith("The real protocol") for c in claims(_claim_rows()))  # --quick: no real round


def test_summary_and_caption_say_where_the_values_come_from(tmp_path):
    """Figs 5-7's values are not in the paper's text (said plainly); the caption names F_PIC and, in full mode, the
    point a real-protocol round reproduced."""
    import matplotlib.pyplot as plt

    rows = _claim_rows()
    rows += [_row(d, "non-private", "non-private", math.nan, m, 1.0) for d in ("gmission", "everysender")
             for m in ("l2_error", "travel_cost")]  # fmt: skip
    assert "Figures 5-7's values are not in the paper's text" in pcs._summary(rows, (0,))
    assert "no round ran through the real protocol" in pcs.provenance(rows)
    real = run_real_round(synthetic_instance(40, 30, np.random.default_rng(0)), _ctx(tmp_path), (0, 0))
    full = rows + [r for d in ("gmission", "everysender") for r in real_round_rows(real, d, 0)]
    text = pcs.provenance(full)
    assert "Every PIC-model value comes from rounds through F_PIC" in text
    assert "Minkowski, epsilon_c = 1" in text and "gmission #0: equal" in text and "everysender #0: equal" in text
    fig = pcs._figure(full)
    try:
        assert any(text in t.get_text().replace("\n", " ") for t in fig.texts)
    finally:
        plt.close(fig)
