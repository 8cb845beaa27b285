"""The distributed harness on one GPU: every problem's Python example at one rank, and the CUDA examples built
against NCCL, each rank timed by events on its device after a device-side release; beside the all-reduce, an
outside timing of the same call (events around one synchronised call in this process, median of many).

    python bench/distributed_one_gpu.py [--samples 20]

One rank is the only world size one GPU can run; the multi-GPU runs need a host of several GPUs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "distributed"
PYTHON_EXAMPLES = {
    "all-reduce": "all_reduce.py",
    "all-gather": "all_gather.py",
    "reduce-scatter": "reduce_scatter.py",
    "all-to-all-moe-dispatch": "all_to_all_moe_dispatch.py",
    "all-gather-gemm": "all_gather_gemm.py",
    "gemm-reduce-scatter": "gemm_reduce_scatter.py",
}
CUDA_EXAMPLES = {"all-reduce": "all_reduce_nccl.cu", "all-gather": "all_gather_peer_copy.cu"}


def outside_all_reduce_us(n: int, calls: int) -> float:
    """Events around one synchronised `copy_` + `all_reduce` of n floats on a one-rank NCCL group, median."""
    import torch
    import torch.distributed as dist

    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group(
            "nccl", init_method=f"file://{tmp}/store", rank=0, world_size=1, device_id=torch.device("cuda:0")
        )
        x = torch.randn(n, device="cuda")
        y = torch.empty_like(x)
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        times = []
        for _ in range(calls + 3):
            torch.cuda.synchronize()
            start.record()
            y.copy_(x)
            dist.all_reduce(y)
            stop.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(stop) * 1e3)
        dist.destroy_process_group()
    return statistics.median(times[3:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20)
    args = parser.parse_args()
    import torch

    from problems.distributed.registry import get_distributed_problem
    from runner.distributed.harness import run_distributed
    from runner.host.compile import cuda_arch

    arch = cuda_arch(torch.cuda.get_device_capability())
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}; nccl {torch.cuda.nccl.version()}")
    print(f"one rank, float32, {args.samples} timed samples per case, the first GPU case of each problem")
    print(f"{'problem':26} {'solution':26} {'case':22} {'release':8} {'rank median µs':>15} {'min µs':>9}  verdict")
    runs = [(slug, name) for slug, name in PYTHON_EXAMPLES.items()] + list(CUDA_EXAMPLES.items())
    for slug, name in runs:
        problem = get_distributed_problem(slug)
        run = run_distributed(
            problem, EXAMPLES / name, 1, "float32", device_kind="gpu", cases=[0], samples=args.samples, arch=arch
        )
        verdict = "passed" if run.passed else f"FAILED {run.verdict} {run.first_errors or run.failures[:1]}"
        for case in run.cases:
            times = [t * 1e6 for t in case.rank_seconds[0]]
            print(
                f"{slug:26} {name:26} {case.name:22} {case.release:8} {statistics.median(times):15.1f} "
                f"{min(times):9.1f}  {verdict}"
            )
        if not run.cases:
            print(f"{slug:26} {name:26} {'-':22} {'-':8} {'-':>15} {'-':>9}  {verdict}")
    n = 1_000_003
    os.environ.setdefault("NCCL_DEBUG", "WARN")
    print(
        f"outside timing, all-reduce n={n}: events around one synchronised call, median of 50: "
        f"{outside_all_reduce_us(n, 50):.1f} µs"
    )


if __name__ == "__main__":
    main()
