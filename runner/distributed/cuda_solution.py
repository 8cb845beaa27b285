"""A CUDA solution in a rank process: its library loaded, the job's NCCL communicator, the peers' buffers.

The harness builds the source once (runner/distributed/cuda_build.py); each rank loads the library and calls

    extern "C" void solution(<abi parameters>, int rank, int world_size, ncclComm_t comm,
                             void* const* peer_buffers, size_t symmetric_bytes);

- `comm` is made here over every rank with `ncclCommInitRank`: rank 0 draws the unique id, and the ranks share it
  over the harness's own gloo group.
- Each rank allocates one symmetric buffer of `symmetric_bytes` with the driver (`cuMemAlloc`: a whole allocation,
  as CUDA IPC needs), exports its IPC handle, and opens every peer's. `peer_buffers` is a device array of the
  `world_size` pointers, this rank's own at `rank`. The buffers belong to the job: no other job's process has a
  handle to them, and a rank's own are freed when its process ends.

This module runs beside the submission: it holds no expected output and imports nothing of the harness.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.distributed.cuda_driver import DriverError, check, symbol

# C types of the ABI's scalars (problems.base.ScalarType).
SCALAR_CTYPES: dict[str, Any] = {
    "size_t": ctypes.c_size_t,
    "int": ctypes.c_int,
    "float": ctypes.c_float,
    "uint64_t": ctypes.c_uint64,
    "int64_t": ctypes.c_int64,
    "uint32_t": ctypes.c_uint32,
}
_NCCL_UNIQUE_ID_BYTES = 128
_IPC_HANDLE_BYTES = 64
_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 0x1


class NcclUniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * _NCCL_UNIQUE_ID_BYTES)]


class IpcMemHandle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * _IPC_HANDLE_BYTES)]


def nccl_library() -> ctypes.CDLL:
    """The libnccl the process already has (torch's, when torch was built with NCCL), else the system's."""
    for name in ("libnccl.so.2", ctypes.util.find_library("nccl")):
        if name:
            try:
                return ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL)
            except OSError:
                continue
    raise DriverError("no NCCL library (libnccl.so.2) could be loaded on this runner")


def _ncclcheck(status: int, what: str) -> None:
    if status != 0:
        raise DriverError(f"{what} failed with NCCL error {status}")


@dataclass
class CudaRank:
    """What one rank hands a CUDA solution beside its ABI arguments."""

    rank: int
    world_size: int
    comm: ctypes.c_void_p
    symmetric_bytes: int
    own_buffer: int
    peer_pointers: Any  # a torch int64 tensor on the device: the `void* const*` argument
    opened: list[int] = field(default_factory=list)

    def trailing_arguments(self) -> list[Any]:
        return [
            ctypes.c_int(self.rank),
            ctypes.c_int(self.world_size),
            self.comm,
            ctypes.c_void_p(self.peer_pointers.data_ptr()),
            ctypes.c_size_t(self.symmetric_bytes),
        ]


def join_communicator(rank: int, world_size: int, group: Any) -> ctypes.c_void_p:
    """An NCCL communicator over every rank: the unique id drawn by rank 0 and shared over the gloo `group`."""
    import torch.distributed as dist

    nccl = nccl_library()
    unique = NcclUniqueId()
    if rank == 0:
        _ncclcheck(nccl.ncclGetUniqueId(ctypes.byref(unique)), "ncclGetUniqueId")
    # Field access of a char array stops at its first NUL: the id is read and rebuilt as raw bytes.
    shared = [ctypes.string_at(ctypes.addressof(unique), ctypes.sizeof(unique)) if rank == 0 else None]
    dist.broadcast_object_list(shared, src=0, group=group)
    unique = NcclUniqueId.from_buffer_copy(shared[0] or b"")
    comm = ctypes.c_void_p()
    init = nccl.ncclCommInitRank
    init.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, NcclUniqueId, ctypes.c_int]
    _ncclcheck(init(ctypes.byref(comm), world_size, unique, rank), "ncclCommInitRank")
    return comm


def map_symmetric_buffers(rank: int, world_size: int, symmetric_bytes: int, group: Any) -> tuple[int, list[int]]:
    """This rank's symmetric buffer and every rank's pointer to its peers' (CUDA IPC), in rank order."""
    import torch.distributed as dist

    alloc = symbol("cuMemAlloc_v2", "cuMemAlloc")
    alloc.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
    own = ctypes.c_uint64()
    check(alloc(ctypes.byref(own), max(symmetric_bytes, 1)), "cuMemAlloc")
    handle = IpcMemHandle()
    get_handle = symbol("cuIpcGetMemHandle")
    get_handle.argtypes = [ctypes.POINTER(IpcMemHandle), ctypes.c_uint64]
    check(get_handle(ctypes.byref(handle), own.value), "cuIpcGetMemHandle")
    handles: list[Any] = [None] * world_size
    dist.all_gather_object(handles, ctypes.string_at(ctypes.addressof(handle), ctypes.sizeof(handle)), group=group)
    open_handle = symbol("cuIpcOpenMemHandle_v2", "cuIpcOpenMemHandle")
    open_handle.argtypes = [ctypes.POINTER(ctypes.c_uint64), IpcMemHandle, ctypes.c_uint]
    pointers = []
    for peer, raw in enumerate(handles):
        if peer == rank:
            pointers.append(own.value)
            continue
        mapped = ctypes.c_uint64()
        check(
            open_handle(ctypes.byref(mapped), IpcMemHandle.from_buffer_copy(raw), _CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
            f"cuIpcOpenMemHandle of rank {peer}'s buffer",
        )
        pointers.append(mapped.value)
    return own.value, pointers


def prepare_rank(rank: int, world_size: int, symmetric_bytes: int, group: Any) -> CudaRank:
    import torch

    comm = join_communicator(rank, world_size, group)
    own, pointers = map_symmetric_buffers(rank, world_size, symmetric_bytes, group)
    peer_pointers = torch.tensor(pointers, dtype=torch.int64, device="cuda")
    return CudaRank(rank, world_size, comm, symmetric_bytes, own, peer_pointers)


def load_cuda_solution(library: Path, context: CudaRank, value_types: Sequence[str]) -> Callable[..., None]:
    """A Python callable with the Python solution's calling convention: (abi arguments..., rank, world_size,
    group). Tensors pass as device (or host) pointers, scalars as their C types, in ABI order."""
    import torch

    nccl_library()  # the library's NCCL symbols resolve against this process's libnccl
    function = ctypes.CDLL(str(library)).solution
    function.restype = None
    types = [SCALAR_CTYPES[t] for t in value_types]

    def call(*arguments: Any) -> None:
        abi = arguments[: len(arguments) - 3]
        converted: list[Any] = []
        scalars = iter(types)
        for value in abi:
            if isinstance(value, torch.Tensor):
                converted.append(ctypes.c_void_p(value.data_ptr()))
            else:
                converted.append(next(scalars)(value))
        function(*converted, *context.trailing_arguments())

    return call
