"""Every experiment's summary table writes numbers by the one rule (`shuffledp._util.numbers`, issue 16):
an infinite value is ``inf`` -- never "—", "-" or "n/a" -- with the reason in a note, not in the cell;
a dash means only "no value here".  The writers are called on hand-made rows (no experiment is run)."""

from __future__ import annotations

import math

import pytest

from shuffledp.experiments import amplification_bounds as A
from shuffledp.experiments import fl_composition as F
from shuffledp.experiments import metric_boost as B
from shuffledp.experiments import metric_common as C
from shuffledp.experiments import metric_compromised as M
from shuffledp.experiments import metric_location as L
from shuffledp.experiments import metric_synthetic as MS
from shuffledp.experiments import personalized_sgd as S
from shuffledp.experiments import pic_common as P
from shuffledp.experiments import pic_costs as K
from shuffledp.experiments.registry import Claim

INF = math.inf


def _row_cells(summary: str, first: str, which: int = 0) -> list[str]:
    """The cells of the markdown table row whose first cell is ``first`` (``which``: of several tables)."""
    line = [line for line in summary.splitlines() if line.startswith(f"| {first} |")][which]
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _claim() -> Claim:
    return Claim("a claim", "ours", "held")


def test_amplification_bounds_table_writes_a_bound_outside_its_regime_as_inf():
    kinds = {"variation-ratio": "upper", "erlingsson": "upper", "variation-ratio-lower": "lower"}
    value = {"variation-ratio": 0.5, "erlingsson": INF, "variation-ratio-lower": 0.4}
    rows = [
        {"method": m, "eps0": e, "n": n, "delta": A.delta_for(n), "epsilon": value[m] / math.sqrt(n / 1000),
         "seconds": 0.01}
        for m in kinds for e in A.EPS0 for n in (1000, A.N_TABLE)
    ]  # fmt: skip
    summary = A._summary(rows, kinds)
    assert _row_cells(summary, "erlingsson")[2 : 2 + len(A.EPS0)] == ["inf"] * len(A.EPS0)
    assert "—" not in summary and "inf: the bound's regime is not met" in summary


def test_fl_composition_table_writes_an_uncertified_total_as_inf_with_a_note():
    rows = []
    for m in F.COMPOSITION_METHODS:
        rows += [{"analysis": "local-budget", "composition": m, "pair": "generic", "total_epsilon": t, "eps0": 0.1 * t}
                 for t in F.TARGETS]  # fmt: skip
        rows += [{"analysis": "total-epsilon", "composition": m, "pair": "generic", "eps0": e,
                  "total_epsilon": INF if (m, e) == ("basic", 6.0) else e} for e in (1.0, 6.0)]  # fmt: skip
    for pair in F.PAIRS:
        rows += [{"analysis": "sampled-budget", "pair": pair, "total_epsilon": t, "eps0": t} for t in F.TARGETS]
    rows += [{"analysis": "unsampled-budget", "pair": "minkowski", "total_epsilon": t, "eps0": t} for t in F.TARGETS]
    summary = F._summary(rows)
    assert _row_cells(summary, "basic", -1)[1:] == ["1", "inf"]  # the "global epsilon after the rounds" table
    assert "inf: the composition certifies no finite epsilon" in summary


def test_metric_boost_table_writes_an_infinite_epsilon_as_inf_and_a_missing_one_as_a_dash():
    rows = [
        {"eps_geo": e, "n": n, "method": "theorem-4.1", "epsilon": INF if n == 1 else e / n, "k": 1000,
         "theorem_holds_up_to": 1}
        for e in B.EPS_GEO for n in (1, 5)
    ]  # fmt: skip
    summary = B._summary(rows, _claim())
    assert _row_cells(summary, "1")[1:] == ["inf"] + ["-"] * len(B.CERTIFIED)  # certified curves not computed


def test_metric_compromised_table_writes_an_infinite_local_epsilon_as_inf():
    value = {"rr-shuffle": None, "rr-shuffle-certified": INF, "geo-shuffle": 1.0, "geo-shuffle-certified": 1.0}
    rows = [{"n": 10, "mechanism": m, "local_epsilon": value.get(m, 2.0)} for m in M.MECHANISMS]
    cells = _row_cells(M._summary(rows, _claim()), "10")
    assert cells[1 : 1 + len(M.MECHANISMS)] == ["-", "inf", "1", "1", "2"]  # "-": RR-Shuffle's conditions fail


@pytest.mark.parametrize(
    ("writer", "value", "shown"),
    [
        (P.fmt_num, INF, "inf"),  # was "-"
        (P.fmt_num, -INF, "-inf"),
        (P.fmt_num, math.nan, "-"),
        (lambda v: K._show(v, "ms"), INF, "inf"),  # was "-"
        (lambda v: K._show(v, "B"), math.nan, "-"),  # nothing measured
        (S._eapes_cell, INF, "inf"),
        (S._eapes_cell, math.nan, "-"),  # the reference run has no guarantee to state
    ],
)
def test_pic_and_sgd_cells_write_infinity_as_inf_and_no_value_as_a_dash(writer, value, shown):
    assert writer(value) == shown


@pytest.mark.parametrize(
    ("table", "summary"),
    [(MS.TABLE2, lambda rows: MS._summary(rows, {}, 3)), (L.TABLE3, lambda rows: L._summary(rows, {}, 3, 0, 10))],
    ids=["metric-synthetic", "metric-location"],
)
def test_metric_tables_write_a_dash_where_rr_shuffle_does_not_run_and_say_why_in_a_note(table, summary):
    small = min(n for n, _ in table)
    errors = {"sgdl-shuffle": 0.01, "geo-shuffle": 0.1, "geo-shuffle-paper-tuning": 0.1}
    rows = [
        {"n": n, "epsilon": e, "mechanism": m, "value": errors.get(m, 1.0)}
        for n, e in table for m in C.MECHANISMS if n > small or not m.startswith("rr-shuffle")
    ]  # fmt: skip
    text = summary(rows)
    cells = _row_cells(text, str(small))
    rr = [cells[2 + C.MECHANISMS.index(m)] for m in ("rr-shuffle", "rr-shuffle-paper-tuning")]
    assert rr == ["-", "-"] and "n/a" not in text  # was "n/a (Thm 3.1)" in the cell
    assert C.RR_NOT_RUN_NOTE in text


def test_a_matched_cell_where_rr_shuffle_does_not_run_holds_a_dash_and_says_why():
    cell = C.verdict("rr-shuffle", None, 0.5, 50, 0.1, 1e-4, None)
    assert cell.startswith("- (0.5): ") and "Theorem 3.1" in cell and "n/a" not in cell
