# Honest: a Triton matrix-multiplication whose tl.dot runs on TF32 tensor cores in three passes (3xTF32, about
# float32's accuracy): TF32 is what the float32 board admits, so the precision audit reads the cubin and accepts it.
import torch
import triton
import triton.language as tl


@triton.jit
def _matmul(a_ptr, b_ptr, c_ptr, m, n, k, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    depth = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, k, BK):
        kk = k0 + depth
        a = tl.load(a_ptr + rows[:, None] * k + kk[None, :], mask=(rows[:, None] < m) & (kk[None, :] < k), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * n + cols[None, :], mask=(kk[:, None] < k) & (cols[None, :] < n), other=0.0)
        acc = tl.dot(a, b, acc=acc, input_precision="tf32x3")
    tl.store(c_ptr + rows[:, None] * n + cols[None, :], acc, mask=(rows[:, None] < m) & (cols[None, :] < n))


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, m: int, n: int, k: int) -> None:
    grid = (triton.cdiv(m, 64), triton.cdiv(n, 64))
    _matmul[grid](input_a, input_b, output_c, m, n, k, BM=64, BN=64, BK=32)
