# Broken: unpacks the high nibble first, so every pair of elements is swapped.
import torch

E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)


def solution(q: torch.Tensor, scale: torch.Tensor, out: torch.Tensor, m: int, k: int) -> None:
    table = torch.tensor(E2M1, device=q.device)
    codes = torch.stack((q >> 4, q & 0xF), dim=-1).reshape(m, k)
    factor = (scale.to(torch.int32) << 23).view(torch.float32)
    out.copy_((table[codes.long()].view(m, k // 32, 32) * factor.unsqueeze(-1)).view(m, k))
