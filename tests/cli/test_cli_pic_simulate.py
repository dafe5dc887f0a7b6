"""`shuffledp pic simulate`: real data sets, round.json contents, --ideal agreement, one-line errors."""

import json
import re

import pytest
from test_cli_errors import assert_cli_error_style  # tests/cli is on sys.path (pytest prepend mode)
from typer.testing import CliRunner

from shuffledp.cli import app
from shuffledp.datasets import crowdsourcing_path
from shuffledp.errors import DataError

runner = CliRunner()
REQUIRED = ("n_per_group", "message_bytes", "board_bytes", "client_prepare_us", "server_decrypt_us_per_message",
            "task_ms", "local_epsilon", "epsilon_c", "delta", "n_prime", "invalid_reports", "outputs_verified",
            "utility", "privacy")  # fmt: skip


@pytest.fixture(scope="module")
def shared_data():
    try:
        path = crowdsourcing_path("gmission", 0)
    except DataError as err:
        pytest.skip(f"real data folder absent: {err}")
    if not path.is_file():
        pytest.skip(f"real data file absent: {path}")


def _simulate(out, *args):
    result = runner.invoke(app, ["pic", "simulate", "--out", str(out), *args])
    return result, (json.loads((out / "round.json").read_text()) if result.exit_code == 0 else None)


@pytest.mark.parametrize("dataset", ["gmission", "everysender"])
def test_simulate_instance_0(tmp_path, dataset, shared_data):
    task = "min-weight" if dataset == "gmission" else "max-matching"
    result, report = _simulate(
        tmp_path, "--dataset", dataset, "--task", task, "--randomizer", "minkowski", "--epsilon-c", "1"
    )
    assert result.exit_code == 0, result.output
    assert set(REQUIRED) <= set(report)
    assert report["outputs_verified"] is True and report["posts_verified"] is True
    assert report["message_bytes"] == 249 and report["inner_envelope_bytes"] == 129
    sizes = {"gmission": {"users": 713, "workers": 532}, "everysender": {"users": 4036, "workers": 817}}[dataset]
    assert report["n_per_group"] == sizes
    assert all(e <= 1.0 for e in report["epsilon_c"].values())
    assert re.search(r"│ outputs verified against F_PIC on the clients' own reports +│ yes +│", result.output)


def _cells(text: str) -> dict[str, str]:
    """The two-column rich table rows in ``text`` as {quantity: value}."""
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in text.splitlines() if line.startswith("│")]
    return {row[0]: row[1] for row in rows if len(row) == 2}


def test_utility_costs_and_verification_are_a_table_with_yes_not_python_true(tmp_path):
    """One output style: the round's utility, sizes, timings and checks are table rows; a boolean is yes/no."""
    result, report = _simulate(tmp_path, "--dataset", "synthetic", "--n", "30", "--task", "neighbors", "--k", "2",
                               "--randomizer", "minkowski", "--epsilon-c", "1")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "True" not in result.output and "False" not in result.output
    cells = _cells(result.output)
    assert cells["outputs verified against F_PIC on the clients' own reports"] == "yes"
    assert cells["posts verified"] == "yes" and cells["envelope to the shuffler (B)"] == str(report["message_bytes"])
    assert cells["board (B)"] == str(report["board_bytes"])
    assert {f"utility: {k}" for k in report["utility"]} <= set(cells)


def test_json_prints_the_options_and_the_report_and_still_writes_round_json(tmp_path):
    result, report = _simulate(tmp_path, "--dataset", "synthetic", "--n", "30", "--task", "neighbors", "--k", "2",
                               "--randomizer", "minkowski", "--epsilon-c", "1e0", "--ideal", "--json")  # fmt: skip
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["inputs"]["epsilon_c"] == 1.0 and out["inputs"]["n"] == 30 and out["inputs"]["instance"] is None
    assert out["round_json"] == str(tmp_path / "round.json")
    assert {k: v for k, v in out.items() if k not in ("inputs", "round_json")} == report


def test_ideal_gives_every_user_the_real_output(tmp_path):
    args = ("--dataset", "synthetic", "--n", "80", "--task", "max-matching", "--randomizer", "planar_laplace",
            "--epsilon-c", "2", "--seed", "7")  # fmt: skip
    real = _simulate(tmp_path / "real", *args)[1]
    ideal = _simulate(tmp_path / "ideal", *args, "--ideal")[1]
    assert real["outputs_verified"] is True and ideal["outputs_verified"] is None
    assert real["outputs_digest"] == ideal["outputs_digest"]
    assert real["utility"] == ideal["utility"]
    other = _simulate(tmp_path / "other", *args[:-1], "8", "--ideal")[1]
    assert other["outputs_digest"] != real["outputs_digest"]


def test_round_json_has_no_key_or_report(tmp_path):
    _, report = _simulate(tmp_path, "--dataset", "synthetic", "--n", "30", "--task", "neighbors", "--k", "2",
                          "--randomizer", "minkowski", "--epsilon-c", "1")  # fmt: skip
    text = (tmp_path / "round.json").read_text()
    for word in ("secret", "plaintext", "pseudonym", "sealed"):
        assert word not in text
    assert report["n_per_group"] == {"users": 30}


@pytest.mark.parametrize(
    "args, message",
    [
        (["--dataset", "gmission", "--n", "5"], "error: --n: applies to --dataset synthetic only"),
        (["--dataset", "synthetic"], "error: --n: required with --dataset synthetic"),
        (["--dataset", "synthetic", "--n", "1"], "error: --n must be an integer"),
        (["--dataset", "mnist"], "error: --dataset: unknown data set 'mnist'"),
        (["--dataset", "gmission", "--instance", "10"], "error: --instance must be an integer"),
        (["--dataset", "gmission", "--suite", "rsa"], "error: --suite: unknown suite 'rsa'"),
        (["--dataset", "gmission", "--k", "3"], "error: --k: applies to --task neighbors only"),
    ],
)
def test_bad_options_are_one_line_with_status_2(tmp_path, args, message):
    base = {"--task": "min-weight", "--randomizer": "minkowski", "--epsilon-c": "1"}
    extra = [x for kv in base.items() for x in kv]
    result = runner.invoke(app, ["pic", "simulate", "--out", str(tmp_path), *args, *extra])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), result.output


def test_bad_epsilon_and_randomizer(tmp_path):
    for args, message in ((["--epsilon-c", "0", "--randomizer", "minkowski"], "error: --epsilon-c must be"),
                          (["--epsilon-c", "1", "--randomizer", "krr"], "error: --randomizer: unknown location randomizer")):  # fmt: skip
        result = runner.invoke(
            app, ["pic", "simulate", "--out", str(tmp_path), "--dataset", "gmission", "--task", "min-weight", *args]
        )
        assert result.exit_code == 2 and result.output.strip().startswith(message)


@pytest.mark.slow
@pytest.mark.parametrize("dataset", ["gmission", "everysender"])
@pytest.mark.parametrize("instance", range(1, 10))
def test_simulate_every_instance(tmp_path, dataset, instance, shared_data):
    result, report = _simulate(tmp_path, "--dataset", dataset, "--instance", str(instance), "--task", "max-matching",
                               "--randomizer", "minkowski", "--epsilon-c", "1")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert report["outputs_verified"] is True and report["posts_verified"] is True


@pytest.mark.parametrize(
    "extra, option",
    [
        (["--dataset", "synthetic", "--n", "1e12", "--task", "min-weight"], "--n"),
        (["--dataset", "synthetic", "--n", "6000", "--task", "min-weight"], "--n"),
        (["--dataset", "synthetic", "--n", "50", "--task", "min-weight", "--instance", "3"], "--instance"),
        (["--dataset", "synthetic", "--n", "50", "--task", "min-weight", "--corrupted", "60"], "--corrupted"),
        (["--dataset", "synthetic", "--n", "50", "--task", "min-weight", "--corrupted", "30"], "--corrupted"),
    ],
)
def test_sizes_and_adversary_are_checked_before_the_round(tmp_path, extra, option):
    args = ["pic", "simulate", *extra, "--randomizer", "minkowski", "--epsilon-c", "1", "--out", str(tmp_path / "o")]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert option in result.output.strip().splitlines()[-1]


def test_unwritable_out_fails_before_the_round(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    args = [
        "pic",
        "simulate",
        "--dataset",
        "synthetic",
        "--n",
        "20",
        "--task",
        "min-weight",
        "--randomizer",
        "minkowski",
        "--epsilon-c",
        "1",
        "--out",
        str(blocker / "sub"),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "--out must be a writable directory" in result.output


def test_out_the_file_system_refuses_fails_before_the_round(tmp_path, monkeypatch):
    # the mode bits may allow what the file system refuses (root on /sys): a probe write decides
    import tempfile

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    args = [
        "pic",
        "simulate",
        "--dataset",
        "synthetic",
        "--n",
        "20",
        "--task",
        "min-weight",
        "--randomizer",
        "minkowski",
        "--epsilon-c",
        "1",
        "--out",
        str(tmp_path / "o"),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert (
        "--out must be a writable directory: cannot write in" in result.output and "Permission denied" in result.output
    )


def test_corrupted_and_unreachable_targets_are_named_by_option(tmp_path):
    base = [
        "pic",
        "simulate",
        "--dataset",
        "synthetic",
        "--n",
        "50",
        "--randomizer",
        "minkowski",
        "--out",
        str(tmp_path / "o"),
    ]
    result = runner.invoke(app, [*base, "--task", "min-weight", "--epsilon-c", "1", "--corrupted", "25"])
    assert result.exit_code == 2 and "--corrupted: must be at most 24 for --task min-weight" in result.output
    assert runner.invoke(app, [*base, "--task", "min-weight", "--epsilon-c", "1", "--corrupted", "24"]).exit_code == 0
    result = runner.invoke(app, [*base, "--task", "neighbors", "--epsilon-c", "0.0001", "--delta", "1e-15"])
    assert result.exit_code == 2 and "--epsilon-c: 0.0001 is unreachable for group users" in result.output


def test_a_bucketed_round_that_misses_its_target_says_why(tmp_path):
    args = [
        "pic",
        "simulate",
        "--dataset",
        "synthetic",
        "--n",
        "60",
        "--task",
        "min-weight",
        "--randomizer",
        "minkowski",
        "--epsilon-c",
        "1",
        "--bucket-bits",
        "2",
        "--out",
        str(tmp_path / "o"),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    privacy = json.loads((tmp_path / "o" / "round.json").read_text())["privacy"]
    missed = [p for p in privacy if not p["target_met"]]
    assert missed, privacy  # buckets of ~15 cannot carry a local epsilon planned for 60
    text = " ".join(result.output.split())
    for p in missed:
        assert (
            f"warning: {p['name']} misses --epsilon-c 1: its local epsilon was planned for n' = {p['n_prime_planned']}"
            in text
        )


def test_k_and_min_bucket_size_outside_their_use_are_refused(tmp_path):
    base = [
        "pic",
        "simulate",
        "--dataset",
        "synthetic",
        "--n",
        "20",
        "--randomizer",
        "minkowski",
        "--epsilon-c",
        "1",
        "--out",
        str(tmp_path / "o"),
    ]
    result = runner.invoke(app, [*base, "--task", "neighbors", "--k", "20"])
    assert (
        result.exit_code == 2
        and "--k: must be below the group's 20 users for --task neighbors, got 20" in result.output
    )
    result = runner.invoke(app, [*base, "--task", "min-weight", "--min-bucket-size", "50"])
    assert result.exit_code == 2 and "--min-bucket-size: applies with --bucket-bits 1 to 16 only" in result.output


@pytest.mark.parametrize(
    "command",
    [
        [
            "pic",
            "simulate",
            "--dataset",
            "synthetic",
            "--n",
            "20",
            "--task",
            "min-weight",
            "--randomizer",
            "minkowski",
            "--epsilon-c",
            "1",
        ],
        ["reproduce", "--quick"],
    ],
)
def test_an_empty_out_is_refused(command, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # it used to write into the current directory
    result = runner.invoke(app, [*command, "--out", ""])
    assert result.exit_code == 2 and "--out must name a directory, got ''" in result.output
    assert list(tmp_path.iterdir()) == []


def test_roles_are_importable_from_the_package():
    import shuffledp.protocols.pic as pic

    for name in pic.__all__:
        assert getattr(pic, name) is not None


def test_bucket_bits_reach_the_board_and_the_ledger(tmp_path):
    result, report = _simulate(tmp_path, "--dataset", "synthetic", "--n", "60", "--task", "min-weight", "--randomizer",
                               "minkowski", "--epsilon-c", "2", "--bucket-bits", "3", "--min-bucket-size", "10")  # fmt: skip
    assert result.exit_code == 0, result.output
    bits = report["board_bucket_bits"]
    assert 1 <= bits <= 3 and report["outputs_verified"] is True
    for p, row in zip(report["privacy"], report["ledger"]["rows"]):
        assert p["bucket_bits"] == row["bucket_bits"] == bits
        assert p["smallest_bucket"] == row["smallest_bucket"] and p["n_prime"] == row["n_prime"] <= p["smallest_bucket"]
        assert "bucketed download" in p["n_prime_rule"]


def test_shapley_is_refused_with_the_python_api_named(tmp_path):
    result, _ = _simulate(tmp_path, "--dataset", "synthetic", "--n", "20", "--task", "shapley",
                          "--randomizer", "laplace", "--epsilon-c", "4")  # fmt: skip
    assert result.exit_code == 2
    assert "--task" in result.output and "validation gradient" in result.output and "RoundConfig" in result.output
    assert not (tmp_path / "round.json").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["--task", "shapley"],  # click: a required option missing
        ["--task", "shapley", "--dataset", "synthetic", "--n", "20", "--randomizer", "laplace", "--epsilon-c", "4",
         "--bogus"],  # click: an unknown option
        ["--task", "shapley", "--dataset", "synthetic", "--n", "20", "--randomizer", "laplace", "--epsilon-c", "4",
         "--k"],  # click: an option without its value
        ["--task", "shapley", "--dataset", "synthetic", "--n", "20", "--randomizer", "laplace", "--epsilon-c", "4"],
    ],
)  # fmt: skip
def test_shapley_usage_errors_read_in_the_clis_error_style(tmp_path, args):
    result, _ = _simulate(tmp_path, *args)
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.stderr
    assert_cli_error_style(lines[0])


def test_the_search_cap_note_quotes_epsilon_c_as_typed(tmp_path):
    result, _ = _simulate(tmp_path, "--dataset", "synthetic", "--n", "30", "--task", "neighbors", "--k", "2",
                          "--randomizer", "minkowski", "--epsilon-c", "1e6", "--ideal")  # fmt: skip
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "--epsilon-c 1e6 allows at least that much" in text and "1e+06" not in text
