"""``shuffledp serve`` and ``shuffledp demo`` (the README's main job)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "shuffledp", *args], capture_output=True, text=True, timeout=timeout)


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
