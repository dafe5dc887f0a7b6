"""metric-synthetic (metric paper Table 2, Figure 4) in quick mode."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from shuffledp.experiments import run_experiment
from shuffledp.experiments.metric_synthetic import COLUMNS, TABLE2, mae_table


@pytest.fixture(scope="module")
def output(tmp_path_factory):
    target = run_experiment("metric-synthetic", tmp_path_factory.mktemp("out"), quick=True, seed=1, progress=False)
    with (target / "results.csv").open() as fh:
        reader = csv.DictReader(fh)
        assert reader.fieldnames == COLUMNS
        rows = [{**r, "n": int(r["n"]), "epsilon": float(r["epsilon"]), "value": float(r["value"])} for r in reader]
    return target, rows


def test_table2_orderings_and_sgdl_is_geo_central(output):
    target, rows = output
    mae = mae_table(rows)
    for n, eps in TABLE2:
        sgdl, geo, local = (mae[(n, eps, m)] for m in ("sgdl-shuffle", "geo-shuffle", "geo-local"))
        assert sgdl < geo < local
        a = math.exp(-eps)
        central = 2 * a / (1 - a * a) / n  # E|discrete Laplace| / n: SGDL-Shuffle without truncation
        assert sgdl == pytest.approx(central, rel=0.25)  # 100 runs: a few standard errors
        geo_local = np.sqrt(n * 2 * a / (1 - a) ** 2) / n * math.sqrt(2 / math.pi)  # normal approximation of the sum
        assert local == pytest.approx(geo_local, rel=0.25)
    assert "| 50 | 0.2 |" in (target / "summary.md").read_text()


def test_rr_shuffle_omitted_below_theorem_3_1(output):
    target, rows = output
    assert not any(r["mechanism"] == "rr-shuffle" and r["n"] == 20 for r in rows)
    assert any(r["mechanism"] == "rr-shuffle" and r["n"] == 50 for r in rows)
    assert "n = 20, eps = 0.1" in (target / "summary.md").read_text()
    assert (target / "figure.png").stat().st_size > 10_000
