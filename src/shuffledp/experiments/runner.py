"""Run experiments and write their artefacts (DESIGN.md, "Experiments").

``DIR/NAME/results.csv``, ``figure.png``, ``summary.md`` and ``meta.json``;
``reproduce`` also writes ``DIR/REPORT.md`` linking every summary.
"""

from __future__ import annotations

import csv
import json
import math
import platform
import time
from pathlib import Path

import numpy as np
import scipy

import shuffledp
from shuffledp.experiments.progress import ProgressReporter
from shuffledp.experiments.registry import ExperimentContext, ExperimentOutput, all_experiments, get_experiment


def _write_csv(path: Path, output: ExperimentOutput) -> None:
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=output.columns, extrasaction="raise")
        writer.writeheader()
        for row in output.rows:
            writer.writerow({k: ("" if v is None or (isinstance(v, float) and math.isnan(v)) else v) for k, v in row.items()})


def run_experiment(name: str, out: Path, *, quick: bool = False, seed: int = 0, progress: bool = True) -> Path:
    """Run one experiment; return the directory holding its artefacts."""
    experiment = get_experiment(name)
    target = Path(out) / name
    target.mkdir(parents=True, exist_ok=True)
    ctx = ExperimentContext(quick=quick, seed=seed, out_dir=target, progress=ProgressReporter(progress))
    started = time.perf_counter()
    output = experiment.run(ctx)
    wall = time.perf_counter() - started
    _write_csv(target / "results.csv", output)
    header = f"# {experiment.title}\n\nPaper: {experiment.paper}. Mode: {'quick' if quick else 'full'}, seed {seed}.\n\n"
    (target / "summary.md").write_text(header + output.summary_markdown.strip() + "\n")
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
        "versions": {
            "shuffledp": shuffledp.__version__,
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scipy": scipy.__version__,
        },
        "machine": platform.machine(),
    }
    (target / "meta.json").write_text(json.dumps(meta, indent=2, default=str) + "\n")
    return target


def reproduce(out: Path, *, quick: bool = False, seed: int = 0, progress: bool = True) -> Path:
    """Run every registered experiment and write ``out/REPORT.md``."""
    out = Path(out)
    lines = ["# shuffledp reproduction report", "", f"Mode: {'quick' if quick else 'full'}, seed {seed}.", ""]
    for name, experiment in all_experiments().items():
        target = run_experiment(name, out, quick=quick, seed=seed, progress=progress)
        meta = json.loads((target / "meta.json").read_text())
        lines.append(f"- [{experiment.title}]({name}/summary.md) — {meta['wall_seconds']} s")
    report = out / "REPORT.md"
    report.write_text("\n".join(lines) + "\n")
    return report
