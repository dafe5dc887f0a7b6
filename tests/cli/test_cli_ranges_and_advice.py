"""Range errors read the same in every command and its --help; advice names command-line options; a
failing composition method leaves the others in the table; search caps are stated."""

from __future__ import annotations

import json
import re

import pytest
import typer.main
from typer.testing import CliRunner

from shuffledp.cli import app

runner = CliRunner()

#: A valid invocation of every command taking --delta (the value replaced below).
DELTA_COMMANDS = [
    ["amplify", "--eps0", "1", "--n", "1000", "--delta", "D"],
    ["compose", "--eps0", "1", "--n", "1000", "--rounds", "2", "--delta", "D"],
    ["local-budget", "--target", "0.5", "--n", "1000", "--delta", "D"],
    ["metric", "epsilon", "--mechanism", "geo-shuffle", "--n", "50", "--eps-geo", "0.5", "--delta", "D"],
    ["metric", "local-epsilon", "--target", "0.3", "--n", "50", "--k", "5", "--delta", "D"],
    ["personalized", "--distribution", "uniform1", "--n", "100", "--delta", "D"],
    ["segmented", "optimize", "--levels", "0.5,1", "--counts", "100,100", "--d", "8", "--s", "1", "--delta", "D"],
    [
        "pic",
        "simulate",
        "--dataset",
        "synthetic",
        "--n",
        "20",
        "--task",
        "neighbors",
        "--randomizer",
        "minkowski",
        "--epsilon-c",
        "1",
        "--out",
        "OUT",
        "--ideal",
        "--delta",
        "D",
    ],
]


def _help(command: list[str]) -> str:
    """The --help text of ``command`` on one line (rich's box and wrapping removed)."""
    text = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "400"}).stdout
    return re.sub(r"[\s│]+", " ", text)


def _error(result) -> str:
    assert result.exit_code == 2, result.output
    return result.stderr.strip()


@pytest.mark.parametrize("command", DELTA_COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("value", ["1e-400", "1e-310", "0", "1"])
def test_one_wording_of_the_delta_range_in_every_command_and_its_help(command, value, tmp_path):
    args = [str(tmp_path) if a == "OUT" else value if a == "D" else a for a in command]
    message = _error(runner.invoke(app, args))
    assert f"--delta must lie in [1e-300, 1), got '{value}'" in message
    help_text = _help([*command[: 2 if command[0] in ("metric", "segmented", "pic") else 1]])
    assert "in [1e-300, 1)" in help_text and "(0, 1)" not in help_text


def test_compose_quotes_the_delta_the_user_typed():
    message = _error(
        runner.invoke(app, ["compose", "--eps0", "1", "--n", "10000", "--delta", "1e-300", "--rounds", "10"])
    )
    assert "--delta 1e-300" in message
    assert "1.25e-302" not in message and "1e-301" not in message  # numbers the user never typed


def test_one_failing_composition_method_leaves_the_others_in_the_table():
    args = ["compose", "--eps0", "1", "--n", "10000", "--delta", "1e-299", "--rounds", "10"]
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["best"] == "basic" and isinstance(out["epsilon"]["basic"], float)
    assert out["epsilon"]["advanced"] == "inf" and "--delta 1e-299" in out["reasons"]["advanced"]
    text = runner.invoke(app, args, terminal_width=300).stdout
    assert "│ inf " in text and "(best)" in text and "advanced: advanced composition divides --delta" in text


@pytest.mark.parametrize(
    "args",
    [
        ["compose", "--eps0", "1", "--n", "10000", "--delta", "1e-290", "--rounds", "10"],
        ["local-budget", "--target", "1e-5", "--n", "100", "--delta", "1e-6"],
        ["local-budget", "--target", "0.5", "--n", "10000", "--delta", "1e-300", "--rounds", "3"],
    ],
)
def test_advice_names_command_line_options_not_api_arguments(args):
    result = runner.invoke(app, args, terminal_width=400)
    text = result.stdout + result.stderr
    assert not re.search(r"method='|min_epsilon|calibrate|target_epsilon=", text), text
    assert "--" in text


def test_local_budget_names_what_the_user_can_change():
    message = _error(runner.invoke(app, ["local-budget", "--target", "1e-5", "--n", "100", "--delta", "1e-6"]))
    assert "increase --n or --delta, or raise --target" in message


@pytest.mark.parametrize("command", ["amplify", "compose", "local-budget"])
def test_dim_without_randomizer_is_refused(command):
    base = {
        "amplify": ["amplify", "--eps0", "1", "--n", "1000", "--delta", "1e-6"],
        "compose": ["compose", "--eps0", "1", "--n", "1000", "--delta", "1e-6", "--rounds", "2"],
        "local-budget": ["local-budget", "--target", "0.5", "--n", "1000", "--delta", "1e-6"],
    }[command]
    message = _error(runner.invoke(app, [*base, "--dim", "5"]))
    assert "--dim applies only with --randomizer" in message


def test_pic_simulate_states_the_local_epsilon_search_cap(tmp_path):
    args = [
        "pic",
        "simulate",
        "--dataset",
        "synthetic",
        "--n",
        "30",
        "--task",
        "neighbors",
        "--randomizer",
        "minkowski",
        "--epsilon-c",
        "1e6",
        "--out",
        str(tmp_path),
        "--ideal",
    ]
    result = runner.invoke(app, args, terminal_width=300)
    assert result.exit_code == 0, result.output
    assert "search cap 50" in result.stdout
    report = json.loads((tmp_path / "round.json").read_text())
    assert report["local_epsilon_search_cap"] == 50 and report["privacy"][0]["local_epsilon_capped"] is True
    help_text = _help(["pic", "simulate"])
    assert "searched up to 50" in help_text


def _command_paths() -> list[list[str]]:
    """Every command of the CLI as the words a user types (groups walked through click)."""

    def walk(command, prefix):
        sub = getattr(command, "commands", None)
        if not sub:
            return [prefix]
        return [path for name, child in sorted(sub.items()) for path in walk(child, [*prefix, name])]

    return walk(typer.main.get_command(app), [])


@pytest.mark.parametrize("words", _command_paths(), ids=lambda words: " ".join(words) or "shuffledp")
def test_every_command_prints_its_help(words):
    result = runner.invoke(app, [*words, "--help"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output and "Traceback" not in result.output
