"""Range errors read the same in every command and its --help; advice names command-line options; a
failing composition method leaves the others in the table; search caps are stated."""

from __future__ import annotations

import json
import re
import time

import pytest
import typer.main
from typer.testing import CliRunner

from shuffledp.cli import app

try:  # recent typer vendors click as typer._click
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover - depends on the installed typer
    from click import exceptions as click_errors  # type: ignore[no-redef]

runner = CliRunner()

#: A valid invocation of every command taking --delta (the value replaced below).
DELTA_COMMANDS = [
    ["amplify", "--eps0", "1", "--n", "1000", "--delta", "D"],
    ["compose", "--eps0", "1", "--n", "1000", "--rounds", "2", "--delta", "D"],
    ["local-budget", "--target", "0.5", "--n", "1000", "--delta", "D"],
    ["metric", "epsilon", "--mechanism", "geo-shuffle", "--n", "50", "--eps-geo", "0.5", "--delta", "D"],
    ["metric", "local-epsilon", "--target", "0.3", "--n", "50", "--k", "5", "--delta", "D"],
    ["personalized", "--distribution", "uniform1", "--n", "100", "--delta", "D"],
    ["segmented", "optimize", "--levels", "0.5,1", "--counts", "100,100", "--d", "8", "--s", "1", "--delta", "D"],
    [
        "pic",
        "simulate",
        "--dataset",
        "synthetic",
        "--n",
        "20",
        "--task",
        "neighbors",
        "--randomizer",
        "minkowski",
        "--epsilon-c",
        "1",
        "--out",
        "OUT",
        "--ideal",
        "--delta",
        "D",
    ],
]


def _help(command: list[str]) -> str:
    """The --help text of ``command`` on one line (rich's box and wrapping removed)."""
    text = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "400"}).stdout
    return re.sub(r"[\s│]+", " ", text)


def _error(result) -> str:
    assert result.exit_code == 2, result.output
    return result.stderr.strip()


@pytest.mark.parametrize("command", DELTA_COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("value", ["1e-400", "1e-310", "0", "1"])
def test_one_wording_of_the_delta_range_in_every_command_and_its_help(command, value, tmp_path):
    args = [str(tmp_path) if a == "OUT" else value if a == "D" else a for a in command]
    message = _error(runner.invoke(app, args))
    assert f"--delta must be a number in [1e-300, 1); got '{value}'" in message
    help_text = _help([*command[: 2 if command[0] in ("metric", "segmented", "pic") else 1]])
    delta_help = re.split(r" --[a-z-]+ <", help_text.split("--delta <float>", 1)[1])[0]  # up to the next option
    assert "Must be a number in [1e-300, 1)." in delta_help and "(0, 1)" not in delta_help


def test_compose_quotes_the_delta_the_user_typed():
    message = _error(
        runner.invoke(app, ["compose", "--eps0", "1", "--n", "10000", "--delta", "1e-300", "--rounds", "10"])
    )
    assert "--delta 1e-300" in message
    assert "1.25e-302" not in message and "1e-301" not in message  # numbers the user never typed


def test_one_failing_composition_method_leaves_the_others_in_the_table():
    args = ["compose", "--eps0", "1", "--n", "10000", "--delta", "1e-299", "--rounds", "10"]
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["best"] == "basic" and isinstance(out["epsilon"]["basic"], float)
    assert out["epsilon"]["advanced"] == "inf" and "--delta 1e-299" in out["reasons"]["advanced"]
    text = runner.invoke(app, args, terminal_width=300).stdout
    assert "│ inf " in text and "(best)" in text and "advanced: advanced composition divides --delta" in text


@pytest.mark.parametrize(
    "args",
    [
        ["compose", "--eps0", "1", "--n", "10000", "--delta", "1e-290", "--rounds", "10"],
        ["local-budget", "--target", "1e-5", "--n", "100", "--delta", "1e-6"],
        ["local-budget", "--target", "0.5", "--n", "10000", "--delta", "1e-300", "--rounds", "3"],
    ],
)
def test_advice_names_command_line_options_not_api_arguments(args):
    result = runner.invoke(app, args, terminal_width=400)
    text = result.stdout + result.stderr
    assert not re.search(r"method='|min_epsilon|calibrate|target_epsilon=", text), text
    assert "--" in text


def test_local_budget_names_what_the_user_can_change():
    message = _error(runner.invoke(app, ["local-budget", "--target", "1e-5", "--n", "100", "--delta", "1e-6"]))
    assert "increase --n or --delta, or raise --target" in message


@pytest.mark.parametrize("command", ["amplify", "compose", "local-budget"])
def test_dim_without_randomizer_is_refused(command):
    base = {
        "amplify": ["amplify", "--eps0", "1", "--n", "1000", "--delta", "1e-6"],
        "compose": ["compose", "--eps0", "1", "--n", "1000", "--delta", "1e-6", "--rounds", "2"],
        "local-budget": ["local-budget", "--target", "0.5", "--n", "1000", "--delta", "1e-6"],
    }[command]
    message = _error(runner.invoke(app, [*base, "--dim", "5"]))
    assert "--dim applies only with --randomizer" in message


def test_pic_simulate_states_the_local_epsilon_search_cap(tmp_path):
    args = [
        "pic",
        "simulate",
        "--dataset",
        "synthetic",
        "--n",
        "30",
        "--task",
        "neighbors",
        "--randomizer",
        "minkowski",
        "--epsilon-c",
        "1e6",
        "--out",
        str(tmp_path),
        "--ideal",
    ]
    result = runner.invoke(app, args, terminal_width=300)
    assert result.exit_code == 0, result.output
    assert "search cap 50" in result.stdout
    report = json.loads((tmp_path / "round.json").read_text())
    assert report["local_epsilon_search_cap"] == 50 and report["privacy"][0]["local_epsilon_capped"] is True
    help_text = _help(["pic", "simulate"])
    assert "searched up to 50" in help_text


def _command_paths() -> list[list[str]]:
    """Every command of the CLI as the words a user types (groups walked through click)."""

    def walk(command, prefix):
        sub = getattr(command, "commands", None)
        if not sub:
            return [prefix]
        return [path for name, child in sorted(sub.items()) for path in walk(child, [*prefix, name])]

    return walk(typer.main.get_command(app), [])


@pytest.mark.parametrize("words", _command_paths(), ids=lambda words: " ".join(words) or "shuffledp")
def test_every_command_prints_its_help(words):
    result = runner.invoke(app, [*words, "--help"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output and "Traceback" not in result.output


def _numeric_options() -> list:
    """(command words, option name, its parser) for every option whose parser states an accepted range."""

    def _parser_of(param):  # where this typer release keeps an option's parser= function
        info = getattr(getattr(param, "type_descriptor", None), "parameter_info", None)
        return getattr(info, "parser", None) or getattr(getattr(param, "type", None), "func", None)

    def walk(command, prefix):
        sub = getattr(command, "commands", None)
        if sub:
            return [row for name, child in sorted(sub.items()) for row in walk(child, [*prefix, name])]
        rows = []
        for param in command.params:
            parser = _parser_of(param)
            if getattr(parser, "allowed", None) is not None:
                rows.append(pytest.param(prefix, param.opts[0], parser, id=f"{' '.join(prefix)} {param.opts[0]}"))
        return rows

    return walk(typer.main.get_command(app), [])


NUMERIC_OPTIONS = _numeric_options()


def test_the_numeric_options_of_every_command_are_found():
    found = {(" ".join(words), option) for words, option, _ in (row.values for row in NUMERIC_OPTIONS)}
    for expected in [("amplify", "--n"), ("metric epsilon", "--eps-geo"), ("local-budget", "--max-epsilon")]:
        assert expected in found
    assert ("segmented optimize", "--levels") in found and ("pic simulate", "--n") in found


@pytest.mark.parametrize("words, option, parser", NUMERIC_OPTIONS)
def test_every_numeric_option_states_its_range_in_help_in_the_words_of_its_error(words, option, parser):
    allowed = parser.allowed()
    assert f"Must be {allowed}." in _help(words)
    for text in ("nan", "abc", "-1e999"):
        with pytest.raises(click_errors.BadParameter) as info:
            parser(text)
        assert info.value.message.startswith(f"{option} must be {allowed}; got '{text}'"), info.value.message


def _formatted_help_of(words: list[str], option: str) -> str:
    """An option's help text as its command's --help prints it (after `_HelpFormatting` adds "Must be ...")."""
    command = typer.main.get_command(app)
    for word in words:
        command = command.commands[word]
    command.get_help(command.make_context(" ".join(words), [], resilient_parsing=True))
    return " ".join(next(p for p in command.params if option in p.opts).help.split())


@pytest.mark.parametrize("words, option, parser", NUMERIC_OPTIONS)
def test_no_option_help_states_its_range_twice(words, option, parser):
    """--seed read "in [0, 2^64 - 1]. Must be an integer in [0, 2^64 - 1].": the help named the range in other
    words than the parser's, so the formatter added it again."""
    interval = re.search(r"[\[(].*[\])]", parser.allowed())
    help_text = _formatted_help_of(words, option)
    assert help_text.count(interval.group(0) if interval else parser.allowed()) == 1, help_text


BASE_LOCAL_BUDGET = ["local-budget", "--target", "0.5", "--n", "1000", "--delta", "1e-6"]


@pytest.mark.parametrize("value", ["0", "0.0005", "800", "abc"])
def test_max_epsilon_has_one_wording_at_both_ends(value):
    """It said 'a finite number > 0' below zero and '(0.001, 700] (...)' elsewhere."""
    message = _error(runner.invoke(app, [*BASE_LOCAL_BUDGET, "--max-epsilon", value]))
    assert f"--max-epsilon must be a number in (0.001, 700]; got '{value}'" in message
    assert "Must be a number in (0.001, 700]." in _help(["local-budget"])


@pytest.mark.parametrize(
    "command",
    [
        ["metric", "epsilon", "--mechanism", "geo-shuffle", "--n", "50", "--delta", "1e-6"],
        ["metric", "profile", "--mechanism", "geo-shuffle", "--n", "50", "--delta", "1e-6", "--k", "5"],
    ],
    ids=lambda c: " ".join(c[:2]),
)
@pytest.mark.parametrize("value", ["0", "200", "abc", "1e-300"])
def test_eps_geo_has_one_wording_in_every_metric_command(command, value):
    """It read 'a finite number > 0', 'at most 100' or 'a number' depending on the value."""
    message = _error(runner.invoke(app, [*command, "--eps-geo", value]))
    assert f"--eps-geo must be a number in [2^-52, 100]; got '{value}'" in message


@pytest.mark.parametrize("command", ["amplify", "local-budget"])
def test_a_size_the_randomizer_refuses_is_a_range_error_of_dim(command):
    base = {"amplify": ["amplify", "--eps0", "1", "--n", "1000", "--delta", "1e-6"], "local-budget": BASE_LOCAL_BUDGET}
    message = _error(runner.invoke(app, [*base[command], "--randomizer", "krr", "--dim", "1"]))
    assert message.startswith("error: --dim must be an integer in [2, inf); got 1 (with --randomizer krr"), message


def test_segmented_levels_state_their_range_and_any_finite_level_is_accepted():
    """--levels has no search cap (the optimizer meets any finite level: a level of 1e8 is pinned as good as 40 in
    test_group_privacy); its range is stated in --help and a level outside it is refused in the one wording."""
    args = ["segmented", "optimize", "--levels", "0.5,0", "--counts", "100,100", "--d", "8", "--s", "1"]
    message = _error(runner.invoke(app, args))
    assert "--levels must be a comma-separated list of numbers in [2^-52, inf); got '0.5,0'" in message
    assert "Must be a comma-separated list of numbers in [2^-52, inf)." in _help(["segmented", "optimize"])
    ok = runner.invoke(app, ["segmented", "optimize", "--levels", "0.5,800", "--counts", "100,100", "--d", "8",
                             "--s", "1", "--m", "0.5", "--json"])  # fmt: skip
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["inputs"]["levels"][-1] == 800


def test_segmented_help_example_is_a_fast_one():
    """The help's example took 132-169 s (the free search over m); the one shown now fixes --m."""
    help_text = _help(["segmented", "optimize"])
    example = re.search(r"Example \(a few seconds\): (--levels .*? --m [\d.]*\d)\.", help_text)
    assert example, help_text
    start = time.perf_counter()
    result = runner.invoke(app, ["segmented", "optimize", *example.group(1).split(), "--json"])
    assert result.exit_code == 0, result.output
    assert time.perf_counter() - start < 60.0  # a few seconds alone; generous for a loaded machine
    assert json.loads(result.stdout)["m"] == float(example.group(1).split()[-1])


@pytest.mark.parametrize(
    "randomizer,dim",
    [
        ("laplace", "1e8"),
        ("staircase", "1e8"),
        ("square_wave", "1e8"),
        ("unary", "1e13"),
        ("subset_exponential", "1e8"),
        ("privhs", "1e8"),
    ],
)
def test_a_dim_the_randomizer_cannot_compute_is_one_named_line(randomizer, dim):
    """Issue 16: these ended in MemoryError or ran for minutes; --help states each cap as the error does."""
    from shuffledp._util.validation import bound_text
    from shuffledp.randomizers.registry import max_size

    args = ["amplify", "--eps0", "3", "--n", "1e4", "--delta", "1e-6", "--randomizer", randomizer, "--dim", dim]
    result = runner.invoke(app, args)
    cap = bound_text(max_size(randomizer))
    assert result.exit_code == 2, result.output
    assert re.search(
        rf"error: --dim must be an integer in \[\d, {cap}\]; got {int(float(dim))} \(with --randomizer "
        rf"{randomizer}",
        result.output,
    ), result.output
    help_text = " ".join(runner.invoke(app, ["amplify", "--help"], terminal_width=400).output.split())
    assert f"{cap} for {randomizer}" in help_text
