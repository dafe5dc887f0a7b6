"""``shuffledp personalized ...``: per-budget central epsilon of a personalized population (issue 10).

``shuffledp personalized --distribution uniform1 --n 100000 --delta 1e-5 [--family binary-rr] [--json]``
draws the Table 3 population (seed --seed); ``shuffledp personalized --budgets FILE --delta D``
reads it instead (one budget per line, or a 1-D ``.npy`` array; exactly one of --budgets and
--distribution, and --n only with --distribution).  Every budget is rounded *up* to --step (a
larger local budget can only raise a bound, so the upper bound holds for the given population;
the lower bound and E-APES are those of the rounded population) and the command prints, per
distinct budget, the rigorous upper bound, the binary-RR lower bound, E-APES and the
weakest-budget baseline.  Every bad value is one ``error: --option ...`` line with exit status 2.
"""

from __future__ import annotations

import contextlib
import json
from typing import Annotated, Optional

import numpy as np
import typer

from shuffledp import _cli_support as S
from shuffledp.errors import DataError, PrivacyParameterError

app = typer.Typer(help="Personalized budgets: per-user central epsilon after shuffling.", cls=S.OneLineGroup)

FAMILY_CHOICES = ["binary-rr", "k-rr", "laplace"]


def _read_budgets_option(path: str) -> np.ndarray:
    """The --budgets file's budgets, or one ``--budgets`` error naming the file and line."""
    from shuffledp.protocols.personalized import read_budgets

    try:
        return read_budgets(path)
    except DataError as exc:
        raise DataError(f"--budgets: {exc}") from None


@app.callback(invoke_without_command=True)
def personalized_cmd(
    delta: Annotated[float, typer.Option("--delta", parser=S.probability_option("--delta"), help="Target delta in (0, 1).")],
    family: Annotated[
        str, typer.Option("--family", parser=S.choice_option("--family", lambda: FAMILY_CHOICES, "family"), help="Randomizer family.")
    ] = "binary-rr",
    budgets_file: Annotated[
        Optional[str],
        typer.Option("--budgets", metavar="FILE",
                     help="File of local budgets: one per line (text/CSV) or a 1-D .npy array."),
    ] = None,
    distribution: Annotated[
        Optional[str],
        typer.Option("--distribution", parser=S.choice_option("--distribution", lambda: ["uniform1", "uniform2", "gauss1", "gauss2", "gauss3"], "distribution"),
                     help="Table 3 budget distribution (instead of --budgets)."),
    ] = None,
    n: Annotated[Optional[int], typer.Option("--n", parser=S.count_option("--n", 2, 10**7), help="Number of users (with --distribution).")] = None,
    k: Annotated[int, typer.Option("--k", parser=S.count_option("--k", 2), help="Alphabet size for k-rr.")] = 3,
    step: Annotated[float, typer.Option("--step", parser=S.epsilon_option("--step"), help="Budgets rounded up to this grid.")] = 0.01,
    seed: Annotated[int, typer.Option("--seed", parser=S.seed_option("--seed"), help="Seed of the population.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Per distinct budget: our upper bound, lower bound (binary RR), E-APES and the weakest-budget baseline."""
    from shuffledp.accounting import personalized as P
    from shuffledp.protocols.personalized import table3_budgets

    if (budgets_file is None) == (distribution is None):
        raise PrivacyParameterError("give exactly one of --budgets FILE and --distribution NAME")
    if distribution is not None:
        if n is None:
            raise PrivacyParameterError("--n (number of users) is required with --distribution")
        drawn = table3_budgets(distribution, n, np.random.default_rng(seed))
    else:
        if n is not None:
            raise PrivacyParameterError(f"--n is only for --distribution; with --budgets the file gives n, got --n {n}")
        drawn = _read_budgets_option(budgets_file)
        n = drawn.size
        if n < 2:
            raise PrivacyParameterError(f"--budgets: the file must hold at least 2 budgets (a victim and one other user), got {n}")
    budgets = np.ceil(drawn / step) * step
    kk = k if family == "k-rr" else None
    values, upper = P.personalized_shuffle_epsilons(budgets, delta, family, k=kk)
    lower = P.personalized_shuffle_epsilons_lower(budgets, delta)[1] if family == "binary-rr" else np.full(values.size, np.nan)
    eapes = []
    with typer.progressbar(values, label="E-APES") if n >= 100_000 and not as_json else contextlib.nullcontext(values) as items:
        for v in items:
            others = np.delete(budgets, int(np.flatnonzero(budgets == v)[0]))
            eapes.append(P.eapes_epsilon(others, delta))
    weakest = P.weakest_budget_epsilon(n, budgets, delta, family, k=kk)
    rows = [
        dict(budget=float(v), count=int((budgets == v).sum()), upper=float(u), lower=float(lo), eapes=float(e),
             eapes_below_lower=bool(e < lo), weakest_budget=weakest)
        for v, u, lo, e in zip(values, upper, lower, eapes)
    ]
    if as_json:
        typer.echo(json.dumps(dict(distribution=distribution, budgets=budgets_file, n=n, delta=delta, family=family, step=step, seed=seed, rows=rows)))
        return
    typer.echo(f"{'budget':>8s} {'users':>7s} {'upper':>10s} {'lower':>10s} {'E-APES':>10s} {'weakest':>10s}")
    for r in rows:
        typer.echo(f"{r['budget']:8.3f} {r['count']:7d} {r['upper']:10.5f} {r['lower']:10.5f} {r['eapes']:10.5f} {r['weakest_budget']:10.5f}")
