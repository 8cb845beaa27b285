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
    """The concrete Problem subclasses defined in `module` itself (not imported into it) that set a slug.

    A family's shared base class (an elementwise problem's FLOP and byte rules, say) sets no slug of its own.
    """
    return [
        obj
        for _, obj in inspect.getmembers(module, inspect.isclass)
        if issubclass(obj, Problem)
        and not inspect.isabstract(obj)
        and obj.__module__ == module.__name__
        and "slug" in vars(obj)
    ]


@cache
def builtin_problems() -> dict[str, Problem]:
    """Every built-in problem by slug, in alphabetical order. Problems live in family packages under
    `problems.builtin`; a module whose name starts with `_` holds shared building blocks, not problems."""
    import problems.builtin as package

    found: dict[str, Problem] = {}
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
        if info.ispkg or info.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        module = importlib.import_module(info.name)
        for cls in problem_classes(module):
            if cls.slug in found:
                raise ProblemModuleError(f"two built-in problems have the slug {cls.slug!r}")
            found[cls.slug] = cls()
    return dict(sorted(found.items()))


@cache
def builtin_aliases() -> dict[str, str]:
    """Former slugs of built-in problems, each to the slug that now names the problem."""
    aliases: dict[str, str] = {}
    for slug, problem in builtin_problems().items():
        for alias in problem.aliases:
            aliases[alias] = slug
    return aliases


def canonical_slug(slug: str) -> str:
    """The slug a built-in problem goes by now: `slug` itself unless it is a former slug (an alias)."""
    return builtin_aliases().get(slug, slug)


def get_problem(slug: str) -> Problem:
    """The built-in problem `slug` (or the one a former slug names), or UnknownProblemError with close matches."""
    problems = builtin_problems()
    slug = canonical_slug(slug)
    if slug in problems:
        return problems[slug]
    known = [*problems, *builtin_aliases()]
    raise UnknownProblemError(slug, difflib.get_close_matches(slug, known, n=3, cutoff=0.5))


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
