"""The daemon's slots: one per GPU it is told to use (RUNNER_DEVICE, RUNNER_GPUS), each seeing only its own GPU
through CUDA_VISIBLE_DEVICES, or the one CPU slot; the slots of N ranks for distributed problems (RUNNER_RANK_SLOTS);
and the one GPU type they serve."""

from __future__ import annotations

import platform
from collections.abc import Sequence

from runner.host.devices import Gpu, Slot, ranks_device_name


class DeviceError(RuntimeError):
    """The configured devices do not exist here; the message says which setting to change."""


def slots_gpu_type(slots: Sequence[Slot]) -> str | None:
    """The one GPU type the slots serve, or None when they hold several models (or there are none): a runner
    serves boards of one type, so the bot refuses a runner whose slots mix them."""
    types = {slot.gpu_type for slot in slots}
    return types.pop() if len(types) == 1 else None


def cpu_slot() -> Slot:
    """The single CPU slot; it hides every GPU from the job."""
    return Slot(0, f"CPU ({platform.machine()})", False, {"CUDA_VISIBLE_DEVICES": ""})


def gpu_slots(gpus: Sequence[Gpu], wanted: Sequence[str] | None) -> list[Slot]:
    """One slot per GPU (restricted to `wanted` indices or UUIDs), each seeing only its own GPU."""
    chosen = list(gpus)
    if wanted:
        chosen = [g for g in gpus if str(g.index) in wanted or g.uuid in wanted]
        missing = set(wanted) - {str(g.index) for g in chosen} - {g.uuid for g in chosen}
        if missing:
            raise DeviceError(f"RUNNER_GPUS names {', '.join(sorted(missing))}, which nvidia-smi does not list.")
    # A UUID, unlike an index, names the same GPU whatever CUDA_DEVICE_ORDER the job's libraries use.
    return [Slot(i, g.name, True, {"CUDA_VISIBLE_DEVICES": g.uuid}, g.capability) for i, g in enumerate(chosen)]


def plan_slots(device: str, gpus: Sequence[Gpu], wanted: Sequence[str] | None) -> list[Slot]:
    """Slots for RUNNER_DEVICE: `gpu` requires GPUs, `cpu` ignores them, `auto` uses them when present."""
    if device == "cpu" or (device == "auto" and not gpus):
        return [cpu_slot()]
    if not gpus:
        raise DeviceError("RUNNER_DEVICE=gpu, but nvidia-smi finds no GPU here. Install the driver or use auto.")
    return gpu_slots(gpus, wanted)


def rank_slots(sizes: Sequence[int], device_slots: Sequence[Slot]) -> list[Slot]:
    """A slot of N ranks per entry of RUNNER_RANK_SLOTS, numbered after the one-device slots (so each has a job uid
    of its own). Their ranks are gloo processes on the CPU: a runner whose slots are GPUs refuses them until its
    ranks can run on GPUs of their own (NCCL, one GPU per rank), rather than time them beside its GPU jobs."""
    if not sizes:
        return []
    if any(slot.is_gpu for slot in device_slots):
        raise DeviceError(
            "RUNNER_RANK_SLOTS runs ranks on the CPU only for now, and this runner serves GPUs: set RUNNER_DEVICE=cpu "
            "for a CPU runner with rank slots, or leave RUNNER_RANK_SLOTS unset on a GPU runner."
        )
    first = len(device_slots)
    return [
        Slot(first + i, ranks_device_name(n), False, {"CUDA_VISIBLE_DEVICES": ""}, ranks=n) for i, n in enumerate(sizes)
    ]
