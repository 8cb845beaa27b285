"""`arena submit --runner URL`: one job straight to a runner daemon over HTTP, followed to its result; Ctrl-C
asks the runner to cancel it."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from arena.render import ProgressPrinter
from contract.wire import JobRequest, SubmissionResult
from core.errors import CancelledByUserError, UserFacingError

if TYPE_CHECKING:
    from runner.clients.http import RunnerClient

# How long Ctrl-C waits for a remote runner to confirm that it cancelled the job.
REMOTE_CANCEL_TIMEOUT_S = 10.0


def read_secret(path: str | None) -> bytes:
    if path is None:
        raise UserFacingError("--runner needs --secret-file: the file holding the runner's shared secret.")
    try:
        secret = Path(path).read_bytes().strip()
    except OSError as exc:
        raise UserFacingError(f"Cannot read the secret file {path}: {exc.strerror}.") from exc
    if not secret:
        raise UserFacingError(f"The secret file {path} is empty.")
    return secret


async def run_on_runner(
    url: str, secret: bytes, request: JobRequest, *, ca_file: str | None = None, allow_plain_http: bool = False
) -> SubmissionResult:
    """Submit to a runner daemon over HTTP and follow its events to the result."""
    from runner.clients.http import RunnerClient, RunnerError

    async with RunnerClient(url, secret, ca_file=ca_file, allow_plain_http=allow_plain_http) as runner:
        try:
            accepted = await runner.submit(request)
            if accepted.queue_position:
                print(f"  queued at position {accepted.queue_position}", file=sys.stderr)
            try:
                result = await runner.wait_result(accepted.job_id, ProgressPrinter())
            except asyncio.CancelledError:
                # Ctrl-C: the job would otherwise hold the runner's GPU for nobody.
                interrupted = await _cancel_remote(runner, accepted.job_id, url)
                raise interrupted from None
        except RunnerError as exc:
            if exc.code == "unreachable":
                cause = exc.__cause__
                reason = getattr(cause, "os_error", None) or cause or exc.message
                raise UserFacingError(
                    f"Cannot reach the runner at {url} ({reason}). Check that `arena runner serve` runs there and "
                    "that the address and port are right."
                ) from exc
            raise UserFacingError(f"The runner at {url} failed: {exc.message} ({exc.code}).") from exc
    if result is None:
        raise UserFacingError("The job was cancelled on the runner before it finished.")
    return result


async def _cancel_remote(runner: RunnerClient, job_id: str, url: str) -> CancelledByUserError:
    """Ask the runner to cancel the job; the one line to show the user, whatever the runner answered."""
    from runner.clients.http import RunnerError

    try:
        await asyncio.wait_for(runner.cancel(job_id), REMOTE_CANCEL_TIMEOUT_S)
    except (RunnerError, TimeoutError) as exc:
        return CancelledByUserError(
            f"interrupted (Ctrl-C); the runner at {url} did not confirm cancelling job {job_id} ({exc}), "
            "so it may still run there."
        )
    return CancelledByUserError(f"interrupted (Ctrl-C); job {job_id} was cancelled on the runner at {url}.")
