"""Every bad command-line input ends in one named error line and exit status 2 (issue 6, deliverable 5).

The CLI runs in-process (typer's CliRunner calls the same ``main`` as the console
script); one test runs the real ``python -m shuffledp`` entry point.  Rows of
:data:`EDGE_ROWS` are *valid* inputs at the edge of float64: they must give a number
or a one-line error, never a traceback.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from shuffledp.cli import app

#: A fast, valid invocation of every command; each row changes one option of it.
BASE = {
    "amplify": ["amplify", "--eps0", "1", "--n", "1000", "--delta", "1e-6", "--method", "pic-eq1"],
    "local-budget": ["local-budget", "--target", "0.5", "--n", "1000", "--delta", "1e-6", "--method", "pic-eq1"],
    "compose": ["compose", "--eps0", "1", "--n", "1000", "--delta", "1e-6", "--rounds", "2", "--method", "basic"],
    "experiment run": ["experiment", "run", "table7", "--quick"],
    "reproduce": ["reproduce", "--quick", "--only", "table7"],
}

NOT_A_NUMBER = ["nan", "inf", "-inf", "abc", ""]
#: option -> values that must be refused (beside NOT_A_NUMBER)
EPSILON_BAD = ["-1", "0", "-0", "1e-300", "5e-324"]
DELTA_BAD = ["-1", "0", "1", "1.5", "1e308", "5e-325"]
COUNT_BAD = ["-1", "0", "1.5", "1e308", "2**70", "1e1000000000", "9007199254740993"]
SEED_BAD = ["-1", "1.5", "1e308", "2**70", str(2**70), str(2**64)]

NUMERIC_OPTIONS = {
    "amplify": {"--eps0": EPSILON_BAD, "--n": COUNT_BAD, "--delta": DELTA_BAD, "--dim": COUNT_BAD},
    "local-budget": {
        "--target": EPSILON_BAD,
        "--n": COUNT_BAD,
        "--delta": DELTA_BAD,
        "--dim": COUNT_BAD,
        "--rounds": COUNT_BAD,
        "--max-epsilon": EPSILON_BAD,
    },
    "compose": {
        "--eps0": EPSILON_BAD,
        "--n": COUNT_BAD,
        "--delta": DELTA_BAD,
        "--rounds": COUNT_BAD,
        "--dim": COUNT_BAD,
    },
    "experiment run": {"--seed": SEED_BAD},
    "reproduce": {"--seed": SEED_BAD},
}


def with_option(args: list[str], option: str, value: str) -> list[str]:
    """``args`` with ``option`` set to ``value`` (replaced if present, else appended)."""
    args = list(args)
    if option in args:
        args[args.index(option) + 1] = value
    else:
        args += [option, value]
    return args


def numeric_rows():
    for command, options in NUMERIC_OPTIONS.items():
        for option, bad in options.items():
            for value in NOT_A_NUMBER + bad:
                yield pytest.param(with_option(BASE[command], option, value), option, id=f"{command} {option}={value}")


OTHER_ROWS = [
    # unknown names, from the registries
    (with_option(BASE["amplify"], "--method", "nope"), "--method"),
    (with_option(BASE["amplify"], "--randomizer", "nope"), "--randomizer"),
    (with_option(BASE["local-budget"], "--method", "nope"), "--method"),
    (
        with_option(BASE["local-budget"], "--method", "variation-ratio-lower"),
        "--method",
    ),  # a lower bound cannot be inverted
    (with_option(BASE["local-budget"], "--randomizer", "nope"), "--randomizer"),
    (with_option(BASE["local-budget"], "--composition", "nope"), "--composition"),
    (with_option(BASE["compose"], "--method", "nope"), "--method"),
    (with_option(BASE["compose"], "--randomizer", "nope"), "--randomizer"),
    (["experiment", "run", "nope"], "experiment"),
    (with_option(BASE["reproduce"], "--only", "nope"), "only"),
    # a size the randomizer refuses: the message names the options that built it
    (with_option(with_option(BASE["amplify"], "--randomizer", "krr"), "--dim", "1"), "--dim"),
    (with_option(with_option(BASE["local-budget"], "--randomizer", "krr"), "--dim", "1"), "--dim"),
    (with_option(with_option(BASE["compose"], "--randomizer", "planar_laplace"), "--dim", "3"), "--dim"),
    # --dim with a randomizer that has no size: refused, naming the ones that take it
    (with_option(with_option(BASE["amplify"], "--randomizer", "binary_rr"), "--dim", "50"), "--dim"),
    (with_option(with_option(BASE["local-budget"], "--randomizer", "binary_rr"), "--dim", "50"), "--dim"),
    (with_option(with_option(BASE["compose"], "--randomizer", "binary_rr"), "--dim", "50"), "--dim"),
    # the search interval of local-budget
    (with_option(BASE["local-budget"], "--max-epsilon", "0.0005"), "--max-epsilon"),
    # unwritable --out (a path under a file)
    (with_option(BASE["experiment run"], "--out", "/dev/null/x"), "out"),
    (with_option(BASE["reproduce"], "--out", "/dev/null/x"), "out"),
    # usage errors of the parser itself
    (BASE["amplify"][:5], "--delta"),  # missing option
    (BASE["amplify"] + ["--bogus"], "--bogus"),
    (["bogus-command"], "bogus-command"),
    (BASE["amplify"] + ["--json=yes"], "--json"),
]


def assert_one_line_error(result, fragment: str) -> None:
    assert "Traceback" not in result.stdout + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and fragment in lines[0], lines[0]
    assert re.search(r"must|allowed|available|missing|no such|does not take", lines[0]), lines[
        0
    ]  # says what is allowed
    assert_cli_error_style(lines[0])
    assert result.stdout == ""


def assert_cli_error_style(line: str) -> None:
    """The one style of every error line, click's usage errors too: ``error: `` then lower case, no closing period."""
    assert line.startswith("error: ") and not line.startswith(("error: Error", "Error")), line
    assert not re.match(r"error: [A-Z][a-z]", line), line  # "error: Missing option ..." was click's capital
    assert not re.search(r"\.( \(see '[^']*'\))?$", line), line


@pytest.mark.parametrize("args,fragment", [*numeric_rows(), *OTHER_ROWS])
def test_bad_input_is_one_named_error_line_with_status_2(args, fragment, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # experiment rows must never write into the repository
    result = CliRunner().invoke(app, args)
    assert_one_line_error(result, fragment)


def test_dim_is_refused_for_a_randomizer_without_a_size():
    result = CliRunner().invoke(app, [*BASE["amplify"], "--randomizer", "binary_rr", "--dim", "50"])
    assert_one_line_error(result, "--dim does not apply to --randomizer binary_rr (it has no size)")
    assert "allowed with --randomizer geometric, krr, laplace" in result.stderr
    ok = CliRunner().invoke(app, [*BASE["amplify"], "--randomizer", "binary_rr", "--json"])  # no --dim: fine
    assert ok.exit_code == 0 and '"dim": null' in ok.stdout


def test_eps0_below_float_resolution_names_eps0_not_an_internal_parameter():
    result = CliRunner().invoke(app, with_option(BASE["amplify"], "--eps0", "1e-300"))
    assert_one_line_error(result, "--eps0 must be a number in [1e-6, 700]; got '1e-300'")
    assert "p must be" not in result.stderr


def test_error_lines_are_not_wrapped_at_the_terminal_width():
    result = CliRunner().invoke(app, with_option(BASE["amplify"], "--method", "nope"), terminal_width=40)
    assert_one_line_error(result, "allowed: all, ")
    assert "variation-ratio-closed-form" in result.stderr


def test_the_installed_entry_point_prints_one_line_and_exits_2():
    proc = subprocess.run(
        [sys.executable, "-m", "shuffledp", "amplify", "--eps0", "nan", "--n", "1000", "--delta", "1e-6"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"COLUMNS": "30", "PATH": ""},  # a narrow terminal must not wrap the line
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "error: --eps0 must be a number in [1e-6, 700]; got 'nan' (see 'python -m shuffledp amplify --help')"
    ]


# --- valid inputs at the edge: a number, or one line with status 2 -------------------

EDGE_ROWS = [
    pytest.param(["amplify", "--eps0", "800", "--n", "10000", "--delta", "1e-6"], id="amplify eps0=800"),
    pytest.param(["amplify", "--eps0", "1e308", "--n", "10000", "--delta", "1e-6"], id="amplify eps0=1e308"),
    pytest.param(["amplify", "--eps0", "1", "--n", "10000", "--delta", "1e-300"], id="amplify delta=1e-300"),
    pytest.param(["amplify", "--eps0", "1", "--n", "10000", "--delta", "5e-324"], id="amplify delta=5e-324"),
    pytest.param(["amplify", "--eps0", "23.35", "--n", "10000", "--delta", "1e-6"], id="amplify eps0=23.35"),
    pytest.param(
        ["compose", "--eps0", "800", "--n", "10000", "--delta", "1e-6", "--rounds", "2"], id="compose eps0=800"
    ),
    pytest.param(
        ["compose", "--eps0", "1", "--n", "10000", "--delta", "1e-300", "--rounds", "2"], id="compose delta=1e-300"
    ),
    pytest.param(
        ["local-budget", "--target", "1e308", "--n", "10000", "--delta", "1e-6", "--max-epsilon", "1e308"],
        id="local-budget max-epsilon=1e308",
    ),
    pytest.param(
        ["amplify", "--eps0", "2.220446049250313e-16", "--n", "1000", "--delta", "1e-6", "--method", "pic-eq1"],
        id="smallest eps0",
    ),
    pytest.param(
        ["amplify", "--eps0", "1", "--n", "1e12", "--delta", "1e-6", "--method", "pic-eq1"], id="n=1e12 closed form"
    ),
    pytest.param(
        ["local-budget", "--target", "1e308", "--n", "1000", "--delta", "1e-6", "--method", "pic-eq1"], id="huge target"
    ),
    pytest.param(
        ["compose", "--eps0", "1", "--n", "1000", "--delta", "0.999999", "--rounds", "2", "--method", "basic"],
        id="delta near 1",
    ),
]


@pytest.mark.parametrize("args", EDGE_ROWS)
def test_valid_edge_input_gives_a_number_or_one_error_line(args):
    result = CliRunner().invoke(app, [*args, "--json"])
    assert "Traceback" not in result.stdout + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    if result.exit_code == 0:
        assert result.stdout.startswith("{") and result.stderr == ""
    else:
        assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_experiment_errors_name_the_options(tmp_path):
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    ran = CliRunner().invoke(app, ["experiment", "run", "table7", "--quick", "--out", str(not_a_folder)])
    assert ran.exit_code == 2 and ran.output.startswith("error: --out must be a writable directory"), ran.output
    chosen = CliRunner().invoke(app, ["reproduce", "--quick", "--only", "bogus", "--out", str(tmp_path / "r")])
    assert chosen.exit_code == 2 and chosen.output.startswith("error: --only: unknown experiment(s) 'bogus'")


def test_a_rounds_share_of_delta_below_the_floor_is_explained_in_options():
    args = ["local-budget", "--target", "0.01", "--n", "2", "--delta", "1e-300", "--rounds", "3"]
    result = CliRunner().invoke(app, [*args, "--composition", "basic"])
    assert result.exit_code == 2
    assert "basic composition divides --delta 1e-300 among the 3 rounds" in result.output
    assert "use a larger --delta or fewer --rounds" in result.output


#: Errors that quote an option's value as the user typed it, not as Python reformats it (2e-07, 10000000000000).
TYPED_ROWS = [
    (["compose", "--eps0", "1", "--n", "1000", "--delta", "2e-7", "--rounds", "20000", "--method", "tight"],
     "at --delta 2e-7 over --rounds 20000"),
    (["pic", "simulate", "--dataset", "synthetic", "--n", "1e13", "--task", "neighbors", "--randomizer", "minkowski",
      "--epsilon-c", "1", "--out", "unused"], "got 1e13"),
    (["segmented", "optimize", "--levels", "2,1", "--counts", "100,100", "--d", "8", "--s", "1", "--m", "1"],
     "--levels must be strictly increasing, got 2,1"),
]  # fmt: skip


@pytest.mark.parametrize("args,fragment", TYPED_ROWS)
def test_errors_quote_the_value_as_typed(args, fragment, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, args)
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert fragment in lines[0], lines[0]


#: Advice in command-line terms: the option or name the user gave, never click's doubled wording.
ADVICE_ROWS = [
    (["personalized", "foo", "--delta", "1e-4"], "no such command 'foo'"),
    (["personalized", "--k", "5", "--distribution", "uniform1", "--n", "100", "--delta", "1e-4"],
     "--k must come with --family k-rr"),
    (["personalized", "--family", "laplace", "--step", "0.05", "--distribution", "uniform1", "--n", "100",
      "--delta", "1e-4"], "--step must come with --family binary-rr or k-rr"),
    (BASE["local-budget"] + ["--composition", "advanced"], "--composition must come with --rounds 2 or more"),
    (["serve", "foo"], "ROLE: unknown role 'foo'; allowed: shuffler, server, bulletin, all"),
    (["experiment", "run", "foo"], "NAME: unknown experiment 'foo'; allowed: "),
    (["demo", "--data-root", "/nonexistent-clistyle"], "--data-root '/nonexistent-clistyle' must hold "),
]  # fmt: skip


@pytest.mark.parametrize("args,fragment", ADVICE_ROWS)
def test_errors_name_what_the_user_gave_in_cli_terms(args, fragment, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, args)
    assert_one_line_error(result, fragment)
    assert "Invalid value for" not in result.stderr and "Missing option" not in result.stderr
    if args[:2] == ["experiment", "run"]:
        assert "table7" in result.stderr and "--help" in result.stderr


def test_notes_quote_the_target_as_typed_and_name_the_search_cap_in_cli_terms():
    budget = CliRunner().invoke(app, ["local-budget", "--target", "1e6", "--n", "1000", "--delta", "1e-6"])
    assert budget.exit_code == 0 and re.search(r"│ target +│ 1e6 +│", budget.stdout), budget.stdout
    args = ["metric", "local-epsilon", "--target", "1e6", "--n", "50", "--delta", "1e-4", "--k", "5"]
    metric = " ".join(CliRunner().invoke(app, args).stdout.split())
    assert "eps_geo is the search's cap of 100" in metric and "--target 1e6 allows" in metric
    assert "MAX_EPSILON" not in metric
