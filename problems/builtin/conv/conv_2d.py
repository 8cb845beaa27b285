"""conv-2d: an H×W image correlated with an odd Kh×Kw kernel, 'same' zero padding, an H×W output."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.conv._conv import TENSARA_CONV_TOLERANCES, TF32_NOTE, same_correlation
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch

# (H, W, Kh, Kw): odd kernels, square and not, on ragged and non-square images; the largest does 4 GFLOP.
GPU_CASES: tuple[Dims, ...] = ((509, 1021, 3, 5), (1024, 1024, 7, 7), (2047, 3001, 5, 9), (4096, 4096, 11, 11))
CPU_CASES: tuple[Dims, ...] = ((7, 9, 3, 3), (33, 20, 5, 3), (64, 97, 7, 5))


class Conv2d(KernelProblem):
    slug = "conv-2d"
    # Version 1 (`conv2d`) was the multi-channel NCHW convolution, now `conv2d-nchw`; this is Tensara's
    # single-channel signature.
    version = 2
    aliases = ("conv2d",)
    title = "2D Convolution"
    description = (
        "Correlate a single-channel H×W image `A` with a Kh×Kw kernel `B` (Kh and Kw odd, not necessarily equal) "
        "and write the H×W result to `C`: `C[y][x] = sum_{i<Kh, j<Kw} A[y + i - (Kh-1)/2][x + j - (Kw-1)/2] * "
        "B[i][j]`, where pixels outside the image count as zero ('same' zero padding, stride 1). The kernel is "
        "not flipped (cross-correlation). All arrays are row-major and contiguous." + TF32_NOTE
    )
    tags = ("convolution",)
    difficulty = "medium"
    dtypes = ("float32",)
    parameters = (
        Param("A", "input", doc="H×W image, row-major"),
        Param("B", "input", doc="Kh×Kw kernel, row-major"),
        Param("C", "output", doc="H×W, row-major"),
        Param("H", "scalar", "size_t", "image height"),
        Param("W", "scalar", "size_t", "image width"),
        Param("Kh", "scalar", "size_t", "kernel height (odd)"),
        Param("Kw", "scalar", "size_t", "kernel width (odd)"),
    )
    gpu_cases = GPU_CASES
    cpu_cases = CPU_CASES
    dim_names = ("H", "W", "Kh", "Kw")
    flops_formula = "2 · H · W · Kh · Kw (a multiply and an add per tap, taps on the padding included)"
    bytes_formula = "(2 · H · W + Kh · Kw) · sizeof(float)"
    tolerances = TENSARA_CONV_TOLERANCES

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        h, w, kh, kw = dims
        return {"A": (h, w), "B": (kh, kw), "C": (h, w)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        h, w, kh, kw = dims
        return 2 * h * w * kh * kw

    def reference_solution(self, *args: Any) -> torch.Tensor:
        return same_correlation(args[0], args[1])
