"""The project's import graph, read from the source (every import, at the top or inside a function): what the
architecture tests walk.

Each module's imports are read once per test session: the walks of hundreds of parametrised tests share them (the
source does not change while the tests run)."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT_PACKAGES = ("contract", "runner", "problems", "bot", "arena", "core", "web", "api")


@cache
def module_file(name: str) -> Path | None:
    base = ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def modules_under(package: str) -> list[str]:
    folder = ROOT.joinpath(*package.split("."))
    names = []
    for path in sorted(folder.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return names


@cache
def direct_imports(name: str) -> frozenset[str]:
    """Every project module `name` imports, at the top or inside a function (`from a import b` counts a.b when
    b is a module; a relative import is resolved against the package)."""
    path = module_file(name)
    assert path is not None, name
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names if module_file(f"{base}.{a.name}"))
    return frozenset(m for m in found if m.split(".")[0] in PROJECT_PACKAGES and module_file(m))


def import_closure(*start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(start)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts)) if module_file(".".join(parts[:i]))]
        todo += sorted(direct_imports(name) - seen)
    return seen
