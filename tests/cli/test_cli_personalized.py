"""``shuffledp personalized`` (issue 10): JSON rows agree with the library; bad values exit 2."""

from __future__ import annotations

import json

import numpy as np
from typer.testing import CliRunner

from shuffledp.accounting.personalized import (
    MAX_DISTINCT_BUDGETS,
    personalized_shuffle_epsilon,
    personalized_shuffle_epsilons,
)
from shuffledp.cli import app
from shuffledp.cli._output import number
from shuffledp.protocols.personalized import table3_budgets

runner = CliRunner()


def _strict(text):
    """json.loads refusing NaN and Infinity (not JSON)."""

    def refuse(name):
        raise ValueError(f"not strict JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def _grid(given, step):
    """Budgets rounded up to the --step grid, each grid point as written (0.15, not 0.15000000000000002)."""
    budgets = np.round(np.ceil(given / step) * step, 2)
    assert np.all(budgets >= given)
    return budgets


def test_json_rows_match_the_library():
    result = runner.invoke(
        app,
        ["personalized", "--distribution", "uniform1", "--n", "3000", "--delta", "1e-4", "--step", "0.05", "--json"],
    )
    assert result.exit_code == 0, result.output
    out = _strict(result.stdout)
    given = table3_budgets("uniform1", 3000, np.random.default_rng(0))
    budgets = _grid(given, 0.05)
    values, upper = personalized_shuffle_epsilons(budgets, 1e-4)
    assert [r["budget"] for r in out["rows"]] == values.tolist()
    given_max = [given[budgets == v].max() for v in values]
    assert [r["upper"] for r in out["rows"]] == np.minimum(upper, given_max).tolist()
    assert [r["given_max"] for r in out["rows"]] == given_max
    assert all(r["lower"] <= r["upper"] <= r["weakest_budget"] * (1 + 1e-9) for r in out["rows"])


def test_bad_values_exit_2():
    for args in (
        ["--distribution", "gauss9", "--n", "10", "--delta", "0.1"],
        ["--distribution", "gauss1", "--n", "10", "--delta", "1.5"],
        ["--distribution", "gauss1", "--n", "1", "--delta", "0.1"],
    ):
        result = runner.invoke(app, ["personalized", *args])
        assert result.exit_code == 2


def test_budgets_file_text_and_npy_match_the_library(tmp_path):
    raw = table3_budgets("gauss2", 500, np.random.default_rng(3))
    text = tmp_path / "b.csv"
    text.write_text("\n".join(repr(float(b)) for b in raw) + "\n\n")  # a trailing blank line carries no budget
    npy = tmp_path / "b.npy"
    np.save(npy, raw)
    values, upper = personalized_shuffle_epsilons(_grid(raw, 0.05), 1e-3)
    upper = np.minimum(upper, [raw[_grid(raw, 0.05) == v].max() for v in values])
    for path in (text, npy):
        result = runner.invoke(
            app, ["personalized", "--budgets", str(path), "--delta", "1e-3", "--step", "0.05", "--json"]
        )
        assert result.exit_code == 0, result.output
        out = _strict(result.stdout)
        assert (
            out["inputs"]["n"] == 500
            and out["inputs"]["budgets"] == str(path)
            and out["inputs"]["distribution"] is None
        )
        assert [r["budget"] for r in out["rows"]] == values.tolist()
        assert [r["upper"] for r in out["rows"]] == upper.tolist()
        assert sum(r["count"] for r in out["rows"]) == 500


def _error_line(args):
    result = runner.invoke(app, ["personalized", *args, "--delta", "0.1"])
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def test_bad_budgets_files_name_the_file_and_line(tmp_path):
    cases = {
        "missing.txt": None,
        "empty.txt": "",
        "blank.txt": "\n \n",
        "word.txt": "0.5\nabc\n1\n",
        "zero.txt": "0.5\n1\n0\n",
        "negative.csv": "-1\n",
        "nan.txt": "0.5\nnan\n",
        "inf.txt": "0.5\n\ninf\n",
        "two_columns.csv": "0.5,0.7\n",
    }
    expected_line = {
        "word.txt": "line 2",
        "zero.txt": "line 3",
        "negative.csv": "line 1",
        "nan.txt": "line 2",
        "inf.txt": "line 3",
        "two_columns.csv": "line 1",
    }
    for name, content in cases.items():
        path = tmp_path / name
        if content is not None:
            path.write_text(content)
        line = _error_line(["--budgets", str(path)])
        assert line.startswith("error: --budgets: ") and str(path) in line, line
        if name in expected_line:
            assert expected_line[name] in line, line
    bad = tmp_path / "bad.npy"
    np.save(bad, np.array([0.5, 1.0, -0.2]))
    line = _error_line(["--budgets", str(bad)])
    assert str(bad) in line and "index 2" in line and "-0.2" in line


def test_budgets_and_distribution_are_exclusive_and_one_is_required(tmp_path):
    path = tmp_path / "b.txt"
    path.write_text("0.5\n1.0\n")
    assert "--budgets" in _error_line(["--budgets", str(path), "--distribution", "gauss1", "--n", "10"])
    assert "--budgets" in _error_line([])
    assert "--n" in _error_line(["--distribution", "gauss1"])
    assert "--n" in _error_line(["--budgets", str(path), "--n", "2"])
    one = tmp_path / "one.txt"
    one.write_text("0.5\n")
    assert "at least 2" in _error_line(["--budgets", str(one)])


def test_budgets_directory_and_fake_npy_say_what_they_are(tmp_path):
    line = _error_line(["--budgets", str(tmp_path)])
    assert "is a directory" in line and "no such file" not in line, line
    fake = tmp_path / "x.npy"
    fake.write_text("0.5\n1.0\n")
    line = _error_line(["--budgets", str(fake)])
    assert "not a valid .npy array file" in line and "pickle" not in line, line
    empty = tmp_path / "e.npy"
    empty.write_bytes(b"")
    assert "not a valid .npy array file" in _error_line(["--budgets", str(empty)])


def _laplace_file(tmp_path, victim):
    path = tmp_path / "laplace.txt"
    path.write_text(f"{victim}\n" + "0.2\n" * 999)
    return path


def test_laplace_budgets_are_used_as_given_not_rounded(tmp_path):
    # others all at 0.2: a victim at 0.191 is not cloned by them (light tails) and keeps about its own
    # budget; rounded up to 0.2 it would be shown 0.0049, a bound not proven for it
    path = _laplace_file(tmp_path, 0.191)
    result = runner.invoke(
        app, ["personalized", "--budgets", str(path), "--delta", "1e-3", "--family", "laplace", "--json"]
    )
    assert result.exit_code == 0, result.output
    out = _strict(result.stdout)
    assert out["inputs"]["step"] is None and [r["budget"] for r in out["rows"]] == [0.191, 0.2]
    assert [r["count"] for r in out["rows"]] == [1, 999]
    victim = out["rows"][0]
    assert victim["upper"] == personalized_shuffle_epsilon(0.191, np.full(999, 0.2), 1e-3, "laplace") > 0.18
    assert victim["upper"] > 10 * out["rows"][1]["upper"]  # more conservative, worse guarantee
    text = runner.invoke(
        app, ["personalized", "--budgets", str(path), "--delta", "1e-3", "--family", "laplace"], terminal_width=200
    )
    assert text.exit_code == 0 and "0.191" in text.stdout and "as given" in text.stdout
    assert "weakest: the bound at the largest budget, not proven for laplace" in " ".join(text.stdout.split())
    help_text = " ".join(runner.invoke(app, ["personalized", "--help"]).output.replace("│", " ").split())
    assert "laplace budgets are used as given" in help_text and "worse guarantee" in help_text
    line = _error_line(["--budgets", str(path), "--family", "laplace", "--step", "0.5"])  # would be ignored
    assert line.startswith("error: --step must come with --family binary-rr or k-rr") and "0.5" in line, line


def test_too_many_distinct_budgets_is_one_budgets_error(tmp_path):
    path = tmp_path / "many.txt"
    path.write_text("\n".join(repr(float(b)) for b in np.linspace(0.1, 1.0, MAX_DISTINCT_BUDGETS + 1)))
    line = _error_line(["--budgets", str(path), "--family", "laplace"])
    assert line.startswith(f"error: --budgets {path}: 20,001 distinct budgets") and "as given" in line, line
    line = _error_line(["--budgets", str(path), "--step", "1e-9"])  # binary-rr: rounding is the way out
    assert line.startswith("error: --budgets") and "--step" in line, line


def test_upper_is_capped_at_the_rows_largest_given_budget(tmp_path):
    path = tmp_path / "tiny.txt"
    path.write_text("0.000001\n0.5\n0.5\n0.7\n")
    for family in ("binary-rr", "k-rr"):
        result = runner.invoke(
            app, ["personalized", "--budgets", str(path), "--delta", "1e-3", "--family", family, "--json"]
        )
        assert result.exit_code == 0, result.output
        row = _strict(result.stdout)["rows"][0]
        assert row["budget"] == 0.01 and row["given_min"] == row["given_max"] == 1e-6 and row["upper"] == 1e-6


def test_json_is_strict_and_text_marks_missing_lower_and_eapes_below_lower(tmp_path):
    path = tmp_path / "b.txt"
    path.write_text("300\n300\n")  # one other user at 300: E-APES has no finite epsilon
    row = _strict(runner.invoke(app, ["personalized", "--budgets", str(path), "--delta", "1e-3", "--json"]).stdout)[
        "rows"
    ][0]
    assert row["eapes"] == "inf"
    for family in ("k-rr", "laplace"):
        result = runner.invoke(
            app,
            [
                "personalized",
                "--distribution",
                "gauss1",
                "--n",
                "200",
                "--delta",
                "1e-3",
                "--family",
                family,
                *(["--step", "0.1"] if family == "k-rr" else []),  # laplace refuses --step (budgets as given)
                "--json",
            ],
        )
        rows = _strict(result.stdout)["rows"]
        assert all(r["lower"] is None and r["eapes_below_lower"] is None for r in rows)
        text = runner.invoke(
            app,
            [
                "personalized",
                "--distribution",
                "gauss1",
                "--n",
                "200",
                "--delta",
                "1e-3",
                "--family",
                family,
                *(["--step", "0.1"] if family == "k-rr" else []),  # laplace refuses --step (budgets as given)
            ],
        )
        assert "nan" not in text.stdout and _table_rows(text.stdout)[0][4] == "-"
    star = tmp_path / "star.txt"
    star.write_text("0.01\n" * 99 + "5\n")  # a liberal victim among near-fair coins: E-APES understates
    result = runner.invoke(app, ["personalized", "--budgets", str(star), "--delta", "1e-6"], terminal_width=200)
    rows = _table_rows(result.stdout)
    assert rows[1][5].endswith("*") and not rows[0][5].endswith("*")
    lines = result.stdout.splitlines()
    assert any(line.startswith("* E-APES") and "below our certified lower bound" in line for line in lines)
    row = _strict(runner.invoke(app, ["personalized", "--budgets", str(star), "--delta", "1e-6", "--json"]).stdout)[
        "rows"
    ][1]
    assert row["eapes_below_lower"] is True


def _table_rows(text: str) -> list[list[str]]:
    """The cells of a rich table's body rows in ``text``."""
    return [[cell.strip() for cell in line.split("│")[1:-1]] for line in text.splitlines() if line.startswith("│")]


def test_the_table_is_a_rich_table_with_every_fact_and_the_notes_below():
    """One output style: personalized prints a rich table (as every command does), not hand-aligned columns."""
    result = runner.invoke(
        app, ["personalized", "--distribution", "uniform1", "--n", "300", "--delta", "1e-5", "--step", "0.1"],
        terminal_width=200,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    header = next(line for line in result.stdout.splitlines() if line.startswith("┃"))
    assert [c.strip() for c in header.split("┃")[1:-1]] == ["budget", "given max", "users", "upper", "lower",
                                                             "E-APES", "weakest"]  # fmt: skip
    rows = _table_rows(result.stdout)
    payload = _strict(runner.invoke(app, ["personalized", "--distribution", "uniform1", "--n", "300", "--delta", "1e-5",
                                          "--step", "0.1", "--json"]).stdout)["rows"]  # fmt: skip
    assert [row[0] for row in rows] == [number(r["budget"]) for r in payload]
    assert sum(int(row[2]) for row in rows) == 300
    assert "budget: given budgets rounded up to --step 0.1 (sound for binary-rr)" in " ".join(result.stdout.split())


def test_progress_never_reaches_stdout():
    result = runner.invoke(
        app, ["personalized", "--distribution", "uniform1", "--n", "100000", "--delta", "1e-5", "--step", "0.1"]
    )
    assert result.exit_code == 0, result.output
    header = next(line for line in result.stdout.splitlines() if "budget" in line)
    assert header.split("┃")[1].strip() == "budget" and "personalized:" not in result.stdout  # no spinner text


def test_rounding_stays_in_range_and_rows_stay_consistent(tmp_path):
    path = tmp_path / "ends.txt"
    path.write_text("1e-6\n0.5\n700\n")
    result = runner.invoke(app, ["personalized", "--budgets", str(path), "--delta", "1e-4", "--step", "0.3", "--json"])
    assert result.exit_code == 0, result.output
    out = _strict(result.stdout)
    assert [r["budget"] for r in out["rows"]][-1] == 700.0  # 700 is not rounded past 700
    assert out["inputs"]["seed"] is None
    for r in out["rows"]:
        assert r["lower"] <= r["upper"] <= r["given_max"] and r["weakest_budget"] <= 700.0
        assert r["eapes_above_budget"] == (r["eapes"] == "inf" or r["eapes"] > r["budget"])
    text = runner.invoke(app, ["personalized", "--budgets", str(path), "--delta", "1e-4"], terminal_width=200).stdout
    assert "^ E-APES is above the row's own local budget" in text


def test_budget_file_values_outside_the_range_name_the_line(tmp_path):
    path = tmp_path / "high.txt"
    path.write_text("0.5\n700.0001\n")
    line = _error_line(["--budgets", str(path)])
    assert line.endswith("line 2: a budget must be a number in [1e-6, 700]; got '700.0001'"), line
    path.write_text("9e-07\n0.5\n")
    assert "line 1" in _error_line(["--budgets", str(path)])
