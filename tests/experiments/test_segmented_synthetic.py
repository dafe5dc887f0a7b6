"""segmented-synthetic in quick mode: the CSV layout and issue 9's Results acceptance, read from the CSV."""

from __future__ import annotations

import csv
import math

import pytest

from shuffledp.experiments import run_experiment
from shuffledp.experiments.segmented_common import COLUMNS, COMPETITORS, OURS_OPT, SETTINGS
from shuffledp.experiments.segmented_synthetic import DATASET, QUICK_REPEATS


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
    from shuffledp.experiments.segmented_common import N_VALUES, figure
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
