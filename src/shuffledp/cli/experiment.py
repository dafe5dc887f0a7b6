"""``shuffledp experiment list|run`` and ``shuffledp reproduce``: the experiments that reproduce the papers.

``experiment run NAME`` writes ``DIR/NAME/{results.csv,figure.png,summary.md,meta.json}``;
``reproduce`` runs them all (or those given with ``--only``) and writes ``DIR/REPORT.md``,
which opens with a table of the papers' claims and whether each held.  Progress bars go
to stderr.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from shuffledp.cli import _support as S
from shuffledp.cli._output import console, emit_result, table

__all__ = ["app", "experiment_list", "experiment_run", "group", "reproduce_cmd"]

#: ``shuffledp experiment ...``
group = typer.Typer(
    help="List and run the experiments that reproduce the papers.", no_args_is_help=True, cls=S.OneLineGroup
)
#: Root-level commands (``shuffledp reproduce``).
app = typer.Typer()

QuickOpt = Annotated[bool, typer.Option("--quick", help="Fewer repetitions, for a fast look.")]
OutOpt = Annotated[
    Path,
    typer.Option("--out", parser=S.directory_option("--out"), help="Directory for the artefacts (created if needed)."),
]
SeedOpt = Annotated[
    int,
    typer.Option("--seed", parser=S.seed_option("--seed"), help="Seed of the experiments' random streams."),
]


def _experiment_names() -> list[str]:
    from shuffledp.experiments import all_experiments

    return list(all_experiments())


@group.command("list", cls=S.OneLineCommand)
def experiment_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")] = False,
) -> None:
    """List every registered experiment."""
    from shuffledp.experiments import all_experiments

    rows = [(name, exp.title, exp.paper) for name, exp in all_experiments().items()]
    if as_json:
        emit_result({}, {"experiments": [dict(name=name, title=title, paper=paper) for name, title, paper in rows]})
        return
    table(("name", "title", "paper"), rows)


@group.command("run", cls=S.OneLineCommand)
def experiment_run(
    name: str = typer.Argument(
        ...,
        metavar="NAME",
        parser=S.choice_option("NAME", _experiment_names, "experiment"),
        help="Experiment name (see `shuffledp experiment list`).",
    ),
    quick: QuickOpt = False,
    out: OutOpt = Path("results"),
    seed: SeedOpt = 0,
) -> None:
    """Run one experiment and write results.csv, figure.png, summary.md, meta.json.

    Your own data: files are looked for under the data root, $SHUFFLEDP_DATA if set, else the nearest
    shared/data folder above the current directory or the installed package. pic-social reads check-ins from
    <root>/checkins/loc-gowalla_totalCheckins.txt (or .txt.gz; Gowalla) and <root>/checkins/dataset_TSMC2014_NYC.txt
    (Foursquare); pic-fl-incentives reads MNIST from <root>/mnist/train-images-idx3-ubyte and
    train-labels-idx1-ubyte (or .gz); segmented-msnbc reads <root>/msnbc/msnbc990928.seq. When they are absent the
    experiments run on named substitutes (the Austin addresses of <root>/locations/, scikit-learn's 8x8 digits, a
    Zipf msnbc-like data set), named in every output; a file present but malformed is an error naming it.
    """
    from shuffledp.experiments import run_experiment

    target = run_experiment(name, out, quick=quick, seed=seed)
    console.print(f"wrote {target}/summary.md")


@app.command("reproduce", cls=S.OneLineCommand)
def reproduce_cmd(
    quick: QuickOpt = False,
    out: OutOpt = Path("results"),
    seed: SeedOpt = 0,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--only", metavar="NAME", help="Run only this experiment (repeatable); see `shuffledp experiment list`."
        ),
    ] = None,
) -> None:
    """Run every experiment (or those given with --only) and write one report, REPORT.md.

    An experiment whose optional extra is missing is skipped (the pip line is printed); exit status 2 if every
    one asked for would be.
    """
    from shuffledp.experiments.runner import reproduce, selected_experiments, skip_note, skipped_experiments

    report = reproduce(out, quick=quick, seed=seed, only=only)
    console.print(f"report: {report}")
    selected = selected_experiments(only)
    if note := skip_note(skipped_experiments(selected), len(selected)):
        console.print(note)
