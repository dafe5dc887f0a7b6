"""Doctest collection (``--doctest-modules`` over ``src/shuffledp``, see pyproject.toml).

Modules that run something when imported are not collected.
"""

collect_ignore = ["src/shuffledp/__main__.py", "src/shuffledp/service/migrations"]
