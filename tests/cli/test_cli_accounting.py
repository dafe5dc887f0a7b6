"""The `amplify`, `local-budget` and `compose` CLI commands, checked against the library."""

import dataclasses
import json
import math
import re
import time

import pytest
from rich.console import Console
from typer.testing import CliRunner

from shuffledp.accounting.bounds import available_methods, shuffle_epsilon, shuffle_epsilon_lower
from shuffledp.accounting.composition import COMPOSITION_METHODS, composed_local_epsilon, composed_shuffle_epsilon
from shuffledp.accounting.inverse import local_epsilon
from shuffledp.cli import _output as cli_output
from shuffledp.cli import accounting as cli_accounting
from shuffledp.cli import app
from shuffledp.cli._output import number
from shuffledp.params import BlanketDecomposition, VariationRatio
from shuffledp.randomizers.registry import make_randomizer


def run_cli(*args: str):
    """The CLI in-process (fast); the real entry point is tested in tests/test_cli_errors.py."""
    return CliRunner().invoke(app, list(args), terminal_width=400)


def _table_cells(text: str) -> dict[str, str]:
    """A two-column rich table in ``text`` as {quantity: value}."""
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in text.splitlines() if line.startswith("│")]
    return {row[0]: row[1] for row in rows if len(row) == 2}


def test_amplify_json_has_every_bound_and_matches_the_library():
    result = run_cli("amplify", "--eps0", "1", "--n", "10000", "--delta", "1e-6", "--json")
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)  # exactly one JSON object on stdout
    assert set(payload) == {"inputs", "parameters", "upper", "lower", "seconds"}
    assert payload["inputs"] == {
        "eps0": 1.0,
        "n": 10_000,
        "delta": 1e-6,
        "randomizer": None,
        "dim": None,
        "method": "all",
    }
    methods = available_methods()
    assert set(payload["upper"]) == {m for m, b in methods.items() if b.kind == "upper"}
    assert set(payload["lower"]) == {m for m, b in methods.items() if b.kind == "lower"}
    assert set(payload["seconds"]) == {*methods, "parameters"}
    for name, value in payload["upper"].items():
        expected = shuffle_epsilon(10_000, 1e-6, eps0=1.0, method=name)
        assert value == expected if math.isfinite(expected) else value == "inf", (
            name
        )  # infinity is written "inf" in every command's JSON
    for name, value in payload["lower"].items():
        assert value == shuffle_epsilon_lower(10_000, 1e-6, eps0=1.0, method=name)
    assert payload["upper"]["erlingsson"] == "inf"  # eps0 = 1 is outside its regime
    assert all(s >= 0 for s in payload["seconds"].values())
    assert max(payload["lower"].values()) <= min(v for v in payload["upper"].values() if v != "inf")


def test_amplify_single_method_and_table():
    result = run_cli("amplify", "--eps0", "2", "--n", "5000", "--delta", "1e-7", "--method", "pic-eq1", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {
        "inputs": {"eps0": 2.0, "n": 5000, "delta": 1e-7, "randomizer": None, "dim": None, "method": "pic-eq1"},
        "parameters": {"kind": "VariationRatio", **dataclasses.asdict(VariationRatio.from_ldp(2.0))},
        "upper": {"pic-eq1": shuffle_epsilon(5000, 1e-7, eps0=2.0, method="pic-eq1")},
        "lower": {},
        "seconds": {
            "parameters": pytest.approx(json.loads(result.stdout)["seconds"]["parameters"]),
            "pic-eq1": pytest.approx(json.loads(result.stdout)["seconds"]["pic-eq1"]),
        },
    }
    table = CliRunner().invoke(app, ["amplify", "--eps0", "2", "--n", "5000", "--delta", "1e-7"], terminal_width=200)
    assert table.exit_code == 0, table.output
    for name in available_methods():
        assert name in table.output
    assert "inf: the bound certifies nothing here (outside its regime)" in table.output  # erlingsson at eps0 = 2


def test_amplify_with_a_randomizer_uses_its_parameters(monkeypatch):
    result = run_cli(
        "amplify", "--eps0", "3", "--n", "10000", "--delta", "1e-6", "--randomizer", "minkowski", "--dim", "2", "--json"
    )
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["inputs"]["randomizer"] == "minkowski" and payload["inputs"]["dim"] == 2
    params = make_randomizer("minkowski", 3.0, dim=2).amplification_parameters()
    assert isinstance(params, BlanketDecomposition)
    assert payload["upper"]["variation-ratio"] == shuffle_epsilon(10_000, 1e-6, params=params)
    # generic-only bounds are still reported, at the randomizer's eps0
    assert payload["upper"]["clones"] == shuffle_epsilon(10_000, 1e-6, eps0=3.0, method="clones")
    assert payload["upper"]["variation-ratio"] < payload["upper"]["stronger-clones"]  # its own beta < tanh(eps0/2)
    # the closed form reads (p, beta, q): the decomposition is priced at the generic eps0-LDP parameters
    assert payload["upper"]["variation-ratio-closed-form"] == shuffle_epsilon(
        10_000, 1e-6, eps0=3.0, method="variation-ratio-closed-form"
    )
    # no lower bound is offered for a randomizer's own parameters
    assert payload["lower"] == {"variation-ratio-lower": None}
    monkeypatch.setattr(cli_output, "console", Console(width=300))  # one line per row (table() prints through it)
    table = run_cli(
        "amplify", "--eps0", "3", "--n", "10000", "--delta", "1e-6", "--randomizer", "minkowski", "--dim", "2"
    )
    assert table.exit_code == 0, table.stderr
    assert "minkowski: three-class decomposition (own beta, common ratio)" in table.output
    assert "-: no lower bound is offered for a randomizer's own parameters" in table.output


def test_amplify_seconds_include_building_the_randomizers_parameters(monkeypatch):
    """Building the parameters (Laplace at dim 10,000 took a minute) is timed on its own, not hidden."""
    build = cli_accounting._local_parameters

    def slow_build(*args):
        time.sleep(0.3)
        return build(*args)

    monkeypatch.setattr(cli_accounting, "_local_parameters", slow_build)
    args = ["amplify", "--eps0", "2", "--n", "1000", "--delta", "1e-6", "--randomizer", "laplace", "--dim", "3"]
    payload = json.loads(run_cli(*args, "--json").stdout)
    assert payload["seconds"]["parameters"] >= 0.3  # beside each bound's own seconds
    monkeypatch.setattr(cli_output, "console", Console(width=300))
    built = re.search(r"built in ([0-9.e+-]+) s", run_cli(*args).output)  # the table says it too
    assert built and float(built.group(1)) >= 0.3


def test_amplify_json_has_the_parameters_it_priced_with():
    args = ["amplify", "--eps0", "2", "--n", "1000", "--delta", "1e-6", "--method", "variation-ratio", "--json"]
    own = json.loads(run_cli(*args, "--randomizer", "laplace", "--dim", "3").stdout)["parameters"]
    params = make_randomizer("laplace", 2.0, dim=3).amplification_parameters()
    assert own == {
        "kind": "BlanketDecomposition",
        "eps0": 2.0,
        "beta": params.beta,
        "common_ratio": params.common_ratio,
    }
    generic = json.loads(run_cli(*args).stdout)["parameters"]
    vr = VariationRatio.from_ldp(2.0)
    assert generic == {"kind": "VariationRatio", "p": vr.p, "beta": vr.beta, "q0": vr.q0, "q1": vr.q1}


def test_amplify_table_keeps_method_names_whole_at_80_columns(monkeypatch):
    monkeypatch.setattr(cli_output, "console", Console(width=80))
    result = run_cli("amplify", "--eps0", "2", "--n", "10000", "--delta", "1e-6", "--randomizer", "subset_exponential")
    assert result.exit_code == 0, result.stderr
    assert max(len(line) for line in result.output.splitlines()) <= 80
    names = {line.split()[0] for line in result.output.splitlines()[3:] if line.split() and line.split()[0] != "│"}
    assert set(available_methods()) <= names
    assert "…" not in result.output  # nothing is cut off


def test_dim_help_says_what_it_means_for_each_randomizer():
    text = " ".join(CliRunner().invoke(app, ["amplify", "--help"], env={"COLUMNS": "400"}).stdout.split())
    assert "the number of categories k for krr, subset_exponential, unary" in text
    assert "the largest input (inputs 0..dim) for geometric" in text
    assert "the dimension for laplace, minkowski" in text
    assert "refused with binary_rr (no size)" in text


def test_local_budget_round_trips_and_reports_what_it_achieves():
    result = run_cli("local-budget", "--target", "0.5", "--n", "1e4", "--delta", "1e-6", "--json")
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    value = local_epsilon(0.5, 10_000, 1e-6)
    assert payload["local_epsilon"] == value and payload["method"] == "variation-ratio"
    assert payload["achieved_epsilon"] == shuffle_epsilon(10_000, 1e-6, eps0=value) <= 0.5
    assert payload["achieved_epsilon"] >= 0.5 * (1 - 1e-6)  # the target, not a cap, stopped the search
    assert payload["randomizer"] == "generic" and payload["limited_by"] == "target"
    assert payload["inputs"] == {
        "target": 0.5,
        "n": 10_000,
        "delta": 1e-6,
        "randomizer": None,
        "dim": None,
        "method": "variation-ratio",
        "rounds": 1,
        "composition": "tight",
        "max_epsilon": 50.0,
    }
    text = run_cli("local-budget", "--target", "0.5", "--n", "10000", "--delta", "1e-6")
    cells = _table_cells(text.stdout)  # one output style: a rich table, every fact the sentences gave
    assert cells["local epsilon"] == number(value) and cells["randomizer"] == "any eps0-LDP randomizer"
    assert cells["method"] == "variation-ratio" and cells["target"] == "0.5" and cells["delta"] == "1e-6"
    assert cells["shuffled epsilon at this budget"] == number(payload["achieved_epsilon"]) and cells["n"] == "10000"
    assert "note:" not in text.stdout


def test_local_budget_says_when_the_answer_is_the_search_cap():
    # n = 10^4 cannot amplify eps0 = 5 below 0.3, but a target of 100 is met by any eps0 <= the cap
    result = run_cli(
        "local-budget", "--target", "100", "--n", "10000", "--delta", "1e-6", "--max-epsilon", "5", "--json"
    )
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["local_epsilon"] == 5.0 and payload["limited_by"] == "search-cap"
    assert payload["achieved_epsilon"] == shuffle_epsilon(10_000, 1e-6, eps0=5.0) < 100
    text = run_cli("local-budget", "--target", "100", "--n", "10000", "--delta", "1e-6", "--max-epsilon", "5")
    assert "search cap (--max-epsilon 5)" in text.stdout


def test_local_budget_says_when_the_answer_is_a_regime_edge():
    # Erlingsson et al.'s Theorem 7 needs eps0 < 1/2: eps = 12 eps0 sqrt(log(1/delta)/n) = 0.22 there, below the target
    result = run_cli(
        "local-budget", "--target", "0.5", "--n", "10000", "--delta", "1e-6", "--method", "erlingsson", "--json"
    )
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["limited_by"] == "regime-edge"
    assert payload["local_epsilon"] < 0.5 and payload["local_epsilon"] == pytest.approx(0.5, rel=1e-5)
    assert payload["achieved_epsilon"] == pytest.approx(
        12 * payload["local_epsilon"] * math.sqrt(math.log(1e6) / 1e4), rel=1e-12
    )


def test_local_budget_with_a_randomizer():
    result = run_cli(
        "local-budget", "--target", "0.5", "--n", "10000", "--delta", "1e-6", "--randomizer", "minkowski", "--json"
    )
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["randomizer"] == "minkowski"
    assert payload["local_epsilon"] >= local_epsilon(0.5, 10_000, 1e-6)  # tighter parameters


def test_compose_json_matches_the_library_and_orders_the_methods():
    result = run_cli("compose", "--eps0", "2", "--n", "5000", "--delta", "1e-6", "--rounds", "10", "--json")
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert set(payload) == {"inputs", "epsilon", "seconds", "best", "reasons"} and set(payload["epsilon"]) == set(
        COMPOSITION_METHODS
    )
    assert payload["inputs"] == {
        "eps0": 2.0,
        "n": 5000,
        "delta": 1e-6,
        "rounds": 10,
        "randomizer": None,
        "dim": None,
        "method": "all",
    }
    for name, value in payload["epsilon"].items():
        assert value == composed_shuffle_epsilon(5_000, 1e-6, 10, eps0=2.0, method=name)
    assert payload["epsilon"]["tight"] < min(payload["epsilon"]["advanced"], payload["epsilon"]["basic"])
    table = CliRunner().invoke(
        app, ["compose", "--eps0", "2", "--n", "5000", "--delta", "1e-6", "--rounds", "10", "--method", "basic"]
    )
    assert table.exit_code == 0 and "basic" in table.output and "tight" not in table.output


def test_local_budget_over_rounds_is_the_composed_inverse():
    result = run_cli(
        "local-budget",
        "--target",
        "1",
        "--n",
        "5000",
        "--delta",
        "1e-6",
        "--rounds",
        "10",
        "--composition",
        "basic",
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    value = composed_local_epsilon(1.0, 5_000, 1e-6, 10, method="basic")
    assert payload["local_epsilon"] == value and payload["method"] == "basic composition of 10 rounds"
    assert payload["achieved_epsilon"] == composed_shuffle_epsilon(5_000, 1e-6, 10, eps0=value, method="basic") <= 1.0
    assert payload["inputs"]["rounds"] == 10 and payload["inputs"]["max_epsilon"] == 20.0


def test_amplification_bounds_experiment_quick_run(tmp_path):
    import csv

    result = run_cli("experiment", "run", "amplification-bounds", "--quick", "--out", str(tmp_path))
    assert result.exit_code == 0, result.stderr
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


def test_compose_names_the_best_method_and_says_why_one_certifies_nothing():
    payload = json.loads(
        run_cli("compose", "--eps0", "2", "--n", "10000", "--delta", "2e-7", "--rounds", "80", "--json").stdout
    )
    assert payload["best"] == "tight" and payload["reasons"] == {}
    assert payload["epsilon"]["tight"] == min(payload["epsilon"].values())
