"""segmented-synthetic in quick mode: the CSV layout and issue 9's Results acceptance, read from the CSV."""

from __future__ import annotations

import csv
import math

import pytest

from shuffledp.experiments import run_experiment
from shuffledp.experiments.segmented_common import COLUMNS, COMPETITORS, N_VALUES, OURS_OPT, SETTINGS, claims
from shuffledp.experiments.segmented_synthetic import DATASET, QUICK_REPEATS, optimizer_claim


@pytest.fixture(scope="module")
def output(tmp_path_factory):
    target = run_experiment("segmented-synthetic", tmp_path_factory.mktemp("out"), quick=True, seed=0, progress=False)
    with (target / "results.csv").open() as fh:
        reader = csv.DictReader(fh)
        assert reader.fieldnames == COLUMNS
        rows = list(reader)
    return target, rows


def _cell(rows, n, s, setting):
    return [r for r in rows if (int(r["n"]), int(r["s"]), r["setting"]) == (n, s, setting)]


def _mse_and_se(row):
    mse = float(row["mse"])
    return mse, (float(row["mse_ci_high"]) - mse) / 1.96


def test_csv_rows_are_complete(output):
    target, rows = output
    assert {r["dataset"] for r in rows} == {DATASET}
    for s in (4, 8):
        for setting in SETTINGS:
            cell = _cell(rows, 5000, s, setting)
            assert sorted(r["method"] for r in cell) == sorted([*COMPETITORS, OURS_OPT])
            for r in cell:
                assert int(r["repeats"]) == QUICK_REPEATS
                assert float(r["mse_ci_low"]) < float(r["mse"]) < float(r["mse_ci_high"])
                assert (r["m"] == "") == (r["method"] in COMPETITORS)  # competitors do not depend on m
    assert (target / "figure.png").stat().st_size > 10_000
    summary = (target / "summary.md").read_text()
    assert "| 5000 | 4 | S1 |" in summary
    assert "## s = 8, S2: the optimizer's m against its multiples" in summary


@pytest.mark.parametrize("s, setting", [(s, st) for s in (4, 8) for st in SETTINGS])
def test_ours_at_the_optimizers_m_is_40_percent_below_the_best_competitor(output, s, setting):
    _, rows = output
    cell = _cell(rows, 5000, s, setting)
    ours, ours_se = _mse_and_se(next(r for r in cell if r["method"] == OURS_OPT))
    best, best_se = min(_mse_and_se(r) for r in cell if r["method"] in COMPETITORS)
    ratio = ours / best
    # Monte-Carlo tolerance: two standard errors of the ratio (delta method)
    tolerance = 2 * ratio * math.hypot(ours_se / ours, best_se / best)
    assert ratio - tolerance <= 0.60, (s, setting, ours, best)


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_optimal_m_decreases_from_5000_to_50000_users(output, setting):
    _, rows = output
    m = {
        int(r["n"]): float(r["m"])
        for r in rows
        if r["method"] == OURS_OPT and int(r["s"]) == 4 and r["setting"] == setting
    }
    assert m[50_000] < m[5_000]


def test_quick_figure_says_why_panels_are_empty_and_shows_the_optimizers_m():
    # fabricated rows (no simulation): the figure's layout only
    from shuffledp.experiments.segmented_common import figure
    from shuffledp.experiments.segmented_synthetic import design

    quick = design(quick=True)
    rows = []
    for n, s in quick.cells:
        for st in SETTINGS:
            base = {"n": n, "s": s, "setting": st, "mse_ci_low": 0.009, "mse_ci_high": 0.011}
            rows.append({**base, "m": 17.2 if s == 8 else 3.0, "method": OURS_OPT, "mse": 0.01})
            if (n, s) not in quick.optimum_only:
                rows += [{**base, "m": None, "method": c, "mse": 0.02} for c in COMPETITORS]
    fig = figure(rows, quick, "caption")
    panels = {ax.get_title(): ax for ax in fig.axes if ax.get_title()}
    assert len(panels) == len(SETTINGS) * 2 * len(N_VALUES)
    for st in SETTINGS:
        skipped = panels[f"{st}, s=8, n=50,000"]
        assert [t.get_text() for t in skipped.texts] == ["not run in\nquick mode"]
        assert "only the optimizer's m run" in [t.get_text() for t in panels[f"{st}, s=4, n=50,000"].texts]
        ax = panels[f"{st}, s=8, n=5,000"]
        assert ax.get_xlim()[0] < 0.1 and ax.get_xlim()[1] >= 17.2 * 2  # the star is inside, not on the edge
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_summary_computes_whether_the_optimizers_m_is_best_at_s8_s2(output):
    """The hardest cell's check is computed by the run (not quoted): m* is MSE-optimal among its multiples."""
    target, _ = output
    text = (target / "summary.md").read_text()
    section = text[text.index("## s = 8, S2: the optimizer's m against its multiples (computed") :]
    assert "| 0.5 |" in section and "| 1 |" in section and "| 2 |" in section
    assert "m* gives the least measured MSE of these" in section


def _rows(ours: dict[str, float], m_star: tuple[float, float]) -> list[dict]:
    """Ours at the optimizer's m (MSE per setting, m* at the smaller and the larger n) against one competitor at 1.0."""
    rows = []
    for n, m in zip(N_VALUES, m_star):
        for st in SETTINGS:
            base = {"n": n, "s": 4, "setting": st}
            rows.append({**base, "m": m, "method": OURS_OPT, "mse": ours[st], "mse_ci_high": 1.01 * ours[st]})
            rows.append({**base, "m": None, "method": "mm-shuffle", "mse": 1.0, "mse_ci_high": 1.01})
    return rows


def test_claims_count_the_reduction_the_trend_of_m_star_and_s3_over_s2():
    good = claims(_rows({"S1": 0.3, "S2": 0.5, "S3": 0.4}, (4.0, 1.0)), "paper's m*")
    assert [c.verdict for c in good] == ["held", "held", "held"]
    assert "50% to 70%" in good[0].ours and "paper's m*" in good[1].claim
    bad = claims(_rows({"S1": 0.3, "S2": 0.5, "S3": 0.7}, (1.0, 4.0)), "")
    assert [c.verdict for c in bad] == ["partly", "not", "not"]  # S3 misses 40% and trails S2; m* grows with n
    assert ">= 40% in 4 of 6 cells" in bad[0].ours


def test_optimizer_claim_holds_only_when_m_star_has_the_least_mse():
    assert optimizer_claim({0.5: 2.0, 1.0: 1.0, 2.0: 1.5}, 5_000, "S2").verdict == "held"
    missed = optimizer_claim({0.5: 2.0, 1.0: 1.0, 2.0: 0.9}, 5_000, "S2")
    assert missed.verdict == "not" and "least 0.9 at 2 m*" in missed.ours
