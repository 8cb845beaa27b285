"""Peak rates of the GPUs runners use: for % of peak, roofline charts and physical floors. No torch here."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

# A time under this share of the physical floor is rejected. The floor uses datasheet peaks, which no kernel
# reaches, so honest kernels sit well above it; the margin absorbs clock and timer error.
FLOOR_MARGIN = 0.8


@dataclass(frozen=True)
class GpuSpec:
    """Dense peak rates: memory bandwidth in GB/s, and arithmetic in GFLOPS per dtype.

    `peak_gflops` is the rate a correct solution of that dtype's problems is expected to use (CUDA cores for
    float32, whose problems forbid TF32); `ceiling_gflops` is the most any unit of the chip can do on that
    dtype (TF32 tensor cores for float32), which is what a physical floor must use.
    """

    name: str
    bandwidth_gbps: float
    peak_gflops: dict[str, float]
    ceiling_gflops: dict[str, float] = field(default_factory=dict)

    def peak_for(self, dtype: str) -> float:
        return self.peak_gflops.get(dtype, self.peak_gflops["float32"])

    def ceiling_for(self, dtype: str) -> float:
        return self.ceiling_gflops.get(dtype, max(self.peak_gflops.values()))


_HOPPER_CEILING = {"float32": 494_700.0, "float16": 989_400.0, "bfloat16": 989_400.0}

# Datasheet figures (SXM parts).
GPU_SPECS: dict[str, GpuSpec] = {
    "NVIDIA H100 80GB HBM3": GpuSpec(
        "NVIDIA H100 80GB HBM3",
        3350.0,
        {"float32": 67_000.0, "float16": 989_000.0, "bfloat16": 989_000.0},
        _HOPPER_CEILING,
    ),
    "NVIDIA H200": GpuSpec(
        "NVIDIA H200", 4800.0, {"float32": 67_000.0, "float16": 989_000.0, "bfloat16": 989_000.0}, _HOPPER_CEILING
    ),
}


def spec_for(device: str) -> GpuSpec | None:
    """The spec of a device name as the runner reports it; None for CPUs and unknown GPUs."""
    if device in GPU_SPECS:
        return GPU_SPECS[device]
    return next((spec for name, spec in GPU_SPECS.items() if device.startswith(name)), None)


def physical_floor_s(spec: GpuSpec, flops: int, bytes_moved: int, dtype: str) -> float:
    """The least time any correct kernel can take: the larger of compute at the chip's ceiling and traffic at
    full memory bandwidth."""
    return max(flops / (spec.ceiling_for(dtype) * 1e9), bytes_moved / (spec.bandwidth_gbps * 1e9))


def implausible_time(runtime_s: float, floor_s: float | None) -> str | None:
    """Why a runtime cannot be real, or None when it can."""
    if not math.isfinite(runtime_s) or runtime_s <= 0:
        return f"the measured time {runtime_s!r} s is not a positive finite number"
    if floor_s is not None and runtime_s < FLOOR_MARGIN * floor_s:
        return (
            f"the measured time {runtime_s * 1e6:.3f} µs is under the physical floor of {floor_s * 1e6:.3f} µs "
            "(the case's bytes at full memory bandwidth, or its FLOPs at the chip's peak)"
        )
    return None
