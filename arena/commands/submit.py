"""`arena submit`: verify and benchmark one solution file, on the local runner, a runner daemon (--runner), the
fleet (--fleet) or a server (--server). This module parses the command and renders its result; each path lives
in its own module (arena/store_submit.py, arena/runner_submit.py, arena/remote_submit.py, arena/batch_submit.py)."""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.arg_types import finite_number, runner_url, whole_number
from arena.commands.problems import check_dtype, find_problem
from arena.distributed_show import check_submission, find_distributed
from arena.profile_artifacts import save_artifacts
from arena.render import ProgressPrinter, render_contests, render_result, result_json
from arena.runner_submit import read_secret, run_on_runner
from arena.store_submit import run_on_fleet, run_recorded
from contract.names import DEFAULT_MODE, GPU_METHODS, MODE_DESCRIPTIONS, MODES
from contract.wire import JobRequest, MeasureConfig, SubmissionResult
from core.errors import CancelledByUserError, UserFacingError
from core.submit.uploads import check_upload
from problems.base import DTYPES
from problems.catalog import data_types

if TYPE_CHECKING:
    from core.contests.entry import ContestEntries
    from problems.distributed.base import DistributedProblem


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
    # Before any path: a distributed slug runs only through the store (--fleet) or a server, at a world size it takes.
    store_path = args.fleet is not None or args.server is not None
    args.world_size = check_submission(
        args.slug, args.world_size, store_path=store_path and not args.runner, batch=len(args.files) > 1
    )
    if len(args.files) > 1:
        from arena.batch_submit import submit_batch_on_server

        return submit_batch_on_server(args)
    args.file = args.files[0]
    if args.server is not None:
        from arena.remote_submit import submit_on_server

        return submit_on_server(args)
    if args.stream or args.gpu is not None:
        raise UserFacingError("--stream and --gpu go with --server: a local run follows its own progress.")
    distributed = find_distributed(args.slug)
    if distributed is not None:
        return _submit_distributed_to_fleet(args, distributed)
    from runner.job.run import run_job

    secret = read_secret(args.secret_file) if args.runner else None
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
            run_on_runner(
                args.runner, secret, request, ca_file=args.runner_ca_file, allow_plain_http=args.allow_plain_http
            )
        )
    elif args.fleet is not None:
        from core.problems import ProblemSpec  # the store's module (asyncpg): only where the store is used

        result, contests = run_on_fleet(args, ProblemSpec.builtin(problem), upload)
    elif args.no_store:
        try:
            result = asyncio.run(run_job(request, ProgressPrinter()))
        except KeyboardInterrupt:
            # run_job kills the worker when its task is cancelled, and nothing was recorded.
            raise CancelledByUserError("interrupted (Ctrl-C); the job was stopped and nothing was recorded.") from None
    else:
        result, contests = run_recorded(args, problem, upload, request)
    print_result(args, result, contests)
    if args.profile_dir is not None and result.profile is not None:
        save_artifacts(result.profile, Path(args.profile_dir))
    return 0 if result.status == "passed" else 1


def print_result(args: argparse.Namespace, result: SubmissionResult, contests: Any) -> None:
    if args.json:
        # The whole result, a profile's files included (base64): it is what the runner sent, so it is no larger
        # here, and it stays a `SubmissionResult` that a script can read back with the wire model.
        print(result_json(result, contests))
    else:
        print(render_result(result))
        if contests is not None:
            print(render_contests(contests))


def _submit_distributed_to_fleet(args: argparse.Namespace, problem: DistributedProblem) -> int:
    """`--fleet POOL --world-size N` on a distributed problem: queued for the pool's slots of N ranks."""
    if args.no_store or args.mode == "profile" or args.profile_dir is not None:
        raise UserFacingError(
            f"{problem.slug} is a distributed problem: it runs through the store in mode test, benchmark or ranked "
            "(leave out --no-store, --mode profile and --profile-dir)."
        )
    if args.dtype not in problem.dtypes:
        raise UserFacingError(f"{problem.slug} does not take {args.dtype}; choose one of {', '.join(problem.dtypes)}.")
    path = Path(args.file)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserFacingError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    upload = check_upload(path.name, data)
    print(
        f"Submitting {upload.file_name} ({upload.language}) to {problem.slug} [{args.dtype}, {args.mode}, "
        f"{args.world_size} ranks] on the fleet's `{args.fleet}` pool",
        file=sys.stderr,
    )
    from core.problems import ProblemSpec  # imports the store's module (asyncpg)

    result, contests = run_on_fleet(args, ProblemSpec.distributed(problem), upload)
    print_result(args, result, contests)
    return 0 if result.status == "passed" else 1


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
        "--world-size",
        metavar="N",
        type=whole_number(1),
        help="a distributed problem's ranks, one of those it declares (`arena show`): with --fleet or --server the "
        "job runs on the pool's slots of N ranks and lands on that world size's board",
    )
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
