import torch


def solution(
    keys: torch.Tensor, values: torch.Tensor, keys_out: torch.Tensor, values_out: torch.Tensor, n: int
) -> None:
    order = torch.sort(keys, stable=True)
    keys_out.copy_(order.values)
    values_out.copy_(values[order.indices])
