# Broken: uses the rotate-half (GPT-NeoX) pairing of i with i + head_dim/2 instead of interleaved pairs.
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
    half = head_dim // 2
    a, b = x.float()[..., :half], x.float()[..., half:]
    c, s = cos_table.float()[:, None, :], sin_table.float()[:, None, :]
    output.copy_(torch.cat((a * c - b * s, a * s + b * c), dim=-1))
