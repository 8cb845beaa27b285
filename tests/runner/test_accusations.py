"""Every `integrity` verdict is listed in docs/integrity.md with its evidence: a new one cannot slip in unlisted.

An accusation must rest on proof (DESIGN.md §6). This walks the runner's source for every construction of
`IntegrityError` and compares the places, counted per function, with the rows of the docs' "Accusations" table.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "integrity.md"
SOURCES = ("runner", "core", "problems", "api")
ROW = re.compile(r"^\| `(?P<path>[\w/]+\.py): (?P<where>[\w.]+)` \|")


def _raised_at(path: Path) -> list[str]:
    """The qualified names of the functions of `path` that construct IntegrityError, once per construction."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []

    def visit(node: ast.AST, scope: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                inner = (*scope, child.name)
            if isinstance(child, ast.Call):
                func = child.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if name == "IntegrityError":
                    found.append(".".join(scope) or "<module>")
            visit(child, inner)

    visit(tree, ())
    return found


def accusations_in_code() -> Counter[str]:
    places: Counter[str] = Counter()
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*.py")):
            for where in _raised_at(path):
                places[f"{path.relative_to(ROOT).as_posix()}: {where}"] += 1
    return places


def accusations_in_docs() -> Counter[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Accusations", 1)[1].split("\n## ", 1)[0]
    return Counter(f"{m['path']}: {m['where']}" for line in section.splitlines() if (m := ROW.match(line)))


def test_every_integrity_verdict_in_the_code_has_its_row_of_evidence() -> None:
    code, docs = accusations_in_code(), accusations_in_docs()
    assert code, "no IntegrityError found: the walk is broken"
    assert code == docs, (
        f"raised but not listed in docs/integrity.md: {dict(code - docs)}; listed but not raised: {dict(docs - code)}"
    )


def test_the_walk_finds_a_construction_in_a_method(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "class T:\n    def check(self):\n        if x:\n            raise IntegrityError('a')\n"
        "        raise errors.IntegrityError('b')\n",
        encoding="utf-8",
    )
    assert _raised_at(source) == ["T.check", "T.check"]
