import torch

P = 2147483647
# Three limbs of 11, 11 and 9 bits: limb products stay below 2^22, so float64 FFT sums round to exact integers.
OFFSETS = (0, 11, 22)


def solution(d_input1: torch.Tensor, d_input2: torch.Tensor, d_output: torch.Tensor, n: int) -> None:
    a, b = d_input1.to(torch.int64), d_input2.to(torch.int64)
    length = 2 * n - 1
    size = 1 << (length - 1).bit_length()
    fa = [torch.fft.rfft(((a >> o) & 0x7FF).double(), n=size) for o in OFFSETS]
    fb = [torch.fft.rfft(((b >> o) & 0x7FF).double(), n=size) for o in OFFSETS]
    out = torch.zeros(length, dtype=torch.int64, device=a.device)
    for i, oi in enumerate(OFFSETS):
        for j, oj in enumerate(OFFSETS):
            limb = torch.fft.irfft(fa[i] * fb[j], n=size)[:length].round().to(torch.int64) % P
            out = (out + (limb << ((oi + oj) % 31)) % P) % P
    d_output.copy_(out.to(torch.uint32))
