"""Every module of the project over MAX_LINES either says in its docstring why it stays whole, or is listed here
as one to split, with the work that splits it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("api", "arena", "bot", "contract", "core", "problems", "runner", "web")
MAX_LINES = 400
MARK = "Kept as one module:"
# Modules over the bound that are to split, and what splits them.
TO_SPLIT: dict[str, str] = {}


def _modules() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def _long() -> list[Path]:
    return [p for p in _modules() if len(p.read_text(encoding="utf-8").splitlines()) > MAX_LINES]


@pytest.mark.parametrize("path", _long(), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_long_module_says_why_it_stays_whole_or_is_listed_to_split(path: Path) -> None:
    name = str(path.relative_to(ROOT))
    if name in TO_SPLIT:
        return
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    assert MARK in docstring, (
        f"{name} is over {MAX_LINES} lines: split it, or say in its docstring, after {MARK!r}, why it stays whole"
    )


def test_every_module_listed_to_split_is_still_long() -> None:
    lengths = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines()) for p in _modules()}
    stale = [name for name in TO_SPLIT if lengths.get(name, 0) <= MAX_LINES]
    assert not stale, f"split already (or gone): remove {stale} from TO_SPLIT"
