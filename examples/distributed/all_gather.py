"""A correct all-gather: every rank's n elements into every rank's output, in rank order."""

import torch
import torch.distributed as dist


def solution(
    d_input: torch.Tensor, d_output: torch.Tensor, n: int, rank: int, world_size: int, group: dist.ProcessGroup
) -> None:
    dist.all_gather_into_tensor(d_output, d_input, group=group)
