"""Doctest collection (``--doctest-modules`` over ``src/shuffledp``, see pyproject.toml).

Modules that run something when imported are not collected, nor the examples of the dp-accounting interop
when the optional extra is missing (its tests skip: tests/accounting/test_dp_accounting_interop.py).
"""

import importlib.util

collect_ignore = ["src/shuffledp/__main__.py", "src/shuffledp/service/migrations"]
if importlib.util.find_spec("dp_accounting") is None:  # the optional extra shuffledp[interop]: its examples need it
    collect_ignore.append("src/shuffledp/accounting/interop.py")
