# Class: control (honest, no cheat)
# A Triton vector_add: one JIT-compiled kernel, launched on the current stream. Triton compiles on the first
# call, so the first call is slow; that must not be mistaken for anything.
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):  # noqa: N803 (Triton's constexpr convention)
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(c_ptr + offsets, a + b, mask=mask)


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    block = 1024
    add_kernel[(triton.cdiv(n, block),)](input_a, input_b, output_c, n, BLOCK=block)
