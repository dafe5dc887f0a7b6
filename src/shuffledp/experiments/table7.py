"""Table 7 of the PIC paper (full version, Appendix C): mean l2 error and time
per report of the seven eps-LDP randomizers on the location domain [-1,1]^2, plus
our exactly calibrated PrivUnit beside the paper's PrivUnit row.

Inputs are uniform on [-1,1]^2 (the paper does not say; locations of its data
sets are spread over the whole square).  One repetition draws a batch of
`BATCH` inputs and reports their mean error; the table averages 1000
repetitions (``--quick``: 100), the count the paper states, and the 95%
interval is over repetitions.  Time per report is measured on a batch of 10^5
(randomize + estimate, best of three).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from shuffledp.experiments.plotting import PAGE_WIDTH, legend_and_caption, log_ticks, page_style, series_style
from shuffledp.experiments.registry import Claim, ExperimentContext, ExperimentOutput, register, share_verdict
from shuffledp.randomizers.base import LocalRandomizer
from shuffledp.randomizers.registry import make_randomizer

__all__ = ["EPSILONS", "TABLE7", "claims", "mean_l2_errors", "microseconds_per_report", "run"]

EPSILONS = (0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 10.0)
BATCH = 100
TIMING_BATCH = 100_000
#: A cell of ours reproduces the paper's when ours / paper lies within this (relative).
REPRODUCED_RTOL = 0.10
#: Appendix C: Minkowski's error is "comparable" to the best at eps <= 1; the paper's own cell at eps = 0.5
#: is 19% above the best (10.42 vs PrivUnitG's 8.73), so comparable here means within 25% of the best.
COMPARABLE_RTOL = 0.25
#: Appendix C: Minkowski takes "less than 1 us" per report and is "roughly 50x faster than" PrivUnit;
#: held at half that factor or more.
PAPER_MICROSECONDS, PAPER_SPEEDUP = 1.0, 50.0

#: (label, registry name, extra keyword arguments, paper's mean l2 errors at EPSILONS)
TABLE7: tuple[tuple[str, str, dict[str, Any], tuple[float, ...]], ...] = (
    # Appendix B: hyper-parameters searched "following the approach in [36]" (Feldman-Talwar's
    # code, Bhowmick et al.'s sufficient condition): calibration="bhowmick" reproduces the row.
    ("PrivUnit", "privunit", {"calibration": "bhowmick"}, (8.94, 4.68, 2.25, 1.44, 0.81, 0.32, 0.18)),
    # The library default calibrates the cap exactly (privunit.py): lower error at the same epsilon.
    ("PrivUnit-exact", "privunit", {}, (8.94, 4.68, 2.25, 1.44, 0.81, 0.32, 0.18)),
    ("PrivUnitG", "privunit_g", {}, (8.73, 4.63, 2.27, 1.51, 0.96, 0.63, 0.53)),
    ("Laplace", "laplace", {}, (12.97, 6.56, 3.27, 2.13, 1.30, 0.81, 0.64)),
    ("PlanarLaplace", "planar_laplace", {}, (11.17, 5.63, 2.84, 1.88, 1.14, 0.71, 0.56)),
    # The paper's row matches the l1-optimal gamma = 1/(1+e^{eps/2}) (the MSE-optimal one is 14% worse at eps = 10).
    ("Staircase", "staircase", {"gamma": "l1"}, (13.19, 6.40, 3.13, 2.01, 1.05, 0.46, 0.28)),
    ("SquareWave", "square_wave", {}, (11.87, 5.72, 2.65, 1.68, 0.92, 0.53, 0.42)),
    # Appendix B: cap of the l-inf norm (q = +inf) and a numerical radius search; the
    # radius minimising the mean l2 error reproduces the table (see minkowski.py).
    (
        "MinkowskiResponse",
        "minkowski",
        {"norm": "linf", "radius": "optimal_l2"},
        (10.42, 4.50, 1.78, 0.98, 0.39, 0.14, 0.074),
    ),
)


def mean_l2_errors(R: LocalRandomizer, repetitions: int, rng: np.random.Generator) -> np.ndarray:
    """Per-repetition mean ||estimate - x||_2 over batches of BATCH uniform inputs."""
    X = rng.uniform(-1.0, 1.0, size=(repetitions * BATCH, 2))
    err = np.linalg.norm(R.estimate(R.randomize(X, rng)) - X, axis=1)
    return err.reshape(repetitions, BATCH).mean(axis=1)


def microseconds_per_report(R: LocalRandomizer, rng: np.random.Generator) -> float:
    X = rng.uniform(-1.0, 1.0, size=(TIMING_BATCH, 2))
    best = np.inf
    for _ in range(3):
        start = time.perf_counter()
        R.estimate(R.randomize(X, rng))
        best = min(best, time.perf_counter() - start)
    return best / TIMING_BATCH * 1e6


@register(
    "table7",
    "Table 7: mean l2 error and time per report of eps-LDP randomizers on [-1,1]^2",
    "PIC full version, Appendix C",
)
def run(ctx: ExperimentContext) -> ExperimentOutput:
    repetitions = 100 if ctx.quick else 1000
    rows: list[dict[str, Any]] = []
    cases = [
        (label, name, kw, eps, paper) for label, name, kw, papers in TABLE7 for eps, paper in zip(EPSILONS, papers)
    ]
    for i, (label, name, kw, eps, paper) in enumerate(ctx.progress.track(cases, "table7")):
        R = make_randomizer(name, eps, dim=2, **kw)
        reps = mean_l2_errors(R, repetitions, ctx.rng(i))
        half = 1.96 * reps.std(ddof=1) / np.sqrt(repetitions)
        rows.append(
            {
                "randomizer": label,
                "epsilon": eps,
                "mean_l2_error": float(reps.mean()),
                "ci95_low": float(reps.mean() - half),
                "ci95_high": float(reps.mean() + half),
                "us_per_report": microseconds_per_report(R, ctx.rng(1000 + i)),
                "paper_mean_l2_error": paper,
            }
        )
    return ExperimentOutput(
        columns=[
            "randomizer",
            "epsilon",
            "mean_l2_error",
            "ci95_low",
            "ci95_high",
            "us_per_report",
            "paper_mean_l2_error",
        ],
        rows=rows,
        summary_markdown=_summary(rows, repetitions),
        figure=_figure(rows),
        parameters={
            "epsilons": list(EPSILONS),
            "repetitions": repetitions,
            "batch": BATCH,
            "timing_batch": TIMING_BATCH,
        },
        claims=claims(rows),
    )


def claims(rows: list[dict[str, Any]]) -> list[Claim]:
    """Appendix C's claims on Table 7 (errors, Minkowski's error, time), each a `share_verdict` over its cells."""
    at = {(r["randomizer"], r["epsilon"]): r for r in rows}
    minkowski, privunit = "MinkowskiResponse", "PrivUnit"
    # 1. the paper's cells; PrivUnit-exact is our calibration set beside the PrivUnit row, not a row of the paper
    ratios = {(label, e): at[label, e]["mean_l2_error"] / at[label, e]["paper_mean_l2_error"]
              for label, *_ in TABLE7 if label != "PrivUnit-exact" for e in EPSILONS}  # fmt: skip
    outside = [f"{label} eps={e:g} {q:.2f}x" for (label, e), q in ratios.items() if abs(q - 1) > REPRODUCED_RTOL]
    # 2. Minkowski against the best of the others (PrivUnit-exact included) at each epsilon
    versus = {}
    for e in EPSILONS:
        others = [r["mean_l2_error"] for (label, eps), r in at.items() if eps == e and label != minkowski]
        versus[e] = at[minkowski, e]["mean_l2_error"] / min(others)
    good = {e: q <= 1 + COMPARABLE_RTOL if e <= 1 else q < 1 for e, q in versus.items()}
    # 3. time per report
    slowest = max(at[minkowski, e]["us_per_report"] for e in EPSILONS)
    speedup = float(np.median([at[privunit, e]["us_per_report"] / at[minkowski, e]["us_per_report"] for e in EPSILONS]))
    fast = [slowest < PAPER_MICROSECONDS, speedup >= PAPER_SPEEDUP / 2]
    return [
        Claim(
            f"Table 7: the mean l2 errors of the seven randomizers, e.g. MinkowskiResponse 10.42 at eps = 0.5, 0.074 "
            f"at eps = 10 (held: every cell within {REPRODUCED_RTOL:.0%}; partly: some)",
            f"{len(ratios) - len(outside)} of {len(ratios)} cells within {REPRODUCED_RTOL:.0%}, ours / paper "
            f"{min(ratios.values()):.2f}-{max(ratios.values()):.2f}"
            + (f"; outside: {', '.join(outside)}" if outside else ""),
            share_verdict(len(ratios) - len(outside), len(ratios)),
        ),
        Claim(
            "Appendix C: Minkowski's error is comparable to the best at eps <= 1 (paper: 10.42 vs 8.73 at 0.5) and "
            "clearly the lowest at eps >= 2 (1.78 vs 2.25 at 2, 0.074 vs 0.18 at 10) (held: within "
            f"{COMPARABLE_RTOL:.0%} of the best at every eps <= 1 and lowest at every eps >= 2; partly: at some)",
            "Minkowski / best other (PrivUnit-exact included): "
            + ", ".join(f"{q:.2f}x at {e:g}" for e, q in versus.items()),
            share_verdict(sum(good.values()), len(good)),
        ),
        Claim(
            f"Appendix C: Minkowski takes under {PAPER_MICROSECONDS:g} us per report (0.6-0.8 us) and is roughly "
            f"{PAPER_SPEEDUP:g}x faster than PrivUnit (49 us at eps = 0.5) (held: under {PAPER_MICROSECONDS:g} us "
            f"at every eps and at least {PAPER_SPEEDUP / 2:g}x; partly: one of the two)",
            f"Minkowski at most {slowest:.2g} us per report (randomize + estimate, batch of {TIMING_BATCH:,}); "
            f"PrivUnit / Minkowski time {speedup:.2g}x (median over eps)",
            share_verdict(sum(fast), len(fast)),
        ),
    ]


def _summary(rows: list[dict[str, Any]], repetitions: int) -> str:
    lines = [
        f"Inputs uniform on [-1,1]^2; {repetitions} repetitions of {BATCH} reports each; "
        "95% interval over repetitions. Ratio = ours / paper.",
        "",
        "| randomizer | " + " | ".join(f"eps={e:g}" for e in EPSILONS) + " |",
        "|---|" + "---|" * len(EPSILONS),
    ]
    for label, *_ in TABLE7:
        cells = []
        for eps in EPSILONS:
            row = next(r for r in rows if r["randomizer"] == label and r["epsilon"] == eps)
            ratio = row["mean_l2_error"] / row["paper_mean_l2_error"]
            cells.append(
                f"{row['mean_l2_error']:.3g} vs {row['paper_mean_l2_error']:g} ({ratio:.2f}x; {row['us_per_report']:.2g} us)"
            )
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += ["", "Cells: ours vs paper (ratio; our time per report)."]
    return "\n".join(lines)


def _paper_rows() -> dict[tuple[float, ...], list[str]]:
    """Each distinct paper row with the labels of ours compared to it (PrivUnit and PrivUnit-exact share one)."""
    rows: dict[tuple[float, ...], list[str]] = {}
    for label, _, _, paper in TABLE7:
        rows.setdefault(paper, []).append(label)
    return rows


def _figure(rows: list[dict[str, Any]]):
    with page_style() as plt:
        fig, (errors, ratios) = plt.subplots(1, 2, figsize=(PAGE_WIDTH, 3.4))
        handles: dict[str, Any] = {}
        for k, (label, *_) in enumerate(TABLE7):
            mine = [r for r in rows if r["randomizer"] == label]
            eps = [r["epsilon"] for r in mine]
            (handles[label],) = errors.plot(eps, [r["mean_l2_error"] for r in mine], **series_style(k))
            ratios.plot(eps, [r["mean_l2_error"] / r["paper_mean_l2_error"] for r in mine], **series_style(k))
        for paper in _paper_rows():  # once per paper row, however many of our rows it is compared to
            (handles["paper (Table 7)"],) = errors.plot(EPSILONS, paper, "x", color="black", ms=7, mew=1.5, zorder=4)
        ratios.axhline(1.0, color="black", lw=1.0, zorder=1)
        errors.set_xlabel("local $\\varepsilon$")
        errors.set_ylabel("mean $\\ell_2$ error")
        log_ticks(errors, "y")
        errors.set_title("error: lines ours, crosses the paper")
        ratios.set_xlabel("local $\\varepsilon$")
        ratios.set_ylabel("ours / paper")
        ratios.set_title("ratio to the paper's row")
        legend_and_caption(
            fig,
            list(handles.values()),
            list(handles),
            ncol=3,
            caption="Mean l2 error of eps-LDP randomizers on [-1,1]^2 (PIC Table 7). PrivUnit (paper's "
            "recipe) and PrivUnit-exact (our exact calibration) are both compared to the paper's single PrivUnit row.",
        )
    return fig
