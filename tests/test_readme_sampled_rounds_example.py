"""The README's sampled-rounds and dp-accounting examples run and give the numbers their comments state."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks_after(heading: str, count: int) -> list[str]:
    text = README.read_text()
    start = text.index(heading)
    return re.findall(r"```python\n(.*?)```", text[start:], flags=re.S)[:count]


def _commented_number(block: str, expression: str) -> float:
    line = next(line for line in block.splitlines() if line.startswith(expression))
    return float(re.search(r"#\s*([0-9.]+)", line).group(1))


def test_sampled_rounds_example_states_its_epsilon():
    (block,) = _blocks_after("**Rounds that sample their users**", 1)
    scope: dict = {}
    exec(compile(block, str(README), "exec"), scope)  # noqa: S102 - our own documentation
    value = scope["training"].get_epsilon(0.01 / 50_000)
    assert value <= 1.0
    assert round(value, 3) == _commented_number(block, "training.get_epsilon")


def test_dp_accounting_example_composes_with_a_gaussian():
    pytest.importorskip("dp_accounting", reason="needs the interop extra")
    sampled, interop = _blocks_after("**Rounds that sample their users**", 2)
    scope: dict = {}
    exec(compile(sampled + interop, str(README), "exec"), scope)  # noqa: S102 - our own documentation
    last = interop.strip().splitlines()[-1]
    total = eval(last.split("#")[0], scope)  # noqa: S307 - our own documentation
    assert round(total, 2) == _commented_number(interop, last.split("#")[0].strip())
    ours_alone = scope["ours"].get_epsilon_for_delta(2e-7)
    assert total > ours_alone  # the Gaussian steps cost something
