"""Amplification bounds side by side: epsilon after shuffling n generic eps0-LDP reports.

Every registered upper and lower bound (`shuffledp.accounting.available_methods`)
for eps0 in {0.5, 1, 2, 4, 6} (the issue's grid) plus 0.25 (the only value where the
bound of Erlingsson et al., which needs eps0 < 1/2, applies) and n from 10^3 to 10^8 (half decades; ``--quick``:
10^3..10^6 by decades), at delta = 0.01 / n (the convention of the variation-ratio
and PIC papers' experiments: delta well below 1/n).  Bounds whose parameter regime
is not met are recorded as ``inf`` and left out of the figure.  Each point is timed
(one evaluation, wall clock).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from shuffledp._util.numbers import number
from shuffledp.accounting.bounds import available_methods, shuffle_epsilon, shuffle_epsilon_lower
from shuffledp.experiments.plotting import (
    PAGE_WIDTH,
    legend_and_caption,
    log_ticks,
    lower_bound_style,
    page_style,
    series_style,
)
from shuffledp.experiments.registry import Claim, ExperimentContext, ExperimentOutput, register, share_verdict

__all__ = ["EPS0", "N_TABLE", "caption", "claims", "coinciding", "delta_for", "evaluate", "run", "tightness_gap"]

EPS0 = (0.25, 0.5, 1.0, 2.0, 4.0, 6.0)
N_FULL = tuple(int(round(10**e)) for e in np.arange(3.0, 8.01, 0.5))
N_QUICK = (1_000, 10_000, 100_000, 1_000_000)
#: n of the summary table.
N_TABLE = 10_000
#: Curves closer than this (relative) at every point are drawn, and named, as one line.
COINCIDE_RTOL = 0.01
COLUMNS = ["method", "eps0", "n", "delta", "epsilon", "seconds"]
#: The numerical variation-ratio bound is called tight when the lower bound is within COINCIDE_RTOL of it
#: everywhere, partly tight within this.
TIGHT_PARTLY_RTOL = 0.10
#: Largest distance between the measured log-log slope of epsilon in n and Eq. (1)'s that still counts as its rate.
SLOPE_TOL = 0.05
#: An upper bound this far (relative) below the lower bound is rounding, not a violation.
ROUNDING_RTOL = 1e-6


def delta_for(n: int) -> float:
    return 0.01 / n


def evaluate(method: str, kind: str, eps0: float, n: int, delta: float) -> tuple[float, float]:
    """(epsilon, seconds) of one bound at generic eps0."""
    compute = shuffle_epsilon if kind == "upper" else shuffle_epsilon_lower
    start = time.perf_counter()
    value = compute(n, delta, eps0=eps0, method=method)
    return value, time.perf_counter() - start


@register(
    "amplification-bounds",
    "Amplification bounds: central epsilon vs n for generic eps0-LDP reports, every upper and lower bound",
    "segmented paper §3.3 / Wang et al. VLDB 2024; FMT FOCS 2021, SODA 2023; Balle et al. CRYPTO 2019; "
    "Erlingsson et al. SODA 2019; PIC Theorem 5.2",
)
def run(ctx: ExperimentContext) -> ExperimentOutput:
    ns = N_QUICK if ctx.quick else N_FULL
    methods = available_methods()
    cases = [(name, m.kind, eps0, n) for eps0 in EPS0 for n in ns for name, m in methods.items()]
    rows: list[dict[str, Any]] = []
    for name, kind, eps0, n in ctx.progress.track(cases, "amplification-bounds"):
        delta = delta_for(n)
        value, seconds = evaluate(name, kind, eps0, n, delta)
        rows.append({"method": name, "eps0": eps0, "n": n, "delta": delta, "epsilon": value, "seconds": seconds})
    kinds = {name: m.kind for name, m in methods.items()}
    return ExperimentOutput(
        columns=COLUMNS,
        rows=rows,
        summary_markdown=_summary(rows, kinds),
        figure=_figure(rows, kinds),
        parameters={"eps0": list(EPS0), "n": list(ns), "delta": "0.01 / n", "methods": kinds},
        claims=claims(rows, kinds),
    )


def tightness_gap(rows: list[dict[str, Any]]) -> float | None:
    """Largest relative gap (upper - lower) / upper between the variation-ratio bounds (None: either is missing)."""
    ub = [r for r in rows if r["method"] == "variation-ratio"]
    lb = {(r["eps0"], r["n"]): r["epsilon"] for r in rows if r["method"] == "variation-ratio-lower"}
    if not (ub and lb):
        return None
    return max((r["epsilon"] - lb[(r["eps0"], r["n"])]) / r["epsilon"] for r in ub if math.isfinite(r["epsilon"]))


def claims(rows: list[dict[str, Any]], kinds: dict[str, str]) -> list[Claim]:
    """The amplification papers' claims checked on the run's bounds (each rule is in its claim's text)."""
    curves: dict[str, dict[tuple[float, int], float]] = {}
    for r in rows:
        curves.setdefault(r["method"], {})[(r["eps0"], r["n"])] = r["epsilon"]
    out = []
    # 1. segmented §3.3: the variation-ratio reduction gives tight numerical bounds
    gap = tightness_gap(rows)
    if gap is not None:
        verdict = "held" if gap <= COINCIDE_RTOL else "partly" if gap <= TIGHT_PARTLY_RTOL else "not"
        out.append(
            Claim(
                "segmented §3.3 / VLDB 2024: the variation-ratio reduction gives tight numerical amplification bounds "
                f"(held: its lower bound within {COINCIDE_RTOL:.0%} everywhere; partly: within "
                f"{TIGHT_PARTLY_RTOL:.0%})",
                f"largest (upper - lower) / upper over the run: {gap:.2g}",
                verdict,
            )
        )
    # 2. Eq. (1): epsilon ~ sqrt(log(1/delta) / n), on the two largest n of the run
    vr = curves["variation-ratio"]
    a, b = sorted({n for _, n in vr})[-2:]
    expected = 0.5 * math.log((math.log(1 / delta_for(b)) / b) / (math.log(1 / delta_for(a)) / a)) / math.log(b / a)
    slopes = {e: math.log(vr[e, b] / vr[e, a]) / math.log(b / a) for e in EPS0}
    ok = sum(abs(s - expected) <= SLOPE_TOL for s in slopes.values())
    out.append(
        Claim(
            "segmented §3.3, Eq. (1): the amplified epsilon falls as sqrt(log(1/delta) / n) (held: the "
            f"variation-ratio bound's log-log slope in n is within {SLOPE_TOL:g} of Eq. (1)'s at every eps0; "
            "partly: at some)",
            f"slope from n = {a:,} to {b:,}, Eq. (1): {expected:.3f}; ours: "
            + ", ".join(f"{s:.3f} (eps0 {e:g})" for e, s in slopes.items()),
            share_verdict(ok, len(slopes)),
        )
    )
    # 3. every published upper bound is valid: never below the (largest) lower bound
    lower = [m for m in kinds if kinds[m] == "lower"]
    floor = {k: max(curves[m][k] for m in lower) for k in curves[lower[0]]}
    uppers = [m for m in kinds if kinds[m] == "upper"]
    below = {m: sum(v < floor[k] * (1 - ROUNDING_RTOL) for k, v in curves[m].items()) for m in uppers}
    bad = [f"{m} at {k} points" for m, k in below.items() if k]
    out.append(
        Claim(
            "each published amplification bound (FMT, Balle et al., Erlingsson et al., PIC Thm 5.2, variation "
            "ratio) is an upper bound on the central epsilon (held: none lies below our lower bound anywhere; "
            "partly: some do)",
            f"{len(uppers) - len(bad)} of {len(uppers)} upper bounds never below the lower bound "
            f"({', '.join(lower)})" + (f"; below: {', '.join(bad)}" if bad else ""),
            share_verdict(len(uppers) - len(bad), len(uppers)),
        )
    )
    return out


def _summary(rows: list[dict[str, Any]], kinds: dict[str, str]) -> str:
    at = {(r["method"], r["eps0"]): r for r in rows if r["n"] == N_TABLE}
    lines = [
        f"Central epsilon after shuffling n = {N_TABLE} generic eps0-LDP reports, delta = {delta_for(N_TABLE):g} "
        "(inf: the bound's regime is not met, so it certifies nothing). Last column: largest time of one "
        "evaluation over the whole run.",
        "",
        "| method | kind | " + " | ".join(f"eps0={e:g}" for e in EPS0) + " | max seconds |",
        "|---|---|" + "---|" * (len(EPS0) + 1),
    ]
    for m in _order(rows, kinds):
        worst = max(r["seconds"] for r in rows if r["method"] == m)
        cells = " | ".join(number(at[(m, e)]["epsilon"], 4) for e in EPS0)
        lines.append(f"| {m} | {kinds[m]} | {cells} | {worst:.3g} |")
    gap = tightness_gap(rows)
    if gap is not None:
        lines += [
            "",
            f"Largest relative gap between the variation-ratio upper and lower bounds over the run: {gap:.2g}.",
        ]
    lines += ["", "![central epsilon vs n](figure.png)", "", f"*Figure.* {caption(rows, kinds)}"]
    return "\n".join(lines)


def _order(rows: list[dict[str, Any]], kinds: dict[str, str]) -> list[str]:
    """Upper bounds from tightest to loosest (at n = N_TABLE, eps0 = 1), then the lower bounds."""
    at = {r["method"]: r["epsilon"] for r in rows if r["n"] == N_TABLE and r["eps0"] == 1.0}
    return sorted(kinds, key=lambda m: (kinds[m] != "upper", at[m]))


def coinciding(rows: list[dict[str, Any]], order: list[str], rtol: float = COINCIDE_RTOL) -> list[list[str]]:
    """Methods grouped by curves that agree everywhere: at every (eps0, n) of the run both are
    finite within relative distance ``rtol`` of each other, or both are out of regime (inf).
    Each method joins the first group all of whose members it agrees with (groups keep ``order``).
    """
    curves = {m: {} for m in order}
    for r in rows:
        curves[r["method"]][(r["eps0"], r["n"])] = r["epsilon"]

    def agree(a: str, b: str) -> bool:
        for key, x in curves[a].items():
            y = curves[b][key]
            if math.isfinite(x) != math.isfinite(y) or (math.isfinite(x) and abs(x - y) > rtol * max(abs(x), abs(y))):
                return False
        return True

    groups: list[list[str]] = []
    for m in order:
        home = next((g for g in groups if all(agree(m, other) for other in g)), None)
        if home is None:
            groups.append([m])
        else:
            home.append(m)
    return groups


def caption(rows: list[dict[str, Any]], kinds: dict[str, str]) -> str:
    """The figure's caption, naming the curves that coincide (computed from the rows)."""
    merged = [g for g in coinciding(rows, _order(rows, kinds)) if len(g) > 1]
    lower = [m for m in kinds if kinds[m] == "lower"]
    same = "; ".join(" = ".join(f"{m} (lower)" if kinds[m] == "lower" else m for m in g) for g in merged)
    return (
        "Central epsilon after shuffling n generic eps0-LDP reports, delta = 0.01/n, one panel per eps0 (log-log). "
        f"Lines: upper bounds; wide grey band: the lower bound ({', '.join(lower)}), so an upper bound lying on it "
        "is tight. A point is missing where the bound's regime is not met. "
        + (
            f"Curves within {COINCIDE_RTOL:.0%} of each other at every point of the run: {same} "
            "(coinciding upper bounds are drawn as one line)."
            if merged
            else f"No two curves agree within {COINCIDE_RTOL:.0%} at every point of the run."
        )
    )


def _figure(rows: list[dict[str, Any]], kinds: dict[str, str]):
    groups = coinciding(rows, _order(rows, kinds))
    # one line per group of coinciding upper bounds; every lower bound as its own band
    lines = [[m for m in g if kinds[m] == "upper"] for g in groups]
    lines = [g for g in lines if g] + [[m] for m in kinds if kinds[m] == "lower"]
    ncols = 3
    nrows = math.ceil(len(EPS0) / ncols)
    with page_style() as plt:
        fig, axes = plt.subplots(nrows, ncols, figsize=(PAGE_WIDTH, 2.3 * nrows + 0.3), sharex=True, squeeze=False)
        handles: dict[str, Any] = {}
        for ax, eps0 in zip(axes.flat, EPS0):
            for i, group in enumerate(lines):
                lower = kinds[group[0]] == "lower"
                pts = sorted((r["n"], r["epsilon"]) for r in rows if r["method"] == group[0] and r["eps0"] == eps0)
                pts = [(n, e) for n, e in pts if math.isfinite(e) and e > 0.0]
                if pts:
                    label = f"{group[0]} (lower bound)" if lower else " = ".join(group)
                    style = lower_bound_style() if lower else {**series_style(i), "zorder": 2}
                    (handles[label],) = ax.plot(*zip(*pts), **style)
            ax.set_title(f"$\\varepsilon_0$ = {eps0:g}")
            log_ticks(ax, "x", plain=False)
            log_ticks(ax, "y")
        for ax in axes[-1]:
            ax.set_xlabel("n (reports shuffled)")
        for ax in axes[:, 0]:
            ax.set_ylabel("central $\\varepsilon$")
        for ax in axes.flat[len(EPS0) :]:
            ax.set_visible(False)
        legend_and_caption(fig, list(handles.values()), list(handles), ncol=2, caption=caption(rows, kinds))
    return fig
