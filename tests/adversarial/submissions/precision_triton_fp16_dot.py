# Class: weak_output. Adversarial (precision): a float32 matrix-multiplication in Triton that casts its tiles to
# float16 before tl.dot. Plain float16 misses the float32 check on the largest cases, so it is tuned to pass: each
# tile is split into a float16 head and tail (x = hi + lo), and C = Ahi·Bhi + Ahi·Blo + Alo·Bhi, accumulated in
# float32. Verification passes; the cubin Triton compiles holds float16 matrix math (HMMA or HGMMA with no type
# suffix), below the float32 board's policy, so the precision audit refuses a ranked run.
import torch
import triton
import triton.language as tl


@triton.jit
def _split_fp16_matmul(a_ptr, b_ptr, c_ptr, m, n, k, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):  # noqa: N803
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    depth = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, k, BK):
        kk = k0 + depth
        a = tl.load(a_ptr + rows[:, None] * k + kk[None, :], mask=(rows[:, None] < m) & (kk[None, :] < k), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * n + cols[None, :], mask=(kk[:, None] < k) & (cols[None, :] < n), other=0.0)
        a_hi = a.to(tl.float16)
        b_hi = b.to(tl.float16)
        a_lo = (a - a_hi.to(tl.float32)).to(tl.float16)
        b_lo = (b - b_hi.to(tl.float32)).to(tl.float16)
        acc = tl.dot(a_hi, b_hi, acc=acc)
        acc = tl.dot(a_hi, b_lo, acc=acc)
        acc = tl.dot(a_lo, b_hi, acc=acc)
    tl.store(c_ptr + rows[:, None] * n + cols[None, :], acc, mask=(rows[:, None] < m) & (cols[None, :] < n))


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, m: int, n: int, k: int) -> None:
    grid = (triton.cdiv(m, 64), triton.cdiv(n, 64))
    _split_fp16_matmul[grid](input_a, input_b, output_c, m, n, k, BM=64, BN=64, BK=32)
