"""``shuffledp segmented ...``: the segmented multi-message shuffle protocol (segmented paper §5).

``shuffledp segmented optimize --levels 0.5,1,2 --counts 1250,2500,1250 --d 128 --s 1 --m 0.5 [--json]``
prints m, lambda_1..lambda_K and each level's priced user epsilon (Algorithm 2, step 2), in a few seconds;
without --m the search for m checks Eq. 7 some hundreds of times (a minute or more; a spinner shows on stderr).
Every bad value is one ``error: --option ...`` line with exit status 2.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer

from shuffledp.cli import _support as S
from shuffledp.cli._output import emit_result, number, status, table
from shuffledp.errors import PrivacyLevelError, PrivacyParameterError

__all__ = ["app", "optimize"]

app = typer.Typer(
    help="Segmented multi-message shuffle protocol (hidden privacy levels).", no_args_is_help=True, cls=S.OneLineGroup
)


def _number_list(name: str, interval: Any) -> Callable[[Any], Any]:
    """A comma-separated list of numbers, each in ``interval`` (or the function returning it), as
    `S.interval_option` reads one; a bad list is refused in the one wording of a range error."""
    item = S.interval_option(name, interval)

    def allowed() -> str:
        rng = interval() if callable(interval) else interval
        return f"a comma-separated list of {'integers' if rng.integer else 'numbers'} in {rng}"

    def parse(value: Any) -> Any:
        if value is None or isinstance(value, list):
            return value
        try:
            values = [item(v.strip()) for v in str(value).split(",")]
        except typer.BadParameter:
            raise typer.BadParameter(S.range_message(name, allowed(), value)) from None
        S.record_typed(name, str(value))  # the list as typed, for messages that quote it
        return values

    parse.allowed = allowed  # type: ignore[attr-defined]
    return parse


def _levels() -> Any:
    from shuffledp.protocols.segmented.optimizer import LEVEL_RANGE

    return LEVEL_RANGE


def _blanket_rates() -> Any:
    from shuffledp.accounting.segmented import M_RANGE

    return M_RANGE


LevelsOpt = Annotated[
    list,
    typer.Option(
        "--levels",
        parser=_number_list("--levels", _levels),
        help="Privacy levels E_1 < ... < E_K, e.g. 0.5,1,2.",
    ),
]
CountsOpt = Annotated[
    list,
    typer.Option(
        "--counts",
        parser=_number_list("--counts", S.COUNTS_RANGE),
        help="Users per level, e.g. 1250,2500,1250.",
    ),
]
DOpt = Annotated[int, typer.Option("--d", parser=S.count_option("--d", minimum=2), help="Item domain size d.")]
SOpt = Annotated[int, typer.Option("--s", parser=S.count_option("--s"), help="Items per user s.")]
MOpt = Annotated[
    float | None,
    typer.Option(
        "--m", parser=S.interval_option("--m", _blanket_rates), help="Blanket messages per user (default: optimised)."
    ),
]
DeltaOpt = Annotated[
    float | None,
    typer.Option("--delta", parser=S.delta_option(), help="Target delta (default 0.01/n)."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object (inputs and results) instead of text.")]


@app.command(cls=S.OneLineCommand)
def optimize(
    levels: LevelsOpt,
    counts: CountsOpt,
    d: DOpt,
    s: SOpt,
    m: MOpt = None,
    delta: DeltaOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Blanket rate m and sampling rates lambda_k meeting every level (Eq. 6-7; m free: §5.2 MSE bound).

    Example (a few seconds): --levels 0.5,1,2 --counts 1250,2500,1250 --d 128 --s 1 --m 0.5.  Without --m, m is
    searched (some hundreds of Eq. 7 checks: a minute or more at these sizes, longer with --s > 1).
    """
    from shuffledp.protocols.segmented.optimizer import optimize_parameters

    if any(b <= a for a, b in zip(levels, levels[1:])):
        raise PrivacyLevelError(f"--levels must be strictly increasing, got {S.typed('--levels', levels)}")
    if len(counts) != len(levels):
        raise PrivacyLevelError(f"--counts must give one count per level ({len(levels)}), got {len(counts)}")
    if s > d:
        raise PrivacyParameterError(f"--s must be at most --d={d}, got {s}")
    n = sum(counts)
    delta = 0.01 / n if delta is None else delta
    with status(
        "segmented: optimising the blanket rate m and the sampling rates" if m is None else "segmented: sampling rates"
    ):
        result = optimize_parameters(levels, delta, counts, d, s, m)
    if as_json:
        inputs = {"levels": levels, "counts": counts, "d": d, "s": s, "m": m, "delta": delta}
        emit_result(inputs, result.to_dict())
        return
    summary = [("n", n), ("d", d), ("s", s), ("delta", delta), ("m", result.m), ("MSE bound", result.mse_bound)]
    if result.m_range is not None:
        summary.append(("m searched in", f"[{number(result.m_range[0])}, {number(result.m_range[1])}]"))
    table(("quantity", "value"), summary)
    levels_rows = zip(levels, counts, result.lambdas, result.epsilons)
    table(
        ("level", "users", "lambda", "user epsilon"),
        ((level, count, number(lam, 9), number(eps, 9)) for level, count, lam, eps in levels_rows),
    )
