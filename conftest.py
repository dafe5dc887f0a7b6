"""Doctest collection (``--doctest-modules`` over ``src/shuffledp``, see pyproject.toml).

Modules that run something when imported are not collected, nor, when their optional extra is missing, the examples
of the dp-accounting interop (its tests skip: tests/accounting/test_dp_accounting_interop.py) and the JAX model of
pic-fl-incentives (shuffledp[fl]; tests/experiments/test_pic_fl_incentives.py skips).
"""

import importlib.util

collect_ignore = ["src/shuffledp/__main__.py", "src/shuffledp/service/migrations"]
if importlib.util.find_spec("dp_accounting") is None:  # the optional extra shuffledp[interop]: its examples need it
    collect_ignore.append("src/shuffledp/accounting/interop.py")
if importlib.util.find_spec("jax") is None or importlib.util.find_spec("optax") is None:  # shuffledp[fl]
    collect_ignore.append("src/shuffledp/experiments/fl_model.py")
