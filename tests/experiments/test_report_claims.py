"""REPORT.md opens with a table of the papers' claims, ours beside each, and whether it held; every summary
with claims states them first."""

from __future__ import annotations

import json

import pytest

from shuffledp.errors import ExperimentError
from shuffledp.experiments import Claim, ExperimentOutput, register, reproduce
from shuffledp.experiments.registry import _REGISTRY


@pytest.fixture
def claimed_experiments():
    @register("toy-claims", "Toy with claims", "none")
    def with_claims(ctx):
        claims = [Claim("error falls with n", "falls at every n", "held"), Claim("ratio 2 | 3", "ratio 2.4", "partly")]
        return ExperimentOutput(["i"], [{"i": 0}], "body", None, {}, claims)

    @register("toy-no-claims", "Toy without claims", "none")
    def without(ctx):
        return ExperimentOutput(["i"], [{"i": 0}], "body", None, {})

    yield ["toy-claims", "toy-no-claims"]
    _REGISTRY.pop("toy-claims")
    _REGISTRY.pop("toy-no-claims")


def test_report_opens_with_one_row_per_claim(tmp_path, claimed_experiments):
    text = reproduce(tmp_path, quick=True, progress=False, only=claimed_experiments).read_text()
    lines = [line for line in text.splitlines() if line.strip()]
    header = lines.index("| experiment | the paper's claim | ours | held? |")
    assert header == 2  # right after the title and the mode line
    rows = lines[header + 2 : header + 5]
    assert rows[0] == "| [toy-claims](toy-claims/summary.md) | error falls with n | falls at every n | held |"
    assert (
        rows[1] == "| [toy-claims](toy-claims/summary.md) | ratio 2 \\| 3 | ratio 2.4 | partly |"
    )  # the cell stays one cell
    assert rows[2].startswith("| [toy-no-claims](toy-no-claims/summary.md) | (no claim recorded")
    summary = (tmp_path / "toy-claims" / "summary.md").read_text()
    assert summary.index("## The paper's claims beside ours") < summary.index("body")
    assert json.loads((tmp_path / "toy-claims" / "meta.json").read_text())["claims"][0]["verdict"] == "held"


def test_a_verdict_is_held_partly_or_not():
    with pytest.raises(ExperimentError, match="verdict must be one of held, partly, not"):
        Claim("x", "y", "maybe")
