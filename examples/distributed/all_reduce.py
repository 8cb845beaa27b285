"""A correct all-reduce: torch.distributed's own collective, in place on the output."""

import torch
import torch.distributed as dist


def solution(
    d_input: torch.Tensor, d_output: torch.Tensor, n: int, rank: int, world_size: int, group: dist.ProcessGroup
) -> None:
    d_output.copy_(d_input)
    dist.all_reduce(d_output, op=dist.ReduceOp.SUM, group=group)
