"""Figure 4 of the E-APES paper: central epsilon vs n for the Table 3 budget distributions.

For each distribution and n (delta = 1/n), the victim is the user with the median budget
(binary RR): E-APES (Theorem 3 without its Berry-Esseen term), our rigorous upper bound,
our lower bound (the largest exact divergence over a family of concrete neighbouring pairs:
the other users' inputs all 0, the lowest or highest budgets set to 1, random bits), and the
weakest-budget baseline (everyone charged at the largest budget).  A point where E-APES lies
below our lower bound is not a valid upper bound there; the summary counts them.

With equal budgets every input assignment is, up to order, "k of the others hold 1", so the
sweep over k gives the exact worst-case epsilon: the summary compares the upper bound with it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from shuffledp.accounting import personalized as P
from shuffledp.experiments.plotting import PAGE_WIDTH, legend_and_caption, log_ticks, page_style, series_style
from shuffledp.experiments.registry import Claim, ExperimentContext, ExperimentOutput, register, share_verdict
from shuffledp.protocols.personalized import TABLE3, table3_budgets

__all__ = ["COLUMNS", "claims", "run"]

NAME = "personalized-bounds"
COLUMNS = [
    "distribution",
    "n",
    "victim_eps",
    "eapes",
    "upper",
    "lower",
    "worst_inputs",
    "weakest_budget",
    "gap",
    "eapes_below_lower",
]
FRACTIONS = (0.1, 0.25, 0.5, 0.75, 0.9)  # share of the others holding 1 (lowest or highest budgets first)
RANDOM_ASSIGNMENTS = 3
#: §4.1 (ii): epsilon falls as n^(-1/2); a log-log slope within this of -1/2 counts as that rate.
SLOPE_TOL = 0.1
#: §4.1 (iv): "nearly the same" bounds for Uniform 2 and Gauss 2 means within this (relative) at every n.
SAME_RTOL = 0.10


@register(
    NAME, "Personalized budgets: central epsilon vs n (Figure 4)", "personalized-shuffle-eapes §4.1 Table 3, Figure 4"
)
def run(ctx: ExperimentContext) -> ExperimentOutput:
    sizes = [1_000, 10_000] if ctx.quick else [1_000, 10_000, 100_000, 1_000_000]
    settings = [(name, n) for name in TABLE3 for n in sizes]
    rows: list[dict[str, Any]] = []
    for index, (name, n) in enumerate(ctx.progress.track(settings, NAME)):
        budgets = table3_budgets(name, n, ctx.rng(index))
        i = int(np.argsort(budgets)[n // 2])
        victim, others, delta = float(budgets[i]), np.delete(budgets, i), 1.0 / n
        upper = P.personalized_shuffle_epsilon(victim, others, delta)
        lower, worst = _largest_lower(victim, others, delta, ctx.rng(index, 1))
        eapes = P.eapes_epsilon(others, delta)
        rows.append(
            dict(
                distribution=name,
                n=n,
                victim_eps=victim,
                eapes=eapes,
                upper=upper,
                lower=lower,
                worst_inputs=worst,
                weakest_budget=P.weakest_budget_epsilon(n, budgets, delta),
                gap=upper / lower - 1.0,
                eapes_below_lower=bool(eapes < lower),
            )
        )
    stride = 100 if ctx.quick else 1
    equal = [
        _equal_budget_gap(eps, 10_000, stride) for eps in ctx.progress.track((0.5, 1.0, 2.0), "equal budgets, k sweep")
    ]
    return ExperimentOutput(
        COLUMNS,
        rows,
        _summary(rows, equal),
        figure=_figure(rows),
        parameters=dict(sizes=sizes, delta="1/n", family="binary-rr"),
        claims=claims(rows),
    )


def _eapes_below_lower(rows: list[dict[str, Any]]) -> str:
    """At how many points E-APES lies below our certified lower bound, and by how much at most."""
    bad = [r for r in rows if r["eapes_below_lower"]]
    worst = f"; by up to {max(1 - r['eapes'] / r['lower'] for r in bad):.1%}" if bad else ""
    return f"at {len(bad)} of {len(rows)} points{worst}"


def _slopes(rows: list[dict[str, Any]], key: str) -> dict[str, float]:
    """Per distribution, the log-log slope of ``key`` in n from the smallest to the largest n of the run."""
    slopes = {}
    for name in dict.fromkeys(r["distribution"] for r in rows):
        sub = sorted((r["n"], r[key]) for r in rows if r["distribution"] == name)
        (n0, e0), (n1, e1) = sub[0], sub[-1]
        slopes[name] = float(np.log(e1 / e0) / np.log(n1 / n0))
    return slopes


def claims(rows: list[dict[str, Any]]) -> list[Claim]:
    """§4.1's claims on Figure 4 checked on the run's rows (each rule is in its claim's text)."""
    valid = sum(not r["eapes_below_lower"] for r in rows)
    upper, eapes = _slopes(rows, "upper"), _slopes(rows, "eapes")
    at_rate = all(abs(s + 0.5) <= SLOPE_TOL for s in upper.values())
    falls = all(s < 0 for s in upper.values())
    ns = sorted({r["n"] for r in rows})
    pair = {(r["distribution"], r["n"]): r for r in rows}
    spread = {(key, n): pair["gauss2", n][key] / pair["uniform2", n][key] - 1 for key in ("eapes", "upper") for n in ns}
    return [
        Claim(
            "Theorem 3 / Figure 4: E-APES bounds each user's central epsilon (held: never below our certified lower "
            "bound; partly: below it at some points)",
            f"E-APES below our lower bound {_eapes_below_lower(rows)}",
            share_verdict(valid, len(rows)),
        ),
        Claim(
            "§4.1 (ii): the amplification grows as sqrt(n), i.e. epsilon ~ n^(-1/2) (held: our certified upper "
            f"bound's log-log slope in n within {SLOPE_TOL:g} of -0.5 for every distribution; partly: it falls, "
            "slower or faster)",
            f"slope from n = {ns[0]:,} to {ns[-1]:,}, upper bound: {min(upper.values()):.2f} to "
            f"{max(upper.values()):.2f}; E-APES: {min(eapes.values()):.2f} to {max(eapes.values()):.2f}",
            "held" if at_rate else "partly" if falls else "not",
        ),
        Claim(
            "§4.1 (iv): the bounds for Uniform 2 and Gauss 2 are nearly the same (held: Gauss 2 within "
            f"{SAME_RTOL:.0%} of Uniform 2 for E-APES and our upper bound at every n; partly: at some)",
            "Gauss 2 / Uniform 2 - 1: "
            + ", ".join(
                f"{'E-APES' if key == 'eapes' else 'upper'} {d:+.1%} (n = {n:,})" for (key, n), d in spread.items()
            ),
            share_verdict(sum(abs(d) <= SAME_RTOL for d in spread.values()), len(spread)),
        ),
    ]


def _assignments(others: np.ndarray, rng: np.random.Generator):
    """(label, inputs of the others) for the concrete neighbouring pairs the lower bound tries."""
    yield "all 0", np.zeros(others.size)
    order = np.argsort(others, kind="stable")
    for frac in FRACTIONS:
        for label, idx in (("lowest", order), ("highest", order[::-1])):
            x = np.zeros(others.size)
            x[idx[: int(frac * others.size)]] = 1.0
            yield f"{label} {frac:.0%} budgets 1", x
    for r in range(RANDOM_ASSIGNMENTS):
        yield f"random bits #{r + 1}", rng.integers(0, 2, others.size).astype(np.float64)


def _largest_lower(victim: float, others: np.ndarray, delta: float, rng: np.random.Generator) -> tuple[float, str]:
    """Largest certified lower bound over `_assignments` (each is one concrete pair), with its label."""
    found = [
        (P.personalized_shuffle_epsilon_lower(victim, others, delta, others_inputs=x), label)
        for label, x in _assignments(others, rng)
    ]
    return max(found, key=lambda item: item[0])


def _equal_budget_gap(eps: float, n: int, stride: int) -> tuple[float, int, float, int, float]:
    """Binary RR, every user at budget eps: (eps, n, worst k, stride, upper / worst-over-k - 1).

    k = number of the n - 1 others holding 1, swept over 0, stride, 2 stride, ..., n - 1; with
    stride 1 this covers every input assignment up to order, so its maximum is the exact epsilon.
    """
    others, delta = np.full(n - 1, eps), 1.0 / n
    ks = sorted(set(range(0, n, stride)) | {n - 1})
    lower = [P.personalized_shuffle_epsilon_lower(eps, others, delta, others_inputs=np.arange(n - 1) < k) for k in ks]
    worst = int(np.argmax(lower))
    return eps, n, ks[worst], stride, P.personalized_shuffle_epsilon(eps, others, delta) / lower[worst] - 1.0


def _summary(rows: list[dict[str, Any]], equal: list[tuple[float, int, int, int, float]]) -> str:
    tried = 1 + 2 * len(FRACTIONS) + RANDOM_ASSIGNMENTS
    all_zero = sum(r["worst_inputs"] == "all 0" for r in rows)
    n_eq, stride = equal[0][1], equal[0][3]
    sweep = "every k" if stride == 1 else f"k in steps of {stride} (full mode: every k)"
    lines = [
        "Victim: the median-budget user, binary RR, delta = 1/n. E-APES is the paper's CLT approximation "
        "(no Berry-Esseen term); upper/lower are certified. The lower bound is the largest exact divergence "
        f"over {tried} concrete input assignments of the other users (worst inputs: the one that gave it).",
        "",
        "| distribution | n | victim eps | E-APES | upper | lower | worst inputs | gap | weakest budget |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        flag = " (below lower!)" if r["eapes_below_lower"] else ""
        lines.append(
            f"| {r['distribution']} | {r['n']} | {r['victim_eps']:.3f} | {r['eapes']:.5f}{flag} | {r['upper']:.5f} | "
            f"{r['lower']:.5f} | {r['worst_inputs']} | {100 * r['gap']:.1f}% | {r['weakest_budget']:.5f} |"
        )
    lines += [
        "",
        f"E-APES below our rigorous lower bound (not a valid bound) {_eapes_below_lower(rows)}.",
        f"Upper/lower gap: {min(r['gap'] for r in rows):.1%} to {max(r['gap'] for r in rows):.1%} "
        "(issue 10 asks for at most 10% at n >= 10^4: not met).",
        "",
        f"Where the gap comes from. Of the {tried} input assignments tried, all inputs 0 gave the largest "
        f"divergence at {all_zero} of {len(rows)} points. With equal budgets (n = {n_eq:,}), sweeping the "
        f"number k of others holding 1 over {sweep}, the worst k is "
        + ", ".join(f"{k} at eps = {e:g}" for e, _, k, _, _ in equal)
        + (" -- with every k swept that is the exact worst case over all inputs" if stride == 1 else "")
        + "; the upper bound lies above that worst case by "
        + ", ".join(f"{g:.1%} (eps = {e:g})" for e, _, _, _, g in equal)
        + ". "
        "So the gap is the upper bound's, not the lower bound's: for binary RR the clone pair (equal here to "
        "the variation-ratio bound of `accounting`) reveals the number C of clones, while the real output, the "
        "count of ones, hides it; that costs about sqrt(1 + Var C / E C) in epsilon. Closing it needs a "
        "certified bound on the worst case over the other users' inputs that does not reveal C, which no "
        "decomposition (clone or blanket) bound gives; the all-0 inputs are not always the worst for tiny n "
        "(brute force, n = 4), so the lower bound cannot simply be promoted.",
    ]
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
            for j, (key, label) in enumerate(
                [
                    ("eapes", "E-APES"),
                    ("upper", "ours (upper)"),
                    ("lower", "ours (lower)"),
                    ("weakest_budget", "weakest budget"),
                ]
            ):
                (line,) = ax.plot(n, [r[key] for r in sub], **series_style(j))
                handles.append((line, label))
            ax.set_title(name)
            ax.set_xscale("log")
            ax.set_yscale("log")
            log_ticks(ax, "x", plain=False)  # decade ticks only: 1000 2000 5000 10000 ran together in the narrow panels
            ax.set_xlabel("n")
        axes[0].set_ylabel("central epsilon (delta = 1/n)")
        legend_and_caption(
            fig,
            [h for h, _ in handles],
            [label for _, label in handles],
            ncol=len(handles),
            caption="Median-budget victim, binary RR. Upper and lower bounds are certified; E-APES is a CLT approximation.",
        )
    return fig
