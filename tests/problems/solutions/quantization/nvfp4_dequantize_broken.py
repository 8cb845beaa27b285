# Broken: multiplies by the global scale instead of dividing (sf_g is the encode scale).
import torch

E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)


def solution(q: torch.Tensor, scale: torch.Tensor, sf_g: float, out: torch.Tensor, m: int, k: int) -> None:
    table = torch.tensor(E2M1, device=q.device)
    codes = torch.stack((q & 0xF, q >> 4), dim=-1).reshape(m, k)
    values = table[codes.long()].view(m, k // 16, 16) * scale.float().unsqueeze(-1)
    out.copy_((values * sf_g).view(m, k))
