"""Adding a problem from chat: read the module statically, run the runner's admission self-test, publish.

`examine_problem` never executes the module in this process: the catalogue reads its metadata from the
syntax tree, and a runner (remote, or a sandboxed local worker) runs the self-test (DESIGN §6: the reference
passes its own verification; all-zeros, a constant and a copy of an input fail it). `publish_problem` then
stores it, as a new problem or as the next version of an existing one.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import PurePath

import asyncpg

from contract.runner_client import ProblemValidator
from contract.wire import MAX_SOURCE_BYTES, ValidateReport, ValidateRequest
from core.errors import BadUploadError, ModerationError
from core.moderation import Actor, create_problem, replace_problem
from core.problems import ProblemSpec, check_new_problem, dtype_labels
from core.store import problems
from core.store.problems import ProblemVersion
from problems.catalog import CatalogError, ProblemInfo, info_from_source, static_problem

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Candidate:
    """A problem module that went through the self-test, waiting for a moderator to publish it."""

    info: ProblemInfo
    source: str
    report: ValidateReport
    existing: ProblemVersion | None
    validator: str

    @property
    def publishable(self) -> bool:
        return self.report.ok and self.report.slug in (None, self.info.slug)


def check_problem_attachment(file_name: str, size: int) -> None:
    """What can be checked before downloading a problem module: its extension and declared size."""
    name = PurePath(file_name).name
    if PurePath(name).suffix.lower() != ".py":
        raise BadUploadError(f"`{name}` is not a .py file. Attach the problem's Python module.")
    if size > MAX_SOURCE_BYTES:
        raise BadUploadError(f"`{name}` is over {MAX_SOURCE_BYTES // 1024} KiB; a problem module should be small.")


def read_problem_module(file_name: str, data: bytes) -> tuple[str, ProblemInfo]:
    """The module's text and its statically read description; BadUploadError says what to fix."""
    check_problem_attachment(file_name, len(data))
    name = PurePath(file_name).name
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadUploadError(f"`{name}` is not UTF-8 text (byte {exc.start}). Save it as UTF-8 and retry.") from exc
    try:
        return source, info_from_source(source)
    except CatalogError as exc:
        raise BadUploadError(f"`{name}` cannot be read as a problem: {exc}.") from exc


async def examine_problem(pool: asyncpg.Pool, file_name: str, data: bytes, validator: ProblemValidator) -> Candidate:
    """Read the module and run its admission self-test on `validator`, for its first dtype."""
    source, info = read_problem_module(file_name, data)
    check_new_problem(info.slug, info.title)
    existing = await problems.get_problem(pool, info.slug)
    request = ValidateRequest(problem_source=source, dtype=info.dtypes[0])  # type: ignore[arg-type]
    log.info("problem %s: admission self-test on %s", info.slug, validator.name)
    report = await validator.validate(request)
    log.info("problem %s: admission %s", info.slug, "passed" if report.ok else "failed")
    return Candidate(info, source, report, existing, validator.name)


async def publish_problem(pool: asyncpg.Pool, actor: Actor, candidate: Candidate) -> ProblemVersion:
    """Store a candidate that passed: a new problem, or the next version of the one with its slug."""
    if not candidate.publishable:
        raise ModerationError(f"`{candidate.info.slug}` did not pass its self-test; fix the module and add it again.")
    info = candidate.info
    # Read again, never run: what its dtypes read as (uint32 for an integer problem) comes from its buffers.
    problem = static_problem(candidate.source)
    if candidate.existing is None:
        published = await create_problem(pool, actor, ProblemSpec.of(problem, candidate.source))
    else:
        published = await replace_problem(
            pool,
            actor,
            info.slug,
            source=candidate.source,
            dtypes=info.dtypes,
            score_metric=info.score_metric,
            title=info.title,
            reason="added from Discord",
            data_types=dtype_labels(problem),
        )
    log.info("problem %s v%d published by %s", published.slug, published.version, actor.external_id)
    return published
