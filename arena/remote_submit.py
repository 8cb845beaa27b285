"""`arena submit … --server [URL]`: the whole flow on an arena server, through its public API and a personal
token (`arena login`): upload, follow the submission's events (reconnecting with Last-Event-ID when the stream
drops), then print the result as a local run prints it.

The phases go to stderr, one line each, as `--fleet` says them: the queue place, the runner that took the job,
each case as the runner finishes it (the server's `case` events; the ones a stream missed come from the stored
result), then the result table on stdout and, for a ranked run on a problem a contest holds, what it counts for.
A ranked run that will count for no contest says so, and why, as soon as the server accepts it. `--json` prints
the result as a local run's `--json` does, with `contests` beside it; `--stream` prints every event as one JSON
line (NDJSON) instead, the last one with the result. Refusals print `{"error": {...}}` with the API's code under
`--json` or `--stream`; the exit codes are `arena.server_client`'s.

Ctrl-C withdraws the submission on the server (`DELETE /v1/submissions/{id}`), as Ctrl-C on a local run does, and
says in one line what became of it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

from arena.render import render_contests, render_result, result_json
from arena.server_client import EXIT_FAILED, ArenaServer, ServerError, load_login, report
from arena.submission_phases import SubmissionPhases
from contract.wire import SubmissionResult
from core.contests.entry import ContestEntries
from core.errors import CancelledByUserError, UserFacingError
from core.submit.uploads import check_upload

# How long Ctrl-C waits for the server to confirm the cancel before saying it could not.
CANCEL_TIMEOUT_S = 10.0


@dataclass
class RemoteRun:
    """What the caller needs after an interruption: the submission, once the server has it, and what became of
    it when it was withdrawn."""

    submission_id: int | None = None
    cancelled: bool | None = None
    """True: withdrawn, it will not run; False: it had finished; None: not asked, or no answer (`cancel_error`)."""
    cancel_error: str | None = None
    contests: ContestEntries | None = None

    async def cancel(self, server: ArenaServer) -> None:
        """Withdraw the submission after Ctrl-C; a refusal or no answer is noted, not raised, so that the
        interruption itself still reaches the caller."""
        assert self.submission_id is not None
        try:
            async with asyncio.timeout(CANCEL_TIMEOUT_S):
                await server.cancel(self.submission_id)
            self.cancelled = True
        except ServerError as exc:
            if exc.code == "submission_finished":
                self.cancelled = False
            else:
                self.cancel_error = f"{exc.code}: {exc.message}"
        except TimeoutError:
            self.cancel_error = f"the server did not answer within {CANCEL_TIMEOUT_S:.0f} s"

    def interrupted(self) -> str:
        """The one line for Ctrl-C: what became of the submission (as a local run says it)."""
        number = f"submission #{self.submission_id}"
        if self.submission_id is None:
            return (
                "interrupted (Ctrl-C) before the server answered the upload; `arena submissions list` shows whether "
                "it was recorded."
            )
        if self.cancelled:
            return f"interrupted (Ctrl-C): {number} was cancelled on the server and will not run again."
        if self.cancelled is False:
            return f"interrupted (Ctrl-C) after {number} had finished; `arena submissions show {self.submission_id}`."
        reason = f" ({self.cancel_error})" if self.cancel_error else ""
        return (
            f"interrupted (Ctrl-C), but {number} could not be cancelled{reason}; it may still run: "
            f"`arena submissions cancel {self.submission_id}` withdraws it."
        )


async def run_remotely(args: argparse.Namespace, file_name: str, data: bytes, run: RemoteRun) -> SubmissionResult:
    """Submit, follow the events to the end, and read the stored result."""
    login = load_login(args.server or None)
    phases = SubmissionPhases()
    async with ArenaServer(login) as server:
        accepted = await server.submit(
            args.slug,
            file_name,
            data,
            dtype=args.dtype,
            mode=args.mode,
            gpu=args.gpu,
            profile_case=args.profile_case,
            world_size=args.world_size,
            # A retry of this very upload (the connection dropped before the answer) gets the same submission.
            idempotency_key=f"cli-{uuid.uuid4().hex}",
        )
        run.submission_id = accepted.id
        if not args.stream:
            print(f"Submitting {file_name} to {args.slug} on {login.server}", file=sys.stderr)
            phases.accepted(accepted)
        try:
            async for event in server.follow(accepted.id):
                if args.stream:
                    print(event.model_dump_json(exclude_none=True), flush=True)
                else:
                    phases.event(event)
        except asyncio.CancelledError:
            # Ctrl-C: as a local run, the submission is withdrawn rather than left to hold a runner for nobody.
            await run.cancel(server)
            raise
        view = await server.submission(accepted.id)
    run.contests = view.contests
    if view.result is None:
        raise ServerError("unexpected_answer", f"Submission #{accepted.id} ended without a stored result.", 500)
    return view.result


def submit_on_server(args: argparse.Namespace) -> int:
    """`arena submit … --server`: the exit code (0 passed, 1 failed, else `arena.server_client`'s)."""
    as_json = args.json or args.stream
    run = RemoteRun()
    try:
        if args.runner or args.fleet or args.no_store:
            raise UserFacingError("--server runs on the server: leave out --runner, --fleet and --no-store.")
        path = Path(args.file)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise UserFacingError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
        upload = check_upload(path.name, data)  # the server checks again; this one costs no round trip
        try:
            result = asyncio.run(run_remotely(args, upload.file_name, data, run))
        except KeyboardInterrupt:
            raise CancelledByUserError(run.interrupted()) from None
    except UserFacingError as exc:
        return report(exc, as_json)
    if args.stream:
        pass  # the last line printed was the `result` event, with the result
    elif args.json:
        print(result_json(result, run.contests))
    else:
        print(render_result(result))
        if run.contests is not None:
            print(render_contests(run.contests))
    return 0 if result.status == "passed" else EXIT_FAILED
