"""Run experiments and write their artefacts (DESIGN.md, "Experiments").

``DIR/NAME/results.csv``, ``figure.png``, ``summary.md`` and ``meta.json``;
``reproduce`` also writes ``DIR/REPORT.md``: one row per experiment (the paper's claims in short, ours, the
verdict, a link to its summary), then one row per claim, then the runs.
"""

from __future__ import annotations

import csv
import json
import math
import os
import platform
import tempfile
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import scipy

import shuffledp
from shuffledp._util.numbers import json_value
from shuffledp._util.progress import ProgressReporter
from shuffledp._util.validation import SEED_MAX, check_positive_int
from shuffledp.errors import ExperimentError, ShuffleDPError
from shuffledp.experiments.registry import (
    Claim,
    Experiment,
    ExperimentContext,
    ExperimentOutput,
    all_experiments,
    combined_verdict,
    get_experiment,
)

__all__ = [
    "check_seed",
    "reproduce",
    "run_experiment",
    "selected_experiments",
    "skip_note",
    "skipped_experiments",
    "writable_directory",
]


def _write_csv(path: Path, output: ExperimentOutput) -> None:
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=output.columns, extrasaction="raise")
        writer.writeheader()
        for row in output.rows:
            writer.writerow(
                {k: ("" if v is None or (isinstance(v, float) and math.isnan(v)) else v) for k, v in row.items()}
            )


def check_seed(seed: int) -> int:
    """A seed is one unsigned 64-bit integer (numpy's SeedSequence word)."""
    try:
        return check_positive_int(seed, "seed", minimum=0, maximum=SEED_MAX)
    except ShuffleDPError as exc:  # the same rule, reported as an experiment option
        raise ExperimentError(str(exc)) from None


def writable_directory(path: Path, name: str = "out") -> Path:
    """Create ``path`` (and parents) if needed; raise ExperimentError if it cannot be written.

    Checked before an experiment runs, so a bad ``out`` fails at once, not after the run.
    """
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExperimentError(
            f"{name} must be a writable directory: cannot create {str(path)!r} ({exc.strerror or exc})"
        ) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ExperimentError(f"{name} must be a writable directory: {str(path)!r} is not writable")
    try:  # os.access trusts the mode bits; a file system may still refuse (e.g. /sys for root)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise ExperimentError(
            f"{name} must be a writable directory: cannot write in {str(path)!r} ({exc.strerror or exc})"
        ) from None
    return path


def run_experiment(name: str, out: Path, *, quick: bool = False, seed: int = 0, progress: bool = True) -> Path:
    """Run one experiment; return the directory holding its artefacts."""
    seed = check_seed(seed)
    experiment = get_experiment(name)
    if missing := experiment.missing_requirement():
        raise ExperimentError(f"experiment {name!r} {missing}")
    target = writable_directory(Path(out) / name)
    ctx = ExperimentContext(quick=quick, seed=seed, out_dir=target, progress=ProgressReporter(progress))
    started = time.perf_counter()
    output = experiment.run(ctx)
    wall = time.perf_counter() - started
    _write_csv(target / "results.csv", output)
    header = (
        f"# {experiment.title}\n\nPaper: {experiment.paper}. Mode: {'quick' if quick else 'full'}, seed {seed}.\n\n"
    )
    body = output.summary_markdown.strip()
    if output.claims:  # the paper's claims beside ours, first
        body = _claims_markdown(output.claims) + "\n\n" + body
    if output.figure is not None and "figure.png" not in body:  # every summary shows its figure
        body += f"\n\n![{experiment.title}](figure.png)"
    (target / "summary.md").write_text(header + body + "\n")
    if output.figure is not None:
        import matplotlib.pyplot as plt

        output.figure.savefig(target / "figure.png", dpi=120, bbox_inches="tight")
        plt.close(output.figure)
    meta = {
        "experiment": name,
        "title": experiment.title,
        "paper": experiment.paper,
        "quick": quick,
        "seed": seed,
        "parameters": output.parameters,
        "wall_seconds": round(wall, 3),
        "findings": output.findings,
        "versions": {
            "shuffledp": shuffledp.__version__,
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scipy": scipy.__version__,
        },
        "machine": platform.machine(),
        "claims": [asdict(c) for c in output.claims],
    }
    (target / "meta.json").write_text(json.dumps(json_value(meta), indent=2, default=str) + "\n")  # inf: "inf"
    return target


def reproduce(
    out: Path, *, quick: bool = False, seed: int = 0, progress: bool = True, only: Iterable[str] | None = None
) -> Path:
    """Run every registered experiment (or those named in ``only``) and write ``out/REPORT.md``.

    Names, seed and ``out`` are checked before anything runs.  An experiment whose optional extra is missing
    is skipped (REPORT.md says why and how many); if every one asked for would be, `ExperimentError` names them
    with their pip lines and nothing runs.
    """
    seed = check_seed(seed)
    experiments = selected_experiments(only)
    skipped = skipped_experiments(experiments)
    if len(skipped) == len(experiments):
        raise ExperimentError(
            f"nothing to reproduce: every experiment asked for would be skipped ({_skip_list(skipped)})"
        )
    out = writable_directory(Path(out))
    selection = "" if only is None else f" Only: {', '.join(experiments)}."
    if skipped:
        selection += f" Skipped: {len(skipped)} of {len(experiments)} (an optional extra is missing)."
    runs = []
    for name, experiment in experiments.items():
        if name in skipped:  # an optional extra is not installed: skip, say why
            runs.append(_Run(name, experiment.title, [], 0.0, skipped=skipped[name]))
            continue
        target = run_experiment(name, out, quick=quick, seed=seed, progress=progress)
        meta = json.loads((target / "meta.json").read_text())
        claims = [Claim(**c) for c in meta["claims"]]
        runs.append(_Run(name, experiment.title, claims, meta["wall_seconds"], meta.get("findings") or ""))
    report = out / "REPORT.md"
    report.write_text(_report_markdown(runs, f"Mode: {'quick' if quick else 'full'}, seed {seed}.{selection}"))
    return report


def selected_experiments(only: Iterable[str] | None = None) -> dict[str, Experiment]:
    """The experiments `reproduce` runs: every registered one, or those named in ``only`` (in its order, once each)."""
    experiments = all_experiments()
    if only is None:
        return experiments
    names = list(dict.fromkeys(only))
    if not names:
        raise ExperimentError("only must name at least one experiment")
    unknown = [name for name in names if name not in experiments]
    if unknown:
        raise ExperimentError(
            f"only: unknown experiment(s) {', '.join(map(repr, unknown))}; available: {', '.join(experiments)}"
        )
    return {name: experiments[name] for name in names}


def skipped_experiments(experiments: dict[str, Experiment]) -> dict[str, str]:
    """Of ``experiments``, those `reproduce` skips (an optional extra is missing): name -> why, with the pip line."""
    return {name: why for name, experiment in experiments.items() if (why := experiment.missing_requirement())}


def skip_note(skipped: dict[str, str], total: int) -> str:
    """One line saying how many of ``total`` experiments were skipped and why ("" when none was)."""
    return f"skipped {len(skipped)} of {total} experiments: {_skip_list(skipped)}" if skipped else ""


def _skip_list(skipped: dict[str, str]) -> str:
    return "; ".join(f"{name} {why}" for name, why in skipped.items())


@dataclass(frozen=True)
class _Run:
    """What REPORT.md says of one experiment's run."""

    name: str
    title: str
    claims: list[Claim]
    wall_seconds: float
    findings: str = ""
    skipped: str = ""  # why it did not run (an optional extra is missing); then it has no summary to link

    @property
    def link(self) -> str:
        return f"[{self.name}]({self.name}/summary.md)"


#: The cells of an experiment that states no claim as `Claim` objects (paper, ours, verdict).
_NO_CLAIM = ("(no claim recorded in structured form)", "see the summary", "-")
_VERDICT_RULE = (
    "held: the claim holds in our run; partly: it holds in part or only in some settings (the row says which); "
    "not: our run contradicts it (the summary says why); not testable: our run cannot decide it (differences "
    "within the run's noise, or a quick run too short; the row says which). An experiment's verdict combines its "
    "claims' (`combined_verdict`): held if every testable claim held, not if none held even in part, otherwise "
    "partly; not testable if no claim was."
)


def _report_markdown(runs: list[_Run], mode: str) -> str:
    """REPORT.md: one row per experiment (its claims in short, ours, the combined verdict), then one per claim."""
    experiments, claims = [], []
    for run in runs:
        if run.skipped:
            experiments.append(f"| {run.name} | - | skipped: {_cell(run.skipped)} | - |")
        elif run.claims:
            numbered = len(run.claims) > 1
            paper = _numbered([_short(c.claim, strip_rule=True) for c in run.claims], numbered)
            ours = _numbered([_short(c.ours) for c in run.claims], numbered)
            experiments.append(f"| {run.link} | {paper} | {ours} | {combined_verdict(c.verdict for c in run.claims)} |")
            claims += [
                f"| {run.link} | {i} | {_cell(c.claim)} | {_cell(c.ours)} | {c.verdict} |"
                for i, c in enumerate(run.claims, start=1)
            ]
        else:
            experiments.append(f"| {run.link} | {' | '.join(_NO_CLAIM)} |")
            claims.append(f"| {run.link} | - | {' | '.join(_NO_CLAIM)} |")
    listing = [
        f"- {run.title} — skipped: {run.skipped}"
        if run.skipped
        else f"- [{run.title}]({run.name}/summary.md) — {run.wall_seconds} s"
        + (f" — {run.findings}" if run.findings else "")
        for run in runs
    ]
    lines = [
        "# shuffledp reproduction report", "", mode, "",
        "| experiment | the paper's claims | ours | verdict |", "|---|---|---|---|", *experiments, "",
        _VERDICT_RULE, "",
        "## The claims one by one", "",
        "| experiment | # | the paper's claim | ours | held? |", "|---|---|---|---|---|", *claims, "",
        "## Experiments", "", *listing,
    ]  # fmt: skip
    return "\n".join(lines) + "\n"


def _short(text: str, limit: int = 140, *, strip_rule: bool = False) -> str:
    """``text`` in one table cell, at most about ``limit`` characters (cut at a word, marked ``…``).

    ``strip_rule`` drops the rule of a claim's verdict, its closing ``(held: ...)`` or ``; held: ...)`` (the claims
    table keeps it).
    """
    text = " ".join(str(text).split())
    if strip_rule and text.endswith(")"):  # "... (held: ...)" or "... (§4.2; held: ...)"
        for opening, closing in ((" (held: ", ""), ("; held: ", ")")):
            if opening in text:
                text = text[: text.rindex(opening)] + closing
                break
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " …"
    return _cell(text)


def _numbered(items: list[str], numbered: bool) -> str:
    """Several items in one cell, numbered as the claims table numbers them."""
    return "<br>".join(f"({i}) {item}" for i, item in enumerate(items, start=1)) if numbered else items[0]


def _cell(text: str) -> str:
    """``text`` inside one Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _claims_markdown(claims: list[Claim]) -> str:
    rows = [f"| {_cell(c.claim)} | {_cell(c.ours)} | {c.verdict} |" for c in claims]
    return "\n".join(
        ["## The paper's claims beside ours", "", "| the paper's claim | ours | held? |", "|---|---|---|", *rows]
    )
