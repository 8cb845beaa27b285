"""Per-GPU-model reference figures measured with Nsight Compute by bench/timing_fidelity.py.

EMPTY_KERNEL_NCU_US: ncu's gpu__time_duration.sum of an empty kernel (`torch.cuda._sleep(0)`), in µs,
median of 7 runs with --clock-control none. The arena timer subtracts (its own empty-kernel time minus
this) from every sample, which removes the event pair's fixed launch cost. Re-measure when adding a model:
`python bench/timing_fidelity.py --only empty`.
"""

from __future__ import annotations

EMPTY_KERNEL_NCU_US: dict[str, float] = {
    # 2026-11-21, driver 580.159.04, CUDA 13.0: bench/results/timing_fidelity_h100_uncorrected.md.
    "NVIDIA H100 80GB HBM3": 2.11,
}
