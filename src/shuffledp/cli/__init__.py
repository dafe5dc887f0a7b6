"""The ``shuffledp`` command line (typer). Every command has ``--help``; ``--version`` prints the version.

One module per command group, each importing only the library's public modules:

* `shuffledp.cli.accounting` -- ``amplify``, ``compose``, ``local-budget``;
* `shuffledp.cli.experiment` -- ``experiment list|run`` and ``reproduce``;
* `shuffledp.cli.pic`, `shuffledp.cli.segmented`, `shuffledp.cli.metric`,
  `shuffledp.cli.personalized` -- the protocols of the papers;
* `shuffledp.cli.serve` -- ``serve`` (the PIC services), `shuffledp.cli.demo` -- ``demo`` (a round over HTTP).

Every option value is validated when it is parsed (`shuffledp.cli._support`), under the
option's name and in the words of the library's own validators; bad values and library
errors (`ShuffleDPError`) print one ``error: ...`` line on stderr and exit with status 2,
never a traceback.  Integer options accept exact float literals (``--n 1e6``).  Output
follows one rule (`shuffledp.cli._output`): a table on stdout, or with ``--json`` one
strict JSON object (shortest round-trip floats, infinity written ``"inf"``); progress goes
to stderr only.  The entry point is ``shuffledp.cli:main``; ``python -m shuffledp`` runs it.
"""

from __future__ import annotations

from typing import Annotated

import typer

from shuffledp.cli import accounting, demo, experiment, metric, personalized, pic, segmented, serve
from shuffledp.cli._support import OneLineGroup

__all__ = ["app", "main"]


def _print_version(value: bool) -> None:
    if value:
        from shuffledp import __version__

        typer.echo(f"shuffledp {__version__}")
        raise typer.Exit()


app = typer.Typer(
    help="Differential privacy in the shuffle model.", no_args_is_help=True, add_completion=False, cls=OneLineGroup
)
app.add_typer(experiment.group, name="experiment")
app.add_typer(pic.app, name="pic")
app.add_typer(segmented.app, name="segmented")
app.add_typer(metric.app, name="metric")
app.add_typer(personalized.app, name="personalized")
app.add_typer(experiment.app)  # reproduce
app.add_typer(accounting.app)  # amplify, local-budget, compose
app.add_typer(serve.app)  # serve
app.add_typer(demo.app)  # demo


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the installed version and exit."),
    ] = False,
) -> None:
    """Differential privacy in the shuffle model."""


def main() -> None:
    """Console-script entry point (errors: one line on stderr, exit status 2)."""
    app()
