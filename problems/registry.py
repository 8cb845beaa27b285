"""Finds the built-in problems and loads problem modules from source files."""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import inspect
import pkgutil
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

from problems.base import Problem


class UnknownProblemError(LookupError):
    """No problem has this slug. `suggestions` holds close slugs."""

    def __init__(self, slug: str, suggestions: list[str]) -> None:
        hint = f" Did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        super().__init__(f"Unknown problem {slug!r}.{hint} `arena problems` lists them all.")
        self.slug = slug
        self.suggestions = suggestions


class ProblemModuleError(ValueError):
    """A problem source file does not define exactly one usable Problem subclass."""


def problem_classes(module: ModuleType) -> list[type[Problem]]:
    """The concrete Problem subclasses defined in `module` itself (not imported into it)."""
    return [
        obj
        for _, obj in inspect.getmembers(module, inspect.isclass)
        if issubclass(obj, Problem) and not inspect.isabstract(obj) and obj.__module__ == module.__name__
    ]


@cache
def builtin_problems() -> dict[str, Problem]:
    """Every built-in problem by slug, in alphabetical order."""
    import problems.builtin as package

    found: dict[str, Problem] = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for cls in problem_classes(module):
            found[cls.slug] = cls()
    return dict(sorted(found.items()))


def get_problem(slug: str) -> Problem:
    """The built-in problem `slug`, or UnknownProblemError with close matches."""
    problems = builtin_problems()
    if slug in problems:
        return problems[slug]
    raise UnknownProblemError(slug, difflib.get_close_matches(slug, list(problems), n=3, cutoff=0.5))


def load_problem_source(source: str, module_name: str = "arena_problem") -> Problem:
    """Load a problem from the text of a module that defines exactly one Problem subclass."""
    module = ModuleType(module_name)
    module.__file__ = f"<{module_name}>"
    sys.modules[module_name] = module
    try:
        exec(compile(source, module.__file__, "exec"), module.__dict__)
    except SyntaxError as exc:
        raise ProblemModuleError(f"the problem module does not parse: line {exc.lineno}: {exc.msg}") from exc
    finally:
        sys.modules.pop(module_name, None)
    classes = problem_classes(module)
    if len(classes) != 1:
        names = ", ".join(c.__name__ for c in classes) or "none"
        raise ProblemModuleError(f"a problem module must define exactly one Problem subclass; found {names}")
    return classes[0]()


def load_problem_file(path: str | Path) -> Problem:
    """Load a problem from a `.py` file (see `load_problem_source`)."""
    path = Path(path)
    return load_problem_source(path.read_text(encoding="utf-8"), module_name=f"arena_problem_{path.stem}")
