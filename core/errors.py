"""Error types of the core. A UserFacingError's message is safe to show as-is and says what to fix."""

from __future__ import annotations

from typing import ClassVar

from contract.errors import RunnerClientError, RunnerLostError, RunnerRefusedError, RunnerUnavailableError

# Raised by runner backends (`contract.runner_client`); a RunnerRefusedError is user-facing like a UserFacingError.
__all__ = ["RunnerClientError", "RunnerLostError", "RunnerRefusedError", "RunnerUnavailableError"]


class KernelArenaError(Exception):
    """Base of every error the core raises on purpose."""


class UserFacingError(KernelArenaError):
    """Bad input from a competitor or moderator; the message tells them what to do.

    `code` is the stable code the API's problem details and every CLI command's `--json` error carry (one of
    `api.problems_json.PROBLEM_CODES`; clients branch on it)."""

    code: ClassVar[str] = "validation_failed"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadUploadError(UserFacingError):
    """The attached file cannot be a submission (extension, size, encoding)."""

    code: ClassVar[str] = "bad_upload"


class IdempotencyConflictError(UserFacingError):
    """A client token (the API's Idempotency-Key) already names a submission sent with another body."""

    code: ClassVar[str] = "idempotency_conflict"


class UnknownProblemError(UserFacingError):
    """No enabled problem has this slug."""

    code: ClassVar[str] = "problem_not_found"


class ProblemDisabledError(UserFacingError):
    """The problem exists but a moderator has disabled it."""

    code: ClassVar[str] = "problem_disabled"


class UnsupportedDtypeError(UserFacingError):
    """The problem's current version does not take this dtype."""

    code: ClassVar[str] = "unsupported_dtype"


class BannedError(UserFacingError):
    """The user is banned from submitting."""

    code: ClassVar[str] = "banned"


class RateLimitedError(UserFacingError):
    """The user has used up their submissions for this mode; `retry_after_s` says when one frees up."""

    code: ClassVar[str] = "rate_limited"

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class SubmissionNotFoundError(UserFacingError):
    """No submission has this id."""

    code: ClassVar[str] = "submission_not_found"


class UserNotFoundError(UserFacingError):
    """No user has this id or name."""

    code: ClassVar[str] = "user_not_found"


class ProblemExistsError(UserFacingError):
    """A problem with this slug already exists."""


class ModerationError(UserFacingError):
    """A moderator action that does not apply in the current state (ban a banned user, rerun a running job)."""


class ContestError(UserFacingError):
    """A contest change that its rules or its state refuse (problems edited after the start, an end in the past)."""


class ContestNotFoundError(UserFacingError):
    """No contest has this slug."""

    code: ClassVar[str] = "contest_not_found"


class ContestExistsError(UserFacingError):
    """A contest with this slug already exists."""


class NotProfiledError(UserFacingError):
    """A run a profile diff needs has no stored profile: another mode, or its run has not got that far."""

    code: ClassVar[str] = "not_profiled"


class ProfilesNotComparableError(UserFacingError):
    """Two profiles that a diff cannot put side by side: other problems, or other GPU types."""

    code: ClassVar[str] = "profiles_not_comparable"


class NothingToCompareError(UserFacingError):
    """A profile diff without B found no other profile to compare A with."""

    code: ClassVar[str] = "nothing_to_compare"


class StoreUnavailableError(KernelArenaError):
    """The database cannot be reached or started; the message says what to check."""


class StoreNotReadyError(StoreUnavailableError):
    """The store answers, but a service that must not change it cannot use it as it is: its schema is behind the
    code's migrations, or the read-only role is missing. The message says what to run."""


class MigrationError(KernelArenaError):
    """The migration files and the database disagree (a bad file name, or an applied file that was edited)."""


class StaleLeaseError(KernelArenaError):
    """This dispatcher no longer holds the job's lease: another took it over, so its result must be dropped."""


class InvalidSubmissionError(UserFacingError):
    """A submission option is out of range (mode, GPU type)."""


class InvalidOptionError(UserFacingError):
    """An option is out of range (a language filter, a page size)."""

    code: ClassVar[str] = "invalid_option"


class CancelledByUserError(KernelArenaError):
    """The user stopped a command (Ctrl-C) and its work was withdrawn; `message` says what became of it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


USER_FACING: tuple[type[Exception], ...] = (UserFacingError, RunnerRefusedError)
"""What a front end shows as-is: the message says what to fix."""
