"""Honest host-bound calls: what the runner reports for each, beside an outside timing of the same call.

    python bench/host_bound.py --device gpu --burners 4
    python bench/host_bound.py --device cpu --burners 2

The entries are the honest corpus's host-bound class (`tests/honest/corpus.py: HOST_BOUND_FILES`): Python and
`std::thread` threads joined inside the call, loops of 64 and 512 launches, NumPy work before each launch,
`torch.compile`, `cudaEventSynchronize`, pinned host staging. Each runs through the real runner at the service's
settings (`MeasureConfig()`) with CPU burners loading the host. The outside timing is what a user measures at
home: in this process, the same file on the same case shapes, CUDA events around one call with a synchronise
before and after it (a monotonic clock on the CPU), the median of `--samples` calls after three warm-up calls.

The ratio is the runner's median over the outside median. The stated factor: every honest host-bound case passes,
and its ratio lies within [LOW, HIGH] below. Below 1, the runner saw less than the outside timing; above it, more
(the outside timing pays its synchronise's own latency too, so a ratio a little under 1 is expected for small
calls). The exit status is 0 only when every run passed and every ratio is within the factor.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.false_rejections import describe_machine, start_burners  # noqa: E402
from tests.adversarial import suite  # noqa: E402
from tests.honest.corpus import HONEST_SUBMISSIONS, HOST_BOUND_FILES, honest_for  # noqa: E402
from tests.honest.test_honest import HONEST_LIMITS, MEASURES  # noqa: E402

LOW, HIGH = 0.5, 1.5
OUTSIDE = {"gpu": "CUDA events around one synchronised call", "cpu": "a monotonic clock around one call"}
WARMUP_CALLS = 3


def _outside_call(entry: suite.Entry, case: dict[str, Any], device: str, build: Path) -> Any:
    """The entry's solution bound to fresh inputs of `case`, loaded in this process as a user would."""
    import torch

    from problems.registry import get_problem
    from runner.launcher.loader import load_cuda_solution, load_python_solution

    problem = get_problem(entry.problem)
    if entry.language == "cuda":
        from runner.host.compile import compile_cuda, cuda_arch

        built = compile_cuda(entry.source(), build, cuda_arch(torch.cuda.get_device_capability()))
        solution = load_cuda_solution(built.path, problem, entry.dtype)
    else:
        solution = load_python_solution(HONEST_SUBMISSIONS / entry.file, module_name=f"outside_{entry.name}")
    generator = torch.Generator(device=device).manual_seed(7)
    inputs = tuple(t.contiguous() for t in case["create_inputs"](generator))
    extras = problem.get_extra_params(case)
    outputs = [torch.empty_like(e) for e in problem.reference_outputs(inputs, extras)]
    return solution.bind(problem, inputs, outputs, extras, device)


def outside_median_us(entry: suite.Entry, samples: int) -> dict[str, float]:
    """Per case of the entry's problem: the median of `samples` synchronised calls, in µs."""
    import torch

    from problems.registry import get_problem

    device = "cuda" if entry.device == "gpu" else "cpu"
    problem = get_problem(entry.problem)
    medians: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="host-bound-") as build:
        for case in problem.generate_test_cases(entry.dtype, entry.device):
            call = _outside_call(entry, case, device, Path(build))
            for _ in range(WARMUP_CALLS):
                call()
            times = []
            for _ in range(samples):
                if device == "cuda":
                    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    torch.cuda.synchronize()
                    start.record()
                    call()
                    stop.record()
                    torch.cuda.synchronize()
                    times.append(start.elapsed_time(stop) * 1e3)
                else:
                    began = time.perf_counter()
                    call()
                    times.append((time.perf_counter() - began) * 1e6)
            medians[str(case["name"])] = statistics.median(times)
    return medians


async def runner_results(entries: list[suite.Entry]) -> dict[str, Any]:
    results = {}
    async with suite.open_suite_runner(limits=HONEST_LIMITS, measure=MEASURES["production"], sandbox_limits={}) as r:
        for entry in entries:
            results[entry.name] = await r.run(entry)
            print(f"{entry.name}: {results[entry.name].status}", flush=True)
    return results


def render(
    entries: list[suite.Entry],
    results: dict[str, Any],
    outside: dict[str, dict[str, float]],
    args: argparse.Namespace,
) -> tuple[str, bool]:
    good = True
    lines = [
        f"# Honest host-bound calls on {args.device.upper()}: the runner's time beside an outside timing",
        "",
        f"Machine: {describe_machine(args.device)}. CPU burners: {args.burners}. Runner settings: the service's "
        f"(`MeasureConfig()`). Outside: {OUTSIDE[args.device]}, median of {args.samples}. Recorded "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} with `python bench/host_bound.py "
        f"{' '.join(sys.argv[1:])}`. Stated factor: runner / outside within [{LOW}, {HIGH}].",
        "",
        "| entry | case | verdict | runner median (µs) | timed by | host part (µs) | wall clock (µs) "
        "| outside median (µs) | ratio |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for entry in entries:
        result = results[entry.name]
        verdict = result.status if result.error is None else f"{result.status}/{result.error.code}"
        if result.status != "passed":
            good = False
            message = (result.error.message if result.error else "")[:200].replace("|", "/")
            lines.append(f"| {entry.name} | - | {verdict}: {message} | - | - | - | - | - | - |")
            continue
        for t in result.timings:
            by = "judge's clock" if t.judge_clock else ("events, host included" if t.host_bound else "events")
            if t.host_waits:
                by += " (waits)"
            out = outside[entry.name].get(t.name)
            ratio = t.runtime_median_us / out if out else None
            good = good and ratio is not None and LOW <= ratio <= HIGH
            wall = f"{t.wall_clock_us:.1f}" if t.wall_clock_us is not None else "-"
            part = f"{t.host_part_us:.1f}" if t.host_part_us is not None else "-"
            outside_cells = f"{out:.1f} | {ratio:.2f}" if out and ratio is not None else "- | -"
            lines.append(
                f"| {entry.name} | {t.name} | {verdict} | {t.runtime_median_us:.1f} | {by} | {part} | {wall} | "
                f"{outside_cells} |"
            )
    lines += ["", f"**{'Every' if good else 'Not every'} case passed within the stated factor.**"]
    return "\n".join(lines) + "\n", good


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    parser.add_argument("--burners", type=int, default=2)
    parser.add_argument("--samples", type=int, default=200, help="outside calls per case")
    parser.add_argument("--entries", nargs="*", default=[], help="only these entries")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    entries = [e for e in honest_for(args.device, args.entries) if e.file in HOST_BOUND_FILES]
    burners = start_burners(args.burners)
    try:
        results = asyncio.run(runner_results(entries))
        outside = {e.name: outside_median_us(e, args.samples) for e in entries}
    finally:
        for burner in burners:
            burner.kill()
    report, good = render(entries, results, outside, args)
    print(report)
    out = args.out or ROOT / "bench" / "results" / f"host_bound_{args.device}.md"
    out.write_text(report, encoding="utf-8")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
