"""The `amplify`, `local-budget` and `compose` CLI commands (through `python -m shuffledp`)."""

import json
import math
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from shuffledp.accounting.bounds import available_methods, shuffle_epsilon, shuffle_epsilon_lower
from shuffledp.accounting.composition import COMPOSITION_METHODS, composed_local_epsilon, composed_shuffle_epsilon
from shuffledp.accounting.inverse import local_epsilon
from shuffledp.cli import app
from shuffledp.randomizers.registry import make_randomizer


def run_cli(*args: str) -> subprocess.CompletedProcess:
    # a wide virtual terminal: rich wraps messages at the terminal width (80 when piped)
    env = os.environ | {"COLUMNS": "400"}
    return subprocess.run([sys.executable, "-m", "shuffledp", *args], capture_output=True, text=True, timeout=120, env=env)


def test_amplify_json_has_every_bound_and_matches_the_library():
    result = run_cli("amplify", "--eps0", "1", "--n", "10000", "--delta", "1e-6", "--json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)  # exactly one JSON object on stdout
    assert set(payload) == {"upper", "lower", "seconds"}
    methods = available_methods()
    assert set(payload["upper"]) == {m for m, b in methods.items() if b.kind == "upper"}
    assert set(payload["lower"]) == {m for m, b in methods.items() if b.kind == "lower"}
    assert set(payload["seconds"]) == set(methods)
    for name, value in payload["upper"].items():
        expected = shuffle_epsilon(10_000, 1e-6, eps0=1.0, method=name)
        assert value == expected if math.isfinite(expected) else value is None, name
    for name, value in payload["lower"].items():
        assert value == shuffle_epsilon_lower(10_000, 1e-6, eps0=1.0, method=name)
    assert payload["upper"]["erlingsson"] is None  # eps0 = 1 is outside its regime
    assert all(s >= 0 for s in payload["seconds"].values())
    assert max(payload["lower"].values()) <= min(v for v in payload["upper"].values() if v is not None)


def test_amplify_single_method_and_table():
    result = run_cli("amplify", "--eps0", "2", "--n", "5000", "--delta", "1e-7", "--method", "pic-eq1", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "upper": {"pic-eq1": shuffle_epsilon(5000, 1e-7, eps0=2.0, method="pic-eq1")},
        "lower": {},
        "seconds": {"pic-eq1": pytest.approx(json.loads(result.stdout)["seconds"]["pic-eq1"])},
    }
    table = CliRunner().invoke(app, ["amplify", "--eps0", "2", "--n", "5000", "--delta", "1e-7"], terminal_width=200)
    assert table.exit_code == 0, table.output
    for name in available_methods():
        assert name in table.output
    assert "n/a (regime)" in table.output  # erlingsson at eps0 = 2


def test_amplify_with_a_randomizer_uses_its_parameters():
    result = run_cli("amplify", "--eps0", "3", "--n", "10000", "--delta", "1e-6", "--randomizer", "minkowski", "--dim", "2", "--json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    params = make_randomizer("minkowski", 3.0, dim=2).amplification_parameters()
    assert payload["upper"]["variation-ratio"] == shuffle_epsilon(10_000, 1e-6, params=params)
    # generic-only bounds are still reported, at the randomizer's eps0
    assert payload["upper"]["clones"] == shuffle_epsilon(10_000, 1e-6, eps0=3.0, method="clones")
    assert payload["upper"]["variation-ratio"] <= payload["upper"]["stronger-clones"] * (1 + 1e-6)


def test_local_budget_round_trips():
    result = run_cli("local-budget", "--target", "0.5", "--n", "10000", "--delta", "1e-6", "--json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload == {"local_epsilon": local_epsilon(0.5, 10_000, 1e-6), "method": "variation-ratio"}
    assert shuffle_epsilon(10_000, 1e-6, eps0=payload["local_epsilon"]) <= 0.5


def test_local_budget_with_a_randomizer():
    result = run_cli("local-budget", "--target", "0.5", "--n", "10000", "--delta", "1e-6", "--randomizer", "minkowski", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["local_epsilon"] >= local_epsilon(0.5, 10_000, 1e-6)  # tighter parameters


def test_compose_json_matches_the_library_and_orders_the_methods():
    result = run_cli("compose", "--eps0", "2", "--n", "5000", "--delta", "1e-6", "--rounds", "10", "--json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert set(payload) == {"epsilon", "seconds"} and set(payload["epsilon"]) == set(COMPOSITION_METHODS)
    for name, value in payload["epsilon"].items():
        assert value == composed_shuffle_epsilon(5_000, 1e-6, 10, eps0=2.0, method=name)
    assert payload["epsilon"]["tight"] < min(payload["epsilon"]["advanced"], payload["epsilon"]["basic"])
    table = CliRunner().invoke(app, ["compose", "--eps0", "2", "--n", "5000", "--delta", "1e-6", "--rounds", "10", "--method", "basic"])
    assert table.exit_code == 0 and "basic" in table.output and "tight" not in table.output


def test_local_budget_over_rounds_is_the_composed_inverse():
    result = run_cli("local-budget", "--target", "1", "--n", "5000", "--delta", "1e-6", "--rounds", "10", "--composition", "basic", "--json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload == {"local_epsilon": composed_local_epsilon(1.0, 5_000, 1e-6, 10, method="basic"), "method": "basic composition of 10 rounds"}


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["amplify", "--eps0", "1", "--n", "1000", "--delta", "2"], "delta"),
        (["amplify", "--eps0", "-1", "--n", "1000", "--delta", "1e-6"], "eps0"),
        (["amplify", "--eps0", "1", "--n", "0", "--delta", "1e-6"], "n must be"),
        (["amplify", "--eps0", "1", "--n", "1000", "--delta", "1e-6", "--method", "nope"], "unknown bound method"),
        (["amplify", "--eps0", "1", "--n", "1000", "--delta", "1e-6", "--randomizer", "nope"], "unknown randomizer"),
        (["local-budget", "--target", "0.5", "--n", "1000", "--delta", "0"], "delta"),
        (["local-budget", "--target", "0.5", "--n", "1000", "--delta", "1e-6", "--randomizer", "nope"], "unknown randomizer"),
        (["local-budget", "--target", "0.5", "--n", "1000", "--delta", "1e-6", "--rounds", "0"], "--rounds must be"),
        (["local-budget", "--target", "0.5", "--n", "1000", "--delta", "1e-6", "--rounds", "3", "--composition", "x"], "composition method"),
        (["compose", "--eps0", "1", "--n", "1000", "--delta", "1e-6", "--rounds", "0"], "--rounds must be"),
        (["compose", "--eps0", "1", "--n", "1000", "--delta", "1e-6", "--rounds", "3", "--method", "x"], "unknown composition method"),
        (["compose", "--eps0", "0", "--n", "1000", "--delta", "1e-6", "--rounds", "3"], "eps0"),
    ],
)
def test_bad_input_prints_one_error_line_and_exits_2(args, fragment):
    result = run_cli(*args)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and fragment in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_amplification_bounds_experiment_quick_run(tmp_path):
    import csv

    result = run_cli("experiment", "run", "amplification-bounds", "--quick", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    target = tmp_path / "amplification-bounds"
    rows = list(csv.DictReader((target / "results.csv").open()))
    assert list(rows[0]) == ["method", "eps0", "n", "delta", "epsilon", "seconds"]
    methods = available_methods()
    assert {r["method"] for r in rows} == set(methods)
    assert {float(r["eps0"]) for r in rows} == {0.25, 0.5, 1.0, 2.0, 4.0, 6.0}
    by_point: dict = {}
    for r in rows:
        assert float(r["delta"]) == pytest.approx(0.01 / int(r["n"]))
        by_point.setdefault((r["eps0"], r["n"]), {})[r["method"]] = float(r["epsilon"])
    for point, values in by_point.items():
        gap = values["variation-ratio"] - values["variation-ratio-lower"]
        assert gap >= 0
        for name, b in methods.items():
            if b.kind == "upper":
                assert values["variation-ratio"] <= values[name] + gap, (point, name)
    assert (target / "figure.png").stat().st_size > 10_000
    summary = (target / "summary.md").read_text()
    assert "| variation-ratio | upper |" in summary and "eps0=6" in summary
    assert math.isfinite(by_point[("0.25", "10000")]["erlingsson"])
