"""The launcher runs next to a stranger's code: nothing it imports, however deep and wherever in a function, may be
the judge's (the inputs' generator, the expected outputs, verification, verdicts, statistics)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Modules that hold expected outputs or decide verdicts: the judge's side only.
JUDGE_ONLY = {
    "runner.evaluate",
    "runner.case_buffers",
    "runner.judge",
    "runner.launcher_link",
    "runner.admission",
    "runner.measure.judged",
}


def _module_file(name: str) -> Path | None:
    base = ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(name: str) -> set[str]:
    """Every project module `name` imports, at the top or inside a function (`from a import b` counts a.b when
    b is a module)."""
    path = _module_file(name)
    assert path is not None, name
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names if _module_file(f"{node.module}.{a.name}"))
    return {m for m in found if m.split(".")[0] in ("runner", "problems") and _module_file(m)}


def import_closure(start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts)) if _module_file(".".join(parts[:i]))]
        todo += sorted(_imports(name) - seen)
    return seen


def test_the_launcher_imports_nothing_of_the_judge() -> None:
    reached = import_closure("runner.launcher")
    assert "runner.loader" in reached and "runner.harness" in reached
    assert not reached & JUDGE_ONLY, sorted(reached & JUDGE_ONLY)


def test_the_check_sees_the_judge_where_it_is_imported() -> None:
    # The same walk from the judge's entry point does reach its pipeline: the check above can fail.
    assert {"runner.evaluate", "runner.case_buffers"} <= import_closure("runner.judge")
