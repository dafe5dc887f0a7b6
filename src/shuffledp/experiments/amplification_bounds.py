"""Amplification bounds side by side: epsilon after shuffling n generic eps0-LDP reports.

Every registered upper and lower bound (:func:`shuffledp.accounting.available_methods`)
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

from shuffledp.accounting.bounds import available_methods, shuffle_epsilon, shuffle_epsilon_lower
from shuffledp.experiments.registry import ExperimentContext, ExperimentOutput, register

EPS0 = (0.25, 0.5, 1.0, 2.0, 4.0, 6.0)
N_FULL = tuple(int(round(10**e)) for e in np.arange(3.0, 8.01, 0.5))
N_QUICK = (1_000, 10_000, 100_000, 1_000_000)
#: n of the summary table.
N_TABLE = 10_000
COLUMNS = ["method", "eps0", "n", "delta", "epsilon", "seconds"]


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
    )


def _cell(value: float) -> str:
    return f"{value:.4g}" if math.isfinite(value) else "—"


def _summary(rows: list[dict[str, Any]], kinds: dict[str, str]) -> str:
    at = {(r["method"], r["eps0"]): r for r in rows if r["n"] == N_TABLE}
    order = sorted(kinds, key=lambda m: (kinds[m] != "upper", at[(m, 1.0)]["epsilon"]))
    lines = [
        f"Central epsilon after shuffling n = {N_TABLE} generic eps0-LDP reports, delta = {delta_for(N_TABLE):g} "
        "(— : the bound's regime is not met). Last column: largest time of one evaluation over the whole run.",
        "",
        "| method | kind | " + " | ".join(f"eps0={e:g}" for e in EPS0) + " | max seconds |",
        "|---|---|" + "---|" * (len(EPS0) + 1),
    ]
    for m in order:
        worst = max(r["seconds"] for r in rows if r["method"] == m)
        cells = " | ".join(_cell(at[(m, e)]["epsilon"]) for e in EPS0)
        lines.append(f"| {m} | {kinds[m]} | {cells} | {worst:.3g} |")
    ub = [r for r in rows if r["method"] == "variation-ratio"]
    lb = {(r["eps0"], r["n"]): r["epsilon"] for r in rows if r["method"] == "variation-ratio-lower"}
    if ub and lb:
        gap = max((r["epsilon"] - lb[(r["eps0"], r["n"])]) / r["epsilon"] for r in ub if math.isfinite(r["epsilon"]))
        lines += ["", f"Largest relative gap between the variation-ratio upper and lower bounds over the run: {gap:.2g}."]
    return "\n".join(lines)


def _figure(rows: list[dict[str, Any]], kinds: dict[str, str]):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(EPS0), figsize=(4.0 * len(EPS0), 4.2), sharex=True)
    handles: dict[str, Any] = {}
    # lower bounds drawn last (dashed, on top): upper bounds that coincide stay visible below
    for ax, eps0 in zip(axes, EPS0):
        for i, method in sorted(enumerate(sorted(kinds)), key=lambda im: kinds[im[1]] == "lower"):
            pts = sorted((r["n"], r["epsilon"]) for r in rows if r["method"] == method and r["eps0"] == eps0)
            pts = [(n, e) for n, e in pts if math.isfinite(e) and e > 0.0]
            if not pts:
                continue
            lower = kinds[method] == "lower"
            (line,) = ax.plot(
                *zip(*pts), "--" if lower else "-", marker="" if lower else "o", ms=3, lw=2.0 if lower else 1.2,
                color="black" if lower else f"C{i % 10}", label=method,
            )
            handles.setdefault(method, line)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"eps0 = {eps0:g}")
        ax.set_xlabel("n")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("central epsilon (delta = 0.01/n)")
    fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=min(len(handles), 6), fontsize=8)
    fig.tight_layout(rect=(0.0, 0.1, 1.0, 1.0))
    return fig
