"""`arena submit` through the store: recorded and run on the local runner, or queued for the fleet's runners of
a pool (`--fleet`) and followed by its pushed events. Both say on Ctrl-C what became of the submission."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

from arena.render import ProgressPrinter
from contract.wire import JobRequest, SubmissionResult
from core.errors import CancelledByUserError, UserFacingError
from core.submit.uploads import Upload
from problems.base import Problem

if TYPE_CHECKING:
    from core.contests.entry import ContestEntries
    from core.problems import ProblemSpec
    from core.submit.local import LocalRun


def _interrupted(progress: LocalRun) -> str:
    """The one line for Ctrl-C on a recorded submission: what became of it."""
    number = f"submission #{progress.submission_id}"
    if progress.submission_id is None:
        return "interrupted (Ctrl-C) before the submission was recorded; nothing will run."
    if progress.withdrawn:
        return f"interrupted (Ctrl-C): {number} was cancelled and will not run again."
    if progress.withdrawn is False:
        return f"interrupted (Ctrl-C) after {number} had finished; its result is stored."
    reason = f" ({progress.withdraw_error})" if progress.withdraw_error else ""
    return (
        f"interrupted (Ctrl-C), but {number} could not be withdrawn{reason}; "
        "the next `arena submit` may run it before its own."
    )


def _say(line: str) -> None:
    print(f"  {line}", file=sys.stderr)


def run_recorded(
    args: argparse.Namespace, problem: Problem, upload: Upload, request: JobRequest
) -> tuple[SubmissionResult, ContestEntries | None]:
    """Record the submission in the store (embedded unless DATABASE_URL is set) and run it on the local runner;
    the result, and for a ranked run what it counts for."""
    try:
        from core.errors import USER_FACING, KernelArenaError, MigrationError, RunnerClientError, StoreUnavailableError
        from core.problems import ProblemSpec
        from core.settings import RateLimitSettings, Settings
        from core.submit.local import LocalRun, LocalSubmission, submit_and_wait
        from runner.clients.local import LocalRunner, detect_gpu_type
    except ImportError as exc:
        raise UserFacingError(
            f"Recording submissions needs the package {exc.name}: install the bot extra from the project's "
            "checkout (`pip install -e '.[bot]'`), or pass --no-store."
        ) from exc
    local = LocalSubmission(
        problem=ProblemSpec.builtin(problem),
        upload=upload,
        dtype=args.dtype,
        mode=args.mode,
        profile_case=args.profile_case,
    )
    try:
        # Rate limits protect a shared service from its users; whoever runs the CLI owns this store.
        big = {name: 10**9 for name in RateLimitSettings.model_fields}  # every mode's burst and rate
        unlimited = RateLimitSettings(**big)
        settings = Settings().model_copy(update={"rate": unlimited})
        runner = LocalRunner(gpu_type=detect_gpu_type(args.device), measure=request.measure)
        progress = LocalRun()
        try:
            submission_id, result = asyncio.run(
                submit_and_wait(settings, local, runner, ProgressPrinter(), progress, _say)
            )
        except KeyboardInterrupt:
            raise CancelledByUserError(_interrupted(progress)) from None
    except (*USER_FACING, CancelledByUserError):
        raise
    except (StoreUnavailableError, MigrationError) as exc:
        raise UserFacingError(f"The store is unavailable: {exc} Pass --no-store to run without recording.") from exc
    except (KernelArenaError, RunnerClientError) as exc:  # the local runner cannot take the job
        raise UserFacingError(str(exc)) from exc
    print(f"  recorded as submission #{submission_id}", file=sys.stderr)
    return result, progress.contests


def run_on_fleet(
    args: argparse.Namespace, problem: ProblemSpec, upload: Upload
) -> tuple[SubmissionResult, ContestEntries | None]:
    """Queue the submission in the store for the fleet's runners of the pool `--fleet` (at `--world-size` ranks, its
    slots of that many), and wait for its result. The service's measurement settings apply (the runner's), not the
    timing options of this command."""
    from api.submission_models import SubmissionEventView
    from arena.submission_phases import SubmissionPhases
    from core.errors import USER_FACING, KernelArenaError, MigrationError, StoreUnavailableError
    from core.fleet.submit import submit_to_fleet
    from core.settings import RateLimitSettings, Settings
    from core.store.pool import open_store
    from core.submit.events import SubmissionEvent
    from core.submit.local import LocalRun, LocalSubmission

    local = LocalSubmission(
        problem=problem,
        upload=upload,
        dtype=args.dtype,
        mode=args.mode,
        profile_case=args.profile_case,
        world_size=args.world_size,
    )
    big = {name: 10**9 for name in RateLimitSettings.model_fields}
    settings = Settings().model_copy(update={"rate": RateLimitSettings(**big)})
    progress = LocalRun()

    phases = SubmissionPhases(args.fleet)

    def said(event: SubmissionEvent) -> None:
        phases.event(SubmissionEventView.of(event))

    async def queued() -> tuple[int, SubmissionResult]:
        async with open_store(settings.store) as store:
            return await submit_to_fleet(store.pool, settings, local, args.fleet, _say, said, progress)

    try:
        submission_id, result = asyncio.run(queued())
    except KeyboardInterrupt:
        raise CancelledByUserError(_interrupted(progress)) from None
    except (*USER_FACING, CancelledByUserError):
        raise
    except (StoreUnavailableError, MigrationError, KernelArenaError) as exc:
        raise UserFacingError(f"The store is unavailable: {exc}") from exc
    print(f"  recorded as submission #{submission_id}", file=sys.stderr)
    return result, progress.contests
