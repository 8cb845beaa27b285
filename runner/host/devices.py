"""What this host can run jobs on, found without creating a CUDA context: nvidia-smi (NVML) and metadata only.

Nothing here imports torch: the GPUs come from `nvidia-smi`, the library versions from package metadata. A job
runs in a `Slot`, a GPU or the CPU; which slots the daemon serves, one per GPU, is its plan (`runner.daemon.slots`).
"""

from __future__ import annotations

import importlib.metadata
import logging
import platform
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field

from runner.gpus import CPU, gpu_type_for

log = logging.getLogger(__name__)

NVIDIA_SMI_TIMEOUT_S = 20.0
_QUERY = "index,uuid,name,compute_cap,driver_version,memory.total"


@dataclass(frozen=True)
class Gpu:
    index: int
    uuid: str
    name: str
    capability: tuple[int, int]
    driver: str
    memory_mib: int | None


@dataclass(frozen=True)
class Slot:
    """One place a job can run: a GPU, or the CPU. At most one job runs in a slot at a time. `ranks` above 1: a
    slot for distributed problems, whose job runs that many rank processes at once."""

    index: int
    name: str
    is_gpu: bool
    env: Mapping[str, str] = field(default_factory=dict)
    capability: tuple[int, int] | None = None
    ranks: int = 1

    @property
    def gpu_type(self) -> str:
        """The board key of this slot's device, from the GPU registry: `cpu` for the CPU slot."""
        return gpu_type_for(self.name) if self.is_gpu else CPU.key


def ranks_device_name(world_size: int) -> str:
    """What a job on a slot of `world_size` CPU ranks ran on, as its result and the slot's name say it."""
    return f"CPU ({platform.machine()}) x{world_size} ranks"


def _parse_gpu(line: str) -> Gpu | None:
    parts = [p.strip() for p in line.split(",")]
    if len(parts) != 6:
        return None
    index, uuid, name, cap, driver, memory = parts
    try:
        major, minor = (int(x) for x in cap.split("."))
        return Gpu(int(index), uuid, name, (major, minor), driver, int(memory) if memory.isdigit() else None)
    except ValueError:
        return None


def query_gpus() -> list[Gpu]:
    """The GPUs nvidia-smi reports; empty without a driver. Blocking: call it through `asyncio.to_thread`."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return []
    try:
        out = subprocess.run(
            [smi, f"--query-gpu={_QUERY}", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=NVIDIA_SMI_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("nvidia-smi failed, assuming no GPU: %s", exc)
        return []
    if out.returncode != 0:
        log.warning("nvidia-smi exited with %d, assuming no GPU: %s", out.returncode, out.stderr.strip())
        return []
    return [gpu for line in out.stdout.splitlines() if line.strip() and (gpu := _parse_gpu(line))]


def default_slot() -> Slot:
    """The local CLI's slot: the first GPU's name and architecture, every GPU visible, as before the daemon."""
    gpus = query_gpus()
    if not gpus:
        return Slot(0, f"CPU ({platform.machine()})", False)
    return Slot(0, gpus[0].name, True, {}, gpus[0].capability)


def package_version(name: str) -> str | None:
    """A distribution's version from its metadata: no import, so no CUDA initialisation."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None
