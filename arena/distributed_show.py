"""What `arena problems`, `arena show` and `arena starter` say of a distributed problem: its world sizes, one
rank's parameters, the signatures with rank, world size and group, nccl-tests' byte arithmetic, and each case's
per-rank shapes at every world size, and how one is submitted: to a runner's slots of N ranks, through the fleet or a
server; the paths that cannot run one (a local run, --runner, a batch) refuse it in words."""

from __future__ import annotations

from typing import Any

from arena.render import table
from core.errors import UserFacingError
from problems.base import DType
from problems.catalog import shape_text
from problems.distributed.base import DistributedCase, DistributedProblem, bus_factor
from problems.distributed.registry import distributed_problems
from problems.distributed.starter import distributed_tolerance_summary
from problems.starter import param_summary

# Said by `show`, `starter` and `submit` alike, so a competitor hears one rule.
HOW_TO_SUBMIT = (
    "Distributed problems run on a runner's slots of N ranks (CPU, gloo, Python solutions): submit with "
    "`--world-size N` and `--fleet POOL` or `--server`. A local run, --runner, --no-store, a batch, CUDA files and "
    "mode profile cannot run them yet."
)


class DistributedNotSubmittableError(UserFacingError):
    """`arena submit` on a distributed slug, on a path that cannot run it yet (or without a world size it takes)."""


def find_distributed(slug: str) -> DistributedProblem | None:
    """The distributed problem `slug`, or None where it names none (the single-GPU lookup then speaks)."""
    return distributed_problems().get(slug)


def check_submission(slug: str, world_size: int | None, *, store_path: bool, batch: bool) -> int:
    """The world size `arena submit` sends for `slug` (1 for a single-device problem); refuses in words a distributed
    problem on a path that cannot run it (`store_path`: --fleet or --server), in a batch, or at a world size it does
    not declare, and a world size for a single-device problem."""
    problem = find_distributed(slug)
    if problem is None:
        if world_size not in (None, 1):
            raise UserFacingError(f"{slug} runs on one device: leave out --world-size (or give 1).")
        return 1
    sizes = ", ".join(map(str, problem.world_sizes))
    if batch or not store_path:
        where = "a batch" if batch else "this path"
        raise DistributedNotSubmittableError(
            f"{problem.slug} is a distributed problem, and {where} cannot run it. {HOW_TO_SUBMIT}"
        )
    if world_size is None or world_size not in problem.world_sizes:
        told = "no --world-size" if world_size is None else f"--world-size {world_size}"
        raise DistributedNotSubmittableError(
            f"{problem.slug} is a distributed problem for {sizes} ranks, and the command has {told}: give "
            f"--world-size {problem.world_sizes[0]} (or another of {sizes})."
        )
    return world_size


def listing() -> list[dict[str, Any]]:
    """The distributed problems as `arena problems --json` lists them, beside the single-GPU ones."""
    return [
        {
            "slug": p.slug,
            "title": p.title,
            "category": "distributed",
            "difficulty": p.difficulty,
            "dtypes": list(p.dtypes),
            "version": p.version,
            "world_sizes": list(p.world_sizes),
            "submittable": True,
        }
        for p in distributed_problems().values()
    ]


def _rank_view(problem: DistributedProblem, case: DistributedCase, rank: int, world_size: int) -> dict[str, Any]:
    dims = tuple(case["dims"])
    shapes = problem.rank_shapes(dims, rank, world_size)
    buffers = {p.name: shapes[p.name] for p in problem.parameters if p.is_pointer and p.role != "array"}
    values = iter(problem.rank_extras(dims, rank, world_size))
    extras = {p.name: next(values) for p in problem.parameters if p.role in ("scalar", "array")}
    return {"rank": rank, "shapes": shape_text(buffers), "values": extras}


def _cases(problem: DistributedProblem, dtype: DType, kind: str) -> list[dict[str, Any]]:
    """Every case at every world size: per-rank shapes and values, the algorithm and bus bytes, one rank's FLOPs."""
    found = []
    for world_size in problem.world_sizes:
        for case in problem.generate_test_cases(dtype, "gpu" if kind == "gpu" else "cpu"):
            found.append(
                {
                    "name": case["name"],
                    "world_size": world_size,
                    "ranks": [_rank_view(problem, case, r, world_size) for r in range(world_size)],
                    "algorithm_mb": problem.get_bytes(case, dtype, world_size) / 1e6,
                    "bus_mb": problem.bus_bytes(case, dtype, world_size) / 1e6,
                    "gflop_per_rank": problem.get_flops(case, world_size) / 1e9,
                }
            )
    return found


def distributed_sheet(problem: DistributedProblem, dtype: DType) -> dict[str, Any]:
    """Everything `arena show` says of a distributed problem for one dtype, as data."""
    return {
        "slug": problem.slug,
        "title": problem.title,
        "version": problem.version,
        "difficulty": problem.difficulty,
        "tags": list(problem.tags),
        "distributed": True,
        "submittable": True,
        "how_to_submit": HOW_TO_SUBMIT,
        "world_sizes": list(problem.world_sizes),
        "collective": problem.collective,
        "dtypes": list(problem.dtypes),
        "dtype": dtype,
        "description": problem.description,
        "signatures": {"python": problem.python_signature().rstrip(":"), "cuda": problem.cuda_signature(dtype)},
        "parameters": [{"name": p.name, "summary": param_summary(p, dtype)} for p in problem.parameters],
        "flops_formula": problem.flops_formula,
        "bytes_formula": problem.bytes_formula,
        "bus_factor": {str(n): bus_factor(problem.collective, n) for n in problem.world_sizes},
        "link_assumption": problem.link_assumption,
        "checked": distributed_tolerance_summary(problem, dtype),
        "score_metric": problem.score_metric,
        "test_cases": {kind: _cases(problem, dtype, kind) for kind in ("gpu", "cpu")},
    }


def _case_lines(cases: list[dict[str, Any]]) -> list[str]:
    """One row per case and world size; where the ranks' shapes differ (the all-to-all), one line per rank."""
    rows, per_rank = [], []
    for c in cases:
        shapes = {r["shapes"] for r in c["ranks"]}
        uniform = len(shapes) == 1
        rows.append(
            [
                c["name"],
                str(c["world_size"]),
                next(iter(shapes)) if uniform else "differ per rank (below)",
                f"{c['algorithm_mb']:.4g}",
                f"{c['bus_mb']:.4g}",
                f"{c['gflop_per_rank']:.4g}",
            ]
        )
        if not uniform:
            per_rank += [
                f"  {c['name']} at {c['world_size']} ranks, rank {r['rank']}: {r['shapes']}" for r in c["ranks"]
            ]
    head = ["case", "ranks", "each rank's tensor shapes", "algo MB", "bus MB", "GFLOP/rank"]
    return [table(head, rows, align="lrlrrr"), *per_rank]


def distributed_sheet_text(problem: DistributedProblem, sheet: dict[str, Any]) -> str:
    metric = "GFLOPS" if problem.score_metric == "gflops" else "GB/s"
    factors = ", ".join(f"{n} ranks ×{f:.4g}" for n, f in sheet["bus_factor"].items())
    lines = [
        f"{problem.title} ({problem.slug}, v{problem.version}) · {problem.difficulty} · {', '.join(problem.tags)}",
        f"Distributed: runs on {', '.join(map(str, problem.world_sizes))} ranks at once · dtypes: "
        f"{', '.join(problem.dtypes)}",
        HOW_TO_SUBMIT,
        "",
        problem.description,
        "",
        f"Python (every rank runs it):\n  {sheet['signatures']['python']}",
        f"CUDA (built against NCCL; submissions take .py only for now):\n  {sheet['signatures']['cuda']}",
        "One rank's parameters, in order (then rank, world_size and group):",
        *(f"  {p['name']}: {p['summary']}" for p in sheet["parameters"]),
        f"FLOPs: {problem.flops_formula}",
        f"Bytes: {problem.bytes_formula}",
        f"Bus bandwidth = algorithm bandwidth × the bus factor: {factors}",
        f"Floor: {problem.link_assumption}",
        f"Checked: {sheet['checked']}, as they stand when each rank's call returns",
        f"Ranked by: {metric} of each sample's slowest rank, one board per world size",
    ]
    for kind, cases in sheet["test_cases"].items():
        lines += [f"\nTest cases ({kind.upper()}, {sheet['dtype']}):", *_case_lines(cases)]
    return "\n".join(lines)
