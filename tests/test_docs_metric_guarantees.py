"""The counterexamples of docs/metric-guarantees.md run, in order, against the library as it is (issue 20, item 5)."""

import re
import shlex
from pathlib import Path

from typer.testing import CliRunner

from shuffledp.cli import app

PAGE = Path(__file__).resolve().parents[1] / "docs" / "metric-guarantees.md"


def test_metric_guarantees_page_runs():
    text = PAGE.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 5
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), namespace)  # noqa: S102 - our own documentation
    assert namespace["certified"] > 6 * namespace["theorem_3_1"]


def test_metric_guarantees_page_commands_run(tmp_path):
    commands = re.findall(r"```\n(shuffledp metric [^\n]*)\n```", PAGE.read_text())
    assert commands
    for command in commands:
        args = shlex.split(command)[1:] + ["--plot", str(tmp_path / "p.png")]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        assert "certified for datasets at distance <= 230" in result.stdout
