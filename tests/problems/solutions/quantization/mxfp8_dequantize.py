import torch


def solution(q: torch.Tensor, scale: torch.Tensor, out: torch.Tensor, m: int, k: int) -> None:
    values = q.view(torch.float8_e4m3fn).float().view(m, k // 32, 32)
    # E8M0 byte s (1..254) is 2^(s - 127): exactly the float32 whose exponent field is s.
    factor = (scale.to(torch.int32) << 23).view(torch.float32)
    out.copy_((values * factor.unsqueeze(-1)).view(m, k))
