"""Whether this runner can profile: a GPU, Nsight Compute, and performance counters its jobs may read."""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

# The NVIDIA driver's module parameters; `RmProfilingAdminOnly: 1` keeps the counters for administrators.
DRIVER_PARAMS = "/proc/driver/nvidia/params"
_ADMIN_ONLY = re.compile(r"^RmProfilingAdminOnly:\s*(\d+)", re.MULTILINE)


@dataclass(frozen=True)
class ProfilingSupport:
    available: bool
    note: str | None = None  # why not, in words a user or an operator can act on


def counters_admin_only(params_file: str = DRIVER_PARAMS) -> bool | None:
    """The driver's RmProfilingAdminOnly, or None when its parameters cannot be read."""
    try:
        text = Path(params_file).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    match = _ADMIN_ONLY.search(text)
    return None if match is None else match.group(1) != "0"


def profiling_support(
    has_gpu: bool, jobs_run_as_root: bool, ncu: str | None = None, params_file: str = DRIVER_PARAMS
) -> ProfilingSupport:
    """What `/v1/health` says, and what a profile job is told before anything runs when it cannot."""
    if not has_gpu:
        return ProfilingSupport(False, "This runner has no GPU: profiles need Nsight Compute on a CUDA GPU.")
    if (ncu or shutil.which("ncu")) is None:
        return ProfilingSupport(False, "Nsight Compute (ncu) is not installed on this runner.")
    if counters_admin_only(params_file) and not jobs_run_as_root:
        return ProfilingSupport(
            False,
            "This runner's GPU driver lets only administrators read the performance counters "
            "(RmProfilingAdminOnly=1), and jobs run as an unprivileged user. Its operator can allow them with the "
            "driver option NVreg_RestrictProfilingToAdminUsers=0.",
        )
    return ProfilingSupport(True)


def jobs_run_as_root(sandbox_uid_base: int | None) -> bool:
    """Jobs keep the daemon's uid when it is not root (`SandboxPolicy.uid_base` is None then)."""
    return sandbox_uid_base is None and os.geteuid() == 0
