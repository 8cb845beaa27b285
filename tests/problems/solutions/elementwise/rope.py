import torch


def solution(
    x: torch.Tensor,
    cos_table: torch.Tensor,
    sin_table: torch.Tensor,
    output: torch.Tensor,
    tokens: int,
    heads: int,
    head_dim: int,
) -> None:
    pairs = x.float().view(tokens, heads, head_dim // 2, 2)
    a, b = pairs[..., 0], pairs[..., 1]
    c, s = cos_table.float()[:, None, :], sin_table.float()[:, None, :]
    output.view(tokens, heads, head_dim // 2, 2).copy_(torch.stack((a * c - b * s, a * s + b * c), dim=-1))
