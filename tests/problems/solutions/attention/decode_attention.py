# ruff: noqa: N803  (Tensara's parameter names)
import torch
import torch.nn.functional as F  # noqa: N812


def solution(
    Q: torch.Tensor,
    K_cache: torch.Tensor,
    V_cache: torch.Tensor,
    lengths: torch.Tensor,
    output: torch.Tensor,
    B: int,
    H: int,
    L: int,
    D: int,
) -> None:
    # Each sequence attends to its valid rows only: the rows past its length are garbage and are never read.
    for b, n in enumerate(lengths.tolist()):
        q = Q[b].float()[:, None, :]
        out = F.scaled_dot_product_attention(q, K_cache[b, :, :n].float(), V_cache[b, :, :n].float())
        output[b].copy_(out[:, 0, :])
