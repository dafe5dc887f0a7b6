"""``shuffledp segmented optimize``: JSON agrees with the API; bad options are one named line, status 2."""

import json

import pytest
from typer.testing import CliRunner

from shuffledp.cli import app
from shuffledp.cli._output import number

BASE = ["segmented", "optimize", "--levels", "0.5,1,2", "--counts", "250,500,250", "--d", "32", "--s", "2", "--m", "1"]


def _with(option, value):
    args = list(BASE)
    if option in args:
        args[args.index(option) + 1] = value
    else:
        args += [option, value]
    return args


def test_json_matches_the_api():
    args = [
        "segmented",
        "optimize",
        "--levels",
        "0.5,1",
        "--counts",
        "500,500",
        "--d",
        "32",
        "--s",
        "1",
        "--m",
        "1",
        "--json",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["m"] == 1.0 and out["m_range"] is None and out["n_users"] == 1000  # results beside "inputs"
    assert all(eps <= level for eps, level in zip(out["epsilons"], [0.5, 1.0]))
    assert out["lambdas"] == sorted(out["lambdas"]) and out["lambdas"][0] > 0 and out["lambdas"][-1] <= 1
    assert out["inputs"]["delta"] == pytest.approx(1e-5)


def test_text_is_rich_tables_with_every_fact_of_the_json():
    """One output style: a summary table and one row per level (not key=value lines)."""
    args = ["segmented", "optimize", "--levels", "0.5,1", "--counts", "500,500", "--d", "32", "--s", "1", "--m", "1"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    out = json.loads(CliRunner().invoke(app, [*args, "--json"]).output)
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in result.output.splitlines() if line.startswith("│")]
    summary = {row[0]: row[1] for row in rows if len(row) == 2}
    assert (
        summary["n"] == "1000" and summary["m"] == number(out["m"]) and summary["MSE bound"] == number(out["mse_bound"])
    )
    assert summary["d"] == "32" and summary["s"] == "1" and summary["delta"] == number(out["inputs"]["delta"])
    levels = [row for row in rows if len(row) == 4]
    assert levels == [[number(level), "500", number(lam, 9), number(eps, 9)]
                      for level, lam, eps in zip((0.5, 1.0), out["lambdas"], out["epsilons"])]  # fmt: skip
    assert "=" not in result.output


def test_a_tiny_level_is_optimized_not_a_traceback():
    """Issue 16: --levels 1e-7 ended in 'ValueError: math domain error' (the accountant's group search)."""
    args = ["segmented", "optimize", "--levels", "1e-7", "--counts", "1250", "--d", "100", "--s", "4", "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert 0.0 < json.loads(result.output)["epsilons"][0] <= 1e-7


@pytest.mark.parametrize(
    "option,value",
    [
        ("--levels", "0.5,x,2"),
        ("--levels", "nan"),
        ("--levels", "0,1"),
        ("--levels", "2,1,0.5"),
        ("--levels", ""),
        ("--counts", "1,2"),
        ("--counts", "1,0,3"),
        ("--counts", "1,2.5,3"),
        ("--counts", "1e308,1,1"),
        ("--d", "1"),
        ("--d", "abc"),
        ("--s", "0"),
        ("--s", "64"),
        ("--m", "0"),
        ("--m", "-1"),
        ("--m", "inf"),
        ("--m", "1e9"),
        ("--delta", "0"),
        ("--delta", "1.5"),
    ],
)
def test_bad_option_is_one_named_line(option, value):
    result = CliRunner().invoke(app, _with(option, value))
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and option in lines[0], result.output
