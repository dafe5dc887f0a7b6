"""One output rule across commands: strict JSON with shortest floats and infinity as "inf", tables on a
terminal (no Python None), and progress on stderr for every command that can take more than a second."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import click
import numpy as np
import pytest
import typer
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


#: Values whose JSON form the one rule fixes: infinities, NaN, shortest round-trip floats, numpy scalars.
NUMBER_GRID = [math.inf, -math.inf, math.nan, 0.7, 7 * 0.1, 1e-300, 1e200, np.float64(0.7), np.int64(3), True, None]


def test_round_json_and_the_cli_json_write_numbers_by_one_function():
    from shuffledp._util import numbers
    from shuffledp.protocols.pic import round as R

    assert R.json_value is _output.json_value is numbers.json_value  # one function, not a copy in round.py
    assert _output.number is numbers.number  # tables too: the CLI re-exports the shared rule
    fields = dict(group_id=0, name="g", randomizer="krr", n_i=10, threshold=10, corrupted=0, exposure=0,
                  exposure_rule="none", n_prime_planned=10, delta=1e-6, local_epsilon=1.0)  # fmt: skip
    for value in NUMBER_GRID:
        written = R.GroupPrivacy(**fields, target_epsilon=value).to_json()["target_epsilon"]
        assert written == _output.json_value(value), value
        assert json.loads(_output.json_text({"v": value}))["v"] == written
    assert [_output.json_value(v) for v in NUMBER_GRID[:7]] == ["inf", "-inf", None, 0.7, 0.7000000000000001,
                                                                 1e-300, 1e200]  # fmt: skip


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
        (
            ["metric", "profile", "--mechanism", "geo-shuffle", "--n", "300", "--delta", "1e-2", "--k", "3"]
            + ["--eps-geo", "1.0"],
            "the curve: Proposition 3 at sum distances up to 900",  # the phase, not only the command's name
        ),
        (
            [
                "metric",
                "profile",
                "--mechanism",
                "rr-shuffle",
                "--n",
                "30",
                "--delta",
                "1e-4",
                "--p",
                "0.01",
                "--k",
                "1",
            ],
            "the uniform value: every pair of sums among 30 bits",
        ),
    ],
)
def test_long_commands_report_progress_on_stderr(args, expected, monkeypatch, tmp_path):
    """Each command wraps its computation in the stderr spinner (shown after a second, terminals only); metric
    profile says which phase it is in (a few seconds each at n = 10^3-10^4)."""
    monkeypatch.chdir(tmp_path)  # metric profile writes its plot to the working folder
    _Recorder.messages = []
    monkeypatch.setattr(_output, "DelayedStatus", _Recorder)
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert any(expected in m for m in _Recorder.messages), _Recorder.messages


#: Cheap arguments for every command that has --json (a command added with --json must be added here).
JSON_COMMANDS = {
    "amplify": ["--eps0", "1", "--n", "1000", "--delta", "1e-6", "--method", "clones"],
    "local-budget": ["--target", "0.5", "--n", "1000", "--delta", "1e-6", "--method", "fmt-closed-form"],
    "compose": ["--eps0", "1", "--n", "1000", "--delta", "1e-6", "--rounds", "2", "--method", "basic"],
    "metric epsilon": ["--mechanism", "rr-shuffle", "--n", "30", "--delta", "1e-4", "--p", "0.01", "--k", "10"],
    "metric local-epsilon": ["--target", "0.3", "--n", "50", "--delta", "1e-4", "--k", "5"],
    "metric profile": ["--mechanism", "rr-shuffle", "--n", "30", "--delta", "1e-4", "--p", "0.01", "--k", "5"],
    "personalized": ["--distribution", "uniform1", "--n", "100", "--delta", "1e-5"],
    "segmented optimize": ["--levels", "0.5,1", "--counts", "100,100", "--d", "8", "--s", "1", "--m", "1"],
    "pic simulate": [
        "--dataset",
        "synthetic",
        "--n",
        "30",
        "--task",
        "neighbors",
        "--k",
        "2",
        "--randomizer",
        "minkowski",
        "--epsilon-c",
        "1",
        "--out",
        "round",
        "--ideal",
    ],  # fmt: skip
    "experiment list": [],
    "demo": ["--seed", "1"],  # on fake services (_fake_demo_services): the real round takes half a minute
}


def _json_commands() -> dict[str, click.Command]:
    """Every command of the app with a --json option, by its path ("metric epsilon")."""
    found = {}

    def walk(command: click.Command, path: tuple[str, ...]) -> None:
        if any("--json" in p.opts for p in command.params):
            found[" ".join(path)] = command
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return found


_FAKE_URL, _FAKE_ROUND = "http://127.0.0.1:65001", "53686978abf1fa0e9daee31259793cb7"


def _fake_demo_services(monkeypatch) -> None:
    """`shuffledp demo` without processes or data: its services, client, data set and round are stand-ins."""
    import numpy as np

    import shuffledp.datasets
    import shuffledp.service.client
    import shuffledp.service.local
    import shuffledp.service.simulate
    from shuffledp.service.simulate import HttpRoundResult

    class Services:
        def __init__(self, folder, db_url=None):
            self.folder = folder

        def start_all(self):
            return None

        def url(self, role):
            return _FAKE_URL

        def token(self):
            return "token"

        def stop(self):
            return None

    class Client:
        def __init__(self, *args, **kwargs):
            return None

        async def __aenter__(self):
            return self

        async def __aexit__(self, *exc):
            return None

    async def run_round(sdk, groups, spec, rng, progress):
        for phase in ("enrolment", "submissions", "outputs"):
            progress(phase, 3, 3)
        ledger = [
            dict(group=g, local_epsilon=2.0, valid=3, n_prime=3, epsilon_c=math.inf, delta=1e-3) for g, _ in groups
        ]
        return HttpRoundResult(
            _FAKE_ROUND, "published", 6, {}, 6, True, 6, True, {"travel_cost": 1.0}, ledger, None, {}
        )

    users = np.zeros((3, 2))
    monkeypatch.setattr(
        shuffledp.datasets, "load_crowdsourcing", lambda *a, **k: SimpleNamespace(users=users, workers=users)
    )
    monkeypatch.setattr(shuffledp.service.local, "LocalServices", Services)
    monkeypatch.setattr(shuffledp.service.client, "AsyncPicServiceClient", Client)
    monkeypatch.setattr(shuffledp.service.simulate, "run_http_round", run_round)


def test_every_json_command_prints_its_inputs_beside_its_results(monkeypatch, tmp_path):
    """One --json shape (cli/_output.py): {"inputs": {option: value}, result fields...}, in every command."""
    monkeypatch.chdir(tmp_path)  # metric profile writes its plot to the working folder
    commands = _json_commands()
    assert set(commands) == set(JSON_COMMANDS), "a command with --json needs cheap arguments in JSON_COMMANDS"
    _fake_demo_services(monkeypatch)
    for path, args in JSON_COMMANDS.items():
        result = runner.invoke(app, [*path.split(), *args, "--json"])
        assert result.exit_code == 0, (path, result.output)
        out = _strict(result.stdout)
        options = {o.lstrip("-").replace("-", "_") for p in commands[path].params for o in p.opts}
        assert isinstance(out.get("inputs"), dict) and set(out["inputs"]) <= options, (path, out.get("inputs"))
        assert set(out) - {"inputs"}, f"{path}: no result beside the inputs"
        given = {option.lstrip("-").replace("-", "_") for option in args[::2]}
        assert given <= set(out["inputs"]), (path, given - set(out["inputs"]))  # every option given is echoed


def test_tables_print_infinity_as_inf_with_the_reason_in_a_note():
    amplify = runner.invoke(
        app, ["amplify", "--eps0", "1", "--n", "1000", "--delta", "1e-6", "--randomizer", "krr", "--dim", "4"],
        terminal_width=200,
    )  # fmt: skip
    assert amplify.exit_code == 0, amplify.output
    assert "n/a" not in amplify.stdout
    erlingsson = next(line for line in amplify.stdout.splitlines() if line.startswith(" erlingsson "))
    assert erlingsson.split("│")[3].strip() == "inf"  # outside its regime: was "n/a (regime)"
    assert "inf: the bound certifies nothing here (outside its regime)" in amplify.stdout
    lower = next(line for line in amplify.stdout.splitlines() if " lower " in line)
    assert lower.split("│")[3].strip() == "-"  # not offered for the randomizer's own parameters
    compose = runner.invoke(
        app, ["compose", "--eps0", "1", "--n", "1000", "--delta", "1e-200", "--rounds", "80"], terminal_width=200
    )
    assert compose.exit_code == 0, compose.output
    tight = next(line for line in compose.stdout.splitlines() if line.startswith("│ tight "))
    assert tight.split("│")[2].strip() == "inf"  # was "certifies nothing"
    assert "tight: tight composition certifies nothing" in compose.stdout  # the reason, under the table


def test_pic_round_writes_an_equation_1_outside_its_regime_as_inf(tmp_path):
    args = ["pic", "simulate", "--out", str(tmp_path), "--dataset", "synthetic", "--n", "30", "--task", "neighbors",
            "--k", "2", "--randomizer", "minkowski", "--epsilon-c", "1", "--ideal"]  # fmt: skip
    result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    assert _strict((tmp_path / "round.json").read_text())["privacy"][0]["epsilon_c_pic_eq1"] == "inf"  # was null
    row = next(line for line in result.stdout.splitlines() if line.startswith("│ users "))
    assert row.split("│")[8].strip() == "inf" and "n/a" not in result.stdout


def test_phase_progress_writes_one_plain_line_per_phase_on_stderr_off_a_terminal(capsys):
    with _output.PhaseProgress() as note:
        for done in (1000, 1245):
            note("enrolment", done, 1245)
        for done in range(100, 1245, 100):
            note("submissions", done, 1245)
        note("submissions", 1245, 1245)
        note("outputs", 1200, 1245)  # a phase that ends short of its total is still reported
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == ["enrolment: 1245/1245", "submissions: 1245/1245", "outputs: 1200/1245"]


def test_demo_prints_progress_on_stderr_only_and_addresses_unbroken(monkeypatch):
    """Off a terminal (a pipe, a CI log): stdout holds the answer, stderr one line per phase, and no
    address or path is broken over two lines (rich wraps at 80 columns there)."""
    monkeypatch.setenv("COLUMNS", "80")
    _fake_demo_services(monkeypatch)
    result = runner.invoke(app, ["demo", "--seed", "1"])
    assert result.exit_code == 0, result.output
    assert "enrolment" not in result.stdout and "submissions" not in result.stdout
    assert result.stderr.count("submissions: 3/3") == 1
    urls = ", ".join(f"{role} {_FAKE_URL}" for role in ("shuffler", "server", "board"))
    assert urls in result.stderr  # was wrapped at 80 columns
    assert f"board viewer: {_FAKE_URL}/rounds/{_FAKE_ROUND}\n" in result.stdout
    assert "│ inf " in result.stdout  # the ledger's infinite epsilon_c
