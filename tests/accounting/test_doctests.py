"""Run the Examples of every accounting module's docstrings as doctests (issue 7, deliverable 5).

Each module is a separate test, so a failing example names its module; a module without
any example fails too (every public function of the accounting layer must carry one).
"""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "shuffledp.params",
    "shuffledp.accounting",
    "shuffledp.accounting._binomial",
    "shuffledp.accounting._rounding",
    "shuffledp.accounting.accountants",
    "shuffledp.accounting.bounds",
    "shuffledp.accounting.clones",
    "shuffledp.accounting.closed_form",
    "shuffledp.accounting.composition",
    "shuffledp.accounting.dominating_pair",
    "shuffledp.accounting.events",
    "shuffledp.accounting.inverse",
    "shuffledp.accounting.ledger",
    "shuffledp.accounting.params",
    "shuffledp.accounting.population",
    "shuffledp.accounting.variation_ratio",
]


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.attempted > 0, f"{name} has no doctest example"
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctest examples failed in {name} (output above)"
