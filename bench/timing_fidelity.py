"""Timing fidelity: our measurement method against Nsight Compute, the seed's loop and triton's do_bench.

    python bench/timing_fidelity.py --out bench/results/timing_fidelity_h100.md

For each calibration kernel it prints the runtime from each method and checks the targets: within
max(2 %, 0.3 µs) of ncu's `gpu__time_duration.sum`, converged within 1 s of GPU time. The arena and seed
columns come from the production path: each kernel is a submission (a Python `solution` for the torch kernels,
the CUDA example for the CUDA ones) to a problem sent as module text whose only case is the kernel's size, run
by `runner.job.run.run_job` (the judge and the launcher in their own processes, every call checked); ncu and
do_bench time the same kernel at the same size in a process of their own. `--split` also runs the CUDA
examples' whole case lists through the runner, each case beside ncu's reading of the same kernel at the same
dims. With `--repeat N` it runs one submission N times, each in fresh processes, and reports the spread of its
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
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from contract.names import Language  # noqa: E402
from contract.wire import CaseTiming, JobRequest, MeasureConfig  # noqa: E402

NVTX_RANGE = "arena_measure"
NCU_ITERATIONS = 7
# The fidelity target: within max(2 %, 0.3 µs) of ncu's reading (it was max(5 %, 0.5 µs) until the H200 run).
TARGET_FRACTION = 0.02
TARGET_US = 0.3
Call = Callable[[], object]
# The arena column is what a submission gets: the production defaults. The seed column is the seed's loop (CV 1 %)
# with room to converge.
ARENA_CONFIG = MeasureConfig()
SEED_CONFIG = MeasureConfig(method="seed", max_samples=2000)


@dataclass(frozen=True)
class Submission:
    """A calibration kernel as the runner sees it: a built-in problem narrowed to the kernel's one case, and the
    solution that runs the kernel."""

    problem: str  # "module:Class" of the built-in problem whose signature and checks the case keeps
    dims: tuple[int, ...]
    language: Language
    source: str  # a Python solution's text, or the name of a CUDA example in examples/
    accept_any_output: bool = False  # for the empty kernel, which computes nothing
    dtype: str = "float32"

    def problem_source(self, slug: str) -> str:
        """The module text of a problem whose only case, on either device kind, is `dims`."""
        module, cls = self.problem.split(":")
        verify = (
            "\n    def verify_result(self, expected_output, actual_output, dtype):\n"
            "        return True, {}  # the empty kernel writes nothing: only its time is of interest\n"
            if self.accept_any_output
            else ""
        )
        return (
            f'"""{slug}: {cls} at one case, for bench/timing_fidelity.py."""\n\n'
            f"from {module} import {cls}\n\n\n"
            f"class FidelityCase({cls}):\n"
            f"    slug = {slug!r}\n"
            f"    gpu_cases = ({self.dims!r},)\n"
            f"    cpu_cases = ({self.dims!r},)\n"
            f"{verify}"
        )

    def solution(self) -> tuple[str, str]:
        """(file name, text) of the submission."""
        if self.language == "cuda":
            return self.source, (ROOT / "examples" / self.source).read_text()
        return "solution.py", self.source


@dataclass(frozen=True)
class Kernel:
    name: str
    setup: Callable[[int], list[Call]]  # input sets -> one bound call per set (ncu and do_bench, in process)
    submission: Submission  # the same kernel at the same size, through the runner

    @property
    def slug(self) -> str:
        words = "".join(c if c.isalnum() else "-" for c in self.name.lower()).split("-")
        return "fidelity-" + "-".join(w for w in words if w)[:50]

    def request(self, measure: MeasureConfig, device_kind: Literal["gpu", "cpu"] = "gpu") -> JobRequest:
        file_name, source = self.submission.solution()
        return JobRequest(
            submission_id=f"{self.slug}-{measure.method}",
            problem_slug=self.slug,
            problem_source=self.submission.problem_source(self.slug),
            language=self.submission.language,
            file_name=file_name,
            source=source,
            device_kind=device_kind,
            measure=measure,
            dtype=self.submission.dtype,  # type: ignore[arg-type]
        )


VECTOR_ADD = "problems.builtin.elementwise.vector_addition:VectorAddition"
MATMUL = "problems.builtin.matmul.matrix_multiplication:MatrixMultiplication"
SOFTMAX = "problems.builtin.reduction.softmax:Softmax"
TRANSPOSE = "problems.builtin.elementwise.matrix_transpose:MatrixTranspose"
# Python solutions that launch exactly the kernel of the in-process setup, writing into the judge's output.
EMPTY_SOLUTION = "import torch\n\n\ndef solution(a, b, c, n):\n    torch.cuda._sleep(0)\n"
ADD_SOLUTION = "import torch\n\n\ndef solution(a, b, c, n):\n    torch.add(a, b, out=c)\n"
MATMUL_SOLUTION = "import torch\n\n\ndef solution(a, b, c, m, n, k):\n    torch.matmul(a, b, out=c)\n"
# torch.softmax has no `out=`; its out-variant runs the same kernel into the given tensor.
TRANSPOSE_SOLUTION = "import torch\n\n\ndef solution(a, b, rows, cols):\n    b.copy_(a.t())\n"
SOFTMAX_SOLUTION = (
    "import torch\n\n\ndef solution(x, dim, y, shape, ndim):\n    torch.ops.aten._softmax.out(x, dim, False, out=y)\n"
)


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


def _torch_matmul(n: int, dtype: str = "float32") -> Callable[[int], list[Call]]:
    def setup(sets: int) -> list[Call]:
        import torch

        kind = getattr(torch, dtype)
        calls = []
        for _ in range(sets):
            a, b = torch.randn(n, n, device="cuda", dtype=kind), torch.randn(n, n, device="cuda", dtype=kind)
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


def _torch_transpose(rows: int, cols: int) -> Callable[[int], list[Call]]:
    def setup(sets: int) -> list[Call]:
        import torch

        pairs = [(torch.randn(rows, cols, device="cuda"), torch.empty(cols, rows, device="cuda")) for _ in range(sets)]
        return [lambda a=a, b=b: b.copy_(a.t()) for a, b in pairs]

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
        dims_ = tuple(dims)
        shapes = problem.shapes(dims_)
        calls = []
        for k in range(sets):
            gen = torch.Generator(device="cuda").manual_seed(k)
            inputs = tuple(
                torch.randn(shapes[p.name], device="cuda", generator=gen)
                for p in problem.parameters
                if p.role == "input"
            )
            outputs = tuple(
                torch.empty(shapes[p.name], device="cuda") for p in problem.parameters if p.role == "output"
            )
            calls.append(solution.bind(problem, inputs, outputs, list(problem.extras(dims_)), "cuda"))
        return calls

    return setup


def _empty_kernel(sets: int) -> list[Call]:
    import torch

    return [lambda: torch.cuda._sleep(0) for _ in range(sets)]


def _add(n: int) -> Kernel:
    return Kernel(
        f"add fp32 2^{n.bit_length() - 1}", _torch_add(n), Submission(VECTOR_ADD, (n,), "python", ADD_SOLUTION)
    )


def _cuda_vadd(n: int) -> Kernel:
    setup = _cuda_example("vector_add.cu", "vector_add", (n,))
    return Kernel(
        f"ctypes CUDA vadd 2^{n.bit_length() - 1}", setup, Submission(VECTOR_ADD, (n,), "cuda", "vector_add.cu")
    )


def _matmul(n: int, dtype: str = "float32") -> Kernel:
    submission = Submission(MATMUL, (n, n, n), "python", MATMUL_SOLUTION, dtype=dtype)
    short = {"float32": "fp32", "float16": "fp16"}[dtype]
    return Kernel(f"matmul {short} {n}^3 (cuBLAS)", _torch_matmul(n, dtype), submission)


KERNELS = [
    # The empty kernel needs buffers only because every problem has some: a one-element vector addition.
    Kernel(
        "empty kernel (_sleep(0))",
        _empty_kernel,
        Submission(VECTOR_ADD, (1,), "python", EMPTY_SOLUTION, accept_any_output=True),
    ),
    _add(1 << 16),
    _add(1 << 20),
    _add(1 << 24),
    _add(1 << 26),
    _cuda_vadd(1 << 16),
    _cuda_vadd(1 << 24),
    _matmul(1024),
    _matmul(4096),
    # Library calls whose cuBLAS path may launch more than one kernel: ncu at its cold state and at the arena's.
    _matmul(1024, "float16"),
    _matmul(4096, "float16"),
    Kernel(
        "naive CUDA matmul 2048^3",
        _cuda_example("matmul_naive.cu", "matrix-multiplication", (2048, 2048, 2048)),
        Submission(MATMUL, (2048, 2048, 2048), "cuda", "matmul_naive.cu"),
    ),
    # A softmax case is (dim, *shape).
    Kernel(
        "softmax 4096x4096",
        _torch_softmax(4096, 4096),
        Submission(SOFTMAX, (1, 4096, 4096), "python", SOFTMAX_SOLUTION),
    ),
    # The two H200 cases that missed max(2 %, 0.3 µs) when the issue was filed: a ragged softmax of about 10 µs
    # and a 32x32-tile transpose of about 17 µs (32 MiB read, 32 MiB written).
    Kernel(
        "softmax 1000x1003",
        _torch_softmax(1000, 1003),
        Submission(SOFTMAX, (1, 1000, 1003), "python", SOFTMAX_SOLUTION),
    ),
    Kernel(
        "tiled CUDA transpose 2048x4096",
        _cuda_example("matrix_transpose_tiled.cu", "matrix-transpose", (2048, 4096)),
        Submission(TRANSPOSE, (2048, 4096), "cuda", "matrix_transpose_tiled.cu"),
    ),
    Kernel(
        "torch transpose 2048x4096",
        _torch_transpose(2048, 4096),
        Submission(TRANSPOSE, (2048, 4096), "python", TRANSPOSE_SOLUTION),
    ),
]


def _child_setup(spec: str) -> Callable[[int], list[Call]]:
    """The in-process calls of a kernel of the table by index, or `EXAMPLE:SLUG:D1xD2...`: an example at one
    case's dims."""
    if spec.isdigit():
        return KERNELS[int(spec)].setup
    example, slug, dims = spec.split(":")
    return _cuda_example(example, slug, tuple(int(d) for d in dims.split("x")))


ROTATED_SETS = 8


def ncu_child(spec: str, *, flush: bool, rotate: bool = False) -> None:
    """Runs under ncu: each iteration of the kernel inside an NVTX range, so setup kernels are not profiled. With
    `flush`, a read of 4x L2 before each iteration, outside the range: the state an arena sample starts from."""
    import torch

    calls = _child_setup(spec)(ROTATED_SETS if rotate else 1)
    for call in calls:
        call()
    torch.cuda.synchronize()
    scratch = None
    if flush:
        from runner.timing.gpu import FLUSH_L2_MULTIPLE, MIN_FLUSH_BYTES

        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        scratch = torch.ones(max(FLUSH_L2_MULTIPLE * l2, MIN_FLUSH_BYTES) // 4, device="cuda")
    for iteration in range(NCU_ITERATIONS):
        if scratch is not None:
            scratch.sum()  # a read: it leaves no dirty line for the call to write back
        torch.cuda.nvtx.range_push(NVTX_RANGE)
        calls[iteration % len(calls)]()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()


NcuState = Literal["cold", "call", "rotated"]
"""`cold`: ncu flushes every cache before each kernel (`--cache-control all`), so each kernel of a call of several
starts cold. `call`: ncu leaves the caches alone and the child reads 4x L2 before each call, so the call's first
kernel starts on a flushed L2 and each later kernel on what the earlier ones left, as in an arena sample.
`rotated`: `call` over a new input set each iteration (ROTATED_SETS of them), as an arena sample's inputs are."""


def ncu_runtime_us(spec: str, state: NcuState = "cold") -> float | None:
    """Median over iterations of the summed `gpu__time_duration.sum` of the kernels in one iteration."""
    ncu = shutil.which("ncu")
    if ncu is None:
        return None
    cmd = [
        ncu,
        "--cache-control",
        "all" if state == "cold" else "none",
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
        *(["--ncu-flush"] if state != "cold" else []),
        *(["--ncu-rotate"] if state == "rotated" else []),
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
    if per_iteration > 1:
        print(f"{spec}: {per_iteration} kernels per call under ncu", flush=True)
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
    ncu_call: float | None = None  # ncu at the arena's cache state (NcuState "call")


class RunnerError(RuntimeError):
    """A calibration kernel that did not pass through the runner: the table would have nothing to show for it."""


async def through_run_job(kernel: Kernel, measure: MeasureConfig) -> tuple[CaseTiming, float]:
    """The kernel's one case timed by the runner as a submission is, and the job's benchmark phase in seconds."""
    from runner.job.run import run_job

    result = await run_job(kernel.request(measure))
    if result.status != "passed" or len(result.timings) != 1:
        raise RunnerError(f"{kernel.name} ({measure.method}) did not pass through the runner: {result.error}")
    return result.timings[0], result.phase_seconds.get("benchmark", float("nan"))


def do_bench_us(kernel: Kernel) -> float | None:
    """triton.testing.do_bench's median of the kernel, in this process; None without triton."""
    try:
        import triton.testing
    except ImportError:
        return None
    import torch

    calls = kernel.setup(1)
    result = float(triton.testing.do_bench(calls[0], return_mode="median")) * 1e3
    del calls
    torch.cuda.synchronize()
    torch.cuda.empty_cache()  # the runner's processes need the memory next
    return result


def measure_kernel(kernel: Kernel) -> Row:
    arena, arena_wall = asyncio.run(through_run_job(kernel, ARENA_CONFIG))
    seed, _ = asyncio.run(through_run_job(kernel, SEED_CONFIG))
    return Row(
        name=kernel.name,
        ncu=None,
        arena=arena.runtime_median_us,
        arena_samples=arena.samples,
        arena_dropped=arena.dropped_samples,
        arena_converged=arena.converged,
        arena_seconds=arena_wall,
        arena_clock=arena.sm_clock_mhz,
        seed=seed.runtime_mean_us,
        seed_samples=seed.samples,
        do_bench=do_bench_us(kernel),
    )


def within_target(arena: float, ncu: float | None) -> str:
    if ncu is None:
        return "n/a"
    return "yes" if abs(arena - ncu) <= max(TARGET_FRACTION * ncu, TARGET_US) else "NO"


def render(rows: list[Row], device: str) -> str:
    def f(v: float | None) -> str:
        return "-" if v is None else (f"{v:.2f}" if v < 100 else f"{v:.0f}")

    out = [
        f"# Timing fidelity on {device}",
        "",
        "Runtimes in µs. arena: the runner's median (run_job: judge and launcher, production settings); seed: mean",
        "of the seed's loop through the runner (CV 1 %, ≤ 2000 samples); wall s: the job's benchmark phase;",
        "do_bench: triton.testing.do_bench median; ncu: median over 7 runs of gpu__time_duration.sum",
        "(--clock-control none, caches flushed). Target: |arena − ncu| ≤ max(2 %, 0.3 µs); converged ≤ 1 s.",
        "",
        "ncu call: the same with ncu's flush off and a 4x L2 read before each call instead (the arena's state).",
        "",
        "| kernel | ncu | arena | Δ vs ncu | within target | ncu call | Δ vs ncu call | samples (dropped) | converged "
        "| wall s | SM MHz | seed | do_bench |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        delta = "-" if r.ncu is None else f"{r.arena - r.ncu:+.2f} ({(r.arena - r.ncu) / r.ncu * 100:+.1f} %)"
        call = r.ncu_call
        call_delta = "-" if call is None else f"{r.arena - call:+.2f} ({(r.arena - call) / call * 100:+.1f} %)"
        out.append(
            f"| {r.name} | {f(r.ncu)} | {f(r.arena)} | {delta} | {within_target(r.arena, r.ncu)} | {f(call)} | "
            f"{call_delta} | "
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
    from runner.job.run import run_job

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
    from runner.job.run import run_job

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
    parser.add_argument("--ncu-flush", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--ncu-rotate", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--ncu-rotated", help="also read ncu over rotated input sets for kernels matching these")
    parser.add_argument("--out", type=Path, help="also write the table (markdown) here")
    parser.add_argument("--skip-ncu", action="store_true")
    parser.add_argument("--only", help="run only kernels whose name contains one of these (comma-separated)")
    parser.add_argument("--split", action="store_true", help="also time the CUDA examples through the runner")
    parser.add_argument("--repeat", type=int, default=0, help="fresh-process runs of one submission")
    parser.add_argument("--repeat-example", default="matmul_naive.cu")
    parser.add_argument("--repeat-problem", default="matrix-multiplication")
    args = parser.parse_args()
    if args.ncu_child is not None:
        ncu_child(args.ncu_child, flush=args.ncu_flush, rotate=args.ncu_rotate)
        return

    import torch

    device = torch.cuda.get_device_name()
    rows = []
    for index, kernel in enumerate(KERNELS):
        if args.only and not any(part in kernel.name for part in args.only.split(",")):
            continue
        ncu = None if args.skip_ncu else ncu_runtime_us(str(index))
        ncu_call = None if args.skip_ncu else ncu_runtime_us(str(index), "call")
        if args.ncu_rotated and any(part in kernel.name for part in args.ncu_rotated.split(",")):
            rotated = ncu_runtime_us(str(index), "rotated")
            print(f"{kernel.name}: ncu over {ROTATED_SETS} rotated input sets {rotated}", flush=True)
        row = replace(measure_kernel(kernel), ncu=ncu, ncu_call=ncu_call)
        rows.append(row)
        print(
            f"{kernel.name}: ncu {ncu} (call state {ncu_call}), arena {row.arena:.2f} ({row.arena_samples} samples, "
            f"{row.arena_dropped} dropped), seed {row.seed:.2f}",
            flush=True,
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
