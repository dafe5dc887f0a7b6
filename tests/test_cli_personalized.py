"""``shuffledp personalized`` (issue 10): JSON rows agree with the library; bad values exit 2."""

from __future__ import annotations

import json

import numpy as np
from typer.testing import CliRunner

from shuffledp.accounting.personalized import personalized_shuffle_epsilons
from shuffledp.cli import app
from shuffledp.protocols.personalized import table3_budgets

runner = CliRunner()


def test_json_rows_match_the_library():
    result = runner.invoke(app, ["personalized", "--distribution", "uniform1", "--n", "3000", "--delta", "1e-4", "--step", "0.05", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    budgets = np.ceil(table3_budgets("uniform1", 3000, np.random.default_rng(0)) / 0.05) * 0.05
    values, upper = personalized_shuffle_epsilons(budgets, 1e-4)
    assert [r["budget"] for r in out["rows"]] == values.tolist()
    assert [r["upper"] for r in out["rows"]] == upper.tolist()
    assert all(r["lower"] <= r["upper"] <= r["weakest_budget"] * (1 + 1e-9) for r in out["rows"])


def test_bad_values_exit_2():
    for args in (["--distribution", "gauss9", "--n", "10", "--delta", "0.1"],
                 ["--distribution", "gauss1", "--n", "10", "--delta", "1.5"],
                 ["--distribution", "gauss1", "--n", "1", "--delta", "0.1"]):
        result = runner.invoke(app, ["personalized", *args])
        assert result.exit_code == 2


def test_budgets_file_text_and_npy_match_the_library(tmp_path):
    raw = table3_budgets("gauss2", 500, np.random.default_rng(3))
    text = tmp_path / "b.csv"
    text.write_text("\n".join(repr(float(b)) for b in raw) + "\n\n")  # a trailing blank line carries no budget
    npy = tmp_path / "b.npy"
    np.save(npy, raw)
    values, upper = personalized_shuffle_epsilons(np.ceil(raw / 0.05) * 0.05, 1e-3)
    for path in (text, npy):
        result = runner.invoke(app, ["personalized", "--budgets", str(path), "--delta", "1e-3", "--step", "0.05", "--json"])
        assert result.exit_code == 0, result.output
        out = json.loads(result.output)
        assert out["n"] == 500 and out["budgets"] == str(path) and out["distribution"] is None
        assert [r["budget"] for r in out["rows"]] == values.tolist()
        assert [r["upper"] for r in out["rows"]] == upper.tolist()
        assert sum(r["count"] for r in out["rows"]) == 500


def _error_line(args):
    result = runner.invoke(app, ["personalized", *args, "--delta", "0.1"])
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def test_bad_budgets_files_name_the_file_and_line(tmp_path):
    cases = {"missing.txt": None, "empty.txt": "", "blank.txt": "\n \n", "word.txt": "0.5\nabc\n1\n",
             "zero.txt": "0.5\n1\n0\n", "negative.csv": "-1\n", "nan.txt": "0.5\nnan\n", "inf.txt": "0.5\n\ninf\n",
             "two_columns.csv": "0.5,0.7\n"}
    expected_line = {"word.txt": "line 2", "zero.txt": "line 3", "negative.csv": "line 1", "nan.txt": "line 2",
                     "inf.txt": "line 3", "two_columns.csv": "line 1"}
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
