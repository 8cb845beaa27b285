"""Timing fidelity: our measurement method against Nsight Compute, the seed's loop and triton's do_bench.

    python bench/timing_fidelity.py --out bench/results/timing_fidelity_h100.md

For each calibration kernel it prints the runtime from each method and checks the targets: within
max(5 %, 0.5 µs) of ncu's `gpu__time_duration.sum`, converged within 1 s of GPU time. The table times each
kernel in this process; `--split` also runs the CUDA examples through the real runner (the judge and the
launcher, every call checked) and sets each case beside ncu's reading of the same kernel at the same dims.
With `--repeat N` it runs one submission N times, each in fresh processes, and reports the spread of its
medians.
Needs a CUDA GPU, nvcc, and ncu on PATH (or `--skip-ncu`).
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import io
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from runner.api import JobRequest, MeasureConfig  # noqa: E402
from runner.timing.gpu import ArenaEventTimer, reset_persisting_l2  # noqa: E402
from runner.timing.measurement import Measurement  # noqa: E402
from runner.timing.timers import SeedEventTimer, seed_warmup  # noqa: E402

NVTX_RANGE = "arena_measure"
NCU_ITERATIONS = 7
INPUT_SETS = 4
Call = Callable[[], object]


@dataclass(frozen=True)
class Kernel:
    name: str
    setup: Callable[[int], list[Call]]  # input sets -> one bound call per set


def _torch_add(n: int) -> Callable[[int], list[Call]]:
    def setup(sets: int) -> list[Call]:
        import torch

        calls = []
        for _ in range(sets):
            a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
            c = torch.empty_like(a)
            calls.append(lambda a=a, b=b, c=c: torch.add(a, b, out=c))
        return calls

    return setup


def _torch_matmul(n: int) -> Callable[[int], list[Call]]:
    def setup(sets: int) -> list[Call]:
        import torch

        calls = []
        for _ in range(sets):
            a, b = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
            c = torch.empty_like(a)
            calls.append(lambda a=a, b=b, c=c: torch.matmul(a, b, out=c))
        return calls

    return setup


def _torch_softmax(rows: int, cols: int) -> Callable[[int], list[Call]]:
    def setup(sets: int) -> list[Call]:
        import torch

        xs = [torch.randn(rows, cols, device="cuda") for _ in range(sets)]
        return [lambda x=x: torch.softmax(x, dim=1) for x in xs]

    return setup


def _cuda_example(example: str, slug: str, dims: tuple[int, ...]) -> Callable[[int], list[Call]]:
    def setup(sets: int) -> list[Call]:
        import torch

        from problems.registry import get_problem
        from runner.host.compile import compile_cuda, cuda_arch
        from runner.launcher.loader import load_cuda_solution

        problem = get_problem(slug)
        build = Path(tempfile.mkdtemp(prefix="fidelity-"))
        built = compile_cuda(
            (ROOT / "examples" / example).read_text(), build, cuda_arch(torch.cuda.get_device_capability())
        )
        solution = load_cuda_solution(built.path, problem, "float32")
        calls = []
        for k in range(sets):
            gen = torch.Generator(device="cuda").manual_seed(k)
            if slug == "vector_add":
                (n,) = dims
                inputs = (torch.randn(n, device="cuda", generator=gen), torch.randn(n, device="cuda", generator=gen))
                outputs = (torch.empty(n, device="cuda"),)
                extras: list[int] = [n]
            else:
                m, n, kk = dims  # matrix-multiplication: (m, n, k), A m×k, B k×n
                inputs = (
                    torch.randn(m, kk, device="cuda", generator=gen),
                    torch.randn(kk, n, device="cuda", generator=gen),
                )
                outputs = (torch.empty(m, n, device="cuda"),)
                extras = [m, n, kk]
            calls.append(solution.bind(problem, inputs, outputs, extras, "cuda"))
        return calls

    return setup


def _empty_kernel(sets: int) -> list[Call]:
    import torch

    return [lambda: torch.cuda._sleep(0) for _ in range(sets)]


KERNELS = [
    Kernel("empty kernel (_sleep(0))", _empty_kernel),
    Kernel("add fp32 2^16", _torch_add(1 << 16)),
    Kernel("add fp32 2^20", _torch_add(1 << 20)),
    Kernel("add fp32 2^24", _torch_add(1 << 24)),
    Kernel("add fp32 2^26", _torch_add(1 << 26)),
    Kernel("ctypes CUDA vadd 2^16", _cuda_example("vector_add.cu", "vector_add", (1 << 16,))),
    Kernel("ctypes CUDA vadd 2^24", _cuda_example("vector_add.cu", "vector_add", (1 << 24,))),
    Kernel("matmul fp32 1024^3 (cuBLAS)", _torch_matmul(1024)),
    Kernel("matmul fp32 4096^3 (cuBLAS)", _torch_matmul(4096)),
    Kernel("naive CUDA matmul 2048^3", _cuda_example("matmul_naive.cu", "matrix-multiplication", (2048, 2048, 2048))),
    Kernel("softmax 4096x4096", _torch_softmax(4096, 4096)),
]


def _child_kernel(spec: str) -> Kernel:
    """A kernel of the table by index, or `EXAMPLE:SLUG:D1xD2...`: an example at one case's dims."""
    if spec.isdigit():
        return KERNELS[int(spec)]
    example, slug, dims = spec.split(":")
    return Kernel(spec, _cuda_example(example, slug, tuple(int(d) for d in dims.split("x"))))


def ncu_child(spec: str) -> None:
    """Runs under ncu: each iteration of the kernel inside an NVTX range, so setup kernels are not profiled."""
    import torch

    calls = _child_kernel(spec).setup(1)
    calls[0]()
    torch.cuda.synchronize()
    for _ in range(NCU_ITERATIONS):
        torch.cuda.nvtx.range_push(NVTX_RANGE)
        calls[0]()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()


def ncu_runtime_us(spec: str) -> float | None:
    """Median over iterations of the summed `gpu__time_duration.sum` of the kernels in one iteration."""
    ncu = shutil.which("ncu")
    if ncu is None:
        return None
    cmd = [
        ncu,
        "--clock-control",
        "none",
        "--metrics",
        "gpu__time_duration.sum",
        "--csv",
        "--nvtx",
        "--nvtx-include",
        f"{NVTX_RANGE}/",
        sys.executable,
        __file__,
        "--ncu-child",
        spec,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    text = proc.stdout[proc.stdout.find('"ID"') :]
    rows = [r for r in csv.DictReader(io.StringIO(text)) if r.get("Metric Name") == "gpu__time_duration.sum"]
    if not rows:
        print(f"ncu gave no rows for {spec}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        return None
    scale = {"ns": 1e-3, "nsec": 1e-3, "nsecond": 1e-3, "us": 1.0, "usec": 1.0, "usecond": 1.0, "ms": 1e3, "msec": 1e3}
    units = {r["Metric Unit"] for r in rows}
    if not units <= scale.keys():
        raise ValueError(f"unexpected ncu units {units}")
    values = [float(r["Metric Value"].replace(",", "")) * scale[r["Metric Unit"]] for r in rows]
    per_iteration = len(values) // NCU_ITERATIONS or 1
    sums = [sum(values[i : i + per_iteration]) for i in range(0, len(values), per_iteration)]
    return statistics.median(sums)


@dataclass
class Row:
    name: str
    ncu: float | None
    arena: float
    arena_samples: int
    arena_dropped: int
    arena_converged: bool
    arena_seconds: float
    arena_clock: float | None
    seed: float
    seed_samples: int
    do_bench: float | None


def measure_kernel(kernel: Kernel) -> tuple[float, int, int, bool, float, float | None, float, int, float | None]:
    import torch

    calls = kernel.setup(INPUT_SETS)
    reset_persisting_l2()
    timer = ArenaEventTimer()
    start = time.perf_counter()
    arena = Measurement(calls, timer, MeasureConfig(method="arena", max_samples=5000), 1, 1)
    timing = arena.run(0, kernel.name, [])
    arena_wall = time.perf_counter() - start

    seed_warmup()
    seed = Measurement(calls[:1], SeedEventTimer(), MeasureConfig(method="seed", max_samples=2000), 1, 1)
    seed_timing = seed.run(0, kernel.name, [])

    bench_us = None
    try:
        import triton.testing

        bench_us = float(triton.testing.do_bench(calls[0], return_mode="median")) * 1e3
    except ImportError:
        pass
    torch.cuda.synchronize()
    return (
        timing.runtime_median_us,
        timing.samples,
        timing.dropped_samples,
        timing.converged,
        arena_wall,
        timing.sm_clock_mhz,
        seed_timing.runtime_mean_us,
        seed_timing.samples,
        bench_us,
    )


def within_target(arena: float, ncu: float | None) -> str:
    if ncu is None:
        return "n/a"
    return "yes" if abs(arena - ncu) <= max(0.05 * ncu, 0.5) else "NO"


def render(rows: list[Row], device: str) -> str:
    def f(v: float | None) -> str:
        return "-" if v is None else (f"{v:.2f}" if v < 100 else f"{v:.0f}")

    out = [
        f"# Timing fidelity on {device}",
        "",
        "Runtimes in µs. arena: median of our method; seed: mean of the seed's loop (CV 1 %, ≤ 2000 samples);",
        "do_bench: triton.testing.do_bench median; ncu: median over 7 runs of gpu__time_duration.sum",
        "(--clock-control none, caches flushed). Target: |arena − ncu| ≤ max(5 %, 0.5 µs); converged ≤ 1 s.",
        "",
        "| kernel | ncu | arena | Δ vs ncu | within target | samples (dropped) | converged | wall s | SM MHz "
        "| seed | do_bench |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        delta = "-" if r.ncu is None else f"{r.arena - r.ncu:+.2f} ({(r.arena - r.ncu) / r.ncu * 100:+.1f} %)"
        out.append(
            f"| {r.name} | {f(r.ncu)} | {f(r.arena)} | {delta} | {within_target(r.arena, r.ncu)} | "
            f"{r.arena_samples} ({r.arena_dropped}) | {'yes' if r.arena_converged else 'no'} | {r.arena_seconds:.2f} | "
            f"{f(r.arena_clock)} | {f(r.seed)} ({r.seed_samples}) | {f(r.do_bench)} |"
        )
    return "\n".join(out)


SPLIT_EXAMPLES = (("vector_add.cu", "vector_add"), ("matmul_naive.cu", "matrix-multiplication"))


def _request(example: str, slug: str, submission_id: str) -> JobRequest:
    language = "cuda" if example.endswith(".cu") else "python"
    source = (ROOT / "examples" / example).read_text()
    return JobRequest(
        submission_id=submission_id,
        problem_slug=slug,
        language=language,
        file_name=example,
        source=source,
        device_kind="gpu",
    )


async def through_the_runner(example: str, slug: str, *, skip_ncu: bool) -> str:
    """One submission through the real runner (judge and launcher, fresh inputs on every call, the checks),
    each case against ncu's reading of the same kernel at the same dims."""
    from runner.host.job import run_job

    result = await run_job(_request(example, slug, f"fidelity-split-{slug}"))
    if result.status != "passed":
        return f"{example} did not pass through the runner: {result.error}"
    lines = [
        f"## {example} ({slug}) through the runner: judge and launcher processes",
        "",
        "Every sample on a fresh input set, verified; runner = the judge's median; clock = the judge's own",
        "wall-clock estimate of one call.",
        "",
        "| case | ncu | runner | Δ vs ncu | within target | samples | clock |",
        "|---|---|---|---|---|---|---|",
    ]
    for t in result.timings:
        spec = f"{example}:{slug}:{'x'.join(str(d) for d in t.dims)}"
        ncu = None if skip_ncu else ncu_runtime_us(spec)
        delta = "n/a" if ncu is None else f"{t.runtime_median_us - ncu:+.2f} ({(t.runtime_median_us - ncu) / ncu:+.1%})"
        clock = "n/a" if t.wall_clock_us is None else f"{t.wall_clock_us:.2f}"
        lines.append(
            f"| {t.name} | {'n/a' if ncu is None else f'{ncu:.2f}'} | {t.runtime_median_us:.2f} | {delta} | "
            f"{within_target(t.runtime_median_us, ncu)} | {t.samples} | {clock} |"
        )
    return "\n".join(lines)


async def repeat_submission(times: int, example: str, slug: str) -> str:
    from runner.host.job import run_job

    medians: list[list[float]] = []
    for i in range(times):
        result = await run_job(_request(example, slug, f"fidelity-repeat-{i}"))
        if result.status != "passed":
            return f"repeat run {i} did not pass: {result.error}"
        medians.append([t.runtime_median_us for t in result.timings])
    names = [t.name for t in result.timings]
    lines = [
        f"## {times} fresh-process runs of {example} ({slug})",
        "",
        "| case | " + " | ".join(f"run {i + 1}" for i in range(times)) + " | spread (max−min)/median |",
        "|---|" + "---|" * (times + 1),
    ]
    for j, name in enumerate(names):
        values = [m[j] for m in medians]
        spread = (max(values) - min(values)) / statistics.median(values) * 100
        lines.append(f"| {name} | " + " | ".join(f"{v:.2f}" for v in values) + f" | {spread:.2f} % |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ncu-child", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help="also write the table (markdown) here")
    parser.add_argument("--skip-ncu", action="store_true")
    parser.add_argument("--only", help="run only kernels whose name contains this")
    parser.add_argument("--split", action="store_true", help="also time the CUDA examples through the runner")
    parser.add_argument("--repeat", type=int, default=0, help="fresh-process runs of one submission")
    parser.add_argument("--repeat-example", default="matmul_naive.cu")
    parser.add_argument("--repeat-problem", default="matrix-multiplication")
    args = parser.parse_args()
    if args.ncu_child is not None:
        ncu_child(args.ncu_child)
        return

    import torch

    device = torch.cuda.get_device_name()
    rows = []
    for index, kernel in enumerate(KERNELS):
        if args.only and args.only not in kernel.name:
            continue
        ncu = None if args.skip_ncu else ncu_runtime_us(str(index))
        arena, n, dropped, conv, wall, clock, seed, seed_n, bench = measure_kernel(kernel)
        rows.append(Row(kernel.name, ncu, arena, n, dropped, conv, wall, clock, seed, seed_n, bench))
        print(
            f"{kernel.name}: ncu {ncu}, arena {arena:.2f} ({n} samples, {dropped} dropped), seed {seed:.2f}", flush=True
        )
    report = render(rows, device)
    if args.split:
        for example, slug in SPLIT_EXAMPLES:
            report += "\n\n" + asyncio.run(through_the_runner(example, slug, skip_ncu=args.skip_ncu))
    if args.repeat:
        report += "\n\n" + asyncio.run(repeat_submission(args.repeat, args.repeat_example, args.repeat_problem))
    print(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
