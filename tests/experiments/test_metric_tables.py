"""The paper's tuning beside ours in metric-synthetic and metric-location (metric paper Tables 2-3), quick mode.

Values are read back from each experiment's results.csv; the summary's matched-setting table must say "within 2x"
exactly where the CSV's ratio to the paper lies in [0.5, 2], and give the reason where it does not.
"""

from __future__ import annotations

import csv
import itertools
import math
import re

import numpy as np
import pytest
from scipy import integrate

from shuffledp.accounting import metric as M
from shuffledp.errors import ValidityConditionError
from shuffledp.experiments import metric_common as C
from shuffledp.experiments import metric_location as L
from shuffledp.experiments import metric_synthetic as S
from shuffledp.experiments import registry, run_experiment
from shuffledp.protocols.metric import GeoShuffle

EXPERIMENTS = {"metric-synthetic": (S, S.TABLE2, S.mae_table), "metric-location": (L, L.TABLE3, L.mean_errors)}


@pytest.fixture(scope="module", params=sorted(EXPERIMENTS))
def run_output(request, tmp_path_factory):
    """name -> (module, Table, CSV rows, summary) of the experiment in quick mode."""
    name = request.param
    module, table, _ = EXPERIMENTS[name]
    target = run_experiment(name, tmp_path_factory.mktemp(name), quick=True, seed=5, progress=False)
    with (target / "results.csv").open() as fh:
        reader = csv.DictReader(fh)
        assert reader.fieldnames == [
            "experiment", "n", "epsilon", "delta", "mechanism", "error_metric", "value", "run", "distance"
        ]  # fmt: skip
        rows = [{**r, "n": int(r["n"]), "epsilon": float(r["epsilon"]), "value": float(r["value"])} for r in reader]
    return name, module, table, rows, (target / "summary.md").read_text()


@pytest.fixture(scope="module")
def experiment(run_output):
    name, module, table, rows, summary = run_output
    return name, module, table, EXPERIMENTS[name][2](rows), summary


def _matched_cells(summary: str) -> dict[tuple[int, float], list[str]]:
    """(n, eps) -> the four cells of the summary's matched-setting table."""
    out = {}
    for line in summary.splitlines():
        if line.startswith("| ") and "within 2x" in line:
            fields = [f.strip() for f in line.strip("|").split(" | ")]
            out[(int(fields[0]), float(fields[1]))] = fields[2:]
    return out


def test_every_variant_is_a_mechanism_of_the_csv(experiment):
    name, _, table, mean, _ = experiment
    cells = {key[:2] for key in mean}
    assert cells & set(table)
    for n, eps in cells & set(table):
        present = {m for (n2, e2, m) in mean if (n2, e2) == (n, eps)}
        assert present >= set(C.MECHANISMS) - {"rr-shuffle"}, (name, n, eps, present)


def _axis(name: str, eps: float) -> tuple[float, float]:
    """The (epsilon, delta) each mechanism of the experiment runs at for the target eps."""
    return L.axis_parameters(eps) if name == "metric-location" else (eps, S.DELTA)


def _guarantee(rows, n, eps, mechanism, metric, distance=""):
    return next(
        r["value"]
        for r in rows
        if (r["n"], r["epsilon"], r["mechanism"], r["error_metric"]) == (n, eps, mechanism, metric)
        and r["distance"] == str(distance)
    )


def test_certified_columns_run_from_the_certified_inverses(run_output):
    """rr-shuffle-certified runs at p from the certified inverse (its certified epsilon at most eps), and every column
    states the epsilon its parameter certifies for every pair: SGDL-Shuffle's is that of `sgdl_shuffle_certificate`."""
    name, module, table, rows, summary = run_output
    cells = sorted({(r["n"], r["epsilon"]) for r in rows} & set(table))
    assert cells
    for n, eps in cells:
        e_axis, d_axis = _axis(name, eps)
        p = _guarantee(rows, n, eps, "rr-shuffle-certified", "noise_parameter")
        assert p == pytest.approx(M.rr_shuffle_probability(e_axis, d_axis, module.K, n), rel=1e-12)
        assert _guarantee(rows, n, eps, "rr-shuffle-certified", "certified_epsilon") <= e_axis * (1 + 1e-9)
        assert any(
            r["mechanism"] == "rr-shuffle-certified" and r["error_metric"] not in C.GUARANTEE_METRICS
            for r in rows
            if (r["n"], r["epsilon"]) == (n, eps)
        )
        sgdl = M.sgdl_shuffle_certificate(e_axis, d_axis, n, module.K).epsilon
        assert _guarantee(rows, n, eps, "sgdl-shuffle", "certified_epsilon") == pytest.approx(sgdl, rel=1e-12)
        assert _guarantee(rows, n, eps, "sgdl-shuffle", "claimed_epsilon") == pytest.approx(e_axis, rel=1e-12)
        assert f"| {n} | {eps:g} | sgdl-shuffle | Theorem 5.1 ({C.NOT_A_GUARANTEE}) |" in summary


def test_summaries_carry_the_per_distance_profile_beside_the_theorem(run_output):
    """The CSV and the summary give `metric_profile` of each theorem-tuned protocol at a few distances, with the
    distance up to which the theorem's value holds, for at least one cell of the paper's table."""
    name, module, table, rows, summary = run_output
    profiled = sorted(
        {(r["n"], r["epsilon"], r["mechanism"]) for r in rows if r["error_metric"] == "theorem_holds_up_to"}
    )
    assert {m for *_, m in profiled} == set(C.PROFILED) and {(n, e) for n, e, _ in profiled} & set(table)
    assert "Per-distance profile of the theorem-tuned columns" in summary
    n, eps, _ = next(key for key in profiled if key[:2] in table and key[2] == "geo-shuffle")
    e_axis, d_axis = _axis(name, eps)
    eps_geo = _guarantee(rows, n, eps, "geo-shuffle", "noise_parameter")
    prof = M.metric_profile("geo-shuffle", d_axis, n, module.K, eps_geo=eps_geo)
    assert _guarantee(rows, n, eps, "geo-shuffle", "theorem_holds_up_to") == prof.theorem_holds_up_to
    for d in (1, n * module.K):
        assert _guarantee(rows, n, eps, "geo-shuffle", "profile_epsilon", d) == pytest.approx(prof.epsilon_at(d))
    profile = summary.split("Per-distance profile")[1]
    line = next(x for x in profile.splitlines() if x.startswith(f"| {n} | {eps:g} | geo-shuffle | "))
    assert line.endswith(f" | {prof.theorem_holds_up_to} |")


def test_theorem_tuned_columns_say_they_are_not_a_guarantee_and_claims_are_rated_on_certified(run_output):
    name, module, table, rows, summary = run_output
    header = next(line for line in summary.splitlines() if line.startswith("| n | eps | geo-local"))
    for column in C.THEOREM_TUNED:
        assert f" {column} ({C.THEOREM_TUNED[column]}: {C.NOT_A_GUARANTEE}) " in header
    assert " rr-shuffle-certified | " in header and " geo-shuffle-certified | " in header
    mean, noise = EXPERIMENTS[name][2](rows), C.noise_parameters(rows)
    ordering = module.claims(mean, noise)[0]
    cells = [key for key in table if (*key, "geo-local") in mean]
    held = sum(module.certified_ordering_holds(noise, n, eps) for n, eps in cells)
    assert ordering.verdict == registry.share_verdict(held, len(cells))
    assert f"certified tunings: ordering in {held} of {len(cells)} rows" in ordering.ours
    assert held == 0  # certified Geo-Shuffle at k = 1000 runs Geo-Local's noise: it beats neither
    assert "holds only under the theorem tuning" in summary


def test_orderings_of_the_tables_hold_under_both_tunings(experiment):
    """SGDL < Geo-Shuffle < RR-Shuffle (where valid) and Geo-Local, ours and the paper's tuning.  In Table 2 the
    paper itself has RR above Geo-Local in some rows, so there RR is only compared with Geo-Shuffle."""
    name, _, table, mean, _ = experiment
    for n, eps in table:
        if (n, eps, "geo-local") not in mean:
            continue
        for rr, geo in (("rr-shuffle", "geo-shuffle"), ("rr-shuffle-paper-tuning", "geo-shuffle-paper-tuning")):
            s, g, r, lo = (mean.get((n, eps, m)) for m in ("sgdl-shuffle", geo, rr, "geo-local"))
            assert s < g < lo, (name, n, eps, rr)
            if r is not None:
                assert g < r, (name, n, eps, rr)
                if name == "metric-location":
                    assert r < lo, (name, n, eps, rr)


def test_summary_verdicts_follow_the_csv_and_name_their_reason(experiment):
    name, _, table, mean, summary = experiment
    matched = _matched_cells(summary)
    assert matched
    for (n, eps), cells in matched.items():
        for column, ref, cell in zip(C.PAPER_COLUMNS, table[(n, eps)], cells):
            ours = mean.get((n, eps, C.MATCHED[column]))
            if ours is None:
                assert cell.startswith("- ("), (name, n, eps, column, cell)  # the one rule: a dash, no value
                continue
            within = 0.5 <= ours / ref <= 2.0
            assert cell.endswith(": within 2x") == within, (name, n, eps, column, cell)
            if within:
                continue
            assert "NOT within 2x" in cell
            if column == "sgdl-shuffle":
                assert "below the Geo-Central optimum" in cell
            elif column == "geo-shuffle":
                factor = float(re.search(r"= ([0-9.]+)x the target", cell).group(1))
                # the paper's value is not a tuning to eps by Theorem 4.1 itself (far above it, or below it)
                assert factor >= 1.5 or (factor < 1 and "worse than its own theorem allows" in cell), cell
            elif column == "rr-shuffle":
                assert "Theorem 3.1" in cell
            else:
                assert "no tuning to match" in cell


def test_matched_setting_factor_2_where_it_holds(experiment):
    """Within 2x under the paper's tuning: Geo-Local everywhere; RR-Shuffle (paper tuning) in every Table 2 cell and
    at n = 1000, eps = 0.2 and 0.3 in Table 3; Geo-Shuffle (d = 1) except at the cells named below.  Not within 2x
    (the summary says why, see the test above): Geo-Shuffle at n = 50, eps = 0.5 and n = 100, eps = 0.3 (Table 2)
    and n = 4000, eps = 0.3 (Table 3), whose paper values need an eps_geo that Theorem 4.1 rates at 2.5-5x the
    target; RR-Shuffle at n = 2000, eps = 0.1 (expected 6x); every SGDL-Shuffle cell whose paper value lies below the
    Geo-Central optimum.  On the edge, not asserted (expected ratios): RR-Shuffle at n = 1000, eps = 0.15 (2.16),
    n = 3000, eps = 0.2 (0.55) and n = 4000, eps = 0.3 (2.02); Geo-Shuffle at n = 200, eps = 0.1 (1.78) and
    n = 3000, eps = 0.2 (0.48, where the paper's value is worse than Theorem 4.1 allows).  Quick mode runs three of
    Table 3's cells; the others are checked by the same code in full mode."""
    name, _, table, mean, summary = experiment
    not_geo = {(50, 0.5), (100, 0.3), (4000, 0.3)}
    rr_edge = {(1000, 0.15), (3000, 0.2), (4000, 0.3)}
    for (n, eps), paper in table.items():
        if (n, eps, "geo-local") not in mean:
            continue
        refs = dict(zip(C.PAPER_COLUMNS, paper))
        ratio = {c: mean[(n, eps, C.MATCHED[c])] / refs[c] for c in C.PAPER_COLUMNS if (n, eps, C.MATCHED[c]) in mean}
        assert 0.5 <= ratio["geo-local"] <= 2.0
        if (n, eps) == (2000, 0.1):
            assert ratio["rr-shuffle"] > 2.0
        elif (n, eps) not in rr_edge:
            assert 0.5 <= ratio["rr-shuffle"] <= 2.0, (name, n, eps, ratio)
        if (n, eps) in not_geo:
            assert ratio["geo-shuffle"] > 2.0
        elif (n, eps) not in {(200, 0.1), (3000, 0.2)}:
            assert 0.5 <= ratio["geo-shuffle"] <= 2.0, (name, n, eps, ratio)
    assert "no tuning to eps yields those cells" in summary or "not a tuning to eps" in summary


def test_d1_tuning_is_ours_to_one_percent():
    """Conjecture B.3's d = 1 changes eps_geo by < 1% at every cell of both tables: it does not explain them."""
    assert S.tuning_shifts()["d=1"] < 0.01
    for n, eps in L.TABLE3:
        eps_run, delta_axis = L.axis_parameters(eps)
        ours = M.geo_shuffle_local_epsilon(eps_run, delta_axis, n, method="theorem-4.1")
        assert abs(C.paper_tuned_eps_geo(eps_run, delta_axis, n) / ours - 1) < 0.01
        # the d = 1 value meets the target at d = 1, and the maximum over d is at most 1% above it
        eps_geo = C.paper_tuned_eps_geo(eps_run, delta_axis, n)
        assert M.geo_shuffle_epsilon_paper(eps_geo, delta_axis, n, max_distance=1) <= eps_run
        assert M.geo_shuffle_epsilon_paper(eps_geo, delta_axis, n) <= 1.01 * eps_run


def _min_n(epsilon: float, delta: float, log1=math.log, log2=math.log, const: float = 32.0, k: int = 1000) -> int:
    """Smallest n at which Theorem 3.1's formula at p = 1 (lambda = n k) is below epsilon (brute force)."""
    n = 1
    while True:
        lam = n * k
        den = lam - math.sqrt(2 * lam * log2(2 / delta))
        if den > 0 and lam >= 14 * log1(4 / delta) and math.sqrt(const * log1(4 / delta) / den) < epsilon:
            return n
        n += 1


def test_rr_minimum_n_of_the_paper_needs_the_overshoot():
    """§6.2: 23 users at eps = 0.1; §6.3: 776 at eps_run = 0.017.  Natural logs give 35 and 1179; no reading in the
    module docstring's grid gives both; the 1.233 overshoot does (and our inverse agrees with the brute force)."""
    assert (_min_n(0.1, 1e-4), _min_n(0.017, 1e-4)) == (35, 1179)
    f = C.RR_PAPER_OVERSHOOT
    assert (_min_n(f * 0.1, 1e-4), _min_n(f * 0.017, 1e-4)) == (23, 776)
    for eps, expected in ((f * 0.1, 23), (f * 0.017, 776)):
        with pytest.raises(ValidityConditionError) as info:
            M.rr_shuffle_probability(eps, 1e-4, 1000, expected - 1, method="theorem-3.1")
        assert info.value.minimum_n == expected
    logs = (math.log, math.log2, math.log10)
    for log1, log2, const, delta in itertools.product(logs, logs, (8, 16, 24, 32, 64), (1e-4, 5e-5, 5e-4, 1e-3, 1e-2)):
        assert (_min_n(0.1, delta, log1, log2, const), _min_n(0.017, delta, log1, log2, const)) != (23, 776)


def test_paper_tuned_rr_runs_from_23_users_and_is_not_eps_private():
    mechs = C.tuned_mechanisms(0.1, 1e-4, 23, 1000)
    assert isinstance(mechs["rr-shuffle"], ValidityConditionError)
    assert mechs["rr-shuffle-paper-tuning"].epsilon == pytest.approx(C.RR_PAPER_OVERSHOOT * 0.1, rel=1e-9)
    assert isinstance(C.tuned_mechanisms(0.1, 1e-4, 22, 1000)["rr-shuffle-paper-tuning"], ValidityConditionError)


def test_certified_column_is_geo_local_with_padding():
    for n, eps in S.TABLE2:
        proto = C.tuned_mechanisms(eps, S.DELTA, n, S.K)["geo-shuffle-certified"]
        assert isinstance(proto, GeoShuffle) and proto.eps_geo == eps


def test_error_models_against_references():
    # two iid Laplace(1): E sqrt(X^2 + Y^2) by two-dimensional quadrature
    quad, _ = integrate.dblquad(lambda y, x: math.hypot(x, y) * math.exp(-x - y), 0, 60, 0, 60)
    assert pytest.approx(quad, rel=1e-6) == C.LAPLACE_PAIR_NORM
    # n = 1: E|discrete Laplace| = 2a / (1 - a^2); n = 2: brute-force convolution
    a = math.exp(-0.3)
    assert C.sgdl_abs_mean(0.3, 1) == pytest.approx(2 * a / (1 - a * a), rel=1e-10)
    r = np.arange(-400, 401)
    one = (1 - a) / (1 + a) * a ** np.abs(r)
    two = np.convolve(one, one)
    assert C.sgdl_abs_mean(0.3, 2) == pytest.approx(float(np.sum(np.abs(np.arange(-800, 801)) * two)), rel=1e-9)
    # the implied parameters invert the models
    for model, n, eps in ((S.ERROR_MODEL, 100, 0.3), (L.ERROR_MODEL, 4000, 0.3)):
        eps_geo, implied = C.implied_geo_guarantee(model, 0.04 if n == 100 else 1.0, eps, 1e-4, n)
        assert model.geo(eps_geo, n) == pytest.approx(0.04 if n == 100 else 1.0, rel=1e-3)
        assert implied == M.geo_shuffle_epsilon_paper(eps_geo, model.axis(eps, 1e-4)[1], n, max_distance=1)
        implied_rr = C.implied_rr_guarantee(model, 0.3 if n == 100 else 5.0, eps, 1e-4, n)
        eps_axis, delta_axis = model.axis(eps, 1e-4)
        p = M.rr_shuffle_probability(implied_rr, delta_axis, model.k, n, method="theorem-3.1")
        assert model.rr(p, n) == pytest.approx(0.3 if n == 100 else 5.0, rel=1e-3)


def test_location_data_set_does_not_move_the_errors():
    """The summary's claim: each mechanism's noise is data-independent, so two very different data sets (all users in
    one corner square against all in the opposite corner) give the same mean error."""
    mechs = L.axis_mechanisms(0.3, 1000)
    corner, opposite = np.zeros((1000, 2), dtype=np.int64), np.full((1000, 2), L.K, dtype=np.int64)
    for name in ("geo-local", "rr-shuffle", "geo-shuffle-paper-tuning", "sgdl-shuffle"):
        e1 = L.centroid_errors(mechs[name], corner, 300, np.random.default_rng(9))
        e2 = L.centroid_errors(mechs[name], opposite, 300, np.random.default_rng(10))
        assert e1.mean() == pytest.approx(e2.mean(), rel=0.2), name


def test_table3_verdicts_at_the_expected_errors():
    """All six cells of Table 3 (full mode) at each mechanism's expected error instead of a Monte Carlo mean."""
    mean = {}
    for n, eps in L.TABLE3:
        eps_run, delta_axis = L.axis_parameters(eps)
        p = M.rr_shuffle_probability(C.RR_PAPER_OVERSHOOT * eps_run, delta_axis, L.K, n, method="theorem-3.1")
        mean[(n, eps, "geo-local")] = L.ERROR_MODEL.geo(eps_run, n)
        mean[(n, eps, "rr-shuffle-paper-tuning")] = L.ERROR_MODEL.rr(p, n)
        mean[(n, eps, "geo-shuffle-paper-tuning")] = L.ERROR_MODEL.geo(C.paper_tuned_eps_geo(eps_run, delta_axis, n), n)
        mean[(n, eps, "sgdl-shuffle")] = L.ERROR_MODEL.central(eps_run, n)
    cells = _matched_cells("\n".join(C.comparison_lines(mean, L.TABLE3, L.DELTA, L.ERROR_MODEL)))
    assert set(cells) == set(L.TABLE3)
    within = {key: [c.endswith(": within 2x") for c in row] for key, row in cells.items()}
    assert all(row[0] for row in within.values())  # Geo-Local
    assert [within[key][1] for key in sorted(cells)] == [False, True, True, False, True, False]  # RR (paper tuning)
    assert [within[key][2] for key in sorted(cells)] == [True, True, True, False, False, False]  # Geo-Shuffle (d = 1)
    assert not any(row[3] for row in within.values())  # SGDL-Shuffle: every paper value below Geo-Central
    assert "= 2.9x the target" in cells[(2000, 0.1)][2] and "= 5.3x the target" in cells[(4000, 0.3)][2]
    assert "worse than its own theorem allows" in cells[(3000, 0.2)][2]
    assert all("below the Geo-Central optimum" in row[3] for row in cells.values())


@pytest.mark.parametrize("addresses", [0, 50])
def test_location_experiment_names_the_file_when_too_few_addresses(addresses, tmp_path, monkeypatch):
    """A data root whose Austin file has only a header, or 50 addresses: a DataError naming the file and the
    number the experiment needs (was numpy's "a must be a positive integer" / "Cannot take a larger sample")."""
    from shuffledp.errors import DataError

    folder = tmp_path / "data" / "locations"
    folder.mkdir(parents=True)
    lines = [",LATITUDE,LONGITUDE"] + [f"{i},30.5,-97.8" for i in range(addresses)]
    (folder / "austin_sparse.csv").write_text("\n".join(lines) + "\n")
    monkeypatch.setenv("SHUFFLEDP_DATA", str(tmp_path / "data"))
    with pytest.raises(DataError, match=rf"austin_sparse.csv: {addresses} addresses inside .* up to n = 4000 distinct"):
        run_experiment("metric-location", tmp_path / "out", quick=True, seed=1, progress=False)
