"""The API reference covers every public package and module, each page opens with a "what is here" paragraph,
and the command-line page names every command of the parser."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer

from shuffledp.cli import app

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference"
PAGES = sorted(REFERENCE.glob("*.md"))
#: A "what is here" paragraph says what the package is for, its entry points and where to start: not one line.
MIN_WORDS = 40


def _public_modules() -> set[str]:
    """shuffledp's public subpackages and top-level modules; ``protocols`` stands for its four protocol packages."""
    src = ROOT / "src" / "shuffledp"
    names = set()
    for path in src.iterdir():
        if path.name.startswith("_"):
            continue
        if (path / "__init__.py").is_file():
            names.add(f"shuffledp.{path.name}")
        elif path.suffix == ".py":
            names.add(f"shuffledp.{path.stem}")
    names.remove("shuffledp.protocols")
    names |= {
        f"shuffledp.protocols.{p.name}"
        for p in (src / "protocols").iterdir()
        if (p / "__init__.py").is_file() and not p.name.startswith("_")
    }
    return names


def _directives(text: str) -> list[str]:
    return re.findall(r"^::: (\S+)", text, flags=re.M)


def test_every_public_package_and_module_has_a_reference_page():
    documented = {name for page in PAGES for name in _directives(page.read_text())}
    assert {"shuffledp.accounting", "shuffledp.service", "shuffledp.protocols.pic"} <= _public_modules()
    assert sorted(_public_modules() - documented) == []


@pytest.mark.parametrize("listing", ["mkdocs.yml", "docs/index.md"])
def test_every_reference_page_is_in_the_nav_and_the_home_page(listing):
    text = (ROOT / listing).read_text()
    assert [page.name for page in PAGES if f"reference/{page.name}" not in text] == []


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_every_reference_page_opens_with_what_is_here(page):
    text = page.read_text()
    assert text.startswith("# ")
    first_directive = text.index("\n::: ")  # every page renders at least one module
    blocks = [b for b in text[:first_directive].split("\n\n")[1:] if b.strip()]
    assert blocks, f"{page.name}: nothing between the title and the first ::: directive"
    paragraph = blocks[0]
    assert paragraph.startswith("**What is here.** "), f"{page.name} opens with {paragraph[:60]!r}"
    assert len(paragraph.split()) >= MIN_WORDS, f"{page.name}: a {len(paragraph.split())}-word opening"


def _command_paths(command: Any, path: tuple[str, ...] = ()) -> list[str]:
    """Every command and group under ``command`` (a click command as typer builds it), as typed after ``shuffledp``."""
    paths = [" ".join(path)] if path else []
    for name, sub in getattr(command, "commands", {}).items():
        paths += _command_paths(sub, (*path, name))
    return paths


def test_cli_page_names_every_command_of_the_parser():
    paths = _command_paths(typer.main.get_command(app))
    assert {"amplify", "metric local-epsilon", "experiment run", "personalized", "serve"} <= set(paths)
    text = (REFERENCE / "cli.md").read_text()
    missing = [p for p in paths if not re.search(rf"`shuffledp {re.escape(p)}[` ]", text)]
    assert missing == []
