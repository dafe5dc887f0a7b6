"""Experiment registry, runner and CLI frame."""

import csv
import json
import subprocess
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from shuffledp.cli import app
from shuffledp.errors import ExperimentError
from shuffledp.experiments import ExperimentOutput, get_experiment, register, run_experiment
from shuffledp.experiments.registry import _REGISTRY


@pytest.fixture
def toy_experiment():
    @register("toy-test", "A toy", "none")
    def run(ctx):
        x = ctx.rng(0).random(3)
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots()
        ax.plot(x)
        rows = [{"i": i, "value": float(v)} for i, v in enumerate(x)]
        return ExperimentOutput(["i", "value"], rows, "| a | b |", fig, {"quick": ctx.quick})

    yield "toy-test"
    _REGISTRY.pop("toy-test")


def test_run_experiment_writes_all_artefacts(tmp_path, toy_experiment):
    target = run_experiment(toy_experiment, tmp_path, quick=True, seed=5, progress=False)
    rows = list(csv.DictReader((target / "results.csv").open()))
    assert [r["i"] for r in rows] == ["0", "1", "2"]
    expected = np.random.default_rng([5, 0]).random(3)
    assert [float(r["value"]) for r in rows] == pytest.approx(expected)
    assert (target / "figure.png").stat().st_size > 1000
    assert "| a | b |" in (target / "summary.md").read_text()
    meta = json.loads((target / "meta.json").read_text())
    assert meta["seed"] == 5 and meta["quick"] is True and meta["parameters"] == {"quick": True}


def test_unknown_experiment_is_a_clear_error():
    with pytest.raises(ExperimentError, match="unknown experiment 'nope'.*table7"):
        get_experiment("nope")


def test_cli_unknown_experiment_exits_2_with_one_line():
    proc = subprocess.run(
        [sys.executable, "-m", "shuffledp", "experiment", "run", "nope"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2
    assert "unknown experiment 'nope'" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("args", [[], ["experiment"], ["experiment", "run"], ["experiment", "list"], ["reproduce"]])
def test_every_command_has_help(args):
    result = CliRunner().invoke(app, [*args, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output


def test_experiment_list_names_table7():
    result = CliRunner().invoke(app, ["experiment", "list"])
    assert result.exit_code == 0
    assert "table7" in result.output
