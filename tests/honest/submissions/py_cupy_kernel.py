# Honest: a CuPy raw kernel on CuPy's default (legacy) stream, over the torch buffers (GPU only).
import cupy
import torch

_KERNEL = cupy.RawKernel(
    r"""
extern "C" __global__ void add(const float* a, const float* b, float* c, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)blockDim.x * gridDim.x) c[i] = a[i] + b[i];
}
""",
    "add",
)


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    a, b, c = (cupy.from_dlpack(t) for t in (input_a, input_b, output_c))
    blocks = min((n + 255) // 256, 65535)
    _KERNEL((blocks,), (256,), (a, b, c, cupy.uint64(n)))
