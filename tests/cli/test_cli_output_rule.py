"""One output rule across commands: strict JSON with shortest floats and infinity as "inf", tables on a
terminal (no Python None), and progress on stderr for every command that can take more than a second."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from shuffledp.cli import _output, app

runner = CliRunner()


def _strict(text: str):
    def refuse(name):
        raise ValueError(f"not strict JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def test_infinity_is_the_string_inf_in_every_json():
    amplify = _strict(runner.invoke(app, ["amplify", "--eps0", "1", "--n", "1000", "--delta", "1e-6", "--json"]).stdout)
    assert amplify["upper"]["erlingsson"] == "inf"  # outside its regime: was null
    assert (
        _output.json_text({"x": float("inf"), "y": float("-inf"), "z": float("nan")})
        == '{"x": "inf", "y": "-inf", "z": null}'
    )


def test_round_json_writes_an_infinite_epsilon_as_inf():
    from shuffledp.protocols.pic.round import _json_safe

    assert _json_safe({"epsilon_c": float("inf"), "eq1": None}) == {"epsilon_c": "inf", "eq1": None}


def test_personalized_budgets_are_written_as_the_step_grid():
    result = runner.invoke(
        app, ["personalized", "--distribution", "uniform1", "--n", "300", "--delta", "1e-5", "--step", "0.1", "--json"]
    )
    assert result.exit_code == 0, result.output
    rows = _strict(result.stdout)["rows"]
    assert [r["budget"] for r in rows] == [round(0.1 * k, 1) for k in range(1, len(rows) + 1)]
    assert "0.7000000000000001" not in result.stdout and "0.30000000000000004" not in result.stdout
    assert all(r["given_max"] <= r["budget"] for r in rows)  # still rounded up


def test_metric_epsilon_prints_a_table_and_strict_json():
    args = [
        "metric",
        "epsilon",
        "--mechanism",
        "rr-shuffle",
        "--n",
        "30",
        "--delta",
        "1e-4",
        "--p",
        "0.01",
        "--k",
        "10",
    ]
    text = runner.invoke(app, args, terminal_width=200).stdout
    assert "None" not in text and "┃ quantity" in text
    assert "epsilon_theorem_3_1 " in text and "│ -" in text  # the theorem does not apply: '-', not None
    out = _strict(runner.invoke(app, [*args, "--json"]).stdout)
    assert out["epsilon_theorem_3_1"] is None and "epsilon_theorem_3_1_reason" in out


class _Recorder:
    messages: list[str] = []

    def __init__(self, message: str, **_):
        self.messages.append(message)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def update(self, message: str) -> None:
        self.messages.append(message)


@pytest.mark.parametrize(
    "args,expected",
    [
        (
            ["metric", "local-epsilon", "--target", "0.3", "--n", "50", "--delta", "1e-4", "--k", "5"],
            "metric local-epsilon",
        ),
        (
            [
                "metric",
                "epsilon",
                "--mechanism",
                "geo-shuffle",
                "--n",
                "50",
                "--delta",
                "1e-4",
                "--eps-geo",
                "0.5",
                "--k",
                "5",
            ],
            "metric epsilon",
        ),
        (
            ["segmented", "optimize", "--levels", "0.5,1", "--counts", "100,100", "--d", "8", "--s", "1", "--m", "1"],
            "segmented",
        ),
        (["personalized", "--distribution", "uniform1", "--n", "100", "--delta", "1e-5"], "personalized"),
        (["amplify", "--eps0", "1", "--n", "1000", "--delta", "1e-6", "--method", "clones"], "computing clones"),
        (
            ["compose", "--eps0", "1", "--n", "1000", "--delta", "1e-6", "--rounds", "2", "--method", "basic"],
            "composing",
        ),
        (["local-budget", "--target", "0.5", "--n", "1000", "--delta", "1e-6"], "searching the local epsilon"),
    ],
)
def test_long_commands_report_progress_on_stderr(args, expected, monkeypatch):
    """Each command wraps its computation in the stderr spinner (shown after a second, terminals only)."""
    _Recorder.messages = []
    monkeypatch.setattr(_output, "DelayedStatus", _Recorder)
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert any(expected in m for m in _Recorder.messages), _Recorder.messages
