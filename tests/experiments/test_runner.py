"""Experiment registry, runner and CLI frame."""

import csv
import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from shuffledp.cli import app
from shuffledp.errors import ExperimentError
from shuffledp.experiments import ExperimentOutput, get_experiment, register, reproduce, run_experiment
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


@pytest.fixture
def second_toy(toy_experiment):
    """A second experiment that always runs, beside a toy that tests make skip."""
    register("toy-test-2", "Another toy", "none")(_REGISTRY[toy_experiment].run)
    yield "toy-test-2"
    _REGISTRY.pop("toy-test-2")


def _needs_missing_extra(name, monkeypatch):
    needs = dataclasses.replace(_REGISTRY[name], requires=("no_such_module_for_shuffledp",), extra="fl")
    monkeypatch.setitem(_REGISTRY, name, needs)


def test_an_experiment_whose_optional_extra_is_missing_is_skipped_naming_the_pip_command(
    tmp_path, toy_experiment, second_toy, monkeypatch
):
    _needs_missing_extra(toy_experiment, monkeypatch)
    report = reproduce(tmp_path / "all", quick=True, progress=False, only=[toy_experiment, second_toy]).read_text()
    assert "skipped: needs no_such_module_for_shuffledp, not installed: pip install 'shuffledp[fl]'" in report
    assert f"| {toy_experiment} | - | skipped: needs no_such_module_for_shuffledp" in report  # its row, no link
    assert "Skipped: 1 of 2 (an optional extra is missing)." in report
    assert not (tmp_path / "all" / toy_experiment).exists() and (tmp_path / "all" / second_toy).is_dir()
    with pytest.raises(ExperimentError, match=r"'toy-test' needs no_such_module_for_shuffledp.*'shuffledp\[fl\]'"):
        run_experiment(toy_experiment, tmp_path / "one", quick=True, progress=False)
    assert not (tmp_path / "fresh" / toy_experiment).exists()  # nothing ran


def test_reproduce_refuses_when_every_experiment_asked_for_would_be_skipped(tmp_path, toy_experiment, monkeypatch):
    _needs_missing_extra(toy_experiment, monkeypatch)
    with pytest.raises(ExperimentError, match=r"nothing to reproduce.*toy-test needs .*pip install 'shuffledp\[fl\]'"):
        reproduce(tmp_path / "none", quick=True, progress=False, only=[toy_experiment])
    assert not (tmp_path / "none").exists()  # nothing ran, no report


def test_cli_reproduce_exits_2_with_the_pip_line_when_everything_is_skipped(tmp_path, toy_experiment, monkeypatch):
    _needs_missing_extra(toy_experiment, monkeypatch)
    result = CliRunner().invoke(app, ["reproduce", "--only", toy_experiment, "--out", str(tmp_path / "r")])
    assert result.exit_code == 2, result.output
    assert "error: nothing to reproduce" in result.output and "pip install 'shuffledp[fl]'" in result.output


def test_cli_reproduce_with_some_skipped_exits_0_and_says_how_many(tmp_path, toy_experiment, second_toy, monkeypatch):
    _needs_missing_extra(toy_experiment, monkeypatch)
    only = ["--only", toy_experiment, "--only", second_toy]
    result = CliRunner().invoke(app, ["reproduce", *only, "--quick", "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert "skipped 1 of 2 experiments: toy-test needs no_such_module_for_shuffledp" in " ".join(result.output.split())
    assert (tmp_path / "r" / "REPORT.md").is_file()


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


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["experiment"],
        ["experiment", "run"],
        ["experiment", "list"],
        ["reproduce"],
        ["amplify"],
        ["local-budget"],
        ["compose"],
    ],
)
def test_every_command_has_help(args):
    result = CliRunner().invoke(app, [*args, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output


def test_experiment_list_names_table7():
    result = CliRunner().invoke(app, ["experiment", "list"])
    assert result.exit_code == 0
    assert "table7" in result.output


def test_delayed_status_draws_on_terminals_only_after_its_delay():
    import io
    import time

    from rich.console import Console

    from shuffledp.experiments.progress import DelayedStatus

    terminal = io.StringIO()
    console = Console(file=terminal, force_terminal=True, width=80)
    with DelayedStatus("quick answer", delay=0.5, console=console) as status:
        status.update("still quick")
    assert terminal.getvalue() == ""  # finished before the delay: nothing drawn
    with DelayedStatus("slow step", delay=0.05, console=console) as status:
        time.sleep(0.4)
        status.update("second step")
        time.sleep(0.4)
    drawn = terminal.getvalue()
    assert "slow step" in drawn and "second step" in drawn
    pipe = io.StringIO()
    with DelayedStatus("piped", delay=0.0, console=Console(file=pipe, force_terminal=False)):
        time.sleep(0.2)
    assert pipe.getvalue() == ""  # never on a pipe (e.g. --json consumers reading stderr)


def test_version_flag_prints_the_installed_version():
    from importlib.metadata import version

    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"shuffledp {version('shuffledp')}"


@pytest.mark.parametrize(
    "command", [["amplify"], ["local-budget"], ["compose"], ["reproduce"], ["experiment", "run"], []]
)
def test_help_shows_flags_without_placeholder_and_lists_registry_choices(command):
    from shuffledp.accounting.bounds import available_methods
    from shuffledp.cli._support import HELP_CHOICES
    from shuffledp.randomizers.registry import available_randomizers

    result = CliRunner().invoke(app, [*command, "--help"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.replace("│", " ").split())  # undo rich's wrapping into a box
    assert "<bool>" not in text and "BOOLEAN" not in text
    assert not any("{" + key + "}" in text for key in HELP_CHOICES)  # every placeholder filled
    if command in (["amplify"], ["local-budget"], ["compose"]):
        assert ", ".join(available_randomizers()) in text
    if command == ["amplify"]:
        assert "all, " + ", ".join(available_methods()) in text
    if command == ["local-budget"]:
        assert ", ".join(available_methods("upper")) in text


def test_reproduce_report_carries_each_experiments_findings_line(tmp_path):
    @register("toy-findings", "A toy with findings", "none")
    def run(ctx):
        return ExperimentOutput(["i"], [{"i": 1}], "text", None, {}, findings="paper's claims: 1 held")

    try:
        report = reproduce(tmp_path, quick=True, progress=False, only=["toy-findings"])
        assert "— paper's claims: 1 held" in report.read_text()
        assert json.loads((tmp_path / "toy-findings" / "meta.json").read_text())["findings"] == "paper's claims: 1 held"
    finally:
        _REGISTRY.pop("toy-findings")


def test_meta_json_writes_an_infinite_parameter_as_inf_strict_json(tmp_path):
    @register("toy-inf", "A toy with an infinite parameter", "none")
    def run(ctx):
        return ExperimentOutput(["i"], [{"i": 0}], "| a |", None, {"bound": float("inf"), "nothing": float("nan")})

    try:
        target = run_experiment("toy-inf", tmp_path, quick=True, seed=1, progress=False)
    finally:
        _REGISTRY.pop("toy-inf")

    def refuse(name):
        raise ValueError(f"not strict JSON: {name}")

    meta = json.loads((target / "meta.json").read_text(), parse_constant=refuse)
    assert meta["parameters"] == {"bound": "inf", "nothing": None}  # the one JSON rule, as in round.json
