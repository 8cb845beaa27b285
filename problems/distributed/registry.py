"""Finds the built-in distributed problems: a listing of their own, beside `problems.registry.builtin_problems`, so
that every single-GPU path (the catalogue, the judge, the boards, the library's tests) sees none of them."""

from __future__ import annotations

import difflib
import importlib
import inspect
import pkgutil
from functools import cache

from problems.distributed.base import DistributedProblem
from problems.registry import UnknownProblemError


@cache
def distributed_problems() -> dict[str, DistributedProblem]:
    """Every built-in distributed problem by slug, in alphabetical order, from the modules of
    `problems.distributed.builtin` (a module whose name starts with `_` holds shared building blocks)."""
    import problems.distributed.builtin as package

    found: dict[str, DistributedProblem] = {}
    for info in pkgutil.iter_modules(package.__path__, prefix=f"{package.__name__}."):
        if info.ispkg or info.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(cls, DistributedProblem)
                and not inspect.isabstract(cls)
                and cls.__module__ == module.__name__
                and "slug" in vars(cls)
            ):
                if cls.slug in found:
                    raise ValueError(f"two distributed problems have the slug {cls.slug!r}")
                found[cls.slug] = cls()
    return dict(sorted(found.items()))


def get_distributed_problem(slug: str) -> DistributedProblem:
    """The distributed problem `slug`, or UnknownProblemError with close matches."""
    problems = distributed_problems()
    if slug in problems:
        return problems[slug]
    raise UnknownProblemError(slug, difflib.get_close_matches(slug, list(problems), n=3, cutoff=0.5))
