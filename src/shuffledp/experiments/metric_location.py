"""Table 3 and Figures 5 / 29 of the metric paper (§6.3, Appendix E.2): the centroid of Austin addresses.

The addresses are the suburban ("dispersed", Figure 29) Austin file of ``../shared/data/locations``; the
paper's Table 3 used every address, so its numbers are compared, not matched.  The grid is the paper's:
1000 x 1000 squares of 100 m from the north-west corner of its rectangle (footnote 4), so each user holds
two integers in {0..1000}; addresses outside the rectangle are left out and counted in the summary.
Privacy (Appendix D): (eps, delta)-||.||_2 at a privacy radius of 600 m = 6 squares, so each axis runs at
eps_run = eps / (6 sqrt 2) and delta / 2.  Error: Euclidean distance (metres) between the true and the
released centroid.  Beside our tuning (`metric_common`): Geo-Shuffle by the certified epsilon
(:func:`~shuffledp.accounting.metric.geo_shuffle_certified_epsilon`, the privacy-valid tuning, which at k = 1000
certifies no gain over Geo-Local) and RR-Shuffle with p from the certified inverse, and the paper's tuning of Geo-Shuffle (Theorem 4.1 at d = 1) and RR-Shuffle
(inferred from its reported minimum n), against which Table 3 is compared cell by cell.

The theorem-tuned columns are not guarantees for far-apart datasets: beside the errors the CSV and the summary give
each column's per-axis noise parameter, claimed and certified epsilon, and the per-distance profile of RR-, Geo-
and SGDL-Shuffle (per axis, distances in squares; ``error_metric`` in `metric_common.GUARANTEE_METRICS`,
``distance`` for the profile); the paper's claims are rated on the certified columns.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from shuffledp._util.numbers import MISSING, number
from shuffledp.accounting.metric import axis_budget, rr_shuffle_probability
from shuffledp.datasets import austin_path, load_austin, project_to_metres
from shuffledp.errors import DataError, ValidityConditionError
from shuffledp.experiments.metric_common import (
    GUARANTEE_METRICS,
    LAPLACE_PAIR_NORM,
    MECHANISMS,
    NOT_A_GUARANTEE,
    PAPER_COLUMNS,
    RR_NOT_RUN_NOTE,
    RR_PAPER_OVERSHOOT,
    THEOREM_TUNED,
    ErrorModel,
    certified_expected_errors,
    chain_holds,
    column_label,
    comparison_lines,
    geo_sum_variance,
    guarantee_lines,
    guarantee_rows,
    noise_parameters,
    ordering_claim,
    paper_tuned_eps_geo,
    profile_rows,
    rr_sum_variance,
    table_claim,
    tuned_mechanisms,
)
from shuffledp.experiments.plotting import PAGE_WIDTH, bar_style, legend_and_caption, page_style
from shuffledp.experiments.registry import Claim, ExperimentContext, ExperimentOutput, register

__all__ = [
    "axis_mechanisms",
    "axis_parameters",
    "centroid_errors",
    "certified_ordering_holds",
    "claims",
    "grid_cells",
    "mean_errors",
    "ordering_holds",
    "published_code_shifts",
    "run",
]

NAME = "metric-location"
#: The paper's rectangle (footnote 4): north, south latitudes; west, east longitudes.
NORTH, SOUTH, WEST, EAST = 30.95534, 30.091, -98.27048, -97.3819
SQUARE_M = 100.0
K = 1000
RADIUS_SQUARES = 6
DELTA = 1e-4
#: Table 3 (Euclidean distance, metres): (n, eps) -> (Geo-Local, RR-Shuffle, Geo-Shuffle, SGDL-Shuffle).
TABLE3: dict[tuple[int, float], tuple[float, float, float, float]] = {
    (1000, 0.15): (300, 120, 40, 2),
    (1000, 0.2): (210, 80, 40, 0.9),
    (1000, 0.3): (100, 40, 20, 0.04),
    (2000, 0.1): (190, 50, 10, 1),
    (3000, 0.2): (130, 40, 20, 0.001),
    (4000, 0.3): (50, 5, 1, 0.00006),
}
PAPER_ORDER = PAPER_COLUMNS
#: Figure 5 / 29: eps = 0.15 over n.
FIGURE_EPSILON = 0.15
FIGURE_N = (1000, 2000, 3000, 4000, 5000)
COLUMNS = ["experiment", "n", "epsilon", "delta", "mechanism", "error_metric", "value", "run", "distance"]


def grid_cells(latlon: np.ndarray) -> tuple[np.ndarray, int]:
    """(x, y) squares in {0..1000}^2 (x east from the west edge, y south from the north edge) of the points
    inside the paper's rectangle, and how many points lay outside it."""
    inside = (latlon[:, 0] >= SOUTH) & (latlon[:, 0] <= NORTH) & (latlon[:, 1] >= WEST) & (latlon[:, 1] <= EAST)
    metres = project_to_metres(latlon[inside], origin=(NORTH, WEST))
    cells = np.floor(np.column_stack([metres[:, 0], -metres[:, 1]]) / SQUARE_M).astype(np.int64)
    return cells, int((~inside).sum())  # the rectangle is 84.7 km x 96.1 km: squares 0..847 and 0..961


def axis_parameters(epsilon: float, delta: float = DELTA) -> tuple[float, float]:
    """(eps_run, delta_axis) = (eps / (6 sqrt 2), delta / 2): one axis, per square (Appendix D, §6.3)."""
    eps_axis, delta_axis = axis_budget(epsilon, delta)
    return eps_axis / RADIUS_SQUARES, delta_axis


def axis_mechanisms(epsilon: float, n: int) -> dict[str, object]:
    """The mechanisms of `metric_common.MECHANISMS` for one axis at eps_run = eps / (6 sqrt 2), delta / 2."""
    eps_run, delta_axis = axis_parameters(epsilon)
    return tuned_mechanisms(eps_run, delta_axis, n, K)


def _rayleigh(sum_variance: float, n: int) -> float:
    """Mean Euclidean error (m) of a centroid whose two axes carry independent normal sums of this variance."""
    return SQUARE_M * math.sqrt(math.pi / 2.0) * math.sqrt(sum_variance) / n


def _central(eps_run: float, n: int) -> float:
    """Geo-Central's mean error (m): two independent discrete Laplace(e^-eps_run) sums, as Laplace of equal E|.|."""
    a = math.exp(-eps_run)
    return SQUARE_M * LAPLACE_PAIR_NORM * 2.0 * a / (1.0 - a * a) / n


#: Expected error (m) under each mechanism's parameter (normal approximation of the per-axis sums; n >= 1000).
ERROR_MODEL = ErrorModel(
    geo=lambda eps_geo, n: _rayleigh(geo_sum_variance(eps_geo, n), n),
    rr=lambda p, n: _rayleigh(rr_sum_variance(p, n, K), n),
    central=_central,
    axis=axis_parameters,
    k=K,
    unit="mean Euclidean error (m), per-axis eps_run = eps / (6 sqrt 2) and delta / 2",
)


def centroid_errors(mechanism: Any, cells: np.ndarray, runs: int, rng: np.random.Generator) -> np.ndarray:
    """Euclidean distance (metres) between the true and the released centroid, ``runs`` times (axes independent)."""
    n = cells.shape[0]
    est = np.column_stack([mechanism.estimate_sum(cells[:, a], rng, runs) / n for a in (0, 1)])
    return SQUARE_M * np.hypot(*(est - cells.mean(axis=0)).T)


@register(
    NAME,
    "Metric privacy, Austin centroid: error in metres (Table 3, Figures 5 and 29)",
    "metric paper §6.3, Table 3, Figures 5, 29",
)
def run(ctx: ExperimentContext) -> ExperimentOutput:
    runs = 100 if ctx.quick else 300
    settings = sorted(set(TABLE3) | {(n, FIGURE_EPSILON) for n in FIGURE_N})
    if ctx.quick:
        settings = [(1000, 0.15), (1000, 0.3), (4000, 0.3)]
    cells_all, outside = grid_cells(load_austin())
    needed = max(n for n, _ in settings)
    if cells_all.shape[0] < needed:  # each setting samples n distinct addresses
        raise DataError(
            f"{austin_path()}: {cells_all.shape[0]} addresses inside the paper's rectangle ({outside} outside it), but "
            f"{NAME} samples up to n = {needed} distinct addresses{' (quick mode)' if ctx.quick else ''}: "
            "the file needs at least that many"
        )
    rows: list[dict[str, Any]] = []
    invalid: dict[str, list[tuple[int, float]]] = {}
    for index, (n, eps) in enumerate(ctx.progress.track(settings, NAME)):
        users = cells_all[ctx.rng(index, 0).choice(cells_all.shape[0], n, replace=False)]
        mechanisms = axis_mechanisms(eps, n)
        setting = {"experiment": NAME, "n": n, "epsilon": eps, "delta": DELTA}
        rows += guarantee_rows(mechanisms, setting) + profile_rows(mechanisms, setting)
        for m_index, (name, mechanism) in enumerate(mechanisms.items()):
            if isinstance(mechanism, ValidityConditionError):
                invalid.setdefault(name, []).append((n, eps))
                continue
            errors = centroid_errors(mechanism, users, runs, ctx.rng(index, 1 + m_index))
            base = {**setting, "mechanism": name, "error_metric": "euclidean_m"}
            rows += [{**base, "value": float(v), "run": r} for r, v in enumerate(errors)]
    return ExperimentOutput(
        columns=COLUMNS,
        rows=rows,
        summary_markdown=_summary(rows, invalid, runs, outside, cells_all.shape[0]),
        figure=_figure(rows),
        parameters={
            "k": K,
            "delta": DELTA,
            "runs": runs,
            "radius_squares": RADIUS_SQUARES,
            "settings": [list(s) for s in settings],
            "addresses_in_rectangle": int(cells_all.shape[0]),
            "addresses_outside": outside,
        },
        claims=claims(mean_errors(rows), noise_parameters(rows)),
    )


def mean_errors(rows: list[dict[str, Any]]) -> dict[tuple[int, float, str], float]:
    """(n, eps, mechanism) -> mean error (metres) over the runs (the guarantee rows left out)."""
    groups: dict[tuple[int, float, str], list[float]] = {}
    for r in rows:
        if r.get("error_metric") in GUARANTEE_METRICS:
            continue
        groups.setdefault((r["n"], r["epsilon"], r["mechanism"]), []).append(r["value"])
    return {key: float(np.mean(v)) for key, v in groups.items()}


def ordering_holds(mean: dict[tuple[int, float, str], float], n: int, eps: float) -> bool:
    """Table 3's ordering in one row: SGDL < Geo-Shuffle < RR-Shuffle (where it runs) < Geo-Local."""
    return chain_holds([mean.get((n, eps, m)) for m in ("sgdl-shuffle", "geo-shuffle", "rr-shuffle", "geo-local")])


def certified_ordering_holds(noise: dict[tuple[int, float, str], float], n: int, eps: float) -> bool | None:
    """Table 3's ordering in one row on the certified columns, by their expected errors at the noise parameters they
    ran with (`certified_expected_errors`): Geo-Shuffle < RR-Shuffle < Geo-Local (SGDL-Shuffle has no certified
    tuning: left out); None where a parameter is missing."""
    e = certified_expected_errors(ERROR_MODEL, noise, n, eps)
    if len(e) < 3:
        return None
    return chain_holds([e["geo-shuffle-certified"], e["rr-shuffle-certified"], e["geo-local"]])


def claims(mean: dict[tuple[int, float, str], float], noise: dict[tuple[int, float, str], float]) -> list[Claim]:
    """§6.3's ordering of the mechanisms (`ordering_holds`, rated by `certified_ordering_holds` on the certified
    columns' noise parameters ``noise``) and Table 3's values (`table_claim`)."""
    rows = [(n, eps) for n, eps in TABLE3 if (n, eps, "geo-local") in mean]
    return [
        ordering_claim(
            "The shuffle mechanisms beat Geo-Local: SGDL-Shuffle least error, then Geo-Shuffle, then RR-Shuffle "
            "(§6.3, Table 3; held: Geo-Shuffle < RR < Geo-Local under the certified tunings in every row we ran, "
            "partly: in some; SGDL-Shuffle has no certified tuning, so it is ordered under Theorem 5.1 only)",
            rows,
            lambda n, eps: ordering_holds(mean, n, eps),
            "Table 3",
            lambda n, eps: certified_ordering_holds(noise, n, eps),
        ),
        table_claim(mean, TABLE3, "Table 3 (centroid error, metres)"),
    ]


def _span(values) -> str:
    lo, hi = f"{min(values):.2f}", f"{max(values):.2f}"
    return lo if lo == hi else f"{lo}-{hi}"


def published_code_shifts() -> dict[str, Any]:
    """Expected errors at Table 3's cells under the settings of the authors' published code (delta = 1e-3 per axis,
    searches stopped at 1.1 eps_run), against ours: ``geo`` the ratios ours / theirs for Geo-Shuffle (d = 1 both),
    ``geo_4000`` theirs at n = 4000, eps = 0.3, ``rr_vs_variant`` the largest relative gap between their RR-Shuffle
    and `rr-shuffle-paper-tuning` where both are valid."""
    out: dict[str, Any] = {"geo": [], "rr_vs_variant": 0.0}
    for n, eps in TABLE3:
        eps_run, delta_axis = axis_parameters(eps)
        theirs = ERROR_MODEL.geo(paper_tuned_eps_geo(1.1 * eps_run, 1e-3, n), n)
        out["geo"].append(ERROR_MODEL.geo(paper_tuned_eps_geo(eps_run, delta_axis, n), n) / theirs)
        if (n, eps) == (4000, 0.3):
            out["geo_4000"] = theirs
        try:
            code = ERROR_MODEL.rr(rr_shuffle_probability(1.1 * eps_run, 1e-3, K, n, method="theorem-3.1"), n)
            variant = ERROR_MODEL.rr(
                rr_shuffle_probability(RR_PAPER_OVERSHOOT * eps_run, delta_axis, K, n, method="theorem-3.1"), n
            )
        except ValidityConditionError:
            continue
        out["rr_vs_variant"] = max(out["rr_vs_variant"], abs(code / variant - 1))
    return out


def _summary(rows, invalid, runs, outside, inside) -> str:
    mean, noise = mean_errors(rows), noise_parameters(rows)
    lines = [
        f"Mean Euclidean error (m) of the centroid, {runs} runs per cell, delta = {DELTA:g}, radius 600 m "
        f"(eps_run = eps / (6 sqrt 2) per axis). Our tuning; in brackets the paper's Table 3 value and the ratio "
        f"ours/paper where the paper has the column. {inside} suburban addresses in the paper's rectangle ({outside} "
        "outside it, left out); the paper's Table 3 used all Austin addresses.",
        "",
        "| n | eps | "
        + " | ".join(column_label(m) for m in MECHANISMS)
        + " | SGDL < Geo-Shuffle < RR < Geo-Local (theorem tunings) | Geo-Shuffle < RR < Geo-Local (certified, "
        "expected) |",
        "|---|---|" + "---|" * (len(MECHANISMS) + 2),
    ]
    not_run = False
    for (n, eps), paper in TABLE3.items():
        if not any(key[:2] == (n, eps) for key in mean):
            continue
        refs = dict(zip(PAPER_ORDER, paper))
        cells = []
        for name in MECHANISMS:
            value, ref = mean.get((n, eps, name)), refs.get(name)
            if value is None:
                cells.append(MISSING)
                not_run = True
            else:
                cells.append(f"{value:.3g}" + ("" if ref is None else f" ({ref:g}, {value / ref:.2g})"))
        holds, certified = ordering_holds(mean, n, eps), certified_ordering_holds(noise, n, eps)
        lines.append(f"| {n} | {eps:g} | " + " | ".join(cells) + f" | {number(holds)} | {number(certified)} |")
    if not_run:
        lines += ["", RR_NOT_RUN_NOTE]
    lines += ["", *comparison_lines(mean, TABLE3, DELTA, ERROR_MODEL), ""]
    lines += [*guarantee_lines(rows, "per axis and per 100 m square, at eps_run = eps / (6 sqrt 2) and delta / 2"), ""]
    local = {key: paper[0] / ERROR_MODEL.geo(axis_parameters(key[1])[0], key[0]) for key, paper in TABLE3.items()}
    code = published_code_shifts()
    lines += [
        "How the paper's setting differs from ours, and what does not matter (computed, see "
        "shuffledp.experiments.metric_common):",
        "",
        "* The data set does not move these numbers: every mechanism's noise is independent of the data (RR-Shuffle's "
        "debiased sum has variance n k (p/2)(1 - p/2) / (1 - p)^2 whatever the values; Geo-, SGDL-Shuffle and Geo-Local "
        "add data-independent noise, truncated at c, which almost never acts). So Table 3 (all addresses) and the "
        "dispersed variant of Appendix E.2 (Figures 26, 28, 29; our suburban file) would give the same errors, and "
        "the paper gives no numbers for the dispersed variant (figures only, not in the text), so Table 3 is the "
        "reference.",
        f"* Geo-Local has nothing to tune, yet the paper's values are {_span(local.values())}x its expectation; the paper's Geo-Local at n = 2000, "
        "eps = 0.1 (190 m) is below its value at n = 1000, eps = 0.15 (300 m), though the noise is larger there "
        f"({ERROR_MODEL.geo(axis_parameters(0.1)[0], 2000):.0f} m against {ERROR_MODEL.geo(axis_parameters(0.15)[0], 1000):.0f} m "
        "expected). Within 2x is as close as Table 3 can be matched.",
        "* Geo-Shuffle at d = 1 (Conjecture B.3) is our Theorem 4.1 tuning to within 1% in eps_geo. Its n = 4000 cell "
        "(1 m) needs an eps_geo that Theorem 4.1 rates at about 5x eps_run (matched table): not a tuning to eps.",
        "* RR-Shuffle: the paper's statement that RR needs at least 776 users at eps_run = 0.017 is reproduced, with "
        "Theorem 3.1 in natural logarithms, delta = 1e-4 (not delta / 2) and the same 1.233 overshoot as its 23 users "
        "of §6.2 (see metric-synthetic); `rr-shuffle-paper-tuning` keeps delta / 2 per axis.",
        "* The authors' published code for this experiment uses delta = 1e-3 (per axis in one of its two copies, halved "
        "in the other), a radius of 6 squares and eps / (6 sqrt 2) per axis as we do, and stops its searches for eps_geo "
        "and lambda within 10% of eps_run of the target. Computed at Table 3's cells with delta = 1e-3 per axis and that "
        "10%, it lowers Geo-Shuffle's "
        f"expected error by {_span(code['geo'])}x (to {code['geo_4000']:.2g} m at n = 4000, "
        f"eps = 0.3, against the paper's 1 m) and puts RR-Shuffle within {100 * code['rr_vs_variant']:.0f}% of "
        "`rr-shuffle-paper-tuning`'s expectation where both run; its c takes the floor where Proposition 2 takes the "
        "ceiling (truncation acts with probability below delta / 2 either way). None of it explains the cells that "
        "stay outside 2x.",
        "",
        "SGDL-Shuffle is (with probability 1 - delta) Geo-Central: per axis discrete Laplace of parameter e^-eps_run on "
        f"the sum, so its error is about {_central(axis_parameters(0.15)[0], 1000):.3g} m at n = 1000, eps = 0.15. The "
        "paper's SGDL column (2 m there, 6e-5 m at n = 4000) lies below that optimum, so those ratios mean little. "
        "(The authors' published code multiplies eps_run by n before adding central noise to the sum, which gives "
        "about 0 m; that does not match the column either.)",
        "",
        "geo-shuffle-certified and rr-shuffle-certified: Geo- and RR-Shuffle tuned so that the guarantee holds for "
        "every pair of datasets (Definition 4). With values up to k = 1000 > 2c nothing below eps_geo is certified, so "
        "certified Geo-Shuffle is Geo-Local with padding; certified RR-Shuffle needs far more randomization than "
        f"Theorem 3.1 says. The columns tuned by a theorem ({', '.join(THEOREM_TUNED)}) are {NOT_A_GUARANTEE} "
        "(guarantees table: the epsilon their parameters certify for every pair). The claims above are rated on the "
        "certified columns (the orderings by their expected errors: certified Geo-Shuffle runs Geo-Local's very noise).",
    ]
    for name, cells in sorted(invalid.items()):
        lines += [
            "",
            f"{name} omitted (Theorem 3.1's condition): "
            + "; ".join(f"n = {n}, eps = {eps:g}" for n, eps in sorted(cells)),
        ]
    return "\n".join(lines)


def _figure(rows):
    """Box plots of the error per mechanism at eps = 0.15 (Figure 5 / 29), one group per n."""
    by = {}
    for r in rows:
        if r["epsilon"] == FIGURE_EPSILON:
            by.setdefault((r["n"], r["mechanism"]), []).append(r["value"])
    ns = sorted({n for n, _ in by})
    with page_style() as plt:
        fig, ax = plt.subplots(figsize=(PAGE_WIDTH, 3.2))
        width = 0.8 / len(MECHANISMS)
        handles = []
        for i, name in enumerate(MECHANISMS):
            data = [by.get((n, name), [math.nan]) for n in ns]
            pos = np.arange(len(ns)) + (i - (len(MECHANISMS) - 1) / 2) * width
            style = bar_style(i)
            bp = ax.boxplot(data, positions=pos, widths=width * 0.9, patch_artist=True, showfliers=False)
            for box in bp["boxes"]:
                box.set(facecolor=style["color"], hatch=style["hatch"], edgecolor="black", linewidth=0.6)
            for part in ("medians", "whiskers", "caps"):
                for line in bp[part]:
                    line.set(color="black", linewidth=0.8)
            handles.append(bp["boxes"][0])
        ax.set_yscale("log")
        ax.set_xticks(np.arange(len(ns)), [str(n) for n in ns])
        ax.set_xlabel("number of users n")
        ax.set_ylabel("centroid error (m)")
        legend_and_caption(
            fig,
            handles,
            list(MECHANISMS),
            ncol=len(MECHANISMS),
            caption=f"Figure 5 / 29 setting: eps = {FIGURE_EPSILON:g} at 600 m, delta = {DELTA:g}, suburban Austin "
            "addresses on the paper's 100 m grid. geo-shuffle: Theorem 4.1 maximised over d (ours); *-paper-tuning: the "
            f"paper's tuning (see summary); tuned by a theorem, {NOT_A_GUARANTEE}: {', '.join(THEOREM_TUNED)}; "
            "*-certified: tuned by the bound valid for every pair of datasets. "
            "Boxes: quartiles; whiskers: 1.5 IQR.",
        )
    return fig
