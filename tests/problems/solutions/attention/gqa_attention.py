# ruff: noqa: N803  (Tensara's parameter names)
import torch
import torch.nn.functional as F  # noqa: N812


def solution(
    Q: torch.Tensor,
    K: torch.Tensor,
    V: torch.Tensor,
    output: torch.Tensor,
    B: int,
    Hq: int,
    Hkv: int,
    S: int,
    D: int,
) -> None:
    group = Hq // Hkv
    k = K.float().repeat_interleave(group, dim=1)
    v = V.float().repeat_interleave(group, dim=1)
    output.copy_(F.scaled_dot_product_attention(Q.float(), k, v, is_causal=True))
