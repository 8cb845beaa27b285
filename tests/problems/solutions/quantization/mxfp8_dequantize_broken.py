# Broken: uses an exponent bias of 128 instead of 127, so every value is half what it should be.
import torch


def solution(q: torch.Tensor, scale: torch.Tensor, out: torch.Tensor, m: int, k: int) -> None:
    values = q.view(torch.float8_e4m3fn).float().view(m, k // 32, 32)
    factor = torch.exp2(scale.float() - 128)
    out.copy_((values * factor.unsqueeze(-1)).view(m, k))
