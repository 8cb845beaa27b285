# Reads the padding: masks the scores past each length but multiplies the whole cache, garbage rows included,
# by the weights (zero there). Zero times the NaN in those rows is NaN, so it must fail.
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
    # The mask keeps the garbage rows out of the softmax, but the product with V still reads them.
    valid = torch.arange(L, device=Q.device)[None, :] < lengths[:, None].long()
    mask = valid[:, None, None, :]
    q = Q.float()[:, :, None, :]
    out = F.scaled_dot_product_attention(q, K_cache.float(), V_cache.float(), attn_mask=mask)
    output.copy_(out[:, :, 0, :])
