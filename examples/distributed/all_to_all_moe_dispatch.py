"""A correct MoE dispatch: one all-to-all with the case's uneven splits (host tensors, read on the host)."""

import torch
import torch.distributed as dist


def solution(
    d_input: torch.Tensor,
    d_output: torch.Tensor,
    send_splits: torch.Tensor,
    recv_splits: torch.Tensor,
    tokens: int,
    recv_tokens: int,
    hidden: int,
    rank: int,
    world_size: int,
    group: dist.ProcessGroup,
) -> None:
    dist.all_to_all_single(
        d_output,
        d_input,
        output_split_sizes=recv_splits.tolist(),
        input_split_sizes=send_splits.tolist(),
        group=group,
    )
