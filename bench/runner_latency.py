"""Runner latency: POST → done for one submission on a warm runner daemon, split by phase.

    python bench/runner_latency.py --out bench/results/runner_latency.txt            # GPU: matmul, CUDA
    python bench/runner_latency.py --cpu --out bench/results/runner_latency_cpu.txt  # CPU smoke run

It starts `arena runner serve` on a free port of 127.0.0.1 (a fresh state directory and secret), warms it
with a few jobs, then posts `--jobs` submissions one after another and reports p50 and p95 of the wall
time the client sees and of each phase the runner reports: queue, nvcc, startup (worker start, torch import,
CUDA initialisation; the imports are done ahead with --warm), compile (loading the library or
importing the module), test, benchmark, teardown (stopping the job's processes, deleting its files), total.
Each CUDA job gets a unique comment, so nvcc really runs every time (no compile-cache hit), as for a new
submission; pass --cached to measure the cache hit instead.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from contract.wire import HealthInfo, JobEvent, JobRequest, SubmissionResult  # noqa: E402
from runner.clients.http import RunnerClient  # noqa: E402

PHASES = ("queue", "nvcc", "startup", "compile", "test", "benchmark", "teardown", "total")


@dataclass
class Sample:
    wall_s: float
    phases: dict[str, float]
    status: str
    steps: dict[str, float] = field(default_factory=dict)
    """Seconds from the event before to each test and benchmark event, by name ("bench 1000x1003x997")."""
    samples: dict[str, int] = field(default_factory=dict)
    how: dict[str, str] = field(default_factory=dict)
    """How each benchmark case was timed: its measurements, host part and clocks, by step name."""


@dataclass
class Run:
    health: HealthInfo
    request: JobRequest
    samples: list[Sample] = field(default_factory=list)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=100, method="inclusive")[round(q * 100) - 1]


def _request(args: argparse.Namespace, index: int) -> JobRequest:
    source = Path(args.example).read_text(encoding="utf-8")
    language = "cuda" if args.example.endswith(".cu") else "python"
    if language == "cuda" and not args.cached:
        source += f"\n// bench job {index} {secrets.token_hex(4)}\n"  # a new source: nvcc runs, no cache hit
    return JobRequest(
        submission_id=f"bench-{index}-{secrets.token_hex(4)}",
        problem_slug=args.problem,
        language=language,  # type: ignore[arg-type]
        file_name=Path(args.example).name,
        source=source,
        mode=args.mode,
        device_kind="cpu" if args.cpu else "auto",
    )


async def _one(client: RunnerClient, request: JobRequest) -> Sample:
    start = time.monotonic()
    steps: dict[str, float] = {}
    samples: dict[str, int] = {}
    how: dict[str, str] = {}
    last = [start]

    def note(event: JobEvent) -> None:
        # Events stream as they happen, so the gap before each case's event is that case's wall time.
        now = time.monotonic()
        if event.type == "test_case" and event.test is not None:
            steps[f"test {event.test.name}"] = now - last[0]
        elif event.type == "benchmark_case" and event.timing is not None:
            steps[f"bench {event.timing.name}"] = now - last[0]
            samples[f"bench {event.timing.name}"] = event.timing.samples
            t = event.timing
            host = "-" if t.host_part_us is None else f"{t.host_part_us:.0f}"
            how[f"bench {t.name}"] = f"x{t.measurements} host {host} µs{' host-bound' if t.host_bound else ''}"
        last[0] = now

    accepted = await client.submit(request)
    result: SubmissionResult | None = await client.wait_result(accepted.job_id, note)
    wall = time.monotonic() - start
    if result is None:
        raise RuntimeError("a bench job was cancelled")
    if result.status != "passed":
        raise RuntimeError(f"a bench job did not pass: {result.error}")
    return Sample(wall, dict(result.phase_seconds), result.status, steps, samples, how)


async def _measure(args: argparse.Namespace, url: str, secret: bytes) -> Run:
    async with RunnerClient(url, secret, timeout_s=60) as client:
        for _ in range(100):
            try:
                health = await client.health()
                break
            except Exception:
                await asyncio.sleep(0.2)
        else:
            raise RuntimeError("the daemon did not answer /v1/health")
        run = Run(health, _request(args, 0))
        for index in range(args.warmup):
            await _one(client, _request(args, -1 - index))
        for index in range(args.jobs):
            if args.gap:
                await asyncio.sleep(args.gap)
            sample = await _one(client, _request(args, index))
            run.samples.append(sample)
            print(f"  job {index + 1}/{args.jobs}: {sample.wall_s:.2f} s", file=sys.stderr, flush=True)
        return run


def _report(args: argparse.Namespace, run: Run) -> str:
    h = run.health
    device = ", ".join(g.name for g in h.gpus) or "CPU (" + platform.machine() + ")"
    label = "CPU SMOKE RUN (no GPU)" if args.cpu or not h.gpus else "GPU"
    lines = [
        f"# runner latency, {label}: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}",
        f"device: {device}; driver {h.driver}; torch {h.torch}; triton {h.triton}; nvcc {h.nvcc}",
        f"sandbox: {h.sandbox}; slots: {h.slots}; host cores: {os.cpu_count()}; "
        f"processes started ahead: {'yes (--warm)' if args.warm else 'no'}; {args.gap:g} s between jobs",
        f"job: {args.problem} {Path(args.example).name} mode={args.mode} "
        f"({'nvcc every job' if args.example.endswith('.cu') and not args.cached else 'cache/import'}); "
        f"{args.jobs} jobs after {args.warmup} warm-up, one at a time",
        "",
        f"{'phase':<10} {'p50 s':>8} {'p95 s':>8} {'mean s':>8}",
    ]
    series = {"wall": [s.wall_s for s in run.samples]}
    extra = sorted({name for s in run.samples for name in s.phases} - set(PHASES))
    for phase in (*PHASES, *extra):  # the judge's parts of a phase (benchmark_buffers) after the phases
        values = [s.phases[phase] for s in run.samples if phase in s.phases]
        if values:
            series[phase] = values
    for name, values in series.items():
        p50, p95 = _percentile(values, 0.5), _percentile(values, 0.95)
        lines.append(f"{name:<10} {p50:8.3f} {p95:8.3f} {statistics.fmean(values):8.3f}")
    steps = list(run.samples[0].steps) if run.samples else []
    if steps:
        lines += ["", f"{'step (event to event)':<28} {'p50 s':>8} {'p95 s':>8} {'samples':>8}"]
    for step in steps:
        values = [s.steps[step] for s in run.samples if step in s.steps]
        counts = [s.samples[step] for s in run.samples if step in s.samples]
        count = f"{statistics.median(counts):8.0f}" if counts else f"{'':8}"
        ways = sorted({s.how[step] for s in run.samples if step in s.how})
        timed = f"  {'; '.join(ways[:3])}" if ways else ""  # measurements, host part: why a case took longer
        lines.append(f"{step:<28} {_percentile(values, 0.5):8.3f} {_percentile(values, 0.95):8.3f} {count}{timed}")
    wall50 = _percentile(series["wall"], 0.5)
    wall95 = _percentile(series["wall"], 0.95)
    if "nvcc" in series:
        lines.append("")
        lines.append(f"nvcc share of the p50 wall time: {_percentile(series['nvcc'], 0.5) / wall50:.0%}")
    met = wall50 <= 3.0 and wall95 <= 4.0
    verdict = "met" if met else "NOT met"
    lines.append(f"goal p50 <= 3 s and p95 <= 4 s: {verdict} (p50 {wall50:.2f} s, p95 {wall95:.2f} s)")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, help="also write the report here")
    parser.add_argument("--jobs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--cpu", action="store_true", help="CPU smoke run: vector_add.py on a CPU-only runner")
    parser.add_argument("--problem", help="problem slug (default: matrix-multiplication, or vector_add with --cpu)")
    parser.add_argument("--example", help="solution file (default: examples/matmul_naive.cu or vector_add.py)")
    parser.add_argument("--mode", choices=["test", "benchmark"], default="benchmark")
    parser.add_argument("--cached", action="store_true", help="same CUDA source every job: measure cache hits")
    parser.add_argument(
        "--warm", action="store_true", help="RUNNER_WARM_WORKERS=1: each job's processes are started ahead"
    )
    parser.add_argument("--gap", type=float, default=0.0, help="seconds of pause before each job")
    args = parser.parse_args()
    args.problem = args.problem or ("vector_add" if args.cpu else "matrix-multiplication")
    default_example = "vector_add.py" if args.cpu else "matmul_naive.cu"
    args.example = args.example or str(ROOT / "examples" / default_example)

    secret = secrets.token_hex(24)
    port = _free_port()
    state = Path(tempfile.mkdtemp(prefix="arena-bench-"))
    state.chmod(0o711)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNNER_")}
    env.update({"RUNNER_SECRET": secret, "RUNNER_PORT": str(port), "RUNNER_STATE_DIR": str(state)})
    env["RUNNER_DEVICE"] = "cpu" if args.cpu else "auto"
    env["RUNNER_WARM_WORKERS"] = "1" if args.warm else "0"
    daemon = subprocess.Popen([sys.executable, "-m", "runner", "serve"], env=env, cwd=ROOT, stderr=subprocess.DEVNULL)
    try:
        run = asyncio.run(_measure(args, f"http://127.0.0.1:{port}", secret.encode()))
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
    report = _report(args, run)
    sys.stdout.write(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
