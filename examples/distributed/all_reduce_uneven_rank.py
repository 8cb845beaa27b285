"""A correct all-reduce where rank 1 does more work after the collective (here, waits): the harness must score
each sample by this slowest rank, not by rank 0."""

import time

import torch
import torch.distributed as dist

EXTRA_SECONDS = 0.05


def solution(
    d_input: torch.Tensor, d_output: torch.Tensor, n: int, rank: int, world_size: int, group: dist.ProcessGroup
) -> None:
    d_output.copy_(d_input)
    dist.all_reduce(d_output, op=dist.ReduceOp.SUM, group=group)
    if rank == 1:
        time.sleep(EXTRA_SECONDS)
