"""`arena problems`, `arena show` and `arena starter`: browse problems and get starter code."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from arena.render import table
from bot.core.errors import UserFacingError
from problems.base import DTYPES, Problem
from problems.registry import UnknownProblemError, builtin_problems, get_problem
from problems.starter import STARTER_LANGUAGES, generate_starter


def find_problem(slug: str) -> Problem:
    try:
        return get_problem(slug)
    except UnknownProblemError as exc:
        raise UserFacingError(str(exc)) from exc


def check_dtype(problem: Problem, dtype: str) -> None:
    if dtype not in problem.dtypes:
        raise UserFacingError(f"{problem.slug} does not support {dtype}; choose one of {', '.join(problem.dtypes)}.")


def write_output(path: Path, text: str, suggested_name: str = "solution.cu") -> None:
    """Write `text` to `path`, or say in one line why it cannot be written and what to do instead."""
    if path.is_dir():
        raise UserFacingError(f"{path} is a folder; give a file name, such as {path / suggested_name}.")
    if not path.parent.is_dir():
        raise UserFacingError(f"The folder {path.parent} does not exist; create it first (mkdir -p {path.parent}).")
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserFacingError(f"Cannot write {path}: {exc.strerror}. Choose a file you may write.") from exc


def cmd_problems(args: argparse.Namespace) -> int:
    rows = [
        [p.slug, p.title, p.difficulty, ", ".join(p.tags), ", ".join(p.dtypes)] for p in builtin_problems().values()
    ]
    print(table(["slug", "title", "difficulty", "tags", "dtypes"], rows, align="lllll"))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    problem = find_problem(args.slug)
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
            [
                c["name"],
                "×".join(str(d) for d in c["dims"]),
                f"{problem.get_flops(c) / 1e9:.4g}",
                f"{problem.get_bytes(c, 'float32') / 1e6:.4g}",
            ]
            for c in cases
        ]
        print(f"\nTest cases ({kind.upper()}):")
        print(table(["case", "dims", "GFLOP", "MB (fp32)"], rows))
    return 0


def cmd_starter(args: argparse.Namespace) -> int:
    problem = find_problem(args.slug)
    check_dtype(problem, args.dtype)
    text = generate_starter(problem, args.lang, args.dtype)
    if args.output:
        write_output(Path(args.output), text, "solution.cu" if args.lang == "cuda" else "solution.py")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
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
