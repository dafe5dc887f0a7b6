"""Figs 3, 5, 6 of the segmented paper (§6): MSE vs blanket messages m on synthetic set-valued data.

Every user holds s in {4, 8} distinct items uniform over T = 128 items
(:func:`~shuffledp.datasets.setvalued.uniform_item_sets`); n in {5,000, 50,000}; level
settings S1-S3 over E = {0.5, 1, 2}; delta = 0.01 / n.  What is run and measured:
:mod:`shuffledp.experiments.segmented_common`.  ``--quick``: 50 repetitions, no m grid
(the optimizer's m and the competitors at n = 5,000; only the optimizer's m at n = 50,000, s = 4);
full: 9 log-spaced m in [0.1, 10] and everything at both n, 100 repetitions.
"""

from __future__ import annotations

from shuffledp.datasets.setvalued import uniform_item_sets
from shuffledp.experiments import segmented_common as common
from shuffledp.experiments.registry import ExperimentContext, ExperimentOutput, register

NAME = "segmented-synthetic"
D = 128
S_VALUES = (4, 8)
DATASET = f"synthetic-uniform (T={D})"
#: Quick mode: enough repetitions that the 40% claim is decided to about +-3% (2 standard errors).
QUICK_REPEATS = 50
PAPER_M = "s = 4: m* around 4.0 at n = 5,000 and around 1.0 at n = 50,000 (§6.1); s = 8 needs a larger m*."
#: Why s = 8, S2 falls short of the 40% acceptance (issue 9): a separate check, not recomputed by this run.
FINDINGS = """
## Why s = 8, S2 falls short of 40% (a separate check, n = 5,000)

*Not recomputed by this run*: our protocol at 0.4, 0.6, 0.8, 0.9, 1, 1.1, 1.25, 1.5 and 2 times
the optimizer's m* = 17.2 (200 repetitions each, one uniform data set, the setting's exact counts).

- **The optimizer's m is MSE-optimal.** The measured MSE is least at m* (0.0134 ± 0.0001; 0.0136
  at 0.9 m*, 0.0140 at 1.1 m*, 0.0150 at 0.4 m*, 0.0171 at 2 m*) and follows §5.2's bound minus
  s/n within 3% at every m (standard error about 1%), so minimising the bound minimises the MSE.
  m* is the smallest m_k, where the E = 2 level reaches lambda = 1 (lambdas 0.29, 0.55, 1).  The
  same holds for s = 8 in S1 and S3 and for s = 4 in S2.
- **The best competitor is priced at its tightest.** Subexp, shuffle: local eps0 = 3.98 from the
  variation-ratio accountant with the mechanism's exact total variation (beta = 0.77,
  p = q = e^eps0; central 0.5000000 at delta = 0.01/n, 1e-4 more local budget would exceed it; a
  generic eps0-LDP reading would allow only 3.75), output size 1 (variance-optimal; size 2 would
  give MSE 0.035).  Its measured MSE, 0.0202 ± 0.0003, matches its closed-form variance 0.0201.
- **So the gap is the protocol's** (ours / Subexp = 0.67, a 33% reduction in this check; the table
  above gives this run's figure): Theorem 3 prices a user's s items by group privacy (E/s per item,
  delta / (s e^E)), which grows with s -- our MSE rises 3.5x from s = 4 to s = 8 in S2 (0.0038 to
  0.0134) -- while Subexp's single whole-set report barely feels s (local budget 4.14 to 3.98, MSE
  3.1x, 0.0065 to 0.0201).  S2 puts half the users at E = 0.5, where the per-item budget 0.5/8 is
  smallest.
"""


def design(quick: bool) -> common.Design:
    return common.Design(
        dataset=DATASET, d=D, s_values=S_VALUES, make_items=lambda n, s, rng: uniform_item_sets(n, D, s, rng),
        repeats=QUICK_REPEATS if quick else 100, m_grid=() if quick else common.M_GRID,
        optimum_only=((50_000, 4),) if quick else (), skip=((50_000, 8),) if quick else (),
    )


@register(NAME, "Segmented shuffle, synthetic set-valued data: MSE vs blanket messages (Figs 3, 5, 6)",
          "segmented paper §6, Figs 3, 5, 6")
def run(ctx: ExperimentContext) -> ExperimentOutput:
    return common.output(
        ctx, NAME, design(ctx.quick), PAPER_M,
        note="Uniform items over T = 128 (§6).",
        caption=f"{DATASET}: s items per user uniform over {D} items, E = {{0.5, 1, 2}}, delta = 0.01/n. "
        "m: blanket messages per user. Stars: our protocol at the optimizer's m; horizontal lines: competitors (independent of m).",
        findings=FINDINGS,
    )
