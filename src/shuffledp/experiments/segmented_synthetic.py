"""Figs 3, 5, 6 of the segmented paper (§6): MSE vs blanket messages m on synthetic set-valued data.

Every user holds s in {4, 8} distinct items uniform over T = 128 items
(:func:`~shuffledp.datasets.setvalued.uniform_item_sets`); n in {5,000, 50,000}; level
settings S1-S3 over E = {0.5, 1, 2}; delta = 0.01 / n.  What is run and measured:
:mod:`shuffledp.experiments.segmented_common`.  ``--quick``: 50 repetitions, no m grid
(the optimizer's m and the competitors at n = 5,000; only the optimizer's m at n = 50,000, s = 4);
full: 9 log-spaced m in [0.1, 10] and everything at both n, 100 repetitions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from shuffledp.datasets.setvalued import item_frequencies, uniform_item_sets
from shuffledp.experiments import segmented_common as common
from shuffledp.experiments.registry import Claim, ExperimentContext, ExperimentOutput, register
from shuffledp.protocols.segmented import optimize_parameters
from shuffledp.protocols.segmented.baselines import SubsetExponentialBaseline

__all__ = ["DATASET", "QUICK_REPEATS", "design", "m_star_is_best", "optimizer_claim", "run", "shortfall_check"]

NAME = "segmented-synthetic"
D = 128
S_VALUES = (4, 8)
DATASET = f"synthetic-uniform (T={D})"
#: Quick mode: enough repetitions that the 40% claim is decided to about +-3% (2 standard errors).
QUICK_REPEATS = 50
PAPER_M = "s = 4: m* around 4.0 at n = 5,000 and around 1.0 at n = 50,000 (§6.1); s = 8 needs a larger m*."
#: Multiples of the optimizer's m at which the s = 8, S2 check runs our protocol (m* itself is in the rows).
CHECK_FACTORS = {True: (0.5, 2.0), False: (0.4, 0.6, 0.8, 0.9, 1.1, 1.25, 1.5, 2.0)}


def m_star_is_best(measured: dict[float, float]) -> bool:
    """The optimizer's m (factor 1.0 of ``measured``: multiple of m* -> measured MSE) has the least MSE of them."""
    return min(measured, key=measured.get) == 1.0


def optimizer_claim(measured: dict[float, float], n: int, setting: str) -> Claim:
    """§5.2's m*, checked at s = 8 in ``setting`` by `m_star_is_best` over its multiples."""
    best = min(measured, key=measured.get)
    return Claim(
        "The optimizer's m* (§5.2: grid search on the MSE bound) approximately minimises the error (held: m* has the "
        "least measured MSE among its multiples tried, not: a multiple does better)",
        f"s = 8, {setting}, n = {n:,}: MSE {measured[1.0]:.4g} at m*; least {measured[best]:.4g} at {best:g} m* "
        f"(multiples {', '.join(f'{f:g}' for f in sorted(measured))})",
        "held" if m_star_is_best(measured) else "not",
    )


def shortfall_check(ctx: ExperimentContext, rows: list[dict[str, Any]]) -> tuple[str, list[Claim]]:
    """The hardest cell of issue 9's 40% claim (s = 8, S2), computed: is the optimizer's m MSE-optimal
    (`optimizer_claim`), and how do our MSE and Subexp-shuffle's grow from s = 4 to s = 8 (Theorem 3's group
    composition).  A summary section and its claim (none when the cell was not run)."""
    n, setting = 5_000, "S2"
    cell = {(int(r["s"]), r["method"]): r for r in rows if r["n"] == n and r["setting"] == setting}
    if (8, common.OURS_OPT) not in cell or (8, "subexp-shuffle") not in cell:
        return "", []
    delta, counts = common.delta_for(n), common.level_counts(n, setting)
    items = uniform_item_sets(n, D, 8, ctx.rng(n, 8, 0))  # the cell's own data (same stream as run_design)
    truth = item_frequencies(items, D)
    assignment = np.repeat(np.arange(len(common.LEVELS)), counts)
    best = optimize_parameters(common.LEVELS, delta, counts, D, 8)
    lines = [
        f"## s = 8, {setting}: the optimizer's m against its multiples (computed, n = {n:,})",
        "",
        f"Our protocol at multiples of the optimizer's m* = {best.m:.3g} ({_check_repeats(ctx)} repetitions each), "
        "against §5.2's MSE bound (minus s/n: the error here is measured against the users' own frequencies).",
        "",
        "| m / m* | lambdas | measured MSE (95% half-width) | bound - s/n |",
        "|---|---|---|---|",
    ]
    measured = {}
    for i, f in enumerate(sorted((*CHECK_FACTORS[ctx.quick], 1.0))):
        p = best if f == 1.0 else optimize_parameters(common.LEVELS, delta, counts, D, 8, m=f * best.m)
        stats = (
            cell[(8, common.OURS_OPT)]
            if f == 1.0
            else common.summarize(
                common.ours_errors(items, truth, assignment, p.lambdas, p.m, _check_repeats(ctx), ctx.rng(n, 8, 9, i))
            )
        )
        measured[f] = stats["mse"]
        lines.append(
            f"| {f:g} | {', '.join(f'{x:.2f}' for x in p.lambdas)} | {stats['mse']:.4g} (± {stats['mse_ci_high'] - stats['mse']:.1g}) "
            f"| {p.mse_bound - 8 / n:.4g} |"
        )
    ours4, ours8 = cell.get((4, common.OURS_OPT)), cell[(8, common.OURS_OPT)]
    sub4, sub8 = cell.get((4, "subexp-shuffle")), cell[(8, "subexp-shuffle")]
    local = {
        s: SubsetExponentialBaseline.calibrated("shuffle", common.UNIFORM_EPSILON, D, s, n, delta).local_epsilon
        for s in (4, 8)
    }
    optimal = m_star_is_best(measured)
    lines += [
        "",
        (
            "m* gives the least measured MSE of these. "
            if optimal
            else "m* does NOT give the least measured MSE of these: the optimizer's bound misleads here. "
        )
        + "Subexp-shuffle's local budget "
        f"is calibrated by the variation-ratio accountant to central {common.UNIFORM_EPSILON:g} (local eps0 {local[4]:.3g} at s = 4, "
        f"{local[8]:.3g} at s = 8): its single whole-set report barely feels s"
        + (
            f", its MSE grows {sub8['mse'] / sub4['mse']:.2g}x from s = 4 to 8 while ours grows {ours8['mse'] / ours4['mse']:.2g}x"
            if ours4 and sub4
            else ""
        )
        + ". Theorem 3 prices a user's s items by group privacy (E/s per item at delta/(s e^E)), which is what "
        "grows with s; S2 puts half the users at E = 0.5, where the per-item budget 0.5/8 is smallest.",
        "",
    ]
    return "\n".join(lines), [optimizer_claim(measured, n, setting)]


def _check_repeats(ctx: ExperimentContext) -> int:
    return QUICK_REPEATS if ctx.quick else 200


def design(quick: bool) -> common.Design:
    return common.Design(
        dataset=DATASET,
        d=D,
        s_values=S_VALUES,
        make_items=lambda n, s, rng: uniform_item_sets(n, D, s, rng),
        repeats=QUICK_REPEATS if quick else 100,
        m_grid=() if quick else common.M_GRID,
        optimum_only=((50_000, 4),) if quick else (),
        skip=((50_000, 8),) if quick else (),
    )


@register(
    NAME,
    "Segmented shuffle, synthetic set-valued data: MSE vs blanket messages (Figs 3, 5, 6)",
    "segmented paper §6, Figs 3, 5, 6",
)
def run(ctx: ExperimentContext) -> ExperimentOutput:
    return common.output(
        ctx,
        NAME,
        design(ctx.quick),
        PAPER_M,
        note="Uniform items over T = 128 (§6).",
        caption=f"{DATASET}: s items per user uniform over {D} items, E = {{0.5, 1, 2}}, delta = 0.01/n. "
        "m: blanket messages per user. Stars: our protocol at the optimizer's m; horizontal lines: competitors (independent of m).",
        findings=shortfall_check,
    )
