# Honest: a Triton kernel autotuned over three configurations on its first call (GPU only).
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": b}, num_warps=w) for b, w in ((256, 2), (1024, 4), (4096, 8))],
    key=["n"],
)
@triton.jit
def _add(a, b, c, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(c + offsets, tl.load(a + offsets, mask=mask) + tl.load(b + offsets, mask=mask), mask=mask)


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    _add[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](input_a, input_b, output_c, n)
