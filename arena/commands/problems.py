"""`arena problems`, `arena show` and `arena starter`: browse problems and get starter code."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from arena.render import table
from core.errors import UserFacingError
from problems.base import DTYPES, DType, Problem, TestCase
from problems.catalog import data_types, dtype_labels, shape_text
from problems.registry import UnknownProblemError, builtin_problems, get_problem
from problems.starter import STARTER_LANGUAGES, generate_starter, param_summary, tolerance_summary


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


DIFFICULTY_ORDER = {"easy": 0, "medium": 1, "hard": 2}


def cmd_problems(args: argparse.Namespace) -> int:
    listed = [
        p
        for p in builtin_problems().values()
        if (args.category is None or p.tags[:1] == (args.category,))
        and (args.difficulty is None or p.difficulty == args.difficulty)
    ]
    if not listed:
        categories = sorted({p.tags[0] for p in builtin_problems().values() if p.tags})
        raise UserFacingError(f"No problem matches. Categories: {', '.join(categories)}.")
    listed.sort(key=lambda p: (p.tags[:1], DIFFICULTY_ORDER.get(p.difficulty, 9), p.slug))
    rows = [[p.tags[0] if p.tags else "general", p.difficulty, p.slug, p.title, dtype_labels(p)] for p in listed]
    print(table(["category", "difficulty", "slug", "title", "dtypes"], rows, align="lllll"))
    print(f"\n{len(listed)} problems. `arena show SLUG` describes one; `arena starter SLUG` writes a template.")
    return 0


def _signature_line(problem: Problem, language: str, dtype: DType) -> str:
    starter = generate_starter(problem, language, dtype)  # type: ignore[arg-type]
    prefix = 'extern "C"' if language == "cuda" else "def solution"
    return next(line for line in starter.splitlines() if line.startswith(prefix)).rstrip(" {:")


def _shape_text(problem: Problem, case: TestCase) -> str:
    return shape_text(problem.buffer_shapes(case)) or "×".join(str(d) for d in case["dims"])


def _dtypes_line(problem: Problem) -> str:
    """The real data types, and the stored key where it differs (boards and `--dtype` name the key)."""
    labels = dtype_labels(problem)
    keys = ", ".join(problem.dtypes)
    return labels if labels == keys else f"{labels} (stored and chosen with --dtype as {keys})"


def cmd_show(args: argparse.Namespace) -> int:
    problem = find_problem(args.slug)
    dtype: DType = args.dtype or problem.dtypes[0]
    check_dtype(problem, dtype)
    aliases = f" · also called {', '.join(problem.aliases)}" if problem.aliases else ""
    print(f"{problem.title} ({problem.slug}, v{problem.version}) · {problem.difficulty} · {', '.join(problem.tags)}")
    print(f"dtypes: {_dtypes_line(problem)}{aliases}")
    print()
    print(problem.description)
    print()
    print(f"CUDA ({data_types(problem, dtype)}):\n  {_signature_line(problem, 'cuda', dtype)}")
    print(f"Python:\n  {_signature_line(problem, 'python', dtype)}")
    print("Parameters, in order:")
    for p in problem.ordered_parameters():
        print(f"  {p.name}: {param_summary(p, dtype)}")
    print(f"FLOPs: {problem.flops_formula}")
    print(f"Bytes: {problem.bytes_formula}")
    print(f"Checked: {tolerance_summary(problem, dtype)}")
    metric = "GFLOPS" if problem.score_metric == "gflops" else "GB/s"
    print(f"Ranked by: geometric mean of {metric} over the GPU cases (higher is better)")
    print(f"Time floor: {problem.time_floor.summary()}")
    for kind in ("gpu", "cpu"):
        cases = problem.generate_test_cases(dtype, kind)
        rows = [
            [
                c["name"],
                _shape_text(problem, c),
                f"{problem.get_flops(c) / 1e9:.4g}",
                f"{problem.get_bytes(c, dtype) / 1e6:.4g}",
            ]
            for c in cases
        ]
        print(f"\nTest cases ({kind.upper()}, {data_types(problem, dtype)}):")
        print(table(["case", "tensor shapes", "GFLOP", "MB"], rows, align="llrr"))
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
    p = sub.add_parser("problems", help="list the problems by category and difficulty")
    p.add_argument("--category", help="only this category (the first tag), such as matmul or reduction")
    p.add_argument("--difficulty", choices=sorted(DIFFICULTY_ORDER, key=DIFFICULTY_ORDER.__getitem__))
    p.set_defaults(func=cmd_problems)

    p = sub.add_parser("show", help="describe a problem: signatures, tensor shapes per case, formulas, tolerance")
    p.add_argument("slug")
    p.add_argument("--dtype", choices=DTYPES, help="show this dtype (default: the problem's first)")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("starter", help="print starter code for a problem")
    p.add_argument("slug")
    p.add_argument("--lang", choices=STARTER_LANGUAGES, default="cuda")
    p.add_argument("--dtype", choices=DTYPES, default="float32")
    p.add_argument("-o", "--output", help="write to this file instead of stdout")
    p.set_defaults(func=cmd_starter)
