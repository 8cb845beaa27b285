"""Peak rates of the GPUs runners use: for % of peak, roofline charts and physical floors. No torch here."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from runner.api import MeasuredPeaks

# The floor divides a case's bytes and FLOPs by the fastest rates any kernel could reach, with headroom, so that
# no honest kernel is ever rejected; the floor exists to stop impossible times, not fast ones.
# Datasheet peaks are already above what any kernel reaches; the headroom absorbs clock and timer error.
DATASHEET_HEADROOM = 1.25
# The probe's copy is within a few per cent of what any kernel can stream from memory.
MEASURED_BANDWIDTH_HEADROOM = 1.25
# Hand-written GEMMs have beaten cuBLAS by up to about 20 % at some shapes on Hopper, and the probe measures
# one shape only.
MEASURED_COMPUTE_HEADROOM = 1.5


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


@dataclass(frozen=True)
class PhysicalFloor:
    """The least time any correct kernel can take on a case, and the rate that bounds it (for the message)."""

    seconds: float
    basis: str


def physical_floor(
    flops: int, bytes_moved: int, dtype: str, spec: GpuSpec | None, peaks: MeasuredPeaks | None
) -> PhysicalFloor | None:
    """The larger of the case's traffic at the fastest memory rate and its FLOPs at the fastest arithmetic rate.

    Each rate is the lower of the datasheet's (with headroom) and this GPU's measured one (with headroom):
    either alone is a true bound, so the lower is too, and the measured one also covers GPUs missing from the
    table. None when neither is known (a CPU, an unmeasured unknown GPU).
    """
    bandwidth: list[tuple[float, str]] = []
    compute: list[tuple[float, str]] = []
    if spec is not None:
        bandwidth.append(
            (
                spec.bandwidth_gbps * DATASHEET_HEADROOM,
                f"{DATASHEET_HEADROOM}x the datasheet's {spec.bandwidth_gbps:,.0f} GB/s",
            )
        )
        ceiling = spec.ceiling_for(dtype)
        compute.append((ceiling * DATASHEET_HEADROOM, f"{DATASHEET_HEADROOM}x the datasheet's {ceiling:,.0f} GFLOPS"))
    if peaks is not None:
        bandwidth.append(
            (
                peaks.bandwidth_gbps * MEASURED_BANDWIDTH_HEADROOM,
                f"{MEASURED_BANDWIDTH_HEADROOM}x this GPU's measured {peaks.bandwidth_gbps:,.0f} GB/s",
            )
        )
        measured = peaks.ceiling_gflops.get(dtype, max(peaks.ceiling_gflops.values(), default=0.0))
        if measured > 0:
            compute.append(
                (
                    measured * MEASURED_COMPUTE_HEADROOM,
                    f"{MEASURED_COMPUTE_HEADROOM}x this GPU's measured {measured:,.0f} GFLOPS",
                )
            )
    floors: list[PhysicalFloor] = []
    if bandwidth:
        gbps, why = min(bandwidth)
        floors.append(PhysicalFloor(bytes_moved / (gbps * 1e9), f"{bytes_moved:,} bytes at {gbps:,.0f} GB/s ({why})"))
    if compute:
        gflops, why = min(compute)
        floors.append(PhysicalFloor(flops / (gflops * 1e9), f"{flops:,} FLOPs at {gflops:,.0f} GFLOPS ({why})"))
    return max(floors, key=lambda f: f.seconds, default=None)


def implausible_time(runtime_s: float, floor: PhysicalFloor | None) -> str | None:
    """Why a runtime cannot be real, or None when it can."""
    if not math.isfinite(runtime_s) or runtime_s <= 0:
        return f"the measured time {runtime_s!r} s is not a positive finite number"
    if floor is not None and runtime_s < floor.seconds:
        return (
            f"the measured time {runtime_s * 1e6:.3f} µs is under the physical floor of {floor.seconds * 1e6:.3f} µs: "
            f"{floor.basis}"
        )
    return None
