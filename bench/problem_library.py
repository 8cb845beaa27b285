"""Every built-in problem on a real GPU: its honest CUDA solution passes every GPU case, its broken one fails, its
honest Python solution passes; with a rough rate per case.

    python bench/problem_library.py [--markdown FILE] [--only SLUG,...]

The .cu files are compiled in parallel, then one worker process runs the problems in turn; a kernel that
corrupts the CUDA context ends its worker, and a fresh one carries on with the next problem. Rates are the
median of 20 calls timed with CUDA events around the bare call (`tests/problems/selfcheck.py`): a table's
figure, not the judge's measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def compile_all(slugs: list[str], build: Path) -> dict[str, dict[str, str]]:
    """{slug: {"honest": path or error, "broken": ...}} with every .cu compiled, in parallel."""
    import torch

    from problems.registry import get_problem
    from runner.host.compile import compile_cuda, cuda_arch
    from tests.problems.selfcheck import solution_path

    arch = cuda_arch(torch.cuda.get_device_capability())

    def build_one(job: tuple[str, str]) -> tuple[str, str, str]:
        slug, kind = job
        path = solution_path(get_problem(slug), "cuda", broken=kind == "broken")
        try:
            built = compile_cuda(path.read_text(encoding="utf-8"), build / slug / kind, arch)
            return slug, kind, str(built.path)
        except Exception as exc:
            return slug, kind, f"error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"

    jobs = [(slug, kind) for slug in slugs for kind in ("honest", "broken")]
    libraries: dict[str, dict[str, str]] = {slug: {} for slug in slugs}
    with ThreadPoolExecutor(max_workers=max(2, (os.cpu_count() or 4) - 2)) as pool:
        for slug, kind, where in pool.map(build_one, jobs):
            libraries[slug][kind] = where
    return libraries


def check_problem(slug: str, libraries: dict[str, str]) -> dict[str, Any]:
    from problems.registry import get_problem
    from tests.problems.selfcheck import check_solution, cuda_call, python_call, solution_path

    problem = get_problem(slug)
    dtype = problem.dtypes[0]
    row: dict[str, Any] = {"slug": slug, "dtype": dtype, "metric": problem.score_metric}
    honest = libraries["honest"]
    if honest.startswith("error"):
        row["cuda"] = {"passed": False, "message": honest, "cases": []}
    else:
        result = check_solution(problem, cuda_call(Path(honest), problem, dtype), dtype, "gpu", time_it=True)
        row["cuda"] = {
            "passed": result.passed,
            "cases": [
                {"name": c.name, "passed": c.passed, "message": c.message, "seconds": c.seconds, "flops": c.flops,
                 "bytes": c.bytes}
                for c in result.cases
            ],
        }  # fmt: skip
    broken = libraries["broken"]
    if broken.startswith("error"):
        row["broken_caught"] = None
        row["broken_message"] = broken
    else:
        result = check_solution(
            problem, cuda_call(Path(broken), problem, dtype), dtype, "gpu", stop_at_first_failure=True
        )
        row["broken_caught"] = not result.passed
        failed = [c for c in result.cases if not c.passed]
        row["broken_message"] = f"{failed[0].name}: {failed[0].message}" if failed else "passed every case"
    result = check_solution(problem, python_call(solution_path(problem, "python")), dtype, "gpu")
    row["python"] = {
        "passed": result.passed,
        "failures": [f"{c.name}: {c.message}" for c in result.cases if not c.passed],
    }
    return row


def worker(plan_file: Path) -> int:
    """Check each problem of the plan in turn, one JSON line each; stop at the first CUDA error (the context is
    then unusable)."""
    plan = json.loads(plan_file.read_text())
    for slug in plan["slugs"]:
        print(json.dumps({"start": slug}), flush=True)
        try:
            row = check_problem(slug, plan["libraries"][slug])
        except Exception as exc:
            row = {"slug": slug, "error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}
            print(json.dumps(row), flush=True)
            if "CUDA" in str(exc) or "cuda" in type(exc).__name__.lower():
                return 3
            continue
        print(json.dumps(row), flush=True)
        messages = json.dumps(row)
        if "illegal memory access" in messages or "unspecified launch failure" in messages:
            return 3
    return 0


def run_all(slugs: list[str], libraries: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    remaining = list(slugs)
    while remaining:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as plan:
            json.dump({"slugs": remaining, "libraries": libraries}, plan)
        proc = subprocess.run(
            [sys.executable, __file__, "--worker", plan.name], capture_output=True, text=True, check=False, cwd=ROOT
        )
        started = None
        for line in proc.stdout.splitlines():
            try:
                item = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "start" in item:
                started = item["start"]
            elif "slug" in item:
                rows[item["slug"]] = item
        if started is not None and started not in rows:
            tail = (proc.stderr.strip().splitlines() or ["the worker died"])[-1]
            rows[started] = {"slug": started, "error": f"worker died: {tail}"}
        if started is None:
            for slug in remaining:
                rows[slug] = {"slug": slug, "error": f"worker failed to start: {proc.stderr.strip()[-300:]}"}
        remaining = [s for s in remaining if s not in rows]
    return [rows[s] for s in slugs]


def _rate(case: dict[str, Any], metric: str) -> str:
    if not case.get("seconds"):
        return "-"
    if metric == "gflops" and case["flops"]:
        return f"{case['flops'] / case['seconds'] / 1e9:,.0f} GFLOPS"
    return f"{case['bytes'] / case['seconds'] / 1e9:,.0f} GB/s"


def render(rows: list[dict[str, Any]], device: str) -> str:
    lines = [
        f"# Problem library on {device}",
        "",
        "Honest CUDA solution on every GPU case (rate of the largest case: median of 20 event-timed bare calls),",
        "the broken CUDA solution, and the honest Python solution. `python bench/problem_library.py`.",
        "",
        "| problem | dtype | GPU cases passed | largest case | rate | broken .cu caught | .py passed |",
        "|---|---|---|---|---|---|---|",
    ]
    totals = {"cuda": 0, "broken": 0, "python": 0}
    for row in rows:
        if "error" in row:
            lines.append(f"| {row['slug']} | - | error: {row['error'][:80]} | | | | |")
            continue
        cases = row["cuda"]["cases"]
        passed = sum(c["passed"] for c in cases)
        largest = cases[-1] if cases else {}
        totals["cuda"] += bool(row["cuda"]["passed"])
        totals["broken"] += bool(row["broken_caught"])
        totals["python"] += bool(row["python"]["passed"])
        status = f"{passed}/{len(cases)}" if cases else row["cuda"].get("message", "")[:60]
        rate = _rate(largest, row["metric"])
        caught, python_ok = "yes" if row["broken_caught"] else "NO", "yes" if row["python"]["passed"] else "NO"
        name = largest.get("name", "-")
        lines.append(f"| {row['slug']} | {row['dtype']} | {status} | {name} | {rate} | {caught} | {python_ok} |")
    n = len(rows)
    lines += [
        "",
        f"Honest CUDA passed every case: {totals['cuda']}/{n}. Broken CUDA caught: {totals['broken']}/{n}. "
        f"Honest Python passed: {totals['python']}/{n}.",
    ]
    failures = [
        r
        for r in rows
        if "error" in r or not r["cuda"]["passed"] or not r["broken_caught"] or not r["python"]["passed"]
    ]
    if failures:
        lines += ["", "## Failures", ""]
        for r in failures:
            if "error" in r:
                lines.append(f"- {r['slug']}: {r['error']}")
                continue
            for c in r["cuda"]["cases"]:
                if not c["passed"]:
                    lines.append(f"- {r['slug']} honest .cu, {c['name']}: {c['message'][:300]}")
            if not r["cuda"]["cases"] and not r["cuda"]["passed"]:
                lines.append(f"- {r['slug']} honest .cu: {r['cuda'].get('message', '')[:300]}")
            if not r["broken_caught"]:
                lines.append(f"- {r['slug']} broken .cu: {r['broken_message'][:300]}")
            for f in r["python"]["failures"]:
                lines.append(f"- {r['slug']} honest .py, {f[:300]}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--only", help="comma-separated slugs (default: every built-in problem)")
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    parser.add_argument("--json", type=Path, help="also write the raw rows here")
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args.worker)
    import torch

    from problems.registry import builtin_problems

    slugs = args.only.split(",") if args.only else list(builtin_problems())
    device = torch.cuda.get_device_name()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="arena-library-") as build:
        libraries = compile_all(slugs, Path(build))
        print(f"compiled {2 * len(slugs)} files in {time.monotonic() - started:.0f} s", file=sys.stderr)
        rows = run_all(slugs, libraries)
    text = render(rows, device)
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    ok = all("error" not in r and r["cuda"]["passed"] and r["broken_caught"] and r["python"]["passed"] for r in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
