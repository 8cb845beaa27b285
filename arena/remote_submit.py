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

from api.submission_models import CaseProgressView, SubmissionAccepted, SubmissionEventView
from arena.render import ProgressPrinter, render_contests, render_result, result_json
from arena.server_client import EXIT_FAILED, ArenaServer, ServerError, load_login, report
from core.contests.entry import ContestEntries, receipt_line
from core.errors import CancelledByUserError, UserFacingError
from core.progress import describe_place
from core.uploads import check_upload
from contract.wire import JobEvent, SubmissionResult, TestOutcome

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


class RemotePhases:
    """One line per phase on stderr, as a local or `--fleet` run says them."""

    def __init__(self, gpu_type: str = "") -> None:
        self.gpu_type = gpu_type
        self._said = ""
        self.cases_said: set[tuple[str, int]] = set()
        """The cases of the current attempt already said live, by (phase, index)."""

    def _say(self, line: str) -> None:
        if line != self._said:
            print(f"  {line}", file=sys.stderr, flush=True)
            self._said = line

    def accepted(self, accepted: SubmissionAccepted) -> None:
        self.gpu_type = accepted.gpu_type
        again = " (answered again: the same submission)" if accepted.duplicate else ""
        self._say(f"recorded as submission #{accepted.id}{again}")
        if (line := receipt_line(accepted.contests)) is not None:
            self._say(line)

    def event(self, event: SubmissionEventView) -> None:
        on = f" on runner {event.runner}" if event.runner else ""
        attempt = f" (attempt {event.attempt})"
        if event.type in ("submitted", "queue") and event.position:
            start = f", starts in ~{event.start_in_s:.0f} s" if event.start_in_s is not None else ""
            self._say(f"queued for pool {self.gpu_type} at place {describe_place(event.position)}{start}")
        elif event.type == "dispatched":
            self._say(f"dispatched{on}{attempt}")
        elif event.type == "running":
            self._say(f"running{on}{attempt}")
        elif event.type == "requeued":
            self.cases_said = set()  # the next attempt runs every case again
            self._say(f"requeued at the head of the queue: its runner was lost{attempt}")
        elif event.type == "case" and event.case is not None:
            line = case_line(event.case)
            if line is not None and (event.case.phase, event.case.index) not in self.cases_said:
                self.cases_said.add((event.case.phase, event.case.index))
                print(line, file=sys.stderr, flush=True)
        elif event.type == "result" and event.result is not None:
            for line in case_lines(event.result, self.cases_said):
                print(line, file=sys.stderr, flush=True)


def case_line(case: CaseProgressView) -> str | None:
    """The line a local run prints for this case as it finishes."""
    if case.phase == "test" and case.passed is not None:
        test = TestOutcome(index=case.index, name=case.name, dims=[], passed=case.passed, message=case.message or "")
        return ProgressPrinter.describe(
            JobEvent(seq=0, type="test_case", index=case.index, count=case.count, test=test)
        )
    if case.phase == "benchmark" and case.timing is not None:
        return ProgressPrinter.describe(
            JobEvent(seq=0, type="benchmark_case", index=case.index, count=case.count, timing=case.timing)
        )
    return None


def case_lines(result: SubmissionResult, said: set[tuple[str, int]] | None = None) -> list[str]:
    """The per-case lines a local run prints while it runs, from the stored result, but for those `said` live."""
    said = said or set()
    events = [
        JobEvent(seq=0, type="test_case", index=i, count=len(result.tests), test=t)
        for i, t in enumerate(result.tests)
        if ("test", i) not in said
    ]
    events += [
        JobEvent(seq=0, type="benchmark_case", index=i, count=len(result.timings), timing=t)
        for i, t in enumerate(result.timings)
        if ("benchmark", i) not in said
    ]
    return [line for line in (ProgressPrinter.describe(e) for e in events) if line]


async def run_remotely(args: argparse.Namespace, file_name: str, data: bytes, run: RemoteRun) -> SubmissionResult:
    """Submit, follow the events to the end, and read the stored result."""
    login = load_login(args.server or None)
    phases = RemotePhases()
    async with ArenaServer(login) as server:
        accepted = await server.submit(
            args.slug,
            file_name,
            data,
            dtype=args.dtype,
            mode=args.mode,
            gpu=args.gpu,
            profile_case=args.profile_case,
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
