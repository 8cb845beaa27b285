"""Ranks released together on their devices, and each rank's call timed by events on its own device.

On GPUs a host barrier inside the window would time the barrier's skew and the launch latency. Instead every
rank's stream is held by a wait on one 32-bit flag in host memory that all ranks of the job map (a page of the
job's directory, registered with CUDA as mapped memory), then runs a covering spin, then records its start event:

    rank r's stream:  wait(flag >= s) -> spin -> start event -> the call's work -> stop event

Each rank arms its stream, the ranks pass a host barrier (outside the window: their GPUs are held), and the first
rank past it writes `s` into the flag. Every GPU sees the same write, so the spins start together and the start
events fire together, within the spin's own jitter; the spin gives the host time to enqueue the call's first
kernel, so the launch latency stays outside the window. Where the driver offers no stream wait on memory
(`cuStreamWaitValue32`), the release falls back to the barrier and the spin, and says so (`device_release`).

This module runs in the rank processes, beside the submission: it holds no expected output.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from runner.distributed.cuda_driver import DriverError, check, symbol

FLAG_BYTES = 4096  # one page: cuMemHostRegister takes whole pages
# The spin between the release and the start event, in GPU cycles: about 0.5 ms at 2 GHz, longer than a Python
# call takes to enqueue its first kernel, so the GPU is busy, not idle, when the start event fires.
COVERING_SPIN_CYCLES = 1_000_000
_CU_MEMHOSTREGISTER_PORTABLE = 0x01
_CU_MEMHOSTREGISTER_DEVICEMAP = 0x02
_CU_STREAM_WAIT_VALUE_GEQ = 0x0


def flag_path(job: Path) -> Path:
    return job / "release-flag"


def create_flag(job: Path) -> None:
    """The harness's part: the zeroed page every rank maps."""
    flag_path(job).write_bytes(bytes(FLAG_BYTES))


@dataclass
class DeviceRelease:
    """One rank's view of the job's release flag. `device_wait` is False where the fallback is in use."""

    memory: mmap.mmap
    device_pointer: int
    device_wait: bool
    why_not: str = ""  # the driver's refusal, where the fallback is in use

    @classmethod
    def open(cls, job: Path) -> DeviceRelease:
        import torch

        torch.zeros(1, device="cuda")  # the primary context current on this thread, for the driver calls
        fd = os.open(flag_path(job), os.O_RDWR)
        try:
            memory = mmap.mmap(fd, FLAG_BYTES, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)
        address = ctypes.addressof(ctypes.c_char.from_buffer(memory))
        try:
            register = symbol("cuMemHostRegister_v2", "cuMemHostRegister")
            register.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint]
            check(
                register(address, FLAG_BYTES, _CU_MEMHOSTREGISTER_PORTABLE | _CU_MEMHOSTREGISTER_DEVICEMAP),
                "cuMemHostRegister",
            )
            pointer = ctypes.c_uint64()
            device_pointer = symbol("cuMemHostGetDevicePointer_v2", "cuMemHostGetDevicePointer")
            device_pointer.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_void_p, ctypes.c_uint]
            check(device_pointer(ctypes.byref(pointer), address, 0), "cuMemHostGetDevicePointer")
            symbol("cuStreamWaitValue32_v2", "cuStreamWaitValue32")
        except (OSError, DriverError) as exc:
            return cls(memory, 0, device_wait=False, why_not=str(exc))
        return cls(memory, pointer.value, device_wait=True)

    def arm(self, value: int) -> None:
        """Hold the current stream until the flag reaches `value`, then spin: enqueued before the start event."""
        import torch

        if self.device_wait:
            wait = symbol("cuStreamWaitValue32_v2", "cuStreamWaitValue32")
            wait.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint]
            stream = torch.cuda.current_stream().cuda_stream
            check(wait(stream, self.device_pointer, value, _CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue32")
        torch.cuda._sleep(COVERING_SPIN_CYCLES)

    def fire(self, value: int) -> None:
        """Release every rank's stream armed for `value` (each rank writes it; the first write releases all)."""
        struct.pack_into("<I", self.memory, 0, value)

    @property
    def kind(self) -> str:
        return "device" if self.device_wait else f"host barrier and spin ({self.why_not})"
