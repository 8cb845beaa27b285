"""Peak rates of the GPUs runners report, for % of peak, physical floors and roofline charts. No torch here."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GpuSpec:
    """Dense peak rates: memory bandwidth in GB/s and arithmetic in GFLOPS per dtype (tensor cores for halves)."""

    name: str
    bandwidth_gbps: float
    peak_gflops: dict[str, float]

    def peak_for(self, dtype: str) -> float:
        return self.peak_gflops.get(dtype, self.peak_gflops["float32"])


# Datasheet figures (SXM parts). float32 is the CUDA-core rate: the fp32 problems forbid TF32.
GPU_SPECS: dict[str, GpuSpec] = {
    "NVIDIA H100 80GB HBM3": GpuSpec(
        "NVIDIA H100 80GB HBM3", 3350.0, {"float32": 67_000.0, "float16": 989_000.0, "bfloat16": 989_000.0}
    ),
    "NVIDIA H200": GpuSpec("NVIDIA H200", 4800.0, {"float32": 67_000.0, "float16": 989_000.0, "bfloat16": 989_000.0}),
}


def spec_for(device: str) -> GpuSpec | None:
    """The spec of a device name as the runner reports it; None for CPUs and unknown GPUs."""
    if device in GPU_SPECS:
        return GPU_SPECS[device]
    return next((spec for name, spec in GPU_SPECS.items() if device.startswith(name)), None)
