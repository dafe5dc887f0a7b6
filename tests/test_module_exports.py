"""Every public module of shuffledp exports exactly its API through ``__all__`` (issue 16).

A module is public when no component of its dotted path starts with ``_``.  ``__all__`` is what
``from module import *`` binds and what the API reference (mkdocstrings) treats as public, so it
must exist, name only public objects that exist, never a module, and list every public function
and class the module defines, so a new one is not forgotten.
"""

from __future__ import annotations

import importlib
import pkgutil
import types
from pathlib import Path

import pytest

import shuffledp

#: Public-named helpers that sibling modules import, deliberately kept out of their module's API.
NOT_EXPORTED = {
    "shuffledp.accounting.metric.rr_shuffle": {"check_rr_p", "rr_local", "rr_certified_search"},
    "shuffledp.accounting.metric.sgdl": {"relative_log_pmf"},
}

#: Validators of private modules that a public module exports because docs/architecture.md names that path.
DOCUMENTED_VALIDATOR_PATHS = {"shuffledp.accounting.bounds": {"check_delta"}}


def _public_module_names() -> list[str]:
    names = [shuffledp.__name__]
    for info in pkgutil.walk_packages(shuffledp.__path__, f"{shuffledp.__name__}.", onerror=lambda name: None):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


PUBLIC_MODULES = _public_module_names()


def _import_or_skip(name: str) -> types.ModuleType:
    """The module, or a skip naming the missing optional dependency."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing = getattr(exc, "name", None)
        if missing is not None and (missing == "shuffledp" or missing.startswith("shuffledp.")):
            raise
        pytest.skip(f"{name} needs an optional extra that is not installed: {exc}")


def _defined_here(module: types.ModuleType) -> set[str]:
    """Public functions and classes whose home is ``module`` (not imported into it)."""
    return {
        name
        for name, obj in vars(module).items()
        if not name.startswith("_") and callable(obj) and getattr(obj, "__module__", None) == module.__name__
    }


def test_walk_finds_the_public_modules():
    assert "shuffledp.accounting.bounds" in PUBLIC_MODULES and "shuffledp.cli.serve" in PUBLIC_MODULES
    assert not [name for name in PUBLIC_MODULES if "._" in name]


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_public_module_exports_exactly_its_api(name):
    module = _import_or_skip(name)
    assert hasattr(module, "__all__"), f"{name} has no __all__"
    exported = list(module.__all__)
    assert len(exported) == len(set(exported)), f"{name}.__all__ repeats a name"
    for item in exported:
        assert not item.startswith("_"), f"{name}.__all__ lists the private name {item!r}"
        assert hasattr(module, item), f"{name}.__all__ lists {item!r}, which the module does not have"
        assert not isinstance(getattr(module, item), types.ModuleType), f"{name}.__all__ lists the module {item!r}"
    kept_out = NOT_EXPORTED.get(name, set())
    missing = _defined_here(module) - set(exported) - kept_out
    assert not missing, f"{name} defines {sorted(missing)} but its __all__ does not list them"
    assert kept_out <= _defined_here(module) - set(exported), f"stale NOT_EXPORTED entry for {name}"


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_validators_of_private_modules_are_exported_only_where_documented(name):
    """A ``check_*`` living in a private module is an internal check, not the API of the module importing it."""
    module = _import_or_skip(name)
    documented = DOCUMENTED_VALIDATOR_PATHS.get(name, set())
    leaked = {
        item
        for item in getattr(module, "__all__", ())
        if item.startswith("check_")
        and any(part.startswith("_") for part in getattr(getattr(module, item), "__module__", "").split("."))
    }
    assert leaked <= documented, f"{name}.__all__ exports the private validators {sorted(leaked - documented)}"


def test_documented_validator_paths_are_in_the_architecture_notes():
    text = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    for module, names in DOCUMENTED_VALIDATOR_PATHS.items():
        for item in names:
            assert f"{module.rsplit('.', 1)[-1]}.{item}" in text
            assert item in importlib.import_module(module).__all__


def test_star_import_binds_no_third_party_module_or_private_validator():
    namespace: dict[str, object] = {}
    exec("from shuffledp.accounting.exact_rr import *", namespace)  # noqa: S102
    assert "np" not in namespace and "math" not in namespace
    assert "check_n" not in namespace and "binary_rr_exact_epsilon" in namespace
