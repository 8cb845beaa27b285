"""The errors every layer shares: the codes a run's error and an API's error answer carry, and what a runner
backend raises on purpose. Imports pydantic only.

The core catches the backend errors (`contract.runner_client` names who raises them); the runner's processes, the
fleet API and the CLI read and write the codes on the wire.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

# Why a run produced no result (`contract.wire.ErrorInfo.code`).
ErrorCode = Literal[
    "bad_request",
    "unknown_problem",
    "unsupported_dtype",
    "syntax_error",
    "import_error",
    "missing_solution",
    "signature_mismatch",
    "compile_error",
    "no_gpu",
    "runtime_error",
    "wrong_answer",
    "crashed",
    "timeout",
    "implausible_time",
    "integrity",
    "internal",
    "cancelled",
    "host_busy",
    "memory_limit",
    "profiler_unavailable",
    "precision",
]
# An error answer of a runner's HTTP API or the fleet's runner routes.
ApiErrorCode = Literal[
    "unauthorized",
    "forbidden",
    "bad_request",
    "not_found",
    "conflict",
    "queue_full",
    "payload_too_large",
    "rate_limited",
    "unavailable",
    "internal",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ApiErrorBody(_Model):
    code: ApiErrorCode
    message: str


class ApiError(_Model):
    """Every error answer of the runner: `{"error": {"code", "message"}}` with a real HTTP status."""

    error: ApiErrorBody


class RunnerClientError(Exception):
    """Base of what a runner backend raises on purpose."""


class RunnerRefusedError(RunnerClientError):
    """A runner cannot take the request as given; the message is safe to show as-is and says what to fix (a
    runner URL or CA bundle that won't do, a problem module the runner refuses, no GPU where one was asked for)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class RunnerLostError(RunnerClientError):
    """A runner answered, but cannot finish the job (it lost the job it had accepted, or broke); the dispatcher
    counts an attempt and retries."""


class RunnerUnavailableError(RunnerClientError):
    """A runner gave no answer (down, restarting, unreachable) or had no room: nothing says it lost the job.

    `accepted` tells whether the runner already holds the job (follow it again once the runner is back) or never
    got it (the job goes back to the queue, and this dispatch is not counted as an attempt). The message is for
    the log: it names the runner, never its address.
    """

    def __init__(self, message: str, *, accepted: bool) -> None:
        super().__init__(message)
        self.accepted = accepted
