"""REPORT.md opens with one row per experiment (its claims in short, ours, one verdict, a link), then one row
per claim; every summary with claims states them first."""

from __future__ import annotations

import json

import pytest

from shuffledp.errors import ExperimentError
from shuffledp.experiments import Claim, ExperimentOutput, register, reproduce
from shuffledp.experiments.registry import _REGISTRY, NOT_TESTABLE, VERDICTS, combined_verdict, share_verdict

#: name -> the claims' verdicts of a toy experiment, and the experiment's verdict by the report's rule
TOYS = {
    "toy-held": (["held", "held"], "held"),
    "toy-mixed": (["held", "not", "partly"], "partly"),
    "toy-partly": (["partly", "partly"], "partly"),
    "toy-not": (["not"], "not"),
}


@pytest.fixture
def claimed_experiments():
    def toy(name, verdicts):
        claims = [Claim(f"{name} claim {i} | {v}", f"{name} ours {i}", v) for i, v in enumerate(verdicts, 1)]
        register(name, f"Toy {name}", "none")(lambda ctx: ExperimentOutput(["i"], [{"i": 0}], "body", None, {}, claims))

    for name, (verdicts, _) in TOYS.items():
        toy(name, verdicts)
    register("toy-no-claims", "Toy without claims", "none")(
        lambda ctx: ExperimentOutput(["i"], [{"i": 0}], "body", None, {})
    )
    yield [*TOYS, "toy-no-claims"]
    for name in [*TOYS, "toy-no-claims"]:
        _REGISTRY.pop(name)


def _table(lines: list[str], header: str) -> list[str]:
    """The rows under ``header`` (a table's first line) up to the blank line that ends the table."""
    start = lines.index(header) + 2
    return lines[start : lines.index("", start)]


def test_report_opens_with_one_row_per_experiment_and_its_combined_verdict(tmp_path, claimed_experiments):
    lines = reproduce(tmp_path, quick=True, progress=False, only=claimed_experiments).read_text().splitlines()
    header = "| experiment | the paper's claims | ours | verdict |"
    assert [line for line in lines if line][2] == header  # right after the title and the mode line
    rows = _table(lines, header)
    expected = []
    for name, (verdicts, verdict) in TOYS.items():
        if len(verdicts) == 1:
            paper, ours = f"{name} claim 1 \\| {verdicts[0]}", f"{name} ours 1"
        else:
            paper = "<br>".join(f"({i}) {name} claim {i} \\| {v}" for i, v in enumerate(verdicts, 1))
            ours = "<br>".join(f"({i}) {name} ours {i}" for i in range(1, len(verdicts) + 1))
        expected.append(f"| [{name}]({name}/summary.md) | {paper} | {ours} | {verdict} |")
    expected.append(
        "| [toy-no-claims](toy-no-claims/summary.md) | (no claim recorded in structured form) | see the summary | - |"
    )
    assert rows == expected


def test_report_keeps_one_row_per_claim_below_the_experiments(tmp_path, claimed_experiments):
    text = reproduce(tmp_path, quick=True, progress=False, only=claimed_experiments).read_text()
    lines = text.splitlines()
    header = "| experiment | # | the paper's claim | ours | held? |"
    assert lines.index(header) > lines.index("| experiment | the paper's claims | ours | verdict |")
    rows = _table(lines, header)
    assert len(rows) == sum(len(v) for v, _ in TOYS.values()) + 1
    assert rows[2] == "| [toy-mixed](toy-mixed/summary.md) | 1 | toy-mixed claim 1 \\| held | toy-mixed ours 1 | held |"
    assert (
        rows[4]
        == "| [toy-mixed](toy-mixed/summary.md) | 3 | toy-mixed claim 3 \\| partly | toy-mixed ours 3 | partly |"
    )
    summary = (tmp_path / "toy-mixed" / "summary.md").read_text()
    assert summary.index("## The paper's claims beside ours") < summary.index("body")
    assert json.loads((tmp_path / "toy-mixed" / "meta.json").read_text())["claims"][1]["verdict"] == "not"


def test_report_shortens_long_claims_in_the_opening_table_only(tmp_path):
    rule = "(held: within 1% everywhere; partly: within 10%)"
    long_claim = Claim("the bound is tight " + "and tight " * 30 + rule, "ours " + "1.0 " * 60, "held")

    @register("toy-long", "Toy with a long claim", "none")
    def run(ctx):
        return ExperimentOutput(["i"], [{"i": 0}], "body", None, {}, [long_claim])

    try:
        lines = reproduce(tmp_path, quick=True, progress=False, only=["toy-long"]).read_text().splitlines()
    finally:
        _REGISTRY.pop("toy-long")
    (row,) = _table(lines, "| experiment | the paper's claims | ours | verdict |")
    paper, ours, verdict = row.split(" | ")[1:4]
    assert verdict == "held |"
    assert paper.endswith(" …") and "held:" not in paper and len(paper) <= 145
    assert ours.endswith(" …") and len(ours) <= 145
    (detail,) = _table(lines, "| experiment | # | the paper's claim | ours | held? |")
    assert rule in detail and " …" not in detail


TESTED = [v for v in VERDICTS if v != NOT_TESTABLE]


@pytest.mark.parametrize("verdicts", [[v] for v in TESTED] + [TESTED, ["held", "not"], ["partly", "not"]])
@pytest.mark.parametrize("untestable", [0, 2])
def test_combined_verdict_is_held_when_all_held_not_when_none_held_at_all_else_partly(verdicts, untestable):
    expected = "held" if set(verdicts) == {"held"} else "not" if set(verdicts) == {"not"} else "partly"
    assert combined_verdict(verdicts + [NOT_TESTABLE] * untestable) == expected  # untestable claims are left out


def test_combined_verdict_is_not_testable_only_when_no_claim_was_testable():
    assert combined_verdict([NOT_TESTABLE]) == combined_verdict([NOT_TESTABLE] * 3) == "not testable"
    assert Claim("accuracy after 80 rounds", "not testable in quick mode", NOT_TESTABLE).verdict == "not testable"


def test_share_verdict_follows_the_combined_rule():
    assert [share_verdict(k, 3) for k in range(4)] == ["not", "partly", "partly", "held"]
    with pytest.raises(ExperimentError, match=r"held must be in \[0, total = 3\], got 4"):
        share_verdict(4, 3)  # was "partly": more cases held than checked is a bug of the caller


def test_a_verdict_is_held_partly_or_not():
    with pytest.raises(ExperimentError, match="verdict must be one of held, partly, not, not testable, got 'maybe'"):
        Claim("x", "y", "maybe")
    with pytest.raises(ExperimentError, match="verdict must be one of held, partly, not, not testable, got 'maybe'"):
        combined_verdict(["held", "maybe"])
