"""The canary set: fixed reference kernels whose times tell whether a runner's timing drifted from its pool's.

`python -m runner.daemon.canary_kernels gpu|cpu [--repeat N]` times the set on `cuda:0` (whatever
CUDA_VISIBLE_DEVICES shows) or on the CPU and prints one JSON line per run:
`{"set_version", "device", "device_name", "torch", "sm_clock_mhz", "timings": [{"name", "median_us", "rse",
"samples"}], "elapsed_s"}`. Exit status 2 means `gpu` was asked for and no CUDA device is visible.

The daemon runs it in a child process (`runner.daemon.canary`), since the daemon never imports torch. This
module imports nothing of the project and no pydantic (only the standard library, and torch inside the
functions that time), so it also runs on a GPU machine that has torch alone, as the benches run it.

GPU samples follow the `arena` method's protocol in its simplest form (docs/timing and runner/timing/gpu.py):
every sample first reads a buffer of 4x the L2 size, so the kernel starts on a cold L2 and the GPU is busy
while the host enqueues the events and the kernel, then CUDA events bracket the kernel alone. Every kernel of
the set runs for 30 µs or more, so that read covers the host's launch latency. Before the samples the GPU
runs matrix products for a second, which brings its clock to the level it keeps under load, and the SM clock is
read (nvidia-smi) while they run. The whole GPU set takes about 1 s of GPU time on an H200.

CPU samples time one call each on one thread, by the thread's CPU time (`time.thread_time_ns`): a CPU pool
mixes machines of any core count, and a busy machine (CI, other jobs) takes the core away for whole time
slices, which wall time counts and CPU time does not. What a CPU canary should catch is a core that computes
slower (a lowered frequency, a throttled or oversubscribed host), and that shows in CPU time too. On the
2-core development machine under a load average of 10, wall-time medians read 2 to 10 times their idle values
(docs/canaries.md). The wall times are printed too, as `wall_timings`, for the record.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

# Change it whenever a kernel, its size or how it is timed changes: reports of different versions are never
# compared, so a new set starts with no baseline instead of drifting against the old one.
SET_VERSION = 1

EXIT_NO_CUDA = 2
GPU_SAMPLES = 30
CPU_SAMPLES = 51
WARMUP_CALLS = 3
FLUSH_L2_MULTIPLE = 4
MIN_FLUSH_BYTES = 64 << 20
# The clock warm-up and the window in which nvidia-smi reads the SM clock under load.
CLOCK_BURST_S = 1.0
MAX_BURST_CALLS = 20_000
NVIDIA_SMI_TIMEOUT_S = 10.0
# The two-sided 95 % order statistics of the median (as runner/timing/criteria.py's median-rse criterion).
_Z = 1.96
MIN_RSE_SAMPLES = 10

Kernel = Callable[[], object]


def median_rse(samples: Sequence[float]) -> float:
    """The relative standard error of the median of `samples`, read off its distribution-free 95 % confidence
    interval (order statistics n/2 ± 0.98·√n); infinite below 10 samples or for a median that is not positive."""
    ordered = sorted(samples)
    n = len(ordered)
    median = statistics.median(ordered) if ordered else 0.0
    if n < MIN_RSE_SAMPLES or median <= 0:
        return math.inf
    half = _Z * math.sqrt(n) / 2
    lo = max(math.floor(n / 2 - half), 0)
    hi = min(math.ceil(n / 2 + half), n - 1)
    return (ordered[hi] - ordered[lo]) / (2 * _Z) / median


def timing_entry(name: str, samples_us: Sequence[float]) -> dict[str, Any]:
    """One kernel's line of the report: its median in µs, the median's relative standard error, the count."""
    return {
        "name": name,
        "median_us": statistics.median(samples_us),
        "rse": median_rse(samples_us),
        "samples": len(samples_us),
    }


# -- GPU ---------------------------------------------------------------------------------------------------------


def gpu_kernels() -> dict[str, Kernel]:
    """The GPU set, each on buffers allocated here: one memory-bound, one tensor-core, one FP32-pipe, one copy."""
    import torch

    torch.manual_seed(0)
    dev = "cuda"
    n_add = 1 << 24
    add_a, add_b = torch.rand(n_add, device=dev), torch.rand(n_add, device=dev)
    add_c = torch.empty_like(add_a)
    h_a = torch.randn(4096, 4096, dtype=torch.float16, device=dev)
    h_b = torch.randn(4096, 4096, dtype=torch.float16, device=dev)
    h_c = torch.empty_like(h_a)
    f_a = torch.randn(2048, 2048, device=dev)
    f_b = torch.randn(2048, 2048, device=dev)
    f_c = torch.empty_like(f_a)
    copy_src = torch.rand((1 << 26) // 4, device=dev)
    copy_dst = torch.empty_like(copy_src)
    return {
        "add_fp32_2^24": lambda: torch.add(add_a, add_b, out=add_c),
        "matmul_fp16_4096": lambda: torch.matmul(h_a, h_b, out=h_c),
        "matmul_fp32_2048": lambda: torch.matmul(f_a, f_b, out=f_c),
        "copy_2^26_bytes": lambda: copy_dst.copy_(copy_src),
    }


def l2_flush() -> Kernel:
    """A read of FLUSH_L2_MULTIPLE times the L2 size (at least 64 MiB): it evicts what the last sample left."""
    import torch

    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    buffer = torch.ones(max(FLUSH_L2_MULTIPLE * l2, MIN_FLUSH_BYTES) // 4, device="cuda")
    return lambda: torch.sum(buffer)


def gpu_samples_us(kernel: Kernel, flush: Kernel, samples: int) -> list[float]:
    """`samples` GPU times of `kernel` in µs, each on a cold L2, between CUDA events enqueued behind the flush."""
    import torch

    for _ in range(WARMUP_CALLS):
        flush()
        kernel()
    torch.cuda.synchronize()
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(samples)]
    # No synchronisation between samples: the queue stays ahead of the GPU, so each start event waits on the flush.
    for start, stop in pairs:
        flush()
        start.record()
        kernel()
        stop.record()
    torch.cuda.synchronize()
    return [start.elapsed_time(stop) * 1e3 for start, stop in pairs]


def nvidia_smi_sm_clock_mhz(gpu_id: str) -> float | None:
    """The current SM clock of the GPU with this UUID or index, as nvidia-smi reads it; None where it cannot."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "-i", gpu_id, "--query-gpu=clocks.sm", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=NVIDIA_SMI_TIMEOUT_S,
            check=False,
        )
        return float(out.stdout.strip().splitlines()[0]) if out.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        return None


def warm_clock_mhz(kernel: Kernel) -> float | None:
    """Run `kernel` for about CLOCK_BURST_S of GPU time and read the SM clock while it runs.

    The burst is the set's warm-up (clocks rise to their loaded level) and the moment the clock means something:
    read after the GPU went idle, it would show the idle clock.
    """
    import torch

    kernel()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    kernel()
    stop.record()
    torch.cuda.synchronize()
    one_s = max(start.elapsed_time(stop) / 1e3, 1e-6)
    for _ in range(min(math.ceil(CLOCK_BURST_S / one_s), MAX_BURST_CALLS)):
        kernel()
    uuid = str(torch.cuda.get_device_properties(0).uuid)
    clock = nvidia_smi_sm_clock_mhz(uuid if uuid.startswith("GPU-") else f"GPU-{uuid}")
    torch.cuda.synchronize()
    return clock


def measure_gpu(samples: int = GPU_SAMPLES) -> dict[str, Any]:
    """The GPU set on `cuda:0`; raises LookupError without a CUDA device."""
    import torch

    if not torch.cuda.is_available():
        raise LookupError("no CUDA device is visible (check the driver and CUDA_VISIBLE_DEVICES)")
    torch.cuda.set_device(0)
    # The FP32 product must run on the FP32 pipes, not on TF32 tensor cores, whatever the defaults are.
    torch.backends.cuda.matmul.allow_tf32 = False
    kernels = gpu_kernels()
    flush = l2_flush()
    clock = warm_clock_mhz(kernels["matmul_fp16_4096"])
    timings = [timing_entry(name, gpu_samples_us(kernel, flush, samples)) for name, kernel in kernels.items()]
    return {
        "device": "gpu",
        "device_name": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "sm_clock_mhz": clock,
        "timings": timings,
    }


# -- CPU ---------------------------------------------------------------------------------------------------------


def python_loop() -> int:
    """A scalar loop of the interpreter alone: a linear congruential generator, 20,000 steps."""
    x = 1
    for _ in range(20_000):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
    return x


def cpu_kernels() -> dict[str, Kernel]:
    """The CPU set: a 512³ FP32 matrix product (one thread), a 16 MiB memory copy, a scalar Python loop."""
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    a, b = torch.randn(512, 512), torch.randn(512, 512)
    c = torch.empty(512, 512)
    src = bytearray(b"\x5a" * (16 << 20))
    dst = bytearray(len(src))

    def copy() -> None:
        dst[:] = src  # a same-length slice assignment is one memcpy

    return {
        "matmul_fp32_512": lambda: torch.mm(a, b, out=c),
        "memcpy_16MiB": copy,
        "python_loop_20k": python_loop,
    }


def cpu_samples_us(kernel: Kernel, samples: int) -> tuple[list[float], list[float]]:
    """`samples` calls of `kernel` after WARMUP_CALLS calls (page faults and caches settle), each as the CPU time
    of this thread and as wall time, in µs."""
    for _ in range(WARMUP_CALLS):
        kernel()
    cpu, wall = [], []
    for _ in range(samples):
        wall_start, cpu_start = time.perf_counter_ns(), time.thread_time_ns()
        kernel()
        cpu.append((time.thread_time_ns() - cpu_start) / 1e3)
        wall.append((time.perf_counter_ns() - wall_start) / 1e3)
    return cpu, wall


def measure_cpu(samples: int = CPU_SAMPLES) -> dict[str, Any]:
    """The CPU set on this process's CPU: the timings are the thread's CPU time, and `wall_timings` (not part of
    the report the core judges) the same calls' wall time, which a busy machine inflates."""
    import torch

    timings, wall_timings = [], []
    for name, kernel in cpu_kernels().items():
        cpu, wall = cpu_samples_us(kernel, samples)
        timings.append(timing_entry(name, cpu))
        wall_timings.append(timing_entry(name, wall))
    return {
        "device": "cpu",
        "device_name": platform.processor() or platform.machine(),
        "torch": torch.__version__,
        "sm_clock_mhz": None,
        "timings": timings,
        "wall_timings": wall_timings,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.daemon.canary_kernels", description=__doc__.split("\n")[0])
    parser.add_argument("device", choices=("gpu", "cpu"))
    parser.add_argument("--repeat", type=int, default=1, help="runs of the set in this process, one line each")
    args = parser.parse_args(argv)
    for _ in range(max(args.repeat, 1)):
        began = time.perf_counter()
        try:
            report = measure_gpu() if args.device == "gpu" else measure_cpu()
        except LookupError as exc:
            sys.stderr.write(f"canary_kernels: {exc}\n")
            return EXIT_NO_CUDA
        report = {"set_version": SET_VERSION, **report, "elapsed_s": round(time.perf_counter() - began, 3)}
        # An infinite RSE (too few samples) is not JSON: it is written as null.
        for timing in (*report["timings"], *report.get("wall_timings", ())):
            timing["rse"] = timing["rse"] if math.isfinite(timing["rse"]) else None
        sys.stdout.write(json.dumps(report) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
