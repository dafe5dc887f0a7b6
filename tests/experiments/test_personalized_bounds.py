"""personalized-bounds (E-APES Figure 4) in quick mode: artefacts and the orderings that must hold."""

from __future__ import annotations

import csv

from shuffledp.experiments import run_experiment
from shuffledp.experiments.personalized_bounds import COLUMNS


def test_quick_run(tmp_path):
    target = run_experiment("personalized-bounds", tmp_path, quick=True, seed=2, progress=False)
    with (target / "results.csv").open() as fh:
        reader = csv.DictReader(fh)
        assert reader.fieldnames == COLUMNS
        rows = list(reader)
    assert len(rows) == 10 and (target / "figure.png").exists()
    for r in rows:
        lower, upper, weakest, victim = (float(r[k]) for k in ("lower", "upper", "weakest_budget", "victim_eps"))
        assert 0 < lower <= upper <= victim
        assert (r["eapes_below_lower"] == "True") == (float(r["eapes"]) < lower)
    assert "E-APES below our rigorous lower bound" in (target / "summary.md").read_text()
