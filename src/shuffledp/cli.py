"""The ``shuffledp`` command line (typer). Every command has ``--help``.

Errors of the library (:class:`~shuffledp.errors.ShuffleDPError`) are printed
as one clear line and exit with status 2, never as a traceback.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from shuffledp._util.validation import check_positive_int
from shuffledp.errors import PrivacyParameterError, ShuffleDPError

app = typer.Typer(help="Differential privacy in the shuffle model.", no_args_is_help=True, add_completion=False)
experiment_app = typer.Typer(help="List and run the experiments that reproduce the papers.", no_args_is_help=True)
app.add_typer(experiment_app, name="experiment")

#: Options shared by several commands.
Eps0Opt = Annotated[float, typer.Option("--eps0", help="Local epsilon of each report (every round).")]
QuickOpt = Annotated[bool, typer.Option("--quick", help="Fewer repetitions, for a fast look.")]
OutOpt = Annotated[Path, typer.Option("--out", help="Directory for the artefacts.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the experiments' random streams.")]
ReportsOpt = Annotated[int, typer.Option("--n", help="Number of shuffled reports (uncorrupted users), per round.")]
DeltaOpt = Annotated[float, typer.Option("--delta", help="Target delta of the shuffled guarantee (total over rounds).")]
RandomizerOpt = Annotated[Optional[str], typer.Option("--randomizer", help="Randomizer name (its tighter parameters).")]
DimOpt = Annotated[int, typer.Option("--dim", help="Dimension (or domain size) of the randomizer.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")]

console = Console()
err_console = Console(stderr=True)


@experiment_app.command("list")
def experiment_list() -> None:
    """List every registered experiment."""
    from shuffledp.experiments import all_experiments

    table = Table("name", "title", "paper")
    for name, exp in all_experiments().items():
        table.add_row(name, exp.title, exp.paper)
    console.print(table)


@experiment_app.command("run")
def experiment_run(
    name: str = typer.Argument(..., help="Experiment name (see `shuffledp experiment list`)."),
    quick: QuickOpt = False,
    out: OutOpt = Path("results"),
    seed: SeedOpt = 0,
) -> None:
    """Run one experiment and write results.csv, figure.png, summary.md, meta.json."""
    from shuffledp.experiments import run_experiment

    target = run_experiment(name, out, quick=quick, seed=seed)
    console.print(f"wrote {target}/summary.md")


@app.command("reproduce")
def reproduce_cmd(
    quick: QuickOpt = False,
    out: OutOpt = Path("results"),
    seed: SeedOpt = 0,
    only: Annotated[Optional[list[str]], typer.Option("--only", help="Run only these experiments (repeatable).")] = None,
) -> None:
    """Run every experiment and write one report (REPORT.md)."""
    from shuffledp.experiments import reproduce, run_experiment

    if only:
        for name in only:
            run_experiment(name, out, quick=quick, seed=seed)
        console.print(f"wrote {len(only)} experiment(s) under {out}")
        return
    report = reproduce(out, quick=quick, seed=seed)
    console.print(f"report: {report}")


def _local_parameters(eps0: float, randomizer: Optional[str], dim: int):
    """VariationRatio of ``randomizer`` at local epsilon ``eps0`` (generic eps0-LDP if None)."""
    from shuffledp.accounting.params import VariationRatio

    if randomizer is None:
        return VariationRatio.from_ldp(eps0)
    from shuffledp.randomizers.registry import make_randomizer

    return make_randomizer(randomizer, eps0, dim=dim).amplification_parameters()


def _json_number(value: float) -> Optional[float]:
    """JSON has no infinity: a bound whose regime is not met is reported as null."""
    return value if math.isfinite(value) else None


@app.command("amplify")
def amplify_cmd(
    eps0: Eps0Opt,
    n: ReportsOpt,
    delta: DeltaOpt,
    randomizer: RandomizerOpt = None,
    dim: DimOpt = 2,
    method: Annotated[str, typer.Option("--method", help="One bound method, or 'all'.")] = "all",
    as_json: JsonOpt = False,
) -> None:
    """Every applicable amplification bound (upper and lower), side by side, with its compute time.

    Generic-only bounds use eps0 alone (valid for any eps0-LDP randomizer); the others
    use the randomizer's (p, beta, q) parameters when --randomizer is given.
    """
    from shuffledp.accounting.bounds import available_methods, shuffle_epsilon, shuffle_epsilon_lower

    params = _local_parameters(eps0, randomizer, dim)
    methods = available_methods()
    if method != "all":
        if method not in methods:
            raise PrivacyParameterError(f"unknown bound method {method!r}; available: all, {', '.join(methods)}")
        methods = {method: methods[method]}
    results: dict[str, dict[str, float]] = {"upper": {}, "lower": {}, "seconds": {}}
    rows = []
    for name, m in methods.items():
        kwargs = {"eps0": eps0} if m.generic_only else {"params": params}
        compute = shuffle_epsilon if m.kind == "upper" else shuffle_epsilon_lower
        start = time.perf_counter()
        value = compute(n, delta, method=name, **kwargs)
        seconds = time.perf_counter() - start
        results[m.kind][name] = value
        results["seconds"][name] = seconds
        rows.append((name, m.kind, "generic" if m.generic_only or randomizer is None else randomizer, value, seconds))
    if as_json:
        payload = {kind: {k: _json_number(v) for k, v in values.items()} for kind, values in results.items()}
        typer.echo(json.dumps(payload))
        return
    table = Table("method", "kind", "parameters", "epsilon", "seconds", title=f"eps0={eps0:g}, n={n}, delta={delta:g}")
    for name, kind, source, value, seconds in sorted(rows, key=lambda r: (r[1] != "upper", r[3])):
        table.add_row(name, kind, source, f"{value:.6g}" if math.isfinite(value) else "n/a (regime)", f"{seconds:.3g}")
    console.print(table)


@app.command("local-budget")
def local_budget_cmd(
    target: Annotated[float, typer.Option("--target", help="Target central epsilon after shuffling.")],
    n: ReportsOpt,
    delta: DeltaOpt,
    randomizer: RandomizerOpt = None,
    dim: DimOpt = 2,
    method: Annotated[str, typer.Option("--method", help="Upper-bound method used for the inverse.")] = "variation-ratio",
    rounds: Annotated[int, typer.Option("--rounds", help="Rounds sharing the target (fresh keys each round, PIC §8).")] = 1,
    composition: Annotated[str, typer.Option("--composition", help="With --rounds > 1: tight, advanced or basic.")] = "tight",
    as_json: JsonOpt = False,
) -> None:
    """The largest local epsilon whose amplified guarantee (over --rounds rounds) is within the target."""
    from shuffledp.accounting.composition import composed_local_epsilon
    from shuffledp.accounting.inverse import Family, local_epsilon

    family: Family = "generic"
    if randomizer is not None:
        from functools import partial

        from shuffledp.randomizers.registry import make_randomizer, randomizer_class

        randomizer_class(randomizer)  # unknown names fail here, with the list of names
        family = partial(make_randomizer, randomizer, dim=dim)

    if check_positive_int(rounds, "--rounds") == 1:
        value = local_epsilon(target, n, delta, family=family, method=method)
    else:
        value = composed_local_epsilon(target, n, delta, rounds, family=family, method=composition)
        method = f"{composition} composition of {rounds} rounds"
    if as_json:
        typer.echo(json.dumps({"local_epsilon": value, "method": method}))
        return
    console.print(f"local epsilon {value:.6g} (method {method}, target {target:g}, n={n}, delta={delta:g})")


@app.command("compose")
def compose_cmd(
    eps0: Eps0Opt,
    n: ReportsOpt,
    delta: DeltaOpt,
    rounds: Annotated[int, typer.Option("--rounds", help="Number of rounds (fresh keys each round, PIC §8).")],
    randomizer: RandomizerOpt = None,
    dim: DimOpt = 2,
    method: Annotated[str, typer.Option("--method", help="tight, advanced, basic, or 'all'.")] = "all",
    as_json: JsonOpt = False,
) -> None:
    """Total epsilon of --rounds shuffled rounds: tight (PLD), advanced and basic composition side by side."""
    from shuffledp.accounting.composition import COMPOSITION_METHODS, composed_shuffle_epsilon

    check_positive_int(rounds, "--rounds")
    if method != "all" and method not in COMPOSITION_METHODS:
        raise PrivacyParameterError(f"unknown composition method {method!r}; available: all, {', '.join(COMPOSITION_METHODS)}")
    params = _local_parameters(eps0, randomizer, dim)
    results: dict[str, dict[str, float]] = {"epsilon": {}, "seconds": {}}
    for name in COMPOSITION_METHODS if method == "all" else (method,):
        start = time.perf_counter()
        results["epsilon"][name] = composed_shuffle_epsilon(n, delta, rounds, params=params, method=name)
        results["seconds"][name] = time.perf_counter() - start
    if as_json:
        typer.echo(json.dumps({kind: {k: _json_number(v) for k, v in values.items()} for kind, values in results.items()}))
        return
    table = Table("composition", "total epsilon", "seconds", title=f"eps0={eps0:g}, n={n}, rounds={rounds}, delta={delta:g}")
    for name, value in results["epsilon"].items():
        table.add_row(name, f"{value:.6g}" if math.isfinite(value) else "inf", f"{results['seconds'][name]:.3g}")
    console.print(table)


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except ShuffleDPError as exc:
        err_console.print(f"[bold red]error:[/] {exc}")
        raise SystemExit(2) from None
