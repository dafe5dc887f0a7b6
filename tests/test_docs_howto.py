"""The code of docs/how-to-account.md runs, in order, against the library as it is."""

import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "how-to-account.md"


def test_how_to_account_page_runs():
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)
    assert len(blocks) >= 8
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), namespace)  # noqa: S102 - our own documentation
    # the page's claims
    assert namespace["ledger"].rows[1].epsilon_c() <= 1.0
    assert namespace["eps_c"] < 3.0
    # the closed form and the clone bound price the same round, above the randomizer's own bound
    assert namespace["closed"].get_epsilon(1e-6) > namespace["eps_c"]
    assert namespace["clones"].get_epsilon(1e-6) > namespace["eps_c"]
