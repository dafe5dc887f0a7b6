"""The ``shuffledp`` command line (typer). Every command has ``--help``.

Errors of the library (:class:`~shuffledp.errors.ShuffleDPError`) are printed
as one clear line and exit with status 2, never as a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from shuffledp.errors import ShuffleDPError

app = typer.Typer(help="Differential privacy in the shuffle model.", no_args_is_help=True, add_completion=False)
experiment_app = typer.Typer(help="List and run the experiments that reproduce the papers.", no_args_is_help=True)
app.add_typer(experiment_app, name="experiment")

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
    quick: bool = typer.Option(False, "--quick", help="Fewer repetitions, for a fast look."),
    out: Path = typer.Option(Path("results"), "--out", help="Directory for the artefacts."),
    seed: int = typer.Option(0, "--seed", help="Seed of the experiment's random streams."),
) -> None:
    """Run one experiment and write results.csv, figure.png, summary.md, meta.json."""
    from shuffledp.experiments import run_experiment

    target = run_experiment(name, out, quick=quick, seed=seed)
    console.print(f"wrote {target}/summary.md")


@app.command("reproduce")
def reproduce_cmd(
    quick: bool = typer.Option(False, "--quick", help="Fewer repetitions, for a fast look."),
    out: Path = typer.Option(Path("results"), "--out", help="Directory for the artefacts."),
    seed: int = typer.Option(0, "--seed", help="Seed of the experiments' random streams."),
    only: Optional[list[str]] = typer.Option(None, "--only", help="Run only these experiments (repeatable)."),
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


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except ShuffleDPError as exc:
        err_console.print(f"[bold red]error:[/] {exc}")
        raise SystemExit(2) from None
