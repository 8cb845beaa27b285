"""`arena submit … --server [URL]`: the whole flow on an arena server, through its public API and a personal
token (`arena login`): upload, follow the submission's events (reconnecting with Last-Event-ID when the stream
drops), then print the result as a local run prints it.

The phases go to stderr, one line each, as `--fleet` says them: the queue place, the runner that took the job,
the per-case lines once the result is in, then the result table on stdout. `--json` prints the result as a local
run's `--json` does; `--stream` prints every event as one JSON line (NDJSON) instead, the last one with the
result. Refusals print `{"error": {...}}` with the API's code under `--json` or `--stream`; the exit codes are
`arena.server_client`'s.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

from api.submission_models import SubmissionAccepted, SubmissionEventView
from arena.render import ProgressPrinter, render_result
from arena.server_client import EXIT_FAILED, ArenaServer, ServerError, load_login, report
from core.errors import CancelledByUserError, UserFacingError
from core.progress import describe_place
from core.uploads import check_upload
from runner.api import JobEvent, SubmissionResult


@dataclass
class RemoteRun:
    """What the caller needs after an interruption: the submission, once the server has it."""

    submission_id: int | None = None


class RemotePhases:
    """One line per phase on stderr, as a local or `--fleet` run says them."""

    def __init__(self, gpu_type: str = "") -> None:
        self.gpu_type = gpu_type
        self._said = ""

    def _say(self, line: str) -> None:
        if line != self._said:
            print(f"  {line}", file=sys.stderr, flush=True)
            self._said = line

    def accepted(self, accepted: SubmissionAccepted) -> None:
        self.gpu_type = accepted.gpu_type
        again = " (answered again: the same submission)" if accepted.duplicate else ""
        self._say(f"recorded as submission #{accepted.id}{again}")

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
            self._say(f"requeued at the head of the queue: its runner was lost{attempt}")
        elif event.type == "result" and event.result is not None:
            for line in case_lines(event.result):
                print(line, file=sys.stderr, flush=True)


def case_lines(result: SubmissionResult) -> list[str]:
    """The per-case lines a local run prints while it runs, from the stored result."""
    events = [
        JobEvent(seq=0, type="test_case", index=i, count=len(result.tests), test=t) for i, t in enumerate(result.tests)
    ]
    events += [
        JobEvent(seq=0, type="benchmark_case", index=i, count=len(result.timings), timing=t)
        for i, t in enumerate(result.timings)
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
        async for event in server.follow(accepted.id):
            if args.stream:
                print(event.model_dump_json(exclude_none=True), flush=True)
            else:
                phases.event(event)
        view = await server.submission(accepted.id)
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
            where = (
                f"submission #{run.submission_id} goes on on the server; `arena submissions show "
                f"{run.submission_id}` reads its result"
                if run.submission_id is not None
                else "nothing was submitted"
            )
            raise CancelledByUserError(f"interrupted (Ctrl-C); {where}.") from None
    except UserFacingError as exc:
        return report(exc, as_json)
    if args.stream:
        pass  # the last line printed was the `result` event, with the result
    elif args.json:
        print(result.model_dump_json(indent=2))
    else:
        print(render_result(result))
    return 0 if result.status == "passed" else EXIT_FAILED
