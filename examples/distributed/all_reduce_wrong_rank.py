"""A wrong all-reduce: correct on every rank but the last, which adds its own input once more."""

import torch
import torch.distributed as dist


def solution(
    d_input: torch.Tensor, d_output: torch.Tensor, n: int, rank: int, world_size: int, group: dist.ProcessGroup
) -> None:
    d_output.copy_(d_input)
    dist.all_reduce(d_output, op=dist.ReduceOp.SUM, group=group)
    if rank == world_size - 1:
        d_output.add_(d_input)
