"""The counterexample of docs/which-bound.md runs and shows what the page says."""

import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "which-bound.md"


def test_which_bound_page_reproduces_its_counterexample():
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)
    assert blocks
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), namespace)  # noqa: S102 - our own documentation
    assert round(namespace["exact"].delta, 10) == 0.0284406392
    assert round(namespace["old"], 10) == 0.0172501196
