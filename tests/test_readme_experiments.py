"""The README's "Experiments" table lists every registered experiment (issue 9, item 14)."""

import re
from pathlib import Path

from shuffledp.experiments import all_experiments

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_lists_every_experiment():
    text = README.read_text(encoding="utf-8")
    section = text.split("## Experiments", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `([a-z0-9-]+)` \|", section, flags=re.MULTILINE)
    assert sorted(listed) == sorted(all_experiments())
