# Broken: breaks ties between equal keys by value, which is not the stable order the problem asks for.
import torch


def solution(
    keys: torch.Tensor, values: torch.Tensor, keys_out: torch.Tensor, values_out: torch.Tensor, n: int
) -> None:
    combined = (keys.to(torch.int64) << 32) | (values.to(torch.int64) & 0xFFFFFFFF)
    order = torch.sort(combined).indices
    keys_out.copy_(keys[order])
    values_out.copy_(values[order])
