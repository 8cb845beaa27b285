"""`arena submit`: verify and benchmark one solution file, on the local runner or a remote one (--runner)."""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import urllib.parse
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from arena.commands.problems import check_dtype, find_problem
from arena.render import ProgressPrinter, render_contests, render_result, result_json
from contract.names import DEFAULT_MODE, GPU_METHODS, MODE_DESCRIPTIONS, MODES
from contract.wire import JobRequest, MeasureConfig, ProfileReport, SubmissionResult
from core.errors import CancelledByUserError, UserFacingError
from core.submit.uploads import Upload, check_upload
from problems.base import DTYPES, Problem
from problems.catalog import data_types

if TYPE_CHECKING:
    from core.contests.entry import ContestEntries
    from core.submit.local import LocalRun
    from runner.clients.http import RunnerClient

# How long Ctrl-C waits for a remote runner to confirm that it cancelled the job.
REMOTE_CANCEL_TIMEOUT_S = 10.0


def runner_url(text: str) -> str:
    """An argparse type: the runner's base URL, with its scheme (aiohttp cannot guess one)."""
    parts = urllib.parse.urlsplit(text)
    if "://" not in text:
        raise argparse.ArgumentTypeError(f"{text!r} has no scheme; write it as http://{text}")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"{text!r} is not a runner URL; write it as http://HOST:PORT")
    try:
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} has a port that is not a number from 0 to 65535") from None
    return text


def finite_number(low: float, high: float | None = None) -> Callable[[str], float]:
    """An argparse type: a finite number above `low` (and at most `high`); Infinity and NaN are refused here,
    before they reach a measurement loop that would never end or never converge."""

    def parse(text: str) -> float:
        bound = f"above {low:g}" + (f" and at most {high:g}" if high is not None else "")
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number; give one {bound}") from None
        if not math.isfinite(value) or value <= low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{text} is out of range; give a finite number {bound}")
        return value

    return parse


def whole_number(low: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least `low`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{text} is too small; give at least {low}")
        return value

    return parse


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


def _run_recorded(
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


def _run_on_fleet(
    args: argparse.Namespace, problem: Problem, upload: Upload
) -> tuple[SubmissionResult, ContestEntries | None]:
    """Queue the submission in the store for the fleet's runners of the pool `--fleet`, and wait for its result.
    The service's measurement settings apply (the runner's), not the timing options of this command."""
    from api.submission_models import SubmissionEventView
    from arena.submission_phases import SubmissionPhases
    from core.errors import USER_FACING, KernelArenaError, MigrationError, StoreUnavailableError
    from core.fleet.submit import submit_to_fleet
    from core.problems import ProblemSpec
    from core.settings import RateLimitSettings, Settings
    from core.store.pool import open_store
    from core.submit.events import SubmissionEvent
    from core.submit.local import LocalRun, LocalSubmission

    local = LocalSubmission(
        problem=ProblemSpec.builtin(problem),
        upload=upload,
        dtype=args.dtype,
        mode=args.mode,
        profile_case=args.profile_case,
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


def measure_config(args: argparse.Namespace) -> MeasureConfig:
    from pydantic import ValidationError

    try:
        return MeasureConfig(
            method=args.method,
            target_cv=args.target_cv,
            target_rse=args.target_rse,
            max_samples=args.max_samples,
            max_seconds=args.max_seconds,
        )
    except ValidationError as exc:
        problems = "; ".join(f"--{'-'.join(map(str, e['loc'])).replace('_', '-')}: {e['msg']}" for e in exc.errors())
        raise UserFacingError(f"The timing options do not fit together ({problems}).") from exc


def cmd_submit(args: argparse.Namespace) -> int:
    if len(args.files) > 1:
        from arena.batch_submit import submit_batch_on_server

        return submit_batch_on_server(args)
    args.file = args.files[0]
    if args.server is not None:
        from arena.remote_submit import submit_on_server

        return submit_on_server(args)
    if args.stream or args.gpu is not None:
        raise UserFacingError("--stream and --gpu go with --server: a local run follows its own progress.")
    from runner.job.run import run_job

    secret = _read_secret(args.secret_file) if args.runner else None
    problem = find_problem(args.slug)
    path = Path(args.file)
    if not path.is_file():
        raise UserFacingError(f"{path} does not exist or is not a file.")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserFacingError(f"Cannot read {path}: {exc.strerror}. Check its permissions, or copy it.") from exc
    upload = check_upload(path.name, data)
    check_dtype(problem, args.dtype)
    if args.mode != "profile" and (args.profile_case is not None or args.profile_dir is not None):
        raise UserFacingError("--profile-case and --profile-dir go with --mode profile.")
    request = JobRequest(
        submission_id=f"cli-{uuid.uuid4().hex[:12]}",
        problem_slug=problem.slug,
        problem_version=problem.version,
        language=upload.language,
        file_name=upload.file_name,
        source=upload.source,
        dtype=args.dtype,
        mode=args.mode,
        profile_case=args.profile_case,
        device_kind=args.device,
        measure=measure_config(args),
    )
    if args.fleet is not None and (args.runner or args.no_store):
        raise UserFacingError(
            "--fleet runs through the store on the fleet's runners: leave out --runner and --no-store."
        )
    where = f"the runner at {args.runner}" if args.runner else "the local runner"
    if args.fleet is not None:
        where = f"the fleet's `{args.fleet}` pool"
    contests: ContestEntries | None = None  # a ranked run recorded in the store: what it counts for
    print(
        f"Submitting {upload.file_name} ({upload.language}) to {problem.slug} [{data_types(problem, args.dtype)}, "
        f"{args.mode}] on {where}",
        file=sys.stderr,
    )
    if secret is not None:
        result = asyncio.run(
            _run_remote(
                args.runner, secret, request, ca_file=args.runner_ca_file, allow_plain_http=args.allow_plain_http
            )
        )
    elif args.fleet is not None:
        result, contests = _run_on_fleet(args, problem, upload)
    elif args.no_store:
        try:
            result = asyncio.run(run_job(request, ProgressPrinter()))
        except KeyboardInterrupt:
            # run_job kills the worker when its task is cancelled, and nothing was recorded.
            raise CancelledByUserError("interrupted (Ctrl-C); the job was stopped and nothing was recorded.") from None
    else:
        result, contests = _run_recorded(args, problem, upload, request)
    if args.json:
        # The whole result, a profile's files included (base64): it is what the runner sent, so it is no larger
        # here, and it stays a `SubmissionResult` that a script can read back with the wire model.
        print(result_json(result, contests))
    else:
        print(render_result(result))
        if contests is not None:
            print(render_contests(contests))
    if args.profile_dir is not None and result.profile is not None:
        save_artifacts(result.profile, Path(args.profile_dir))
    return 0 if result.status == "passed" else 1


def save_artifacts(report: ProfileReport, folder: Path) -> list[Path]:
    """Write a profile's files (profile.txt, profile.ncu-rep, the PTX and SASS) into `folder`."""
    from core.views.profile import artifact_file_name, decode_artifact

    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserFacingError(f"Cannot create {folder}: {exc.strerror}.") from exc
    written: list[Path] = []
    for artifact in report.artifacts:
        data = decode_artifact(artifact)
        path = folder / artifact_file_name(artifact)
        if data is None:
            print(f"  {artifact.name}: not valid base64, not written", file=sys.stderr)
            continue
        try:
            path.write_bytes(data)
        except OSError as exc:
            raise UserFacingError(f"Cannot write {path}: {exc.strerror}.") from exc
        written.append(path)
    print(f"  wrote {', '.join(p.name for p in written) or 'no files'} to {folder}", file=sys.stderr)
    return written


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("submit", help="verify and benchmark a solution file")
    p.add_argument("slug")
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="the solution (.cu or .py); with --server, up to 16 files make a batch of variants, each its own "
        "submission, ranked in one table",
    )
    p.add_argument("--dtype", choices=DTYPES, default="float32")
    p.add_argument(
        "--mode",
        choices=MODES,
        default=DEFAULT_MODE,
        help="; ".join(f"{mode}: {text}" for mode, text in MODE_DESCRIPTIONS.items()),
    )
    p.add_argument(
        "--profile-case",
        metavar="N",
        type=whole_number(0),
        help="with --mode profile: the test case to profile, counting from 0 in `arena show`'s list (default the "
        "largest)",
    )
    p.add_argument(
        "--profile-dir",
        metavar="DIR",
        help="with --mode profile: write the profile's files there (profile.txt, profile.ncu-rep for Nsight "
        "Compute's window, the PTX and SASS)",
    )
    p.add_argument("--no-store", action="store_true", help="run without recording the submission in the store")
    p.add_argument(
        "--fleet",
        metavar="POOL",
        help="queue it in the store for the fleet's runners of this pool (a GPU type such as h100, or cpu) and wait "
        "for the result, instead of running it here",
    )
    p.add_argument(
        "--device", choices=["auto", "gpu", "cpu"], default="auto", help="where to run (default: GPU if any)"
    )
    p.add_argument(
        "--method",
        choices=GPU_METHODS,
        default="arena",
        help="GPU timing method: arena (cold L2, hidden launch latency; default) or the seed's loop (CPU runs use "
        "a monotonic clock either way)",
    )
    p.add_argument(
        "--target-rse",
        type=finite_number(0, 1),
        default=0.005,
        help="arena: stop once the median's relative SE is under this",
    )
    p.add_argument(
        "--target-cv",
        type=finite_number(0, 1),
        default=0.01,
        help="seed/cpu: stop timing a case once the CV is under this",
    )
    p.add_argument("--max-samples", type=whole_number(1), default=1000)
    p.add_argument("--max-seconds", type=finite_number(0), default=10.0, help="timing budget per case (seconds)")
    p.add_argument(
        "--json",
        action="store_true",
        help="print the result as JSON (a profile's files included, in base64); a ranked run on a problem that a "
        "contest holds also has `contests`: what it counts for, or why none",
    )
    p.add_argument(
        "--runner", metavar="URL", type=runner_url, help="use a remote runner daemon (e.g. http://gpu-host:8700)"
    )
    p.add_argument("--secret-file", metavar="F", help="file with the runner's shared secret (with --runner)")
    p.add_argument(
        "--runner-ca-file", metavar="F", help="PEM bundle that signs an https:// runner's certificate (with --runner)"
    )
    p.add_argument(
        "--allow-plain-http",
        action="store_true",
        help="allow an http:// runner on another host (sources and results cross the network unencrypted)",
    )
    p.add_argument(
        "--server",
        metavar="URL",
        nargs="?",
        const="",
        help="run it on an arena server through its API with your token (`arena login`); without URL, the server "
        "you logged in to. The exit code is 0 passed, 1 failed, 2 refused input, 3 token refused, 4 rate "
        "limited, 5 server unreachable",
    )
    p.add_argument("--gpu", metavar="POOL", help="with --server: the GPU pool to run on (default: the only one)")
    p.add_argument(
        "--stream",
        action="store_true",
        help="with --server: print every event as one JSON line (NDJSON), the last with the result",
    )
    p.set_defaults(func=cmd_submit)
