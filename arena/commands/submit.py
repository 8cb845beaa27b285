"""`arena submit`: verify and benchmark one solution file, on the local runner or a remote one (--runner)."""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from pathlib import Path

from arena.commands.problems import check_dtype, find_problem
from arena.render import ProgressPrinter, render_result
from bot.core.errors import UserFacingError
from bot.core.uploads import check_upload
from problems.base import DTYPES, Problem
from runner.api import JobRequest, MeasureConfig, SubmissionResult


def _read_secret(path: str | None) -> bytes:
    if path is None:
        raise UserFacingError("--runner needs --secret-file: the file holding the runner's shared secret.")
    try:
        secret = Path(path).read_bytes().strip()
    except OSError as exc:
        raise UserFacingError(f"Cannot read the secret file {path}: {exc.strerror}.") from exc
    if not secret:
        raise UserFacingError(f"The secret file {path} is empty.")
    return secret


async def _run_remote(
    url: str, secret: bytes, request: JobRequest, *, ca_file: str | None = None, allow_plain_http: bool = False
) -> SubmissionResult:
    """Submit to a runner daemon over HTTP and follow its events to the result."""
    from bot.runner_client import RunnerClient, RunnerError

    async with RunnerClient(url, secret, ca_file=ca_file, allow_plain_http=allow_plain_http) as runner:
        try:
            accepted = await runner.submit(request)
            if accepted.queue_position:
                print(f"  queued at position {accepted.queue_position}", file=sys.stderr)
            result = await runner.wait_result(accepted.job_id, ProgressPrinter())
        except RunnerError as exc:
            raise UserFacingError(f"The runner at {url} failed: {exc.message} ({exc.code}).") from exc
    if result is None:
        raise UserFacingError("The job was cancelled on the runner before it finished.")
    return result


def _run_recorded(args: argparse.Namespace, problem: Problem, path: Path, request: JobRequest) -> SubmissionResult:
    """Record the submission in the store (embedded unless DATABASE_URL is set) and run it on the local runner."""
    try:
        from bot.core.errors import KernelArenaError
        from bot.core.local_runner import LocalSubmission, submit_and_wait
        from bot.core.problems import ProblemSpec
        from bot.settings import RateLimitSettings, Settings
    except ImportError as exc:
        raise UserFacingError(
            f"Recording submissions needs the package {exc.name}: install `kernel-arena[bot]`, or pass --no-store."
        ) from exc
    local = LocalSubmission(
        problem=ProblemSpec.of(problem),
        file_name=path.name,
        data=path.read_bytes(),
        dtype=args.dtype,
        mode=args.mode,
        device_kind=args.device,
        measure=request.measure,
    )
    try:
        # Rate limits protect a shared service from its users; whoever runs the CLI owns this store.
        big = {f"{mode}_{field}": 10**9 for mode in ("test", "benchmark", "ranked") for field in ("burst", "per_hour")}
        unlimited = RateLimitSettings(**big)
        settings = Settings().model_copy(update={"rate": unlimited})
        submission_id, result = asyncio.run(submit_and_wait(settings, local, ProgressPrinter()))
    except UserFacingError:
        raise
    except KernelArenaError as exc:
        raise UserFacingError(f"The store is unavailable: {exc}. Pass --no-store to run without recording.") from exc
    print(f"  recorded as submission #{submission_id}", file=sys.stderr)
    return result


def cmd_submit(args: argparse.Namespace) -> int:
    from runner.local import run_job

    secret = _read_secret(args.secret_file) if args.runner else None
    problem = find_problem(args.slug)
    path = Path(args.file)
    if not path.is_file():
        raise UserFacingError(f"{path} does not exist or is not a file.")
    upload = check_upload(path.name, path.read_bytes())
    check_dtype(problem, args.dtype)
    request = JobRequest(
        submission_id=f"cli-{uuid.uuid4().hex[:12]}",
        problem_slug=problem.slug,
        problem_version=problem.version,
        language=upload.language,
        file_name=upload.file_name,
        source=upload.source,
        dtype=args.dtype,
        mode=args.mode,
        device_kind=args.device,
        measure=MeasureConfig(
            method=args.method,
            target_cv=args.target_cv,
            target_rse=args.target_rse,
            max_samples=args.max_samples,
            max_seconds=args.max_seconds,
        ),
    )
    where = f"the runner at {args.runner}" if args.runner else "the local runner"
    print(
        f"Submitting {upload.file_name} ({upload.language}) to {problem.slug} [{args.dtype}, {args.mode}] on {where}",
        file=sys.stderr,
    )
    if secret is not None:
        result = asyncio.run(
            _run_remote(
                args.runner, secret, request, ca_file=args.runner_ca_file, allow_plain_http=args.allow_plain_http
            )
        )
    elif args.no_store:
        result = asyncio.run(run_job(request, ProgressPrinter()))
    else:
        result = _run_recorded(args, problem, path, request)
    if args.json:
        print(result.model_dump_json(indent=2))
    else:
        print(render_result(result))
    return 0 if result.status == "passed" else 1


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("submit", help="verify and benchmark a solution file")
    p.add_argument("slug")
    p.add_argument("file")
    p.add_argument("--dtype", choices=DTYPES, default="float32")
    p.add_argument(
        "--mode",
        choices=["test", "benchmark", "ranked"],
        default="benchmark",
        help="test: verify only; benchmark: verify and time; ranked: also enter the local leaderboard",
    )
    p.add_argument("--no-store", action="store_true", help="run without recording the submission in the store")
    p.add_argument(
        "--device", choices=["auto", "gpu", "cpu"], default="auto", help="where to run (default: GPU if any)"
    )
    p.add_argument(
        "--method",
        choices=["arena", "seed"],
        default="arena",
        help="GPU timing method: arena (cold L2, hidden launch latency; default) or the seed's loop (CPU runs use "
        "a monotonic clock either way)",
    )
    p.add_argument(
        "--target-rse", type=float, default=0.005, help="arena: stop once the median's relative SE is under this"
    )
    p.add_argument(
        "--target-cv", type=float, default=0.01, help="seed/cpu: stop timing a case once the CV is under this"
    )
    p.add_argument("--max-samples", type=int, default=1000)
    p.add_argument("--max-seconds", type=float, default=10.0, help="timing budget per case")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--runner", metavar="URL", help="use a remote runner daemon (e.g. http://gpu-host:8700)")
    p.add_argument("--secret-file", metavar="F", help="file with the runner's shared secret (with --runner)")
    p.add_argument(
        "--runner-ca-file", metavar="F", help="PEM bundle that signs an https:// runner's certificate (with --runner)"
    )
    p.add_argument(
        "--allow-plain-http",
        action="store_true",
        help="allow an http:// runner on another host (sources and results cross the network unencrypted)",
    )
    p.set_defaults(func=cmd_submit)
