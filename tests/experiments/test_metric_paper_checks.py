"""metric-location, metric-compromised, metric-boost (metric paper Table 3, Figures 3, 5, 6) in quick mode:
the paper's orderings and, where our setting is theirs, its numbers within a factor 2."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from shuffledp.accounting import metric as M
from shuffledp.experiments import metric_boost, metric_compromised, run_experiment
from shuffledp.experiments import metric_common as C
from shuffledp.experiments import metric_location as L
from shuffledp.experiments.registry import Claim


def _rows(target, numeric):
    with (target / "results.csv").open() as fh:
        reader = csv.DictReader(fh)
        rows = [{**r, **{k: (float(r[k]) if r[k] != "" else None) for k in numeric}} for r in reader]
    return reader.fieldnames, rows


@pytest.fixture(scope="module")
def location(tmp_path_factory):
    target = run_experiment("metric-location", tmp_path_factory.mktemp("loc"), quick=True, seed=3, progress=False)
    fields, rows = _rows(target, ("n", "epsilon", "value"))
    assert fields == L.COLUMNS
    return target, L.mean_errors([{**r, "n": int(r["n"])} for r in rows])


def test_table3_ordering_and_geo_local_matches_its_closed_form(location):
    target, mean = location
    for n, eps in [(1000, 0.15), (1000, 0.3), (4000, 0.3)]:
        chain = [mean.get((n, eps, m)) for m in ("sgdl-shuffle", "geo-shuffle", "rr-shuffle", "geo-local")]
        chain = [v for v in chain if v is not None]  # RR-Shuffle only where Theorem 3.1 allows it
        assert all(a < b for a, b in zip(chain, chain[1:])), (n, eps, chain)
        # Geo-Local per axis: sum of n discrete Laplace(e^-eps_run); the centroid error is Rayleigh with that sd / n
        p = math.exp(-eps / (6 * math.sqrt(2)))
        sd = math.sqrt(2 * n * p) / (1 - p) / n
        assert mean[(n, eps, "geo-local")] == pytest.approx(100 * sd * math.sqrt(math.pi / 2), rel=0.25)
        # the certified tuning buys nothing over Geo-Local at k = 1000 (same noise, plus padding)
        assert mean[(n, eps, "geo-shuffle-certified")] == pytest.approx(mean[(n, eps, "geo-local")], rel=0.35)
    assert "213 outside" in (target / "summary.md").read_text()
    assert (target / "figure.png").stat().st_size > 10_000


def test_table3_values_within_factor_2_where_the_setting_is_the_papers(location):
    """Geo-Local (data-independent noise, fully specified) and Geo-Shuffle at n = 1000 match Table 3 within 2x.
    Not asserted (reported in summary.md): SGDL-Shuffle, whose Table 3 values lie below the optimal Geo-Central
    error of the stated setting; RR- and Geo-Shuffle at n = 4000 (about 2.5x and 4.7x: the paper's 1 m needs an
    eps_geo that Theorem 4.1 rates at about 5x eps_run; Geo-Local's own ratio there is 1.6); RR-Shuffle at n = 1000,
    eps = 0.15, which our natural-log Theorem 3.1 does not allow.  The paper's tuning and the summary's cell-by-cell
    reasons: test_metric_tables.py."""
    _, mean = location
    for (n, eps), paper in L.TABLE3.items():
        refs = dict(zip(L.PAPER_ORDER, paper))
        if (n, eps, "geo-local") in mean:
            assert 0.5 <= mean[(n, eps, "geo-local")] / refs["geo-local"] <= 2.0
    for eps in (0.15, 0.3):
        assert (
            0.5
            <= mean[(1000, eps, "geo-shuffle")] / dict(zip(L.PAPER_ORDER, L.TABLE3[(1000, eps)]))["geo-shuffle"]
            <= 2.0
        )
    assert 0.5 <= mean[(1000, 0.3, "rr-shuffle")] / 40 <= 2.0
    # SGDL-Shuffle is Geo-Central per axis: below 2x the optimum's Rayleigh mean
    p = math.exp(-0.15 / (6 * math.sqrt(2)))
    assert mean[(1000, 0.15, "sgdl-shuffle")] <= 2 * 100 * math.sqrt(2 * p) / (1 - p) / 1000 * math.sqrt(math.pi / 2)


def test_grid_cells_of_the_papers_rectangle():
    pts = np.array(
        [[L.NORTH, L.WEST], [L.NORTH - 0.0005, L.WEST + 0.0015], [L.SOUTH - 0.01, L.WEST], [L.SOUTH, L.EAST]]
    )
    cells, outside = L.grid_cells(pts)
    assert outside == 1
    assert cells[0].tolist() == [0, 0] and cells[1].tolist() == [1, 0]  # 144 m east, 56 m south
    assert 840 <= cells[2, 0] <= 850 and 955 <= cells[2, 1] <= 965 and cells.max() <= L.K


def test_figure6_geo_shuffle_keeps_far_stronger_local_privacy(tmp_path):
    target = run_experiment("metric-compromised", tmp_path, quick=True, seed=0, progress=False)
    _, rows = _rows(target, ("n", "local_epsilon"))
    table = {(int(r["n"]), r["mechanism"]): r["local_epsilon"] for r in rows}
    for n in (20, 150, 500):
        assert table[(n, "sgdl-shuffle")] > 3 * table[(n, "geo-shuffle")]
        assert table[(n, "geo-shuffle-certified")] == pytest.approx(0.2)  # nothing certified beyond eps_S at k = 1000
        assert table[(n, "sgdl-shuffle")] == pytest.approx(M.sgdl_shuffle_local_epsilon(0.2, n))
        # the certified tuning keeps RR-Shuffle's amplification now (p well below the local bound's), so a compromised
        # shuffler shows each user's bits with less noise: a local epsilon above eps_S
        assert 0.2 < table[(n, "rr-shuffle-certified")] < 1.5 * math.log(3.0)
    assert table[(20, "rr-shuffle")] is not None and table[(150, "rr-shuffle")] is None  # Theorem 3.1's condition
    # §7: "with 150 users the local privacy eps_L is about 5 [SGDL-Shuffle], while for Geo-Shuffle is about 1"
    assert 2.5 <= table[(150, "sgdl-shuffle")] <= 10 and 0.5 <= table[(150, "geo-shuffle")] <= 2


def test_figure3_boost_and_its_certified_counterpart(tmp_path):
    target = run_experiment("metric-boost", tmp_path, quick=True, seed=0, progress=False)
    _, rows = _rows(target, ("n", "eps_geo", "epsilon"))
    for eps_geo in (0.2, 0.5, 1.0):
        thm = sorted((r["n"], r["epsilon"]) for r in rows if r["eps_geo"] == eps_geo and r["method"] == "theorem-4.1")
        assert thm[0] == (1, eps_geo) and all(
            a[1] > b[1] for a, b in zip(thm, thm[1:])
        )  # no boost at n = 1, then falling
        assert all(
            r["epsilon"] == eps_geo for r in rows if r["eps_geo"] == eps_geo and r["method"] == "certified, k = 1000"
        )
        small = [r for r in rows if r["eps_geo"] == eps_geo and r["method"] == "certified, k = 2" and r["n"] >= 5]
        assert small and all(r["epsilon"] < eps_geo for r in small)
    assert (target / "figure.png").stat().st_size > 10_000


def _certified_noise(boost: float) -> dict:
    """Per-axis noise parameters of the certified columns per row of Table 3: Geo-Shuffle at ``boost`` x Geo-Local's
    eps_geo (1: no boost, as at k = 1000), RR-Shuffle at p = 0.5 (between the two at boost 10 in every row)."""
    noise = {}
    for n, eps in L.TABLE3:
        e_axis = L.axis_parameters(eps)[0]
        noise[(n, eps, "geo-local")], noise[(n, eps, "geo-shuffle-certified")] = e_axis, boost * e_axis
        noise[(n, eps, "rr-shuffle-certified")] = 0.5
    return noise


def test_location_claims_follow_table3s_ordering_and_the_factor_2_rule():
    mean = {}
    for (n, eps), paper in L.TABLE3.items():
        for column, value in zip(C.PAPER_COLUMNS, paper):
            mean[(n, eps, column)] = mean[(n, eps, C.MATCHED[column])] = value
            if C.CERTIFIED[column] is not None:
                mean[(n, eps, C.CERTIFIED[column])] = value
    noise = _certified_noise(boost=10.0)
    # SGDL-Shuffle has no certified column, so a quarter of the cells cannot match certified
    assert [c.verdict for c in L.claims(mean, noise)] == ["held", "partly"]
    for m in ("rr-shuffle", "rr-shuffle-paper-tuning", "rr-shuffle-certified"):  # 10x off Table 3 at one row
        mean[(1000, 0.15, m)] = 3000.0
    noise[(1000, 0.15, "geo-shuffle-certified")] = noise[(1000, 0.15, "geo-local")]  # no certified boost in one row
    ordering, table = L.claims(mean, noise)
    assert (ordering.verdict, table.verdict) == ("partly", "partly")
    assert "not at n = 1000, eps = 0.15" in ordering.ours and "17 of 24 cells" in table.ours


def _compromised_rows(**at_150):
    values = {"geo-shuffle": 1.0, "rr-shuffle": 2.0, "sgdl-shuffle": 5.0}
    values |= {"geo-shuffle-certified": 0.2, "rr-shuffle-certified": 0.5}
    return [
        {"n": n, "mechanism": m, "local_epsilon": (at_150 if n == 150 else {}).get(m.replace("-", "_"), v)}
        for n in (20, 150)
        for m, v in values.items()
    ]


def test_compromised_claims_follow_figure6s_values_and_ordering():
    assert [c.verdict for c in metric_compromised.claims(_compromised_rows())] == ["held", "held"]
    values, ordering = metric_compromised.claims(_compromised_rows(sgdl_shuffle=12.0, rr_shuffle_certified=20.0))
    assert (values.verdict, ordering.verdict) == ("partly", "partly")  # SGDL 12 is not about 5; certified RR > SGDL
    assert "certified: at 1 of 2 n" in ordering.ours
    values, ordering = metric_compromised.claims(_compromised_rows(sgdl_shuffle=0.5, geo_shuffle=3.0))
    assert values.verdict == "not"


def test_compromised_summary_marks_the_theorem_tuned_columns_as_no_guarantee():
    """Its rr-, geo- and sgdl-shuffle columns are tuned to eps_S by Theorems 3.1, 4.1, 5.1: the header says so."""
    summary = metric_compromised._summary(_compromised_rows(), Claim("a claim", "ours", "held"))
    header = next(line for line in summary.splitlines() if line.startswith("| n | "))
    for m in ("rr-shuffle", "geo-shuffle", "sgdl-shuffle"):
        assert f" {C.column_label(m)} |" in header and C.NOT_A_GUARANTEE in C.column_label(m)
    assert " rr-shuffle-certified | " in header


def _boost_rows(certified: float, reach: int, rising: bool = False):
    rows = []
    for e in metric_boost.EPS_GEO:
        base = {"eps_geo": e, "theorem_holds_up_to": None}
        rows += [
            {**base, "n": 1, "method": "theorem-4.1", "epsilon": e},
            {**base, "n": 100, "method": "theorem-4.1", "epsilon": 2 * e if rising else e / 10},
            {**base, "n": 1, "method": "certified, k = 1000", "epsilon": e},
            {**base, "n": 100, "method": "certified, k = 1000", "epsilon": certified * e},
            {
                **base,
                "n": 20,
                "method": "profile at distance 1, k = 1000",
                "epsilon": e / 2,
                "theorem_holds_up_to": reach,
            },
        ]
    return rows


def test_boost_claims_say_whether_figure3s_boost_holds_for_every_pair():
    shape, validity = metric_boost.claims(_boost_rows(certified=0.5, reach=10))
    assert (shape.verdict, validity.verdict) == ("held", "held")
    shape, validity = metric_boost.claims(_boost_rows(certified=1.0, reach=10, rising=True))
    assert shape.verdict == "partly"
    assert metric_boost.claims(_boost_rows(certified=1.0, reach=0))[1].verdict == "not"


def test_boost_for_every_pair_is_not_held_where_the_certified_value_is_eps_geo_for_every_eps_geo():
    """Certified = eps_geo for every eps_geo (as at k = 1000): the claim does not hold, whatever the nearby radius
    (was "partly" when Theorem 4.1 held up to some distance)."""
    validity = metric_boost.claims(_boost_rows(certified=1.0, reach=10))[1]
    assert validity.verdict == "not"
    assert "below eps_geo for 0 of 3" in validity.ours and "only for nearby datasets" in validity.ours
    rows = _boost_rows(certified=1.0, reach=10)
    next(r for r in rows if r["method"] == "certified, k = 1000" and r["n"] == 100)["epsilon"] = 0.1  # one survives
    assert metric_boost.claims(rows)[1].verdict == "partly"


def test_boost_summary_states_the_small_domain_n_it_computed(tmp_path):
    """The k = 2 column's text names the largest n computed (20 in quick mode), not 100 beside a dash at n = 100."""
    target = run_experiment("metric-boost", tmp_path, quick=True, seed=0, progress=False)
    summary = (target / "summary.md").read_text()
    _, rows = _rows(target, ("n", "eps_geo", "epsilon"))
    largest = max(r["n"] for r in rows if r["method"] == "certified, k = 2")
    assert largest == metric_boost.QUICK_SMALL_DOMAIN_N
    assert f"computed for n <= {int(largest)} " in summary and "computed for n <= 100" not in summary
