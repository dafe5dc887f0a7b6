"""metric-synthetic (metric paper Table 2, Figure 4) in quick mode."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from shuffledp.accounting import metric as M
from shuffledp.experiments import metric_common as C
from shuffledp.experiments import run_experiment
from shuffledp.experiments.metric_synthetic import COLUMNS, FIGURE_EPSILON, TABLE2, claims, mae_table


@pytest.fixture(scope="module")
def output(tmp_path_factory):
    target = run_experiment("metric-synthetic", tmp_path_factory.mktemp("out"), quick=True, seed=1, progress=False)
    with (target / "results.csv").open() as fh:
        reader = csv.DictReader(fh)
        assert reader.fieldnames == COLUMNS
        rows = [{**r, "n": int(r["n"]), "epsilon": float(r["epsilon"]), "value": float(r["value"])} for r in reader]
    rows = [r for r in rows if r["error_metric"] == "absolute_error"]
    return target, rows


def test_table2_orderings_and_sgdl_is_geo_central(output):
    target, rows = output
    mae = mae_table(rows)
    for n, eps in TABLE2:
        sgdl, geo, local = (mae[(n, eps, m)] for m in ("sgdl-shuffle", "geo-shuffle", "geo-local"))
        assert sgdl < geo < local
        a = math.exp(-eps)
        central = 2 * a / (1 - a * a) / n  # E|discrete Laplace| / n: SGDL-Shuffle without truncation
        assert sgdl == pytest.approx(central, rel=0.25)  # 300 runs: several standard errors
        geo_local = np.sqrt(n * 2 * a / (1 - a) ** 2) / n * math.sqrt(2 / math.pi)  # normal approximation of the sum
        assert local == pytest.approx(geo_local, rel=0.25)
    assert "| 50 | 0.2 |" in (target / "summary.md").read_text()


def test_rr_shuffle_omitted_below_theorem_3_1(output):
    target, rows = output
    assert not any(r["mechanism"] == "rr-shuffle" and r["n"] == 20 for r in rows)
    assert any(r["mechanism"] == "rr-shuffle" and r["n"] == 50 for r in rows)
    assert "n = 20, eps = 0.1" in (target / "summary.md").read_text()
    assert (target / "figure.png").stat().st_size > 10_000


def test_table2_chain_and_factor_2_where_the_setting_is_the_papers(output):
    """Acceptance (issue 11): SGDL-Shuffle < Geo-Shuffle < RR-Shuffle (where valid) and Geo-Local, values within 2x.

    RR-Shuffle vs Geo-Local follows the paper where the paper's own gap exceeds 20% (it is worse at n = 50,
    eps = 0.2, better at n = 200); elsewhere the paper has them within 10% and ours need about 1.5x more random bits
    (Theorem 3.1 with natural logarithms: n >= 35 at eps = 0.1 where the paper reports 23).  Within 2x: Geo-Local and
    RR-Shuffle in every row, Geo-Shuffle (Theorem 4.1 tuning) where the paper's value is not below what its own
    eps_geo gives (not at n = 50, eps = 0.5 and n = 100, eps = 0.3: ours 3x the paper's there, as the normal
    approximation of SGDL(n, e^-eps_geo) predicts), SGDL-Shuffle nowhere (the paper's values lie below Geo-Central).
    The same comparison under the paper's tuning (d = 1, RR's inferred overshoot), with the summary's reasons where
    it fails: test_metric_tables.py.
    """
    _, rows = output
    mae = mae_table(rows)
    for (n, eps), (p_local, p_rr, p_geo, _) in TABLE2.items():
        local, rr, geo, sgdl = (
            mae.get((n, eps, m)) for m in ("geo-local", "rr-shuffle", "geo-shuffle", "sgdl-shuffle")
        )
        assert sgdl < geo < min(v for v in (rr, local) if v is not None)
        assert 0.5 <= local / p_local <= 2 and 0.5 <= rr / p_rr <= 2
        if max(p_rr, p_local) / min(p_rr, p_local) > 1.2:
            assert (rr < local) == (p_rr < p_local)
        if (n, eps) not in {(50, 0.5), (100, 0.3)}:
            assert 0.5 <= geo / p_geo <= 2
        else:
            a = math.exp(-M.geo_shuffle_local_epsilon(eps, 1e-4, n, method="theorem-4.1"))
            assert geo == pytest.approx(math.sqrt(2 * n * a) / (1 - a) / n * math.sqrt(2 / math.pi), rel=0.25)


def _table2_as_paper() -> dict:
    """An MAE table equal to Table 2 in every column (ours and matched), and RR-Shuffle first at 23 users on Fig. 4's grid."""
    mae = {}
    for (n, eps), paper in TABLE2.items():
        for column, value in zip(C.PAPER_COLUMNS, paper):
            mae[(n, eps, column)] = mae[(n, eps, C.MATCHED[column])] = value
    for n in (20, 23, 35):
        mae[(n, FIGURE_EPSILON, "geo-local")] = 1.0
        for m in ("rr-shuffle", "rr-shuffle-paper-tuning"):
            if n >= 23:
                mae[(n, FIGURE_EPSILON, m)] = 1.0
    return mae


def _certified_noise(boost: float) -> dict:
    """Noise parameters of the certified columns per row of Table 2: Geo-Shuffle at ``boost`` x Geo-Local's eps_geo
    (1: no boost, as at k = 1000), RR-Shuffle at p = 0.9 (more error than either)."""
    noise = {}
    for n, eps in TABLE2:
        noise |= {(n, eps, "geo-local"): eps, (n, eps, "geo-shuffle-certified"): boost * eps}
        noise[(n, eps, "rr-shuffle-certified")] = 0.9
    return noise


def test_claims_follow_the_ordering_the_factor_2_rule_and_rrs_first_n():
    mae = _table2_as_paper()
    for (n, eps), paper in TABLE2.items():
        for column, value in zip(C.PAPER_COLUMNS, paper):
            if C.CERTIFIED[column] is not None:
                mae[(n, eps, C.CERTIFIED[column])] = value
    mae[(20, FIGURE_EPSILON, "rr-shuffle-certified")] = 1.0
    noise = _certified_noise(boost=3.0)
    # SGDL-Shuffle has no certified column: a quarter of Table 2's cells cannot match certified
    assert [c.verdict for c in claims(mae, noise)] == ["held", "partly", "held"]
    for m in ("geo-shuffle", "geo-shuffle-paper-tuning"):  # behind Geo-Local in one row, and 2 / 0.52 off Table 2
        mae[(50, 0.2, m)] = 2.0
    noise[(50, 0.2, "geo-shuffle-certified")] = 0.2  # no certified boost in that row
    del mae[(23, FIGURE_EPSILON, "rr-shuffle")]  # ours first at 35, only the paper's tuning at 23
    ordering, table, rr = claims(mae, noise)
    assert (ordering.verdict, table.verdict, rr.verdict) == ("partly", "partly", "partly")
    assert "not at n = 50, eps = 0.2" in ordering.ours and "18 of 24 cells" in table.ours and "35 (ours)" in rr.ours
    del mae[(23, FIGURE_EPSILON, "rr-shuffle-paper-tuning")]
    assert claims(mae, noise)[2].verdict == "not"


def test_ordering_claim_is_rated_on_the_certified_columns_and_says_when_it_holds_only_under_the_theorems():
    """Certified Geo-Shuffle without a boost (k = 1000): the ordering holds in no row, though every theorem-tuned
    row orders as the paper says (was "held" from the theorem tunings alone)."""
    ordering = claims(_table2_as_paper(), _certified_noise(boost=1.0))[0]
    assert ordering.verdict == "not"
    assert "0 of 6 rows" in ordering.ours and "6 of 6 rows" in ordering.ours
    assert "holds only under the theorem tuning" in ordering.ours and C.NOT_A_GUARANTEE in ordering.ours
