"""Figure 4 of the E-APES paper: central epsilon vs n for the Table 3 budget distributions.

For each distribution and n (delta = 1/n), the victim is the user with the median budget
(binary RR): E-APES (Theorem 3 without its Berry-Esseen term), our rigorous upper bound,
our lower bound (exact divergence of one neighbouring pair), and the weakest-budget
baseline (everyone charged at the largest budget).  A point where E-APES lies below our
lower bound is not a valid upper bound there; the summary counts them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from shuffledp.accounting import personalized as P
from shuffledp.experiments.plotting import PAGE_WIDTH, legend_and_caption, log_ticks, page_style, series_style
from shuffledp.experiments.registry import ExperimentContext, ExperimentOutput, register
from shuffledp.protocols.personalized import TABLE3, table3_budgets

NAME = "personalized-bounds"
COLUMNS = ["distribution", "n", "victim_eps", "eapes", "upper", "lower", "weakest_budget", "gap", "eapes_below_lower"]


@register(NAME, "Personalized budgets: central epsilon vs n (Figure 4)", "personalized-shuffle-eapes §4.1 Table 3, Figure 4")
def run(ctx: ExperimentContext) -> ExperimentOutput:
    sizes = [1_000, 10_000] if ctx.quick else [1_000, 10_000, 100_000, 1_000_000]
    settings = [(name, n) for name in TABLE3 for n in sizes]
    rows: list[dict[str, Any]] = []
    for index, (name, n) in enumerate(ctx.progress.track(settings, NAME)):
        budgets = table3_budgets(name, n, ctx.rng(index))
        i = int(np.argsort(budgets)[n // 2])
        victim, others, delta = float(budgets[i]), np.delete(budgets, i), 1.0 / n
        upper = P.personalized_shuffle_epsilon(victim, others, delta)
        lower = P.personalized_shuffle_epsilon_lower(victim, others, delta)
        eapes = P.eapes_epsilon(others, delta)
        rows.append(dict(distribution=name, n=n, victim_eps=victim, eapes=eapes, upper=upper, lower=lower,
                         weakest_budget=P.weakest_budget_epsilon(n, budgets, delta), gap=upper / lower - 1.0,
                         eapes_below_lower=bool(eapes < lower)))
    equal = [_equal_budget_gap(eps, 10_000) for eps in (0.5, 1.0, 2.0)]
    return ExperimentOutput(COLUMNS, rows, _summary(rows, equal), figure=_figure(rows),
                            parameters=dict(sizes=sizes, delta="1/n", family="binary-rr"))


def _equal_budget_gap(eps: float, n: int) -> tuple[float, int, float]:
    """(eps, n, upper/lower - 1) when every user has budget eps: the clone reduction's own gap for binary RR."""
    others, delta = np.full(n - 1, eps), 1.0 / n
    return eps, n, P.personalized_shuffle_epsilon(eps, others, delta) / P.personalized_shuffle_epsilon_lower(eps, others, delta) - 1.0


def _summary(rows: list[dict[str, Any]], equal: list[tuple[float, int, float]]) -> str:
    bad = [r for r in rows if r["eapes_below_lower"]]
    lines = [
        "Victim: the median-budget user, binary RR, delta = 1/n. E-APES is the paper's CLT approximation "
        "(no Berry-Esseen term); upper/lower are certified.",
        "",
        "| distribution | n | victim eps | E-APES | upper | lower | gap | weakest budget |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        flag = " (below lower!)" if r["eapes_below_lower"] else ""
        lines.append(f"| {r['distribution']} | {r['n']} | {r['victim_eps']:.3f} | {r['eapes']:.5f}{flag} | {r['upper']:.5f} | "
                     f"{r['lower']:.5f} | {100 * r['gap']:.1f}% | {r['weakest_budget']:.5f} |")
    lines += ["", f"E-APES below our rigorous lower bound (not a valid bound) at {len(bad)} of {len(rows)} points"
              + (f"; by up to {max(1 - r['eapes'] / r['lower'] for r in bad):.1%}." if bad else "."),
              f"Upper/lower gap: {min(r['gap'] for r in rows):.1%} to {max(r['gap'] for r in rows):.1%} "
              "(issue 10 asks for at most 10% at n >= 10^4: not met).",
              "",
              "Where the gap comes from: it is there with equal budgets too ("
              + ", ".join(f"eps = {e:g}: {g:.1%}" for e, n, g in equal) + f" at n = {equal[0][1]:,}). "
              "For binary RR the clone pair (equal here to the variation-ratio bound) reveals the number C of clones, "
              "while the real output, the count of ones, hides it; that costs about sqrt(1 + Var C / E C) in epsilon. "
              "Closing it needs an analysis exact over the other users' inputs, beyond every decomposition (clone or "
              "blanket) bound; the all-zero inputs of our lower bound are not always the worst (brute force, n = 4)."]
    return "\n".join(lines) + "\n"


def _figure(rows: list[dict[str, Any]]):
    with page_style() as plt:
        names = list(TABLE3)
        fig, axes = plt.subplots(1, len(names), figsize=(PAGE_WIDTH, 2.6), sharey=True)
        handles = []
        for ax, name in zip(axes, names):
            sub = [r for r in rows if r["distribution"] == name]
            n = [r["n"] for r in sub]
            handles = []
            for j, (key, label) in enumerate([("eapes", "E-APES"), ("upper", "ours (upper)"), ("lower", "ours (lower)"), ("weakest_budget", "weakest budget")]):
                (line,) = ax.plot(n, [r[key] for r in sub], **series_style(j))
                handles.append((line, label))
            ax.set_title(name)
            ax.set_xscale("log")
            ax.set_yscale("log")
            log_ticks(ax, "x")
            ax.set_xlabel("n")
        axes[0].set_ylabel("central epsilon (delta = 1/n)")
        legend_and_caption(fig, [h for h, _ in handles], [label for _, label in handles], ncol=len(handles),
                           caption="Median-budget victim, binary RR. Upper and lower bounds are certified; E-APES is a CLT approximation.")
    return fig
