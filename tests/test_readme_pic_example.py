"""The README's PIC round from Python runs as printed."""

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_pic_round_prints_what_the_readme_shows():
    text = README.read_text()
    start = text.index("The same round from Python")
    code, shown = re.search(r"```python\n(.*?)```\s*```text\n(.*?)```", text[start:], flags=re.S).groups()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {})  # noqa: S102 - our own documentation
    assert out.getvalue().split() == shown.split()
