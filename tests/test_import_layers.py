"""Imports point one way (DESIGN.md, "Layers" and "Inside accounting/"): no module imports a higher
layer, no two modules import each other (directly or through others, not even inside a function), and no
module of ``accounting/`` grows past 1,000 lines.

Read from the source with `ast` (no import is executed), counting every ``import`` and ``from ... import``
wherever it stands.  An import of a package's ``__init__`` is not an edge (a facade re-exporting its modules);
``from package import module`` is an edge to that module.  The same rules as
``../shared/tools/import_cycles.py``.  docs/architecture.md describes the layers.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

import shuffledp

ROOT = Path(shuffledp.__file__).resolve().parent
SRC = ROOT.parent

#: Package layers, lowest first (DESIGN.md): a module may import its own layer and the ones below.
LAYERS = (
    ("params/crypto/datasets/_util/errors", ("params", "crypto", "datasets", "_util", "errors")),
    ("randomizers", ("randomizers",)),
    ("accounting", ("accounting", "audit", "shuffle_audit")),  # audits: exact enumeration, beside the accounting
    ("tasks", ("tasks",)),
    ("protocols", ("protocols",)),
    ("experiments", ("experiments",)),
    ("cli/service", ("cli", "service", "__main__")),
)

#: Layers inside accounting/, lowest first (DESIGN.md, "Inside accounting/").
ACCOUNTING_LAYERS = (
    ("primitives", ("_rounding", "_checks", "_solve", "population", "params")),
    ("engines", ("dominating_pair", "_binomial", "_count_law", "pld", "interop")),
    (
        "bounds",
        (
            "variation_ratio",
            "clones",
            "closed_form",
            "personalized",
            "registry",
            "blanket",
            "release",
            "subsampling",
            "exact_rr",
        ),
    ),
    ("events", ("events",)),
    ("accountants", ("accountants", "pld_accountant")),
    ("user-facing", ("bounds", "inverse", "composition")),
    ("protocol-specific", ("segmented", "metric")),
    ("ledgers", ("ledger",)),
)
#: Events describe, accountants price: events import only the primitives, so randomizers may import events.
EVENTS_MAY_IMPORT = {"primitives"}

#: Imports across layers that DESIGN.md allows: a randomizer describes its release as an event
#: (``R.shuffle_event(n)``, DESIGN.md "Core contracts"), and events import only primitives.
PERMITTED = {("shuffledp.randomizers.base", "shuffledp.accounting.events")}

#: Violations tolerated for now, each to be removed by the change that fixes it; the test fails when one is
#: fixed and still listed.  Empty: issue 16 removed the last ones (progress into _util/, set-valued checks
#: into datasets/, the segmented validators into one module).
KNOWN_UPWARD: set[tuple[str, str]] = set()
KNOWN_CYCLES: set[frozenset[str]] = set()

MAX_ACCOUNTING_LINES = 1_000


@cache
def _modules() -> dict[str, Path]:
    return {".".join(f.relative_to(SRC).with_suffix("").parts): f for f in sorted(ROOT.rglob("*.py"))}


@cache
def _edges() -> dict[str, frozenset[str]]:
    """module -> the project modules it imports (anywhere in its source), package facades excluded."""
    mods = _modules()
    edges = {}
    for name, path in mods.items():
        base = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = base.split(".")
                    module = ".".join(parts[: len(parts) - node.level + 1]) + ("." + node.module if node.module else "")
                else:
                    module = node.module or ""
                targets = [module + "." + alias.name for alias in node.names] + [module]
            else:
                continue
            for target in targets:
                while target and target not in mods:
                    target = target.rsplit(".", 1)[0] if "." in target else ""
                if target and target != name and mods[target].name != "__init__.py":
                    found.add(target)
        edges[name] = frozenset(found)
    return edges


def _cycles(edges: dict[str, frozenset[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def _layer(module: str) -> tuple[int, str] | None:
    """(rank, name) of the package layer of ``module``; None for the package's own facade."""
    parts = module.removesuffix(".__init__").split(".")
    if len(parts) == 1:
        return None  # shuffledp/__init__.py: lazy re-exports only
    top = parts[1]
    for rank, (name, members) in enumerate(LAYERS):
        if top in members:
            return rank, name
    raise AssertionError(f"{module} is in no layer of DESIGN.md: add it to LAYERS in {__file__}")


def _accounting_layer(module: str) -> tuple[int, str] | None:
    parts = module.removesuffix(".__init__").split(".")
    if parts[:2] != ["shuffledp", "accounting"] or len(parts) == 2:
        return None  # not accounting/, or its facade
    for rank, (name, members) in enumerate(ACCOUNTING_LAYERS):
        if parts[2] in members:
            return rank, name
    raise AssertionError(f"{module} is in no layer of accounting/: add it to ACCOUNTING_LAYERS in {__file__}")


def _upward_imports() -> set[tuple[str, str, str]]:
    """(importer, imported, why) for every import that points up."""
    found = set()
    for module, targets in _edges().items():
        mine, inner = _layer(module), _accounting_layer(module)
        for target in targets:
            if (module, target) in PERMITTED:
                continue
            theirs, their_inner = _layer(target), _accounting_layer(target)
            if mine is not None and theirs is not None and theirs[0] > mine[0]:
                found.add((module, target, f"{mine[1]} imports {theirs[1]}"))
            if inner is not None and their_inner is not None:
                if their_inner[0] > inner[0]:
                    found.add((module, target, f"accounting {inner[1]} imports accounting {their_inner[1]}"))
                elif inner[1] == "events" and their_inner[1] not in EVENTS_MAY_IMPORT:
                    found.add((module, target, "events import only the primitives"))
    return found


def test_no_import_cycle():
    cycles = set(_cycles(_edges()))
    new = [sorted(c) for c in cycles - KNOWN_CYCLES]
    assert not new, f"import cycles (imports inside functions count): {new}"


def test_known_cycles_still_exist():
    """An allowlisted cycle that is gone must leave the allowlist, so it cannot come back unnoticed."""
    gone = [sorted(c) for c in KNOWN_CYCLES - set(_cycles(_edges()))]
    assert not gone, f"fixed: remove from KNOWN_CYCLES in {__file__}: {gone}"


def test_accounting_has_no_cycle_and_no_known_exception():
    assert not [c for c in KNOWN_CYCLES if any(m.startswith("shuffledp.accounting") for m in c)]
    assert not [c for c in _cycles(_edges()) if any(m.startswith("shuffledp.accounting") for m in c)]


def test_imports_point_down():
    found = _upward_imports()
    new = sorted(f"{a} -> {b} ({why})" for a, b, why in found if (a, b) not in KNOWN_UPWARD)
    assert not new, "imports from a higher layer (DESIGN.md):\n" + "\n".join(new)


def test_known_upward_imports_still_exist():
    listed = {(a, b) for a, b, _ in _upward_imports()}
    gone = sorted(KNOWN_UPWARD - listed)
    assert not gone, f"fixed: remove from KNOWN_UPWARD in {__file__}: {gone}"


def test_accounting_imports_nothing_above_accounting_and_no_exception_is_listed():
    assert not [pair for pair in KNOWN_UPWARD if pair[0].startswith("shuffledp.accounting")]
    assert not [pair for pair in PERMITTED if pair[0].startswith("shuffledp.accounting")]


@pytest.mark.parametrize("module", sorted(m for m in _modules() if m.startswith("shuffledp.accounting")))
def test_accounting_module_is_at_most_1000_lines(module):
    lines = len(_modules()[module].read_text().splitlines())
    assert lines <= MAX_ACCOUNTING_LINES, f"{module} has {lines} lines (at most {MAX_ACCOUNTING_LINES}): split it"


def test_the_checker_sees_imports_inside_functions_and_cycles():
    tree = {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}), "d": frozenset({"a"})}
    assert _cycles(tree) == [frozenset({"a", "b", "c"})]
    assert "shuffledp.accounting._checks" in _edges()["shuffledp.accounting.events"]


def test_cli_command_modules_import_only_public_library_modules():
    """cli/ modules may use cli's own private modules, and nothing private elsewhere."""
    for module in (m for m in _modules() if m.startswith("shuffledp.cli.") and not m.split(".")[-1].startswith("_")):
        private = sorted(
            t
            for t in _edges()[module]
            if not t.startswith("shuffledp.cli") and any(p.startswith("_") for p in t.split(".")[1:])
        )
        assert not private, f"{module} imports private modules {private}"
