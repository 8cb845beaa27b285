"""Memory shared between the judge and the launcher by passing one file descriptor.

The judge allocates, the launcher maps. On a GPU the allocation comes from the CUDA virtual memory API
(`cuMemCreate` with a POSIX file-descriptor handle, `cuMemExportToShareableHandle`); on the CPU from a
`memfd`. Either way the only thing that crosses the process boundary is a descriptor sent over a Unix socket,
so sharing works across the launcher's user, pid, IPC and mount namespaces, where the legacy `cudaIpc*`
handles (which name the exporting process) do not.

Both sides see the same bytes through `torch` views (`SharedArena.view`), carved at 256-byte aligned offsets.
"""

from __future__ import annotations

import ctypes
import mmap
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

ALIGN = 256

# CUDA driver API constants (cuda.h).
_ALLOCATION_PINNED = 1
_HANDLE_POSIX_FD = 1
_LOCATION_DEVICE = 1
_ACCESS_READWRITE = 3
_GRANULARITY_MINIMUM = 0


class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AllocFlags(ctypes.Structure):
    _fields_ = [
        ("compressionType", ctypes.c_ubyte),
        ("gpuDirectRDMACapable", ctypes.c_ubyte),
        ("usage", ctypes.c_ushort),
        ("reserved", ctypes.c_ubyte * 4),
    ]


class _AllocationProp(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("requestedHandleTypes", ctypes.c_int),
        ("location", _Location),
        ("win32HandleMetaData", ctypes.c_void_p),
        ("allocFlags", _AllocFlags),
    ]


class _AccessDesc(ctypes.Structure):
    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


class SharedMemoryError(RuntimeError):
    """The driver refused an allocation, an export or an import."""


def align(n: int, to: int = ALIGN) -> int:
    return (n + to - 1) // to * to


class _Driver:
    """The few driver calls needed, bound once through ctypes."""

    def __init__(self) -> None:
        self.lib = ctypes.CDLL("libcuda.so.1")

    def check(self, status: int, what: str) -> None:
        if status != 0:
            text = ctypes.c_char_p()
            self.lib.cuGetErrorString(status, ctypes.byref(text))
            raise SharedMemoryError(f"{what} failed: {(text.value or b'').decode()} ({status})")

    def device(self) -> int:
        import torch

        dev = ctypes.c_int()
        self.check(self.lib.cuDeviceGet(ctypes.byref(dev), torch.cuda.current_device()), "cuDeviceGet")
        return dev.value

    def prop(self, device: int) -> _AllocationProp:
        prop = _AllocationProp()
        prop.type = _ALLOCATION_PINNED
        prop.requestedHandleTypes = _HANDLE_POSIX_FD
        prop.location = _Location(_LOCATION_DEVICE, device)
        return prop

    def granularity(self, prop: _AllocationProp) -> int:
        gran = ctypes.c_size_t()
        self.check(
            self.lib.cuMemGetAllocationGranularity(ctypes.byref(gran), ctypes.byref(prop), _GRANULARITY_MINIMUM),
            "cuMemGetAllocationGranularity",
        )
        return gran.value

    def map(self, handle: ctypes.c_uint64, size: int, device: int) -> int:
        ptr = ctypes.c_uint64()
        lib = self.lib
        self.check(
            lib.cuMemAddressReserve(
                ctypes.byref(ptr), ctypes.c_size_t(size), ctypes.c_size_t(0), ctypes.c_uint64(0), ctypes.c_uint64(0)
            ),
            "cuMemAddressReserve",
        )
        self.check(lib.cuMemMap(ptr, ctypes.c_size_t(size), ctypes.c_size_t(0), handle, ctypes.c_uint64(0)), "cuMemMap")
        access = _AccessDesc(_Location(_LOCATION_DEVICE, device), _ACCESS_READWRITE)
        self.check(
            lib.cuMemSetAccess(ptr, ctypes.c_size_t(size), ctypes.byref(access), ctypes.c_size_t(1)), "cuMemSetAccess"
        )
        return ptr.value


_driver: _Driver | None = None


def _cuda() -> _Driver:
    global _driver
    if _driver is None:
        import torch

        torch.cuda.init()
        torch.empty(1, device="cuda")  # the primary context, current on this thread, as torch uses it
        _driver = _Driver()
    return _driver


class _CudaArrayInterface:
    """A raw device range presented to `torch.as_tensor` as bytes."""

    def __init__(self, ptr: int, size: int) -> None:
        self.__cuda_array_interface__ = {
            "shape": (size,),
            "typestr": "|u1",
            "data": (ptr, False),
            "version": 2,
            "strides": None,
        }


@dataclass
class SharedArena:
    """One shared allocation and a bytes tensor over all of it. `fd` is what the other side needs."""

    device: str  # "cuda" or "cpu"
    size: int
    fd: int
    base: torch.Tensor
    _keep: list[Any] = field(default_factory=list, repr=False)
    _unmap: tuple[Any, int, Any] | None = field(default=None, repr=False)

    @classmethod
    def allocate(cls, size: int, device: str) -> SharedArena:
        size = max(align(size), ALIGN)
        if device == "cpu":
            fd = os.memfd_create("arena-shared", os.MFD_CLOEXEC)
            os.ftruncate(fd, size)
            return cls._map_cpu(fd, size)
        drv = _cuda()
        dev = drv.device()
        prop = drv.prop(dev)
        size = align(size, drv.granularity(prop))
        handle = ctypes.c_uint64()
        drv.check(
            drv.lib.cuMemCreate(ctypes.byref(handle), ctypes.c_size_t(size), ctypes.byref(prop), ctypes.c_uint64(0)),
            "cuMemCreate",
        )
        fd = ctypes.c_int(-1)
        drv.check(
            drv.lib.cuMemExportToShareableHandle(ctypes.byref(fd), handle, _HANDLE_POSIX_FD, ctypes.c_uint64(0)),
            "cuMemExportToShareableHandle",
        )
        return cls._map_cuda(drv, handle, fd.value, size, dev)

    @classmethod
    def open(cls, fd: int, size: int, device: str) -> SharedArena:
        """Map an arena the other side allocated; `fd` came over the channel."""
        if device == "cpu":
            return cls._map_cpu(fd, size)
        drv = _cuda()
        handle = ctypes.c_uint64()
        drv.check(
            drv.lib.cuMemImportFromShareableHandle(ctypes.byref(handle), ctypes.c_void_p(fd), _HANDLE_POSIX_FD),
            "cuMemImportFromShareableHandle",
        )
        return cls._map_cuda(drv, handle, fd, size, drv.device())

    @classmethod
    def _map_cpu(cls, fd: int, size: int) -> SharedArena:
        import torch

        mm = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        base = torch.frombuffer(mm, dtype=torch.uint8)
        return cls("cpu", size, fd, base, [mm])

    @classmethod
    def _map_cuda(cls, drv: _Driver, handle: ctypes.c_uint64, fd: int, size: int, dev: int) -> SharedArena:
        import torch

        ptr = drv.map(handle, size, dev)
        interface = _CudaArrayInterface(ptr, size)
        base = torch.as_tensor(interface, device="cuda")
        if base.data_ptr() != ptr:
            raise SharedMemoryError("torch copied the shared range instead of viewing it")
        arena = cls("cuda", size, fd, base, [interface, handle])
        arena._unmap = (drv, ptr, handle)
        return arena

    def close(self) -> None:
        """Release this side's mapping. Views taken from the arena must not be used afterwards."""
        import contextlib

        self.base = None  # type: ignore[assignment]
        unmap = getattr(self, "_unmap", None)
        if unmap is not None:
            import torch

            drv, ptr, handle = unmap
            torch.cuda.synchronize()
            drv.lib.cuMemUnmap(ctypes.c_uint64(ptr), ctypes.c_size_t(self.size))
            drv.lib.cuMemAddressFree(ctypes.c_uint64(ptr), ctypes.c_size_t(self.size))
            drv.lib.cuMemRelease(handle)
            self._unmap = None
        # A CPU mapping is not closed here: views hold the mmap object, and it unmaps when the last one goes.
        self._keep.clear()
        with contextlib.suppress(OSError):
            os.close(self.fd)

    def view(self, offset: int, shape: tuple[int, ...] | list[int], dtype: torch.dtype) -> torch.Tensor:
        import math

        import torch

        nbytes = math.prod(shape) * torch.empty((), dtype=dtype).element_size()
        if offset % ALIGN or offset + nbytes > self.size:
            raise ValueError(f"a view of {nbytes} bytes at {offset} does not fit the arena of {self.size}")
        return self.base[offset : offset + nbytes].view(dtype).view(tuple(shape))
