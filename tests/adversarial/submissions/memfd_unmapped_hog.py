# Class: resource_abuse
# §6: hangs, crashes, illegal addresses, context poisoning, fork bombs, memory and disk exhaustion, output floods
# Attack: writes 2 GiB into memfds it never maps, 32 MiB each (under the file-size limit), and holds them. The
# pages count in no process's RSS; the per-job limit must still see them: `memory_limit`.
import os
import time

import torch

CHUNK_MIB = 32
HELD: list[int] = []


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    block = b"\x01" * (1 << 20)
    for index in range(2048 // CHUNK_MIB):
        fd = os.memfd_create(f"hold-{index}")
        for _ in range(CHUNK_MIB):
            os.write(fd, block)
        HELD.append(fd)
    time.sleep(60)
    torch.add(input_a, input_b, out=output_c)
