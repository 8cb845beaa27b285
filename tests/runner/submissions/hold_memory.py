# Holds __MIB__ MiB of host memory in each of the ways __WAYS__, none of it mapped by any process: memfds
# written with write(), detached SysV segments, POSIX shared memory objects (shm_open, closed), files on the
# job's tmpfs. Then, with `wait`, it waits, so that the runner's watch sees the memory held.
import ctypes
import os
import time

import torch

CHUNK = 32 << 20  # below the tests' file-size limit (RLIMIT_FSIZE also bounds a memfd)
IPC_PRIVATE, IPC_CREAT = 0, 0o1000
MIB = int("__MIB__")
WAIT = "__WAIT__" == "wait"
HELD: list[int] = []
DONE: list[bool] = []


def _fill(fd: int) -> None:
    block = b"\x01" * (1 << 20)
    for _ in range(CHUNK >> 20):
        os.write(fd, block)


def _memfd(index: int) -> None:
    fd = os.memfd_create(f"held-{index}")
    _fill(fd)
    HELD.append(fd)  # open, never mapped


def _sysv(index: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    shmid = libc.shmget(IPC_PRIVATE, ctypes.c_size_t(CHUNK), IPC_CREAT | 0o600)
    if shmid < 0:
        raise OSError(ctypes.get_errno(), "shmget")
    address = libc.shmat(shmid, None, 0)
    if address is None or address == ctypes.c_void_p(-1).value:
        raise OSError(ctypes.get_errno(), "shmat")
    ctypes.memset(address, 1, CHUNK)
    libc.shmdt(ctypes.c_void_p(address))  # detached, and never removed


def _posix_shm(index: int) -> None:
    import _posixshmem

    fd = _posixshmem.shm_open(f"/held-{index}", os.O_CREAT | os.O_RDWR, 0o600)
    _fill(fd)
    os.close(fd)


def _tmpfs_file(index: int) -> None:
    fd = os.open(os.path.join(os.environ["TMPDIR"], f"held-{index}"), os.O_CREAT | os.O_WRONLY, 0o600)
    _fill(fd)
    os.close(fd)


WAYS = {"memfd": _memfd, "sysv": _sysv, "posix_shm": _posix_shm, "tmpfs_file": _tmpfs_file}


def _hold() -> None:
    for name in "__WAYS__".split(","):
        for index in range(MIB * (1 << 20) // CHUNK):
            try:
                WAYS[name](index)
            except OSError:
                break  # a bound of the sandbox refused more: hold what there is


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    if not DONE:
        DONE.append(True)
        _hold()
        if WAIT:
            time.sleep(60)
    torch.add(input_a, input_b, out=output_c)
