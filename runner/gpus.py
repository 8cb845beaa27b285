"""The GPU models runners use, one registry entry each: the board key jobs are routed by, the device names that
match it, nvcc's architecture, datasheet peaks (for % of peak, roofline charts and physical floors) and the
timer's calibration. The one place to edit when adding a model. No torch here."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from contract.wire import MeasuredPeaks

# The floor divides the work no correct solution can avoid (runner.judge.floor_work: the bytes that must cross
# device memory, and FLOPs only where the problem declares its formula a lower bound) by the fastest rates any
# kernel could reach, with headroom, so that no honest kernel is ever rejected; the floor exists to stop
# impossible times, not fast ones. Datasheet peaks are already above what any kernel reaches; the headroom
# absorbs clock and timer error, and input lines that survive the L2 flush (up to a fifth of them).
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


@dataclass(frozen=True)
class GpuModel:
    """Everything the arena knows about one device model, under one identity.

    `key` is the GPU type of boards and of job routing (`h100`): a runner declares it, reports it in its
    health, and a job asks for it. A device name (nvidia-smi's and torch's, `NVIDIA H100 80GB HBM3`) matches
    the model when it equals one of `device_names` or starts with one (`NVIDIA H200 NVL` is an H200 until it
    gets an entry of its own). `aliases` are other spellings of the key that stored boards carry (older local
    runs used a slug of the device name).
    """

    key: str
    display_name: str
    device_names: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    # nvcc: the device's compute capability and the -arch it compiles for (None: no CUDA, a CPU).
    capability: tuple[int, int] | None = None
    arch: str | None = None
    # Datasheet peak rates, for % of peak, rooflines and physical floors (None: not known, or a CPU).
    spec: GpuSpec | None = None
    # ncu's duration of an empty kernel on this model in µs (`runner.timing.calibration`), with where the
    # figure comes from; None: not measured, so the timer subtracts nothing.
    empty_kernel_ncu_us: float | None = None
    calibration_source: str | None = None

    def labels(self) -> tuple[str, ...]:
        """Every GPU-type spelling that names this model: the key first."""
        return (self.key, *self.aliases)


# The generic rule for a capability without an entry: sm_XY, with the arch-specific feature set ("a") where
# it holds instructions a portable build lacks (Hopper's wgmma and TMA, Blackwell's tcgen05).
ARCH_SPECIFIC_CAPABILITIES: frozenset[tuple[int, int]] = frozenset({(9, 0), (10, 0)})
# What nvcc builds for when the device's capability is unknown (the local CLI without a driver).
DEFAULT_ARCH = "sm_90"

# Datasheet figures (SXM parts). Edit here to add a model: docs/runner.md, "Adding a GPU model".
GPU_MODELS: tuple[GpuModel, ...] = (
    GpuModel(
        key="h100",
        display_name="NVIDIA H100 SXM 80GB",
        device_names=("NVIDIA H100 80GB HBM3",),
        aliases=("h100-80gb-hbm3",),
        capability=(9, 0),
        arch="sm_90a",
        spec=GpuSpec(
            "NVIDIA H100 80GB HBM3",
            3350.0,
            {"float32": 67_000.0, "float16": 989_000.0, "bfloat16": 989_000.0},
            _HOPPER_CEILING,
        ),
        empty_kernel_ncu_us=2.11,
        calibration_source=(
            "2026-11-21, driver 580.159.04, CUDA 13.0: bench/results/timing_fidelity_h100_uncorrected.md"
        ),
    ),
    GpuModel(
        key="h200",
        display_name="NVIDIA H200 SXM 141GB",
        device_names=("NVIDIA H200",),
        capability=(9, 0),
        arch="sm_90a",
        spec=GpuSpec(
            "NVIDIA H200",
            4800.0,
            {"float32": 67_000.0, "float16": 989_000.0, "bfloat16": 989_000.0},
            _HOPPER_CEILING,
        ),
        empty_kernel_ncu_us=1.34,
        calibration_source=(
            "2026-11-21, driver 580.159.04, CUDA 13.0: bench/results/timing_fidelity_h200_uncorrected.md"
        ),
    ),
    # CPU runners: the daemon's CPU slot is named `CPU (<machine>)`. No peaks, no nvcc, no calibration.
    GpuModel(key="cpu", display_name="CPU", device_names=("CPU",)),
)

CPU: GpuModel = next(m for m in GPU_MODELS if m.key == "cpu")

# Device name -> datasheet peaks, as the table was before the registry (callers index it by device name).
GPU_SPECS: dict[str, GpuSpec] = {
    name: model.spec for model in GPU_MODELS if model.spec is not None for name in model.device_names
}


def model_for(name: str) -> GpuModel | None:
    """The model a GPU type (key or alias) or a device name (exact, or with a suffix) names; None if unknown.

    Exact names win over prefixes, so that a variant given an entry of its own is not taken for its base model.
    """
    for model in GPU_MODELS:
        if name in model.labels() or name in model.device_names:
            return model
    return next((m for m in GPU_MODELS if any(name.startswith(d) for d in m.device_names)), None)


def slug(name: str) -> str:
    """A GPU-type spelling of any device name: lower case, `NVIDIA ` dropped, runs of other characters as `-`."""
    text = re.sub(r"[^a-z0-9]+", "-", name.lower().removeprefix("nvidia ")).strip("-")
    return text[:64] or "gpu"


def gpu_type_for(device_name: str) -> str:
    """The board key of a device: its model's key, or for a model without an entry a slug of its name (so an
    unknown GPU still gets boards of its own, with no peaks)."""
    model = model_for(device_name)
    return model.key if model is not None else slug(device_name)


def canonical_gpu_type(label: str) -> str:
    """The board key a GPU type or device name stands for: aliases and device names become the model's key."""
    model = model_for(label)
    return model.key if model is not None else slug(label)


def same_gpu_type(a: str, b: str) -> bool:
    """Whether two GPU types (or device names) name the same model, old spellings included."""
    return canonical_gpu_type(a) == canonical_gpu_type(b)


def nvcc_arch(capability: tuple[int, int] | None) -> str:
    """The -arch value for a device capability: the registry's where a model has it, else sm_XY (with "a" for
    the capabilities whose arch-specific features solutions may use)."""
    if capability is None:
        return DEFAULT_ARCH
    for model in GPU_MODELS:
        if model.capability == capability and model.arch is not None:
            return model.arch
    major, minor = capability
    suffix = "a" if capability in ARCH_SPECIFIC_CAPABILITIES else ""
    return f"sm_{major}{minor}{suffix}"


def spec_for(device: str) -> GpuSpec | None:
    """The datasheet peaks of a device name as the runner reports it, or of a GPU type (`h100`, or a stored
    board's older `h100-80gb-hbm3`); None for CPUs and unknown GPUs."""
    model = model_for(device)
    return model.spec if model is not None else None


@dataclass(frozen=True)
class PhysicalFloor:
    """The least time any correct kernel can take on a case, and the rate that bounds it (for the message)."""

    seconds: float
    basis: str


def physical_floor(
    flops: int | None, bytes_moved: int, dtype: str, spec: GpuSpec | None, peaks: MeasuredPeaks | None
) -> PhysicalFloor | None:
    """The larger of the traffic at the fastest memory rate and the FLOPs at the fastest arithmetic rate.

    Both must be work no correct solution avoids (runner.judge.floor_work); `flops` is None where the problem's
    FLOP count is not a lower bound. Each rate is the lower of the datasheet's (with headroom) and this GPU's
    measured one (with headroom): either alone is a true bound, so the lower is too, and the measured one also
    covers GPUs missing from the table. None when neither is known (a CPU, an unmeasured unknown GPU).
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
    if compute and flops is not None:
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
