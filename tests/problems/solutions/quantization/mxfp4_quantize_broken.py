# Broken: rounds halfway cases away from zero instead of to the even code.
import torch


def e2m1_codes(y: torch.Tensor) -> torch.Tensor:
    mag = y.abs()
    step = torch.where(mag < 2, 0.5, torch.where(mag < 4, 1.0, 2.0))
    r = (torch.floor(mag / step + 0.5) * step).clamp(max=6.0)
    code = torch.where(r < 2, r * 2, torch.where(r < 4, r + 2, r / 2 + 4)).to(torch.uint8)
    return code | (torch.signbit(y).to(torch.uint8) << 3)


def solution(a: torch.Tensor, q: torch.Tensor, scale: torch.Tensor, m: int, k: int) -> None:
    blocks = a.view(m, k // 32, 32)
    amax = blocks.abs().amax(dim=-1)
    floor_log2 = ((amax.view(torch.int32) >> 23) & 0xFF) - 127
    shared = torch.where(amax > 0, floor_log2 - 2, -127).clamp(-127, 127)
    inverse = ((127 - shared) << 23).view(torch.float32)
    codes = e2m1_codes(blocks * inverse.unsqueeze(-1)).view(m, k)
    q.copy_(codes[:, 0::2] | (codes[:, 1::2] << 4))
    scale.copy_((shared + 127).to(torch.uint8))
