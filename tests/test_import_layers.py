"""Imports point downward through the layers of DESIGN.md, and no modules import each other.

Every ``import`` counts, those inside functions too (an import placed in a function to dodge
a cycle is still a cycle).  Imports of a package's ``__init__`` are not edges (a facade).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "src" / "shuffledp"

#: DESIGN.md, "Layers": a module may import from its own layer or a lower one only.
LAYERS = {
    "_util": 0, "errors": 0, "params": 0, "crypto": 0, "datasets": 0,
    "randomizers": 1, "audit": 1,
    "accounting": 2,
    "tasks": 3,
    "protocols": 4,
    "experiments": 5,
    "cli": 6, "service": 6, "__main__": 6,
}  # fmt: skip
#: Modules importable from lower layers than their own: events describe what happened and
#: import only accounting's primitives, "so randomizers may import it" (DESIGN.md, accounting/).
LOWERED = {"shuffledp.accounting.events": 1}


def _modules() -> dict[str, Path]:
    return {".".join(f.relative_to(ROOT.parent).with_suffix("").parts): f for f in ROOT.rglob("*.py")}


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports (resolved to the longest existing module)."""
    base = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = base.split(".")
                module = ".".join(parts[: len(parts) - node.level + 1]) + ("." + node.module if node.module else "")
            else:
                module = node.module or ""
            targets = [module + "." + a.name for a in node.names] + [module]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rsplit(".", 1)[0] if "." in target else ""
            if target and target != name:
                found.add(target)
    return found


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 else None


MODULES = _modules()
EDGES = {name: _imports(name, path, MODULES) for name, path in MODULES.items()}


def test_every_top_level_module_has_a_layer():
    missing = {m.split(".")[1] for m in MODULES if m.count(".") and not m.endswith("__init__") and _layer(m) is None}
    assert not missing, f"add these to LAYERS (and to DESIGN.md): {sorted(missing)}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_upward_import(module):
    mine = _layer(module)
    if mine is None:  # the package facade shuffledp/__init__.py re-exports from every layer
        return
    upward = sorted(t for t in EDGES[module] if LOWERED.get(t, _layer(t) or 0) > mine)
    assert not upward, f"{module} (layer {mine}) imports from a higher layer: {upward}"


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), facades excluded."""
    graph = {m: {t for t in ts if MODULES[t].name != "__init__.py"} for m, ts in edges.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_outside_accounting():
    # accounting/ is being untangled in its own slice of issue 16; its test drops this exemption
    cycles = [c for c in _cycles(EDGES) if not all(m.startswith("shuffledp.accounting.") for m in c)]
    assert not cycles, f"import cycles: {cycles}"


def test_cli_command_modules_import_only_public_library_modules():
    """cli/ modules may use cli's own private modules, and nothing private elsewhere."""
    for module in (m for m in MODULES if m.startswith("shuffledp.cli.") and not m.split(".")[-1].startswith("_")):
        private = sorted(t for t in EDGES[module] if not t.startswith("shuffledp.cli") and any(p.startswith("_") for p in t.split(".")[1:]))
        assert not private, f"{module} imports private modules {private}"
