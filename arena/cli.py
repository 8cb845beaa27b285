"""The `arena` command line: browse problems, get starter code, and submit solutions."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import uuid
from pathlib import Path

from arena.render import ProgressPrinter, render_error, render_result, table
from bot.core.errors import UserFacingError
from bot.core.uploads import check_upload
from problems.base import DTYPES, Problem
from problems.registry import UnknownProblemError, builtin_problems, get_problem
from problems.starter import STARTER_LANGUAGES, generate_starter
from runner.api import JobRequest, MeasureConfig

log = logging.getLogger(__name__)


def _problem(slug: str) -> Problem:
    try:
        return get_problem(slug)
    except UnknownProblemError as exc:
        raise UserFacingError(str(exc)) from exc


def cmd_problems(args: argparse.Namespace) -> int:
    rows = [
        [p.slug, p.title, p.difficulty, ", ".join(p.tags), ", ".join(p.dtypes)] for p in builtin_problems().values()
    ]
    print(table(["slug", "title", "difficulty", "tags", "dtypes"], rows, align="lllll"))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    problem = _problem(args.slug)
    print(f"{problem.title} ({problem.slug}, v{problem.version}) · {problem.difficulty} · {', '.join(problem.tags)}")
    print()
    print(problem.description)
    print()
    print("Signature (CUDA, float32):")
    signature = generate_starter(problem, "cuda", "float32")
    print("  " + next(line for line in signature.splitlines() if line.startswith('extern "C"')).rstrip(" {"))
    print(f"FLOPs: {problem.flops_formula}")
    print(f"Bytes: {problem.bytes_formula}")
    print(f"Scored by: geometric-mean {'GFLOPS' if problem.score_metric == 'gflops' else 'GB/s'}")
    print(f"Dtypes: {', '.join(problem.dtypes)}")
    for kind in ("gpu", "cpu"):
        cases = problem.generate_test_cases("float32", kind)
        rows = [
            [c["name"], "×".join(str(d) for d in c["dims"]), f"{problem.get_flops(c) / 1e9:.4g}",
             f"{problem.get_bytes(c, 'float32') / 1e6:.4g}"]
            for c in cases
        ]
        print(f"\nTest cases ({kind.upper()}):")
        print(table(["case", "dims", "GFLOP", "MB (fp32)"], rows))
    return 0


def cmd_starter(args: argparse.Namespace) -> int:
    problem = _problem(args.slug)
    if args.dtype not in problem.dtypes:
        raise UserFacingError(f"{problem.slug} does not support {args.dtype}; choose one of {', '.join(problem.dtypes)}.")
    text = generate_starter(problem, args.lang, args.dtype)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def cmd_submit(args: argparse.Namespace) -> int:
    from runner.local import run_job

    problem = _problem(args.slug)
    path = Path(args.file)
    if not path.is_file():
        raise UserFacingError(f"{path} does not exist or is not a file.")
    upload = check_upload(path.name, path.read_bytes())
    if args.dtype not in problem.dtypes:
        raise UserFacingError(f"{problem.slug} does not support {args.dtype}; choose one of {', '.join(problem.dtypes)}.")
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
        measure=MeasureConfig(target_cv=args.target_cv, max_samples=args.max_samples, max_seconds=args.max_seconds),
    )
    print(
        f"Submitting {upload.file_name} ({upload.language}) to {problem.slug} [{args.dtype}, {args.mode}] "
        "on the local runner",
        file=sys.stderr,
    )
    result = asyncio.run(run_job(request, ProgressPrinter()))
    if args.json:
        print(result.model_dump_json(indent=2))
    else:
        print(render_result(result))
    return 0 if result.status == "passed" else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arena", description="Kernel Arena: GPU kernel competitions.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug detail to stderr")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("problems", help="list the problems")
    p.set_defaults(func=cmd_problems)

    p = sub.add_parser("show", help="describe a problem: signature, test cases, FLOP formula")
    p.add_argument("slug")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("starter", help="print starter code for a problem")
    p.add_argument("slug")
    p.add_argument("--lang", choices=STARTER_LANGUAGES, default="cuda")
    p.add_argument("--dtype", choices=DTYPES, default="float32")
    p.add_argument("-o", "--output", help="write to this file instead of stdout")
    p.set_defaults(func=cmd_starter)

    p = sub.add_parser("submit", help="verify and benchmark a solution file")
    p.add_argument("slug")
    p.add_argument("file")
    p.add_argument("--dtype", choices=DTYPES, default="float32")
    p.add_argument("--mode", choices=["test", "benchmark"], default="benchmark")
    p.add_argument("--device", choices=["auto", "gpu", "cpu"], default="auto", help="where to run (default: GPU if any)")
    p.add_argument("--target-cv", type=float, default=0.01, help="stop timing a case once the CV is under this")
    p.add_argument("--max-samples", type=int, default=1000)
    p.add_argument("--max-seconds", type=float, default=10.0, help="timing budget per case")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_submit)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, stream=sys.stderr)
    try:
        return int(args.func(args))
    except UserFacingError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
