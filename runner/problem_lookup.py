"""The problem a job names: built in or sent as a module's text, at the version and dtype the job asks for.

Shared by the judge (which needs the problem's inputs and checks) and the launcher (which needs its signature).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from contract.wire import JobRequest
from problems.registry import UnknownProblemError, get_problem, load_problem_source
from runner.errors import UnknownProblemCodeError, UnsupportedDtypeError

if TYPE_CHECKING:
    from problems.base import Problem


def resolve_problem(request: JobRequest) -> Problem:
    """The problem a job names (built in, or its module's text), at the version and dtype the job asks for."""
    if request.problem_source is not None:
        problem = load_problem_source(request.problem_source, module_name=f"arena_problem_{request.problem_slug}")
    else:
        try:
            problem = get_problem(request.problem_slug)
        except UnknownProblemError as exc:
            raise UnknownProblemCodeError(str(exc)) from exc
    wanted = request.problem_version
    if request.problem_source is None and wanted is not None and wanted != problem.version:
        raise UnknownProblemCodeError(
            f"This runner has version {problem.version} of {problem.slug}; the job is for version {wanted}, whose "
            "interface was different. Submit again to run on the current version."
        )
    if request.dtype not in problem.dtypes:
        raise UnsupportedDtypeError(
            f"{problem.slug} does not support {request.dtype}; choose one of {', '.join(problem.dtypes)}."
        )
    return problem
