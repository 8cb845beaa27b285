"""Per-GPU-model reference figures measured with Nsight Compute by bench/timing_fidelity.py.

The figures live in the GPU registry (`runner.gpus.GPU_MODELS`, field `empty_kernel_ncu_us`); this module
turns them into the timer's correction.

EMPTY_KERNEL_NCU_US: ncu's gpu__time_duration.sum of an empty kernel (`torch.cuda._sleep(0)`), in µs,
median of 7 runs with --clock-control none. The arena timer subtracts (its own empty-kernel time minus
this) from every sample, which removes the event pair's fixed launch cost. Re-measure when adding a model:
`python bench/timing_fidelity.py --only empty`.
"""

from __future__ import annotations

from runner.gpus import GPU_MODELS

# By exact device name: a figure measured on one part is not assumed for a variant that merely shares its
# name's prefix (an H200 NVL runs at other clocks than the SXM part the figure comes from).
EMPTY_KERNEL_NCU_US: dict[str, float] = {
    name: model.empty_kernel_ncu_us
    for model in GPU_MODELS
    if model.empty_kernel_ncu_us is not None
    for name in model.device_names
}

# The event pair's launch overhead is about a microsecond on every GPU measured; a larger correction would
# let a launcher that inflates its empty-kernel reading shave real time off every sample.
MAX_EVENT_OVERHEAD_S = 3e-6


def known_work(units: int) -> int:
    """The CPU's calibration call: deterministic work whose length grows with `units` (about 10 ns a unit), done
    in C so that neither tracing nor a patched Python function can shorten it. The judge times it in its own
    process; the launcher's reading of it must not be shorter."""
    return sum(range(units))


def event_overhead_s(empty_kernel_s: float, device_name: str) -> float:
    """What to subtract from every sample: the empty kernel's time under the arena protocol minus its ncu
    duration on this GPU model, within [0, MAX_EVENT_OVERHEAD_S]; 0 for a model without a record."""
    reference_us = EMPTY_KERNEL_NCU_US.get(device_name)
    if reference_us is None:
        return 0.0
    return min(max(empty_kernel_s - reference_us * 1e-6, 0.0), MAX_EVENT_OVERHEAD_S)
