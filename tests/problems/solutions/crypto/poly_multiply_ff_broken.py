# Broken: computes the cyclic product (indices wrap modulo n) instead of the full 2n - 1 coefficients.
import torch

P = 2147483647
OFFSETS = (0, 11, 22)


def solution(d_input1: torch.Tensor, d_input2: torch.Tensor, d_output: torch.Tensor, n: int) -> None:
    a, b = d_input1.to(torch.int64), d_input2.to(torch.int64)
    fa = [torch.fft.rfft(((a >> o) & 0x7FF).double(), n=n) for o in OFFSETS]
    fb = [torch.fft.rfft(((b >> o) & 0x7FF).double(), n=n) for o in OFFSETS]
    out = torch.zeros(n, dtype=torch.int64, device=a.device)
    for i, oi in enumerate(OFFSETS):
        for j, oj in enumerate(OFFSETS):
            limb = torch.fft.irfft(fa[i] * fb[j], n=n).round().to(torch.int64) % P
            out = (out + (limb << ((oi + oj) % 31)) % P) % P
    d_output.zero_()
    d_output[:n].copy_(out.to(torch.uint32))
