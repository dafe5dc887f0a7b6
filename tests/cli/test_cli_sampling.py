"""`compose` and `local-budget` with --population / --sample-size / --sampling (issue 22)."""

import json

import pytest
from typer.testing import CliRunner

from shuffledp.accounting.composition import composed_local_epsilon, composed_shuffle_epsilon
from shuffledp.cli import app


def run_cli(*args: str):
    return CliRunner().invoke(app, list(args), terminal_width=400)


def test_compose_with_sampling_matches_the_library_and_states_the_condition():
    result = run_cli(
        "compose",
        "--eps0",
        "4",
        "--delta",
        "1e-6",
        "--rounds",
        "10",
        "--population",
        "5000",
        "--sample-size",
        "1000",
        "--method",
        "tight",
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["inputs"]["n"] == 1000 and payload["inputs"]["sampling"] == "fixed-size"
    expected = composed_shuffle_epsilon(1000, 1e-6, 10, eps0=4.0, method="tight", population=5000)
    assert payload["epsilon"]["tight"] == expected
    assert payload["sampling"]["neighbours"] == "substitution"
    assert "must not learn who was sampled" in payload["sampling"]["condition"]
    table = run_cli(
        "compose",
        "--eps0",
        "4",
        "--delta",
        "1e-6",
        "--rounds",
        "10",
        "--population",
        "5000",
        "--sample-size",
        "1000",
        "--sampling",
        "poisson",
        "--method",
        "tight",
    )
    assert table.exit_code == 0, table.stderr
    text = " ".join(table.stdout.split())
    assert "sampling: poisson, 1000 of 5000 users per round" in text
    assert "add/remove neighbours" in text and "condition: the server must not learn who was sampled" in text


def test_local_budget_with_sampling_round_trips():
    result = run_cli(
        "local-budget",
        "--target",
        "1",
        "--delta",
        "1e-6",
        "--rounds",
        "5",
        "--population",
        "5000",
        "--sample-size",
        "1000",
        "--n",
        "1000",
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    expected = composed_local_epsilon(1.0, 1000, 1e-6, 5, population=5000)
    assert payload["local_epsilon"] == expected
    assert payload["achieved_epsilon"] <= 1.0
    assert payload["sampling"]["scheme"] == "fixed-size"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--population", "5000"], "--population 5000 needs --sample-size"),
        (["--population", "5000", "--sample-size", "1000", "--n", "999"], "--n must equal --sample-size 1000"),
        (["--n", "100", "--sample-size", "10"], "--sample-size and --sampling need --population"),
        (["--population", "50", "--sample-size", "100"], "--sample-size must be at most --population 50"),
        ([], "--n is required"),
        (["--population", "5000", "--sample-size", "1000", "--sampling", "bernoulli"], "sampling scheme"),
    ],
)
def test_sampling_options_are_checked_together(args, message):
    result = run_cli("compose", "--eps0", "1", "--delta", "1e-6", "--rounds", "2", *args)
    assert result.exit_code != 0
    assert message in result.stderr + result.stdout
