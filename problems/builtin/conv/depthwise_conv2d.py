"""depthwise-conv2d: each channel of a C×H×W tensor correlated with its own K×K kernel, 'same' padding."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.conv._conv import CONV_TOLERANCES, TF32_NOTE
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


class DepthwiseConv2d(KernelProblem):
    slug = "depthwise-conv2d"
    title = "Depthwise 2D Convolution"
    description = (
        "Correlate every channel of a C×H×W tensor `input` with that channel's own K×K kernel from the "
        "C×K×K tensor `kernel` (K odd; no mixing between channels, as in a depthwise-separable layer) and write "
        "the C×H×W `output`: `output[c][y][x] = sum_{i,j<K} input[c][y + i - (K-1)/2][x + j - (K-1)/2] * "
        "kernel[c][i][j]`, where pixels outside the image count as zero ('same' zero padding, stride 1). The "
        "kernel is not flipped. All tensors are row-major and contiguous; accumulate half-precision inputs in "
        "float32." + TF32_NOTE
    )
    tags = ("convolution", "memory-bound")
    difficulty = "medium"
    dtypes = ("float32", "float16")
    parameters = (
        Param("input", "input", doc="C×H×W, row-major"),
        Param("kernel", "input", doc="C×K×K, row-major"),
        Param("output", "output", doc="C×H×W, row-major"),
        Param("C", "scalar", "size_t", "channels"),
        Param("H", "scalar", "size_t", "height"),
        Param("W", "scalar", "size_t", "width"),
        Param("K", "scalar", "size_t", "kernel edge (odd)"),
    )
    # (C, H, W, K): ragged images, kernels from 3 to 7; the largest moves 512 MB in float32.
    gpu_cases = ((3, 67, 129, 3), (32, 256, 256, 5), (96, 225, 223, 7), (256, 512, 512, 3))
    cpu_cases = ((2, 7, 9, 3), (5, 20, 33, 5), (8, 31, 64, 7))
    dim_names = ("C", "H", "W", "K")
    flops_formula = "2 · C · H · W · K² (a multiply and an add per tap, taps on the padding included)"
    bytes_formula = "(2 · C · H · W + C · K²) · sizeof(dtype)"
    tolerances = CONV_TOLERANCES

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        c, h, w, k = dims
        return {"input": (c, h, w), "kernel": (c, k, k), "output": (c, h, w)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        c, h, w, k = dims
        return 2 * c * h * w * k * k

    def reference_solution(self, *args: Any) -> torch.Tensor:
        import torch.nn.functional as F  # noqa: N812

        x, kernel = args[0].double(), args[1].double()
        c, k = kernel.shape[0], kernel.shape[-1]
        return F.conv2d(x[None], kernel[:, None], padding=k // 2, groups=c)[0]
