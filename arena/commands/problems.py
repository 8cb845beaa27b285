"""`arena problems`, `arena show` and `arena starter`: browse problems and get starter code."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from arena import distributed_show
from arena.output import add_json_flag, emit
from arena.render import table
from core.errors import InvalidOptionError, UnknownProblemError, UnsupportedDtypeError, UserFacingError
from problems.base import DTYPES, DType, Problem, TestCase
from problems.catalog import data_types, dtype_labels, shape_text
from problems.distributed.starter import python_starter
from problems.registry import UnknownProblemError as UnknownSlugError
from problems.registry import builtin_problems, get_problem
from problems.starter import STARTER_LANGUAGES, generate_starter, param_summary, tolerance_summary


def find_problem(slug: str) -> Problem:
    try:
        return get_problem(slug)
    except UnknownSlugError as exc:
        raise UnknownProblemError(str(exc)) from exc


def check_dtype(problem: Problem, dtype: str) -> None:
    if dtype not in problem.dtypes:
        choices = ", ".join(problem.dtypes)
        raise UnsupportedDtypeError(f"{problem.slug} does not support {dtype}; choose one of {choices}.")


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
    # Listed apart, since they run on several GPUs and cannot be submitted yet.
    distributed = [
        d
        for d in distributed_show.listing()
        if args.category in (None, "distributed") and args.difficulty in (None, d["difficulty"])
    ]
    if not listed and not distributed:
        categories = sorted({p.tags[0] for p in builtin_problems().values() if p.tags} | {"distributed"})
        raise InvalidOptionError(f"No problem matches. Categories: {', '.join(categories)}.")
    listed.sort(key=lambda p: (p.tags[:1], DIFFICULTY_ORDER.get(p.difficulty, 9), p.slug))
    data = {
        "problems": [
            {
                "slug": p.slug,
                "title": p.title,
                "category": p.tags[0] if p.tags else "general",
                "difficulty": p.difficulty,
                "dtypes": list(p.dtypes),
                "version": p.version,
            }
            for p in listed
        ],
        "distributed": distributed,
    }

    def text() -> str:
        rows = [[p.tags[0] if p.tags else "general", p.difficulty, p.slug, p.title, dtype_labels(p)] for p in listed]
        lines = [table(["category", "difficulty", "slug", "title", "dtypes"], rows, align="lllll")] if listed else []
        if distributed:
            sizes = {d["slug"]: ", ".join(map(str, d["world_sizes"])) for d in distributed}
            rows = [[d["difficulty"], d["slug"], d["title"], sizes[d["slug"]]] for d in distributed]
            lines += ["Distributed (several ranks at once; `arena submit SLUG FILE --world-size N --fleet POOL`):"]
            lines += [table(["difficulty", "slug", "title", "ranks"], rows, align="llll")]
        count = f"{len(listed)} problems" + (f" and {len(distributed)} distributed" if distributed else "")
        lines += [f"{count}. `arena show SLUG` describes one; `arena starter SLUG` writes a template."]
        return "\n\n".join(lines)

    emit(args, data, text)
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


def problem_sheet(problem: Problem, dtype: DType) -> dict[str, Any]:
    """Everything `arena show` says of a problem for one dtype, as data."""
    cases = {
        kind: [
            {
                "name": c["name"],
                "shapes": _shape_text(problem, c),
                "gflop": problem.get_flops(c) / 1e9,
                "mb": problem.get_bytes(c, dtype) / 1e6,
            }
            for c in problem.generate_test_cases(dtype, kind)
        ]
        for kind in ("gpu", "cpu")
    }
    return {
        "slug": problem.slug,
        "title": problem.title,
        "version": problem.version,
        "difficulty": problem.difficulty,
        "tags": list(problem.tags),
        "aliases": list(problem.aliases),
        "dtypes": list(problem.dtypes),
        "dtype": dtype,
        "data_types": data_types(problem, dtype),
        "description": problem.description,
        "signatures": {lang: _signature_line(problem, lang, dtype) for lang in ("cuda", "python")},
        "parameters": [{"name": p.name, "summary": param_summary(p, dtype)} for p in problem.ordered_parameters()],
        "flops_formula": problem.flops_formula,
        "bytes_formula": problem.bytes_formula,
        "checked": tolerance_summary(problem, dtype),
        "score_metric": problem.score_metric,
        "time_floor": problem.time_floor.summary(),
        "test_cases": cases,
    }


def _sheet_text(problem: Problem, sheet: dict[str, Any]) -> str:
    aliases = f" · also called {', '.join(problem.aliases)}" if problem.aliases else ""
    metric = "GFLOPS" if problem.score_metric == "gflops" else "GB/s"
    lines = [
        f"{problem.title} ({problem.slug}, v{problem.version}) · {problem.difficulty} · {', '.join(problem.tags)}",
        f"dtypes: {_dtypes_line(problem)}{aliases}",
        "",
        problem.description,
        "",
        f"CUDA ({sheet['data_types']}):\n  {sheet['signatures']['cuda']}",
        f"Python:\n  {sheet['signatures']['python']}",
        "Parameters, in order:",
        *(f"  {p['name']}: {p['summary']}" for p in sheet["parameters"]),
        f"FLOPs: {problem.flops_formula}",
        f"Bytes: {problem.bytes_formula}",
        f"Checked: {sheet['checked']}",
        f"Ranked by: geometric mean of {metric} over the GPU cases (higher is better)",
        f"Time floor: {sheet['time_floor']}",
    ]
    for kind, cases in sheet["test_cases"].items():
        rows = [[c["name"], c["shapes"], f"{c['gflop']:.4g}", f"{c['mb']:.4g}"] for c in cases]
        lines += [f"\nTest cases ({kind.upper()}, {sheet['data_types']}):"]
        lines += [table(["case", "tensor shapes", "GFLOP", "MB"], rows, align="llrr")]
    return "\n".join(lines)


def cmd_show(args: argparse.Namespace) -> int:
    distributed = distributed_show.find_distributed(args.slug)
    if distributed is not None:
        chosen: DType = args.dtype or distributed.dtypes[0]
        if chosen not in distributed.dtypes:
            raise UnsupportedDtypeError(f"{distributed.slug} does not support {chosen}.")
        data = distributed_show.distributed_sheet(distributed, chosen)
        emit(args, data, lambda: distributed_show.distributed_sheet_text(distributed, data))
        return 0
    problem = find_problem(args.slug)
    dtype: DType = args.dtype or problem.dtypes[0]
    check_dtype(problem, dtype)
    sheet = problem_sheet(problem, dtype)
    emit(args, sheet, lambda: _sheet_text(problem, sheet))
    return 0


def _starter_text(args: argparse.Namespace) -> tuple[str, str]:
    """The starter's slug and code; a distributed problem has a Python starter only (its CUDA ABI is not built)."""
    distributed = distributed_show.find_distributed(args.slug)
    if args.lang is None:
        args.lang = "cuda" if distributed is None else "python"
    if distributed is None:
        problem = find_problem(args.slug)
        check_dtype(problem, args.dtype)
        return problem.slug, generate_starter(problem, args.lang, args.dtype)
    if args.lang != "python":
        raise InvalidOptionError(
            f"{distributed.slug} is a distributed problem: its starter is Python only (--lang python); the CUDA "
            "signature is defined (`arena show` prints it) but no harness compiles it yet."
        )
    if args.dtype not in distributed.dtypes:
        raise UnsupportedDtypeError(f"{distributed.slug} does not support {args.dtype}.")
    return distributed.slug, python_starter(distributed, args.dtype)


def cmd_starter(args: argparse.Namespace) -> int:
    slug, text = _starter_text(args)
    data: dict[str, Any] = {"slug": slug, "lang": args.lang, "dtype": args.dtype}
    if args.output:
        write_output(Path(args.output), text, "solution.cu" if args.lang == "cuda" else "solution.py")
        if args.json:
            emit(args, {**data, "wrote": args.output}, "")
        else:
            print(f"wrote {args.output}", file=sys.stderr)
    elif args.json:
        emit(args, {**data, "code": text}, "")
    else:
        sys.stdout.write(text)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("problems", help="list the problems by category and difficulty")
    p.add_argument("--category", help="only this category (the first tag), such as matmul or reduction")
    p.add_argument("--difficulty", choices=sorted(DIFFICULTY_ORDER, key=DIFFICULTY_ORDER.__getitem__))
    add_json_flag(p)
    p.set_defaults(func=cmd_problems)

    p = sub.add_parser("show", help="describe a problem: signatures, tensor shapes per case, formulas, tolerance")
    p.add_argument("slug")
    p.add_argument("--dtype", choices=DTYPES, help="show this dtype (default: the problem's first)")
    add_json_flag(p)
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("starter", help="print starter code for a problem")
    p.add_argument("slug")
    # No default here: a single-GPU problem's starter is CUDA unless asked, a distributed one's Python.
    p.add_argument("--lang", choices=STARTER_LANGUAGES, help="cuda by default (python for a distributed problem)")
    p.add_argument("--dtype", choices=DTYPES, default="float32")
    p.add_argument("-o", "--output", help="write to this file instead of stdout")
    add_json_flag(p, help="print the code inside one JSON document (or, with -o, where it was written)")
    p.set_defaults(func=cmd_starter)
