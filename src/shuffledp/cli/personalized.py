"""``shuffledp personalized ...``: per-budget central epsilon of a personalized population (issue 10).

``shuffledp personalized --distribution uniform1 --n 100000 --delta 1e-5 [--family binary-rr] [--json]``
draws the Table 3 population (seed --seed); ``shuffledp personalized --budgets FILE --delta D``
reads it instead (one budget per line, or a 1-D ``.npy`` array; exactly one of --budgets and
--distribution, and --n only with --distribution).  It prints, per distinct budget, the rigorous
upper bound, the binary-RR lower bound, E-APES and the weakest-budget baseline.

Rounding depends on the family:

* binary-rr and k-rr: every budget is rounded *up* to --step.  Sound: a smaller-budget RR
  victim's report is a mixture (over inputs) of a larger-budget victim's reports, so its true
  divergence is no larger, and another user's clone capacity is nonincreasing in its budget.
  A row's upper bound holds for every user rounded into it and is capped at the row's largest
  given budget (a victim's central epsilon never exceeds its own local budget); the lower
  bound and E-APES are those of a user at the row's (rounded) budget.
* laplace: the budgets are used as given (one row per distinct budget; --step is refused).
  Rounding would not be sound: more liberal users' light Laplace tails cannot imitate a more
  conservative victim (clone capacity 0), so a more conservative user can get a *worse*
  guarantee than a more liberal one (others all at 0.2: a victim at 0.19 gets about 0.19, one
  at 0.2 about 0.012).

More distinct budgets than the accountant prices in one call (`MAX_DISTINCT_BUDGETS`) are
refused up front.  Every bad value is one ``error: --option ...`` line with exit status 2;
progress goes to stderr (a spinner on terminals only).
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Annotated, Any

import numpy as np
import typer

from shuffledp.cli import _support as S
from shuffledp.cli._output import console, emit_result, number, status, table
from shuffledp.errors import DataError, PrivacyParameterError

__all__ = ["app", "personalized_cmd"]

app = typer.Typer(
    help="Personalized budgets: per-user central epsilon after shuffling. binary-rr and k-rr budgets are rounded up "
    "to --step (sound); laplace budgets are used as given (for laplace a more conservative user can get a worse "
    "guarantee than a more liberal one).",
    cls=S.OneLineGroup,
    # options after a stray word are still read, so 'personalized foo --delta 1e-4' says "No such command 'foo'"
    context_settings={"allow_interspersed_args": True},
)

FAMILY_CHOICES = ["binary-rr", "k-rr", "laplace"]
#: Families whose budgets are rounded up to --step (sound for randomized response only).
ROUNDED_FAMILIES = ("binary-rr", "k-rr")


def _read_budgets_option(path: str) -> np.ndarray:
    """The --budgets file's budgets, or one ``--budgets`` error naming the file and line."""
    from shuffledp.protocols.personalized import read_budgets

    try:
        return read_budgets(path)
    except DataError as exc:
        raise DataError(f"--budgets: {exc}") from None


def _check_distinct(budgets: np.ndarray, source: str, family: str) -> None:
    """The accountant's limit on distinct budgets, refused up front as one ``source`` error."""
    from shuffledp.accounting.personalized import MAX_DISTINCT_BUDGETS, check_distinct_budgets

    try:
        check_distinct_budgets(budgets, source)
    except PrivacyParameterError:
        count = np.unique(budgets).size
        advice = (
            "use a larger --step"
            if family in ROUNDED_FAMILIES
            else "--family laplace prices the budgets as given (rounding them is not sound for laplace): "
            "give fewer distinct budgets"
        )
        raise PrivacyParameterError(
            f"{source}: {count:,} distinct budgets{' after rounding' if family in ROUNDED_FAMILIES else ''}; "
            f"at most {MAX_DISTINCT_BUDGETS:,} are priced in one run: {advice}"
        ) from None


def _rounded(given: np.ndarray, step: float | None) -> np.ndarray:
    """Budgets rounded up to multiples of ``step`` (None: as given), never past the accountant's
    largest budget (every given budget is at most it)."""
    from shuffledp.accounting.personalized import MAX_BUDGET

    if step is None:
        return given
    grid = np.ceil(given / step) * step  # 7 * 0.1 = 0.7000000000000001 in float64
    places = -Decimal(repr(step)).as_tuple().exponent  # digits after the point of --step as written
    if 0 < places <= 15:  # the grid point as written (0.7), wherever that is still >= the given budget
        written = np.round(grid, places)
        grid = np.where(written >= given, written, grid)
    return np.minimum(grid, MAX_BUDGET)


def _rows(given: np.ndarray, budgets: np.ndarray, delta: float, family: str, k: int | None) -> list[dict[str, Any]]:
    """One row per distinct budget of ``budgets`` (``given``, rounded or not): the guarantees of the users in it."""
    from shuffledp.accounting import personalized as P
    from shuffledp.protocols.personalized import eapes_by_victim

    values, first, group, count = np.unique(budgets, return_index=True, return_inverse=True, return_counts=True)
    group = group.ravel()
    given_min, given_max = np.full(values.size, np.inf), np.zeros(values.size)
    np.minimum.at(given_min, group, given)
    np.maximum.at(given_max, group, given)
    with status("personalized: upper bounds") as spinner:
        upper = P.personalized_shuffle_epsilons(budgets, delta, family, k=k)[1]
        spinner.update("personalized: lower bounds")
        lower = (
            P.personalized_shuffle_epsilons_lower(budgets, delta)[1]
            if family == "binary-rr"
            else np.full(values.size, np.nan)
        )
        spinner.update("personalized: E-APES")
        eapes = eapes_by_victim(budgets, delta, first)
        spinner.update("personalized: weakest-budget baseline")
        weakest = P.weakest_budget_epsilon(budgets.size, budgets, delta, family, k=k)
    # a victim's central epsilon never exceeds its own local budget, hence the row's largest given one;
    # the baseline likewise never exceeds the largest budget; a lower bound stays one when lowered,
    # so it is shown at most the row's upper (rounding can put given budgets far below the row's)
    upper = np.minimum(upper, given_max)
    weakest = min(weakest, float(budgets.max()))
    lower = np.minimum(lower, upper)
    return [
        dict(
            budget=float(v),
            given_min=float(g0),
            given_max=float(g1),
            count=int(c),
            upper=float(u),
            lower=None if math.isnan(lo) else float(lo),
            eapes=float(e),
            eapes_below_lower=None if math.isnan(lo) else bool(e < lo),
            eapes_above_budget=bool(e > v),
            weakest_budget=weakest,
        )
        for v, g0, g1, c, u, lo, e in zip(values, given_min, given_max, count, upper, lower, eapes)
    ]


def _print_table(rows: list[dict[str, Any]], family: str, step: float | None) -> None:
    def flagged(r: dict[str, Any]) -> str:
        return number(r["eapes"]) + ("*" if r["eapes_below_lower"] else "^" if r["eapes_above_budget"] else "")

    columns = ("budget", "given max", "users", "upper", "lower", "E-APES", "weakest")
    cells = [
        (r["budget"], r["given_max"], r["count"], r["upper"], r["lower"], flagged(r), r["weakest_budget"]) for r in rows
    ]
    table(columns, cells, whole=columns)
    if step is not None:
        console.print(
            f"budget: given budgets rounded up to --step {S.typed('--step', step)} (sound for {family}); upper: every "
            "user of the row, "
            "capped at its largest given budget; lower (at most upper), E-APES: a user at the row's budget."
        )
    else:
        console.print(
            "budget: as given (laplace is not rounded: a more conservative user can get a worse guarantee). "
            "weakest: the bound at the largest budget, not proven for laplace users below it (same reason)."
        )
    if family != "binary-rr":
        console.print("lower: - (computed for binary-rr only).")
    if any(r["eapes_below_lower"] for r in rows):
        console.print(
            "* E-APES (a CLT approximation) is below our certified lower bound: it understates the privacy loss."
        )
    if any(r["eapes_above_budget"] for r in rows):
        console.print("^ E-APES is above the row's own local budget, which alone already bounds the central epsilon.")


@app.callback(invoke_without_command=True)
def personalized_cmd(
    ctx: typer.Context,
    delta: Annotated[float, typer.Option("--delta", parser=S.delta_option(), help="Target delta.")],
    family: Annotated[
        str,
        typer.Option(
            "--family",
            parser=S.choice_option("--family", lambda: FAMILY_CHOICES, "family"),
            help="Randomizer family: binary-rr and k-rr budgets are rounded up to --step; laplace budgets are "
            "used as given (a more conservative laplace user can get a worse guarantee than a more "
            "liberal one, whose light tails cannot imitate it, so rounding is not sound).",
        ),
    ] = "binary-rr",
    budgets_file: Annotated[
        str | None,
        typer.Option(
            "--budgets", metavar="FILE", help="File of local budgets: one per line (text/CSV) or a 1-D .npy array."
        ),
    ] = None,
    distribution: Annotated[
        str | None,
        typer.Option(
            "--distribution",
            parser=S.choice_option(
                "--distribution", lambda: ["uniform1", "uniform2", "gauss1", "gauss2", "gauss3"], "distribution"
            ),
            help="Table 3 budget distribution (instead of --budgets).",
        ),
    ] = None,
    n: Annotated[
        int | None,
        typer.Option("--n", parser=S.count_option("--n", 2, 10**7), help="Number of users (with --distribution)."),
    ] = None,
    k: Annotated[int, typer.Option("--k", parser=S.count_option("--k", 2), help="Alphabet size for k-rr.")] = 3,
    step: Annotated[
        float,
        typer.Option(
            "--step",
            parser=S.epsilon_option("--step"),
            help="binary-rr and k-rr: budgets rounded up to this grid (refused with laplace, whose budgets are used as given).",
        ),
    ] = 0.01,
    seed: Annotated[int, typer.Option("--seed", parser=S.seed_option("--seed"), help="Seed of the population.")] = 0,
    as_json: Annotated[
        bool, typer.Option("--json", help='Print JSON (strict: no lower bound is null, an infinite E-APES "inf").')
    ] = False,
) -> None:
    """Per distinct budget: our upper bound, lower bound (binary RR), E-APES and the weakest-budget baseline.

    binary-rr and k-rr round the budgets up to --step (sound for randomized response); the upper
    bound of a row is capped at its largest given budget.  laplace uses the budgets as given:
    there a more conservative user can get a worse guarantee than a more liberal one.
    """
    from shuffledp.protocols.personalized import table3_budgets

    if family != "k-rr" and S.given(ctx, "k"):
        raise PrivacyParameterError(f"--k must come with --family k-rr (its alphabet size), got --family {family}")
    if family not in ROUNDED_FAMILIES and S.given(ctx, "step"):
        raise PrivacyParameterError(
            f"--step must come with --family binary-rr or k-rr (laplace budgets are used as given), got --step "
            f"{S.typed('--step', step)}"
        )
    if (budgets_file is None) == (distribution is None):
        raise PrivacyParameterError("give exactly one of --budgets FILE and --distribution NAME")
    if distribution is not None:
        if n is None:
            raise PrivacyParameterError("--n (number of users) is required with --distribution")
        given = table3_budgets(distribution, n, np.random.default_rng(seed))
        source = f"--distribution {distribution} --n {n}"
    else:
        if n is not None:
            raise PrivacyParameterError(f"--n is only for --distribution; with --budgets the file gives n, got --n {n}")
        given = _read_budgets_option(budgets_file)
        n = given.size
        source = f"--budgets {budgets_file}"
        if n < 2:
            raise PrivacyParameterError(
                f"--budgets: the file must hold at least 2 budgets (a victim and one other user), got {n}"
            )
    rounding = step if family in ROUNDED_FAMILIES else None
    budgets = _rounded(given, rounding)
    _check_distinct(budgets, source, family)
    rows = _rows(given, budgets, delta, family, k if family == "k-rr" else None)
    if as_json:
        inputs = dict(
            distribution=distribution,
            budgets=budgets_file,
            n=n,
            delta=delta,
            family=family,
            k=k if family == "k-rr" else None,
            step=rounding,
            seed=None if distribution is None else seed,
        )
        emit_result(inputs, {"rows": rows})
        return
    _print_table(rows, family, rounding)
