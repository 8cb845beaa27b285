"""The codes of refusals: each user-facing error type names one, the API answers with it, and the CLI's `--json`
errors carry the same (core.errors.UserFacingError.code)."""

from __future__ import annotations

import core.errors
from api.problems_json import PROBLEM_CODES, problem_from_exception
from core.errors import BadUploadError, RateLimitedError, UnknownProblemError, UserFacingError


def _subclasses(cls: type) -> list[type]:
    return [cls, *(sub for direct in cls.__subclasses__() for sub in _subclasses(direct))]


def test_every_user_facing_error_names_a_problem_code() -> None:
    types = [t for t in _subclasses(UserFacingError) if t.__module__ == core.errors.__name__]
    assert len(types) > 10
    unknown = {t.__name__: t.code for t in types if t.code not in PROBLEM_CODES}
    assert not unknown, f"codes not in PROBLEM_CODES: {unknown}"


def test_the_api_answers_an_error_with_its_types_code() -> None:
    for error, code in [
        (UnknownProblemError("no such problem"), "problem_not_found"),
        (BadUploadError("too big"), "bad_upload"),
        (UserFacingError("a plain refusal"), "validation_failed"),
    ]:
        problem = problem_from_exception(error)
        assert problem is not None and (problem.code, problem.detail) == (code, error.message)
    limited = problem_from_exception(RateLimitedError("slow down", retry_after_s=3.2))
    assert limited is not None and limited.code == "rate_limited" and limited.retry_after_s == 3.2
