"""``shuffledp serve`` and ``shuffledp demo`` (the README's main job)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def _run(*args: str, timeout: float = 300, env: dict[str, str] | None = None, cwd=None) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SHUFFLEDP_") or k == "SHUFFLEDP_DATA"}
    return subprocess.run([sys.executable, "-m", "shuffledp", *args], capture_output=True, text=True, timeout=timeout,
                          env={**clean, **(env or {})}, cwd=cwd)  # fmt: skip


def _one_line_error(out: subprocess.CompletedProcess, *names: str) -> None:
    assert out.returncode == 2, (out.returncode, out.stderr[-2000:])
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in out.stderr, out.stderr[-2000:]
    assert all(name in lines[0] for name in names), lines[0]


#: bad settings of `shuffledp serve`: (options, environment, what the one error line must name)
SERVE_BAD = {
    "data-dir-missing-parent": (["--data-dir", "/proc/x"], {}, ("--data-dir", "/proc/x")),
    "data-dir-is-a-file": (["--data-dir", "{file}"], {}, ("--data-dir", "a file")),
    "db-unknown-dialect": (["--db", "garbage://nope"], {}, ("--db", "garbage://nope")),
    "db-refused": (["--db", "postgresql://u@127.0.0.1:1/pic"], {}, ("--db", "cannot connect", "refused")),
    "host-invalid": (["--host", "999.1.1.1"], {}, ("--host", "999.1.1.1")),
    "url-invalid": (["--shuffler-url", "notaurl"], {}, ("--shuffler-url", "http")),
    "url-scheme": (["--board-url", "ftp://x"], {}, ("--board-url",)),
    "dask-address": (["--dask-scheduler", "nonsense"], {}, ("--dask-scheduler", "tcp://")),
    "env-number": ([], {"SHUFFLEDP_RATE_PER_MINUTE": "abc"}, ("SHUFFLEDP_RATE_PER_MINUTE", "abc")),
    "env-db": ([], {"SHUFFLEDP_DB_URL": "garbage://x"}, ("SHUFFLEDP_DB_URL",)),
    "config-bad-toml": ([], {"SHUFFLEDP_CONFIG": "{bad_toml}"}, ("SHUFFLEDP_CONFIG", "TOML")),
    "config-unknown-key": ([], {"SHUFFLEDP_CONFIG": "{unknown_toml}"}, ("SHUFFLEDP_CONFIG", "'foo'")),
    "config-bad-value": ([], {"SHUFFLEDP_CONFIG": "{bad_value_toml}"}, ("rate_per_minute", "SHUFFLEDP_CONFIG")),
    "config-missing": ([], {"SHUFFLEDP_CONFIG": "/nonexistent.toml"}, ("SHUFFLEDP_CONFIG", "/nonexistent.toml")),
}


@pytest.mark.parametrize("case", list(SERVE_BAD))
def test_serve_refuses_bad_settings_in_one_line_before_starting_anything(case, tmp_path):
    files = {"file": tmp_path / "afile", "bad_toml": tmp_path / "bad.toml", "unknown_toml": tmp_path / "unknown.toml",
             "bad_value_toml": tmp_path / "value.toml"}  # fmt: skip
    files["file"].write_text("x")
    files["bad_toml"].write_text("rate_per_minute =\n")
    files["unknown_toml"].write_text("foo = 1\n")
    files["bad_value_toml"].write_text('rate_per_minute = "x"\n')
    options, env, names = SERVE_BAD[case]
    options = [o.format(**{k: str(v) for k, v in files.items()}) for o in options]
    env = {k: v.format(**{k: str(v) for k, v in files.items()}) for k, v in env.items()}
    if "--data-dir" not in options:
        options += ["--data-dir", str(tmp_path / "data")]
    from shuffledp.service.local import free_port

    out = _run("serve", "server", "--port", str(free_port()), *options, timeout=60, env=env, cwd=tmp_path)
    _one_line_error(out, *names)


def test_serve_names_the_missing_scale_extra_of_dask_scheduler_in_one_line(tmp_path):
    code = ("import sys; sys.modules['distributed'] = None; from shuffledp.cli import main; "
            f"sys.argv = ['shuffledp', 'serve', 'server', '--data-dir', {str(tmp_path)!r}, "
            "'--dask-scheduler', 'tcp://127.0.0.1:8786']; main()")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    _one_line_error(out, "--dask-scheduler", "shuffledp[scale]")


@pytest.mark.parametrize("options", [["--data-dir", "/proc/x"], ["--db", "garbage://nope"]])
def test_demo_refuses_bad_settings_in_one_line_before_starting_anything(options, tmp_path):
    _one_line_error(_run("demo", *options, timeout=60, cwd=tmp_path), options[0])


def test_demo_refuses_an_epsilon_c_above_the_services_cap_before_starting_anything(tmp_path):
    """Issue 16: --epsilon-c 1e6 started the three services, then failed with the service's 422; the option
    takes its range from the same constant as the service's round spec."""
    from shuffledp.service.server_app import CreateRound

    cap = next(m.le for m in CreateRound.model_fields["epsilon_c"].metadata if getattr(m, "le", None) is not None)
    out = _run("demo", "--epsilon-c", "1e6", timeout=120, cwd=tmp_path)
    _one_line_error(out, "--epsilon-c must be a number in [2^-52, " + f"{cap:g}]; got '1e6'")


def test_serve_refuses_an_unknown_role_in_one_line():
    out = _run("serve", "cook")
    assert out.returncode == 2 and "cook" in out.stderr and "shuffler" in out.stderr


@pytest.mark.service
@pytest.mark.timeout(600)
def test_demo_runs_a_round_over_http_and_prints_the_ledger_utility_and_viewer(tmp_path):
    out = _run("demo", "--json", "--seed", "3", "--data-dir", str(tmp_path / "demo"))
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout)
    assert result["state"] == "published" and result["users"] == 1245 and result["outputs_verified"]
    assert [row["group"] for row in result["ledger"]] == ["passengers", "drivers"]
    assert all(row["epsilon_c"] <= 1.0 + 1e-9 for row in result["ledger"])
    assert result["utility"]["travel_cost_non_private"] > 0 and result["matched_pairs_posted"] == 532
    assert result["posts_verified"] and result["viewer"].startswith("http://127.0.0.1:")
    assert (tmp_path / "demo" / "keys").is_dir() and f"kept in {tmp_path / 'demo'}" in out.stderr  # the user's folder
    assert result["inputs"]["seed"] == 3 and result["inputs"]["data_dir"] == str(tmp_path / "demo")  # the one shape
    for phase in ("enrolment", "submissions", "outputs"):  # off a terminal: one plain line per phase, on stderr
        assert out.stderr.count(f"{phase}: ") == 1 and phase + ":" not in out.stdout, out.stderr


@pytest.mark.service
@pytest.mark.timeout(600)
def test_demo_deletes_its_temporary_folder_with_keys_and_token_at_the_end(tmp_path):
    out = _run("demo", "--json", "--seed", "4", env={"TMPDIR": str(tmp_path)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout)["state"] == "published"
    assert list(tmp_path.iterdir()) == [], list(tmp_path.iterdir())


@pytest.mark.parametrize("role, docs", [("server", "/docs"), ("all", "/board/docs")])
def test_serve_says_where_it_listens_before_it_serves(role, docs, tmp_path):
    from shuffledp.service.local import free_port

    port = free_port()
    cmd = [sys.executable, "-m", "shuffledp", "serve", role, "--port", str(port), "--data-dir", str(tmp_path)]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SHUFFLEDP_") or k == "SHUFFLEDP_DATA"}
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=clean)
    try:
        line = proc.stderr.readline()
        assert f"starting {role} on http://127.0.0.1:{port}" in line, line
        assert f"http://127.0.0.1:{port}{docs}" in line and str(tmp_path) in line and "database: sqlite:///" in line
    finally:
        proc.terminate()
        proc.wait(timeout=30)
