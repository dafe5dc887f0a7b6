"""Composition over the 80 rounds of the PIC paper's federated-learning experiment (§7.3, §8).

Each round shuffles n = 10,000 eps0-LDP reports (fresh one-time keys per round, PIC
§8, so the rounds compose as independent shuffled mechanisms); the global guarantee
is (eps, 0.01 / 50,000) over 80 rounds (Tables 5-6).  Two analyses, each for the
three composition methods of `shuffledp.accounting.composition.composed_shuffle_epsilon`
(tight PLD composition of the variation-ratio dominating pair, advanced and basic
composition of the per-round variation-ratio bound):

* ``total-epsilon``: the global epsilon after 80 rounds for a grid of per-round eps0;
* ``local-budget``: the largest per-round eps0 meeting the global targets eps = 1 and
  eps = 3 of Tables 5 and 6 (`composed_local_epsilon`).

No amplification by subsampling is credited (the paper selects 10,000 of 50,000 users
per round; counting every round for every user is the conservative reading).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from shuffledp.accounting.composition import COMPOSITION_METHODS, composed_local_epsilon, composed_shuffle_epsilon
from shuffledp.experiments.plotting import (
    PAGE_WIDTH,
    bar_style,
    legend_and_caption,
    log_ticks,
    page_style,
    series_style,
)
from shuffledp.experiments.registry import ExperimentContext, ExperimentOutput, register

ROUNDS = 80
USERS_PER_ROUND = 10_000
DELTA = 0.01 / 50_000
TARGETS = (1.0, 3.0)
EPS0_FULL = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0)
EPS0_QUICK = (0.5, 1.0, 2.0, 4.0, 6.0)
#: §7.3: "the privacy amplification in PIC ... increases the local budget for each
#: round to between 4.0 and 6.0" (the two targets together; no accountant is named).
PAPER_PER_ROUND_RANGE = (4.0, 6.0)
COLUMNS = ["analysis", "composition", "n", "rounds", "delta", "eps0", "total_epsilon", "seconds"]


def _timed(func: Callable[[], float]) -> tuple[float, float]:
    start = time.perf_counter()
    value = func()
    return value, time.perf_counter() - start


@register(
    "fl-composition",
    "Composition of 80 shuffled federated-learning rounds: tight (PLD) vs advanced vs basic",
    "PIC §7.3 (Tables 5-6 setting) and §8; segmented paper Theorem 1",
)
def run(ctx: ExperimentContext) -> ExperimentOutput:
    eps_grid = EPS0_QUICK if ctx.quick else EPS0_FULL
    cases = [("total-epsilon", m, e) for e in eps_grid for m in COMPOSITION_METHODS]
    cases += [("local-budget", m, t) for t in TARGETS for m in COMPOSITION_METHODS]
    base = {"n": USERS_PER_ROUND, "rounds": ROUNDS, "delta": DELTA}
    rows: list[dict[str, Any]] = []
    for analysis, method, value in ctx.progress.track(cases, "fl-composition"):
        if analysis == "total-epsilon":
            total, seconds = _timed(partial(composed_shuffle_epsilon, USERS_PER_ROUND, DELTA, ROUNDS, eps0=value, method=method))
            rows.append({"analysis": analysis, "composition": method, **base, "eps0": value, "total_epsilon": total, "seconds": seconds})
        else:
            eps0, seconds = _timed(partial(composed_local_epsilon, value, USERS_PER_ROUND, DELTA, ROUNDS, method=method))
            rows.append({"analysis": analysis, "composition": method, **base, "eps0": eps0, "total_epsilon": value, "seconds": seconds})
    return ExperimentOutput(
        columns=COLUMNS,
        rows=rows,
        summary_markdown=_summary(rows),
        figure=_figure(rows),
        parameters={**base, "eps0": list(eps_grid), "targets": list(TARGETS), "compositions": list(COMPOSITION_METHODS)},
    )


def _summary(rows: list[dict[str, Any]]) -> str:
    budget = {(r["composition"], r["total_epsilon"]): r["eps0"] for r in rows if r["analysis"] == "local-budget"}
    totals = [r for r in rows if r["analysis"] == "total-epsilon"]
    grid = sorted({r["eps0"] for r in totals})
    total = {(r["composition"], r["eps0"]): r["total_epsilon"] for r in totals}
    low, high = PAPER_PER_ROUND_RANGE
    lines = [
        f"{ROUNDS} rounds of n = {USERS_PER_ROUND} shuffled generic eps0-LDP reports, global delta = {DELTA:g}.",
        "",
        "**Largest per-round local epsilon meeting the global target** (Tables 5-6 targets):",
        "",
        "| composition | " + " | ".join(f"target eps = {t:g}" for t in TARGETS) + " |",
        "|---|" + "---|" * len(TARGETS),
    ]
    lines += [f"| {m} | " + " | ".join(f"{budget[(m, t)]:.4g}" for t in TARGETS) + " |" for m in COMPOSITION_METHODS]
    tight = [budget[("tight", t)] for t in TARGETS]
    lines += [
        f"| paper (§7.3, PIC model) | {low:g} to {high:g} over both targets |  |",
        "",
        f"Tight composition allows {tight[0] / budget[('advanced', TARGETS[0])]:.2g}x (target {TARGETS[0]:g}) and "
        f"{tight[-1] / budget[('advanced', TARGETS[-1])]:.2g}x (target {TARGETS[-1]:g}) the per-round budget of "
        f"advanced composition. Our tight budgets ({tight[0]:.3g}, {tight[-1]:.3g}) are below the paper's "
        f"{low:g}-{high:g}: the paper samples {USERS_PER_ROUND} of 50,000 users per round and does not name its "
        "accountant; this experiment credits no amplification by subsampling (every user is charged every round), "
        "which is the conservative reading. That subsampling explains the whole gap is not verified here.",
        "",
        "**Global epsilon after the rounds** for a per-round eps0:",
        "",
        "| composition | " + " | ".join(f"eps0={e:g}" for e in grid) + " |",
        "|---|" + "---|" * len(grid),
    ]
    lines += [f"| {m} | " + " | ".join(_cell(total[(m, e)]) for e in grid) + " |" for m in COMPOSITION_METHODS]
    return "\n".join(lines)


def _cell(value: float) -> str:
    return f"{value:.4g}" if math.isfinite(value) else "inf"


def _figure(rows: list[dict[str, Any]]):
    with page_style() as plt:
        fig, (left, right) = plt.subplots(1, 2, figsize=(PAGE_WIDTH, 3.2))
        width = 0.8 / len(COMPOSITION_METHODS)
        handles = []
        for i, method in enumerate(COMPOSITION_METHODS):
            pts = sorted((r["eps0"], r["total_epsilon"]) for r in rows if r["analysis"] == "total-epsilon" and r["composition"] == method)
            (line,) = left.plot(*zip(*pts), **series_style(i))
            budgets = [next(r["eps0"] for r in rows if r["analysis"] == "local-budget" and r["composition"] == method and r["total_epsilon"] == t) for t in TARGETS]
            offset = width * (i - (len(COMPOSITION_METHODS) - 1) / 2)
            bars = right.bar([j + offset for j in range(len(TARGETS))], budgets, width=width, **bar_style(i))
            right.bar_label(bars, fmt="%.2f", fontsize=7, padding=1)
            handles.append(((line, bars.patches[0]), method))
        left.set_xlabel("per-round local $\\varepsilon_0$")
        left.set_ylabel(f"global $\\varepsilon$ after {ROUNDS} rounds")
        log_ticks(left, "y")
        low, high = PAPER_PER_ROUND_RANGE
        handles.append((right.axhspan(low, high, color="0.85", zorder=0), "paper, PIC model (§7.3)"))
        right.set_xticks(range(len(TARGETS)), [f"target $\\varepsilon$ = {t:g}" for t in TARGETS])
        right.set_ylabel("largest per-round local $\\varepsilon_0$")
        right.grid(False, axis="x")
        legend_and_caption(
            fig, [h for h, _ in handles], [label for _, label in handles], ncol=len(handles),
            caption=f"{ROUNDS} rounds of n = {USERS_PER_ROUND} shuffled generic eps0-LDP reports, global delta = {DELTA:g}. "
            "Left: global epsilon for a per-round eps0 (log scale); right: the per-round eps0 each composition allows "
            "for the global targets of Tables 5-6.",
        )
    return fig
