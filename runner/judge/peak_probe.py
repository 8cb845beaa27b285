"""Peak rates of the visible GPU, measured: what the physical floor divides by.

`python -m runner.judge.peak_probe` measures `cuda:0` (whatever CUDA_VISIBLE_DEVICES shows) and prints one
line, `MeasuredPeaks` as JSON, on stdout. The daemon runs it in a child process (`runner.host.device_peaks`)
because the daemon itself never imports torch. Exit status 2 means no CUDA device is visible.

Bandwidth is the better of a streaming copy and a streaming read of a buffer far larger than L2; the
arithmetic ceiling is a square cuBLAS matmul per dtype (TF32 tensor cores for float32). Each rate comes from
the best of a few timed calls after a warm-up, because the peak is what the chip can do, not what it does on
average while clocks settle.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Sequence

import torch

from contract.wire import MeasuredPeaks

log = logging.getLogger(__name__)

EXIT_NO_CUDA = 2
MAX_BUFFER_BYTES = 1 << 30
# Below this the buffer no longer dwarfs L2 (50 MiB on an H100), so the bandwidth would read high.
MIN_BUFFER_BYTES = 256 << 20
MATMUL_N = 8192
SMALL_MATMUL_N = 4096
# Warm-up runs for at least this long (and at least WARMUP_CALLS calls) so clocks reach their boost level.
WARMUP_S = 0.1
WARMUP_CALLS = 3
TIMED_CALLS = 10


class NoCudaError(RuntimeError):
    """No CUDA device is visible to this process."""


def best_time_s(fn: Callable[[], object], *, timed_calls: int = TIMED_CALLS) -> float:
    """The smallest GPU time of `timed_calls` calls of `fn`, each between its own pair of CUDA events."""
    calls, start = 0, time.perf_counter()
    while calls < WARMUP_CALLS or time.perf_counter() - start < WARMUP_S:
        fn()
        calls += 1
        # Synchronise inside the loop so the wall clock measures GPU work, not how fast the host enqueues.
        torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(timed_calls)]
    # Back to back with no synchronisation: each pair brackets one call, and the queue keeps the GPU busy.
    for begin, end in events:
        begin.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return float(min(begin.elapsed_time(end) for begin, end in events)) / 1e3


def _stream_rates_gbps(size: int) -> tuple[float, float]:
    """The copy and read rates over a `size`-byte float32 buffer; the buffers go when this returns."""
    src = torch.rand(size // 4, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    copy_gbps = 2 * size / best_time_s(lambda: dst.copy_(src)) / 1e9
    read_gbps = size / best_time_s(lambda: torch.sum(src)) / 1e9
    return copy_gbps, read_gbps


def measure_bandwidth_gbps() -> float:
    """The better of a copy (reads and writes the buffer: 2x its size) and a read (1x its size), in GB/s."""
    free, _ = torch.cuda.mem_get_info()
    # Two buffers of this size take at most half the free memory.
    size = min(MAX_BUFFER_BYTES, free // 4) // 4 * 4
    if size < MIN_BUFFER_BYTES:
        log.warning("only %d MiB free for the bandwidth buffer: L2 may inflate the reading", size >> 20)
    copy_gbps, read_gbps = _stream_rates_gbps(size)
    # Hand the freed buffers back to the driver, so the matmuls see all the free memory.
    torch.cuda.empty_cache()
    log.info("bandwidth: copy %.0f GB/s, read %.0f GB/s (%d MiB buffer)", copy_gbps, read_gbps, size >> 20)
    return max(copy_gbps, read_gbps)


def _matmul_n() -> int:
    """The largest of the two sizes whose three float32 matrices fit in half the free memory."""
    free, _ = torch.cuda.mem_get_info()
    return MATMUL_N if 3 * MATMUL_N * MATMUL_N * 4 <= free // 2 else SMALL_MATMUL_N


def measure_matmul_gflops(dtype: torch.dtype, n: int) -> float:
    """The dense rate of an n x n x n `torch.matmul` in `dtype` (2 n^3 flops per call), in GFLOPS."""
    a = torch.randn(n, n, dtype=dtype, device="cuda")
    b = torch.randn(n, n, dtype=dtype, device="cuda")
    c = torch.empty(n, n, dtype=dtype, device="cuda")
    return 2 * n**3 / best_time_s(lambda: torch.matmul(a, b, out=c)) / 1e9


def measure_ceilings_gflops() -> dict[str, float]:
    """The matmul ceiling per dtype; "float32" is the TF32 tensor-core rate, the most any float32 kernel gets."""
    n = _matmul_n()
    ceilings = {
        "float16": measure_matmul_gflops(torch.float16, n),
        "bfloat16": measure_matmul_gflops(torch.bfloat16, n),
    }
    allowed = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        ceilings["float32"] = measure_matmul_gflops(torch.float32, n)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = allowed
    log.info("matmul ceilings at n=%d: %s", n, ", ".join(f"{k} {v:.0f} GFLOPS" for k, v in ceilings.items()))
    return ceilings


def measure_peaks() -> MeasuredPeaks:
    """Measure the bandwidth and the matmul ceilings of `cuda:0`. Raises NoCudaError without a CUDA device."""
    if not torch.cuda.is_available():
        raise NoCudaError("no CUDA device is visible (check the driver and CUDA_VISIBLE_DEVICES)")
    torch.cuda.set_device(0)
    bandwidth = measure_bandwidth_gbps()
    ceilings = measure_ceilings_gflops()
    return MeasuredPeaks(
        device=torch.cuda.get_device_name(0),
        bandwidth_gbps=bandwidth,
        ceiling_gflops=ceilings,
        torch=torch.__version__,
        measured_at=time.time(),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Print the measured peaks as one JSON line; exit 2 without CUDA. Takes no arguments."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="peak_probe: %(message)s")
    if argv:
        log.error("takes no arguments, got %s", " ".join(argv))
        return 1
    try:
        peaks = measure_peaks()
    except NoCudaError as exc:
        log.error("%s", exc)
        return EXIT_NO_CUDA
    sys.stdout.write(peaks.model_dump_json() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
