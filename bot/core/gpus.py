"""Peak rates of the GPUs runners report (defined beside the runner, which needs them for physical floors)."""

from runner.gpus import GPU_SPECS, GpuSpec, spec_for

__all__ = ["GPU_SPECS", "GpuSpec", "spec_for"]
