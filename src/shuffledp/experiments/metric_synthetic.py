"""Table 2 and Figure 4 of the metric paper (§6.2): MAE of the average of n uniform integers in {0..1000}.

Every mechanism is tuned to the same (eps, delta = 1e-4)-d_X-privacy (§6.1; see
`calibrated_mechanisms`): Geo-Local at eps_geo = eps, RR-Shuffle with p
from Theorem 3.1 (omitted where its validity condition fails), Geo-Shuffle with the largest eps_geo whose
Theorem 4.1 guarantee is eps, SGDL-Shuffle at eps.  Beside them (`metric_common`): Geo-Shuffle tuned by the
certified bound and RR-Shuffle with p from the certified inverse (the privacy-valid tunings), and the paper's tuning of Geo-Shuffle (Theorem 4.1 at d = 1) and of
RR-Shuffle (inferred from its reported minimum n), against which Table 2 is compared cell by cell.  One
dataset per n (uniform integers, as in the paper); 1000 runs per point (``--quick``: 300); the error of a run
is |estimate of the average - average|.  Runs release the count of the shuffled bits (Proposition 1), not the
n (k + 2c) bits themselves.

The theorem-tuned columns are not guarantees for far-apart datasets: beside the errors the CSV and the summary give
each column's noise parameter, claimed and certified epsilon (every setting), and the per-distance profile of
RR-, Geo- and SGDL-Shuffle at Table 2's rows (``error_metric`` in `metric_common.GUARANTEE_METRICS`, ``distance``
for the profile); the paper's claims are rated on the certified columns.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from shuffledp._util.numbers import MISSING, number
from shuffledp.accounting.metric import geo_shuffle_local_epsilon
from shuffledp.errors import ValidityConditionError
from shuffledp.experiments.metric_common import (
    GUARANTEE_METRICS,
    MECHANISMS,
    NOT_A_GUARANTEE,
    RR_NOT_RUN_NOTE,
    RR_PAPER_OVERSHOOT,
    THEOREM_TUNED,
    ErrorModel,
    certified_expected_errors,
    column_label,
    comparison_lines,
    guarantee_lines,
    guarantee_rows,
    noise_parameters,
    ordering_claim,
    paper_tuned_eps_geo,
    profile_rows,
    rr_sum_variance,
    sgdl_abs_mean,
    table_claim,
    tuned_mechanisms,
)
from shuffledp.experiments.plotting import PAGE_WIDTH, legend_and_caption, log_ticks, page_style, series_style
from shuffledp.experiments.registry import Claim, ExperimentContext, ExperimentOutput, register

__all__ = [
    "COLUMNS",
    "FIGURE_EPSILON",
    "TABLE2",
    "absolute_errors",
    "certified_ordering_holds",
    "claims",
    "mae_table",
    "ordering_holds",
    "run",
    "tuning_shifts",
]

NAME = "metric-synthetic"
K = 1000
DELTA = 1e-4
#: Table 2: (n, eps) -> paper's MAE of (Geo-Local, RR-Shuffle, Geo-Shuffle, SGDL-Shuffle).
TABLE2: dict[tuple[int, float], tuple[float, float, float, float]] = {
    (50, 0.2): (1.0, 1.21, 0.52, 0.1),
    (50, 0.5): (0.42, 0.43, 0.05, 0.0004),
    (100, 0.1): (1.2, 1.1, 0.49, 0.03),
    (100, 0.2): (0.66, 0.67, 0.18, 0.01),
    (100, 0.3): (0.41, 0.41, 0.04, 0.005),
    (200, 0.1): (0.92, 0.43, 0.11, 0.007),
}
#: Figure 4: eps = 0.1 over n.
FIGURE_EPSILON = 0.1
#: 23: the paper's first n for RR-Shuffle at eps = 0.1 (rr-shuffle-paper-tuning starts there; ours at 35).
FIGURE_N = (10, 20, 23, 35, 50, 70, 100, 150, 200, 300, 500, 1000)
FIGURE_N_QUICK = (20, 23, 50, 100, 200)  # 23: the paper's minimum n for RR-Shuffle, which `claims` checks
#: Table 2's rows whose per-distance profile --quick computes (each costs a few seconds; the full run: every row).
PROFILE_QUICK = ((50, 0.2), (100, 0.1))
#: §6.2 / Figure 4: "RR-Shuffle needs at least 23 users for eps = 0.1".
PAPER_RR_MIN_N = 23
COLUMNS = ["experiment", "n", "epsilon", "delta", "mechanism", "error_metric", "value", "run", "distance"]


def absolute_errors(mechanism: Any, x: np.ndarray, runs: int, rng: np.random.Generator) -> np.ndarray:
    """|estimated average - true average| of ``runs`` independent executions."""
    return np.abs(mechanism.estimate_sum(x, rng, runs) / x.size - x.mean())


@register(
    NAME,
    "Metric privacy, synthetic data: MAE of the average (Table 2, Figure 4)",
    "metric paper §6.2, Table 2, Figure 4",
)
def run(ctx: ExperimentContext) -> ExperimentOutput:
    runs = 300 if ctx.quick else 1000
    settings = sorted(set(TABLE2) | {(n, FIGURE_EPSILON) for n in (FIGURE_N_QUICK if ctx.quick else FIGURE_N)})
    rows: list[dict[str, Any]] = []
    invalid: dict[str, list[tuple[int, float]]] = {}
    for index, (n, eps) in enumerate(ctx.progress.track(settings, NAME)):
        x = ctx.rng(index, 0).integers(0, K + 1, n)
        mechanisms = tuned_mechanisms(eps, DELTA, n, K)
        setting = {"experiment": NAME, "n": n, "epsilon": eps, "delta": DELTA}
        rows += guarantee_rows(mechanisms, setting)
        if (n, eps) in (PROFILE_QUICK if ctx.quick else TABLE2):
            rows += profile_rows(mechanisms, setting)
        for m_index, (name, mechanism) in enumerate(mechanisms.items()):
            if isinstance(mechanism, ValidityConditionError):
                invalid.setdefault(name, []).append((n, eps))
                continue
            errors = absolute_errors(mechanism, x, runs, ctx.rng(index, 1 + m_index))
            base = {**setting, "mechanism": name, "error_metric": "absolute_error"}
            rows += [{**base, "value": float(v), "run": r} for r, v in enumerate(errors)]
    return ExperimentOutput(
        columns=COLUMNS,
        rows=rows,
        summary_markdown=_summary(rows, invalid, runs),
        figure=_figure(rows),
        parameters={"k": K, "delta": DELTA, "runs": runs, "settings": [list(s) for s in settings]},
        claims=claims(mae_table(rows), noise_parameters(rows)),
    )


def mae_table(rows: list[dict[str, Any]]) -> dict[tuple[int, float, str], float]:
    """(n, eps, mechanism) -> mean absolute error over the runs (the guarantee rows left out)."""
    sums: dict[tuple[int, float, str], list[float]] = {}
    for r in rows:
        if r.get("error_metric") in GUARANTEE_METRICS:
            continue
        sums.setdefault((r["n"], r["epsilon"], r["mechanism"]), []).append(r["value"])
    return {key: float(np.mean(v)) for key, v in sums.items()}


#: Expected MAE of the average under each mechanism's parameter (metric_common.ErrorModel): Geo exact (the sum of
#: n discrete Laplace draws is SGDL(n, e^-eps_geo)), RR by the normal approximation, Geo-Central exact.
ERROR_MODEL = ErrorModel(
    geo=lambda eps_geo, n: sgdl_abs_mean(eps_geo, n) / n,
    rr=lambda p, n: math.sqrt(2.0 / math.pi) * math.sqrt(rr_sum_variance(p, n, K)) / n,
    central=lambda eps, n: _central_mae(eps) / n,
    axis=lambda eps, delta: (eps, delta),
    k=K,
    unit="MAE of the average",
)
#: The paper's column -> our column tuned our way (its default, ``geo-shuffle`` maximised over d).
OURS = {
    "geo-local": "geo-local",
    "rr-shuffle": "rr-shuffle",
    "geo-shuffle": "geo-shuffle",
    "sgdl-shuffle": "sgdl-shuffle",
}


def ordering_holds(mae: dict[tuple[int, float, str], float], n: int, eps: float) -> bool:
    """Table 2's ordering in one row: SGDL < Geo-Shuffle < the better of RR-Shuffle (where it runs) and Geo-Local."""
    local, rr, geo, sgdl = (mae.get((n, eps, m)) for m in OURS.values())
    return sgdl < geo < min(v for v in (rr, local) if v is not None)


def certified_ordering_holds(noise: dict[tuple[int, float, str], float], n: int, eps: float) -> bool | None:
    """Table 2's ordering in one row on the certified columns, by their expected errors at the noise parameters they
    ran with (`certified_expected_errors`): Geo-Shuffle < the better of RR-Shuffle and Geo-Local (SGDL-Shuffle has no
    certified tuning to eps: left out); None where a parameter is missing."""
    e = certified_expected_errors(ERROR_MODEL, noise, n, eps)
    if len(e) < 3:
        return None
    return e["geo-shuffle-certified"] < min(e["rr-shuffle-certified"], e["geo-local"])


def claims(mae: dict[tuple[int, float, str], float], noise: dict[tuple[int, float, str], float]) -> list[Claim]:
    """§6's summary of findings (ordering: `ordering_holds`, rated by `certified_ordering_holds` on the certified
    columns' noise parameters ``noise``), Table 2's values (`table_claim`), Figure 4's minimum n."""
    rows = [(n, eps) for n, eps in TABLE2 if (n, eps, "geo-local") in mae]
    grid = sorted({n for n, eps, _ in mae if eps == FIGURE_EPSILON})
    first = {
        m: min((n for n in grid if (n, FIGURE_EPSILON, m) in mae), default=None)
        for m in ("rr-shuffle", "rr-shuffle-paper-tuning", "rr-shuffle-certified")
    }
    return [
        ordering_claim(
            "SGDL-Shuffle has the least error, Geo-Shuffle the second, RR-Shuffle and Geo-Local more (§6, Table 2; "
            "held: Geo-Shuffle < min(RR, Geo-Local) under the certified tunings in every row we ran, partly: in some; "
            "SGDL-Shuffle has no certified tuning, so it is ordered under Theorem 5.1 only)",
            rows,
            lambda n, eps: ordering_holds(mae, n, eps),
            "Table 2",
            lambda n, eps: certified_ordering_holds(noise, n, eps),
        ),
        table_claim(mae, TABLE2, "Table 2 (MAE of the average)"),
        Claim(
            f"RR-Shuffle needs at least {PAPER_RR_MIN_N} users at eps = {FIGURE_EPSILON:g} (§6.2, Figure 4; held: ours "
            f"(Theorem 3.1) first runs at n = {PAPER_RR_MIN_N} of our grid, partly: only the paper's tuning does)",
            f"first n of the grid {', '.join(map(str, grid))} where RR-Shuffle runs: {first['rr-shuffle']} (ours), "
            f"{first['rr-shuffle-paper-tuning']} (paper's tuning, Theorem 3.1 at {RR_PAPER_OVERSHOOT} eps), both "
            f"{NOT_A_GUARANTEE}; the certified inverse has no minimum n (rr-shuffle-certified first runs at "
            f"{first['rr-shuffle-certified']}), so the minimum is a condition of Theorem 3.1 only",
            "held"
            if first["rr-shuffle"] == PAPER_RR_MIN_N
            else "partly"
            if first["rr-shuffle-paper-tuning"] == PAPER_RR_MIN_N
            else "not",
        ),
    ]


def _summary(rows: list[dict[str, Any]], invalid: dict[str, list[tuple[int, float]]], runs: int) -> str:
    mae, noise = mae_table(rows), noise_parameters(rows)
    lines = [
        f"MAE of the average of n uniform integers in {{0..{K}}}, delta = {DELTA:g}, {runs} runs per cell. "
        "Our tuning; in brackets the paper's Table 2 value and the ratio ours/paper where the paper has the column.",
        "",
        "| n | eps | "
        + " | ".join(column_label(m) for m in MECHANISMS)
        + " | SGDL < Geo-Shuffle < RR, Geo-Local (theorem tunings) | Geo-Shuffle < RR, Geo-Local (certified) "
        "| RR vs Geo-Local as in paper |",
        "|---|---|" + "---|" * (len(MECHANISMS) + 3),
    ]
    paper_of = {ours: i for i, ours in enumerate(OURS.values())}
    not_run = False
    for (n, eps), paper in TABLE2.items():
        cells = []
        for name in MECHANISMS:
            value = mae.get((n, eps, name))
            if value is None:
                cells.append(MISSING)
                not_run = True
            elif name in paper_of:
                ref = paper[paper_of[name]]
                cells.append(f"{value:.3g} ({ref:g}, {value / ref:.2g})")
            else:
                cells.append(f"{value:.3g}")
        local, rr = mae.get((n, eps, "geo-local")), mae.get((n, eps, "rr-shuffle"))
        holds, certified = ordering_holds(mae, n, eps), certified_ordering_holds(noise, n, eps)
        same = MISSING if rr is None else "yes" if (rr < local) == (paper[1] < paper[0]) else "no"
        lines.append(f"| {n} | {eps:g} | " + " | ".join(cells) + f" | {number(holds)} | {number(certified)} | {same} |")
    if not_run:
        lines += ["", RR_NOT_RUN_NOTE]
    lines += ["", *comparison_lines(mae, TABLE2, DELTA, ERROR_MODEL), ""]
    lines += [*guarantee_lines(rows, "per unit of the values' Manhattan distance"), ""]
    shifts = tuning_shifts()
    local_ratios = [paper[0] / ERROR_MODEL.geo(eps, n) for (n, eps), paper in TABLE2.items()]
    lines += [
        "How the paper tuned each mechanism (computed, see shuffledp.experiments.metric_common):",
        "",
        "* Geo-Shuffle: Theorem 4.1 at d = 1 (Conjecture B.3) instead of the maximum over d = 1..50 moves eps_geo by "
        f"at most {100 * shifts['d=1']:.2g}% over the cells of Table 2 (delta = 1e-3, which the authors' published code "
        f"uses for Figure 4, by at most {100 * shifts['delta=1e-3']:.2g}%): `geo-shuffle-paper-tuning` equals "
        "`geo-shuffle` to Monte Carlo noise. Where the paper's value is far below ours (n = 50, eps = 0.5; n = 100, "
        "eps = 0.3) it needs an eps_geo that Theorem 4.1 itself rates at 2.5-3x the target (numbers in the matched "
        "table): no tuning to eps yields those cells.",
        "* RR-Shuffle: Theorem 3.1 with natural logarithms needs n >= 35 at eps = 0.1; the paper reports 23. No reading "
        "(log base e, 2, 10; constant 8..64; delta 1e-4..1e-2) gives 23 together with the 776 of §6.3; admitting RR "
        f"while Theorem 3.1 gives at most {RR_PAPER_OVERSHOOT} eps reproduces both, so `rr-shuffle-paper-tuning` runs "
        f"Theorem 3.1 at {RR_PAPER_OVERSHOOT} eps (not eps-private by Theorem 3.1).",
        f"* Geo-Local has nothing to tune: the paper's values are {min(local_ratios):.2f}-{max(local_ratios):.2f}x its "
        "exact expectation, which shows how closely any cell can be expected to match.",
        "* SGDL-Shuffle is (with probability 1 - delta) the Geo-Central mechanism, the optimal eps-d_X-private sum "
        "(Proposition 4): its MAE is that of discrete Laplace noise of parameter e^-eps divided by n "
        f"(e.g. {_central_mae(0.5) / 50:.3g} at n = 50, eps = 0.5). The paper's SGDL column (0.0004 there) is far "
        "below that optimum, so it cannot come from an eps-private release; ratios of that column are not meaningful. "
        "(The authors' published code scales epsilon by n before adding central noise to the sum for the average "
        "query, which gives an MAE of about 0; that does not match the column either.)",
        "",
        "The paper's own table does not order RR-Shuffle and Geo-Local the same way in every row (RR is worse at "
        "n = 50 and at n = 100, eps = 0.2), so the RR vs Geo-Local column compares that pair with the paper row by row.",
        "",
        f"The columns tuned by a theorem ({', '.join(THEOREM_TUNED)}) are {NOT_A_GUARANTEE}: at their parameters the "
        "epsilon certified for every pair is above eps in most settings, often far above (guarantees table), so they "
        "are not eps-private as Definition 4 asks. `rr-shuffle-certified` and `geo-shuffle-certified` are tuned by the bounds valid for every "
        "pair: at k = 1000 Geo-Shuffle certifies no gain over Geo-Local (it is Geo-Local plus padding), and RR-Shuffle "
        "needs far more randomization than Theorem 3.1 says. The claims above are rated on these certified columns (the orderings by their expected errors: certified "
        "Geo-Shuffle runs Geo-Local's very noise, so their Monte Carlo means differ by chance only).",
    ]
    for name, cells in sorted(invalid.items()):
        lines += [
            "",
            f"{name} omitted (Theorem 3.1's condition): "
            + "; ".join(f"n = {n}, eps = {eps:g}" for n, eps in sorted(cells)),
        ]
    return "\n".join(lines)


def tuning_shifts(delta: float = DELTA) -> dict[str, float]:
    """Largest relative change of Geo-Shuffle's eps_geo over the cells of Table 2 when Theorem 4.1 is taken at d = 1
    only (``"d=1"``) or at delta = 1e-3 (``"delta=1e-3"``) instead of our maximum over d = 1..50 at ``delta``."""
    out = {"d=1": 0.0, "delta=1e-3": 0.0}
    for n, eps in TABLE2:
        ours = geo_shuffle_local_epsilon(eps, delta, n, method="theorem-4.1")
        out["d=1"] = max(out["d=1"], abs(paper_tuned_eps_geo(eps, delta, n) / ours - 1))
        out["delta=1e-3"] = max(
            out["delta=1e-3"], abs(geo_shuffle_local_epsilon(eps, 1e-3, n, method="theorem-4.1") / ours - 1)
        )
    return out


def _central_mae(eps: float) -> float:
    """E|N| for discrete Laplace N with parameter a = e^-eps: 2a / (1 - a^2)."""
    a = math.exp(-eps)
    return 2 * a / (1 - a * a)


def _figure(rows: list[dict[str, Any]]):
    mae = mae_table(rows)
    with page_style() as plt:
        fig, ax = plt.subplots(figsize=(PAGE_WIDTH * 0.6, 3.0))
        handles = []
        for i, name in enumerate(MECHANISMS):
            pts = sorted((n, v) for (n, eps, m), v in mae.items() if m == name and eps == FIGURE_EPSILON)
            if pts:
                (line,) = ax.plot(*zip(*pts), **series_style(i))
                handles.append((line, name))
        ax.set_xlabel("number of users n")
        ax.set_ylabel("MAE of the average")
        log_ticks(ax, "x")
        log_ticks(ax, "y")
        legend_and_caption(
            fig,
            [h for h, _ in handles],
            [label for _, label in handles],
            ncol=min(4, len(handles)),
            caption=f"Figure 4 setting: eps = {FIGURE_EPSILON:g}, delta = {DELTA:g}, values uniform in {{0..{K}}}. "
            "RR-Shuffle starts where Theorem 3.1 allows it; *-paper-tuning: the paper's tuning (see summary). "
            f"Tuned by a theorem, {NOT_A_GUARANTEE}: {', '.join(THEOREM_TUNED)}; *-certified: valid for every pair.",
        )
    return fig
