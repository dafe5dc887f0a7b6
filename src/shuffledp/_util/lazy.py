"""Lazy package exports (PEP 562), so ``import shuffledp`` stays cheap and cycle-free.

A package lists ``name -> module`` and gets a module-level ``__getattr__`` importing the
module on first access (``from shuffledp import shuffle_epsilon`` works as usual); its
submodules are attributes without an explicit import (``shuffledp.accounting.subsampling``).
"""

from __future__ import annotations

import importlib
import importlib.util

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~20 ms): annotations are strings here
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``exports[name]`` is the module defining ``name``."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:  # a submodule is an attribute too, as after ``import package.name``
            if name.startswith("_") or importlib.util.find_spec(f"{package}.{name}") is None:
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            return importlib.import_module(f"{package}.{name}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # later lookups skip __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
