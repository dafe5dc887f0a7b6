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
