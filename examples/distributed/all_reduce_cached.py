"""A hostile all-reduce: it sums the first sample's inputs once and returns that result on every later call. The
harness draws fresh inputs for every sample, so the second sample's outputs are wrong on every rank."""

import torch
import torch.distributed as dist

_cached: dict[tuple[int, ...], torch.Tensor] = {}


def solution(
    d_input: torch.Tensor, d_output: torch.Tensor, n: int, rank: int, world_size: int, group: dist.ProcessGroup
) -> None:
    key = tuple(d_output.shape)
    if key not in _cached:
        d_output.copy_(d_input)
        dist.all_reduce(d_output, op=dist.ReduceOp.SUM, group=group)
        _cached[key] = d_output.clone()
    d_output.copy_(_cached[key])
