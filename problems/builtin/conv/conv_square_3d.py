"""conv-square-3d: a size³ volume correlated with an odd K³ kernel, 'same' zero padding, a size³ output."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.conv._conv import TENSARA_CONV_TOLERANCES, TF32_NOTE, same_correlation
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


class ConvSquare3d(KernelProblem):
    slug = "conv-square-3d"
    title = "3D Square Convolution"
    description = (
        "Correlate a cubic volume `A` of size×size×size floats with a cubic kernel `B` of K×K×K floats (K odd) "
        "and write the size×size×size result to `C`: `C[z][y][x] = sum_{a,b,c<K} A[z+a-r][y+b-r][x+c-r] * "
        "B[a][b][c]` with r = (K-1)/2, where voxels outside the volume count as zero ('same' zero padding, "
        "stride 1). The kernel is not flipped. Arrays are row-major (the last index is contiguous)." + TF32_NOTE
    )
    tags = ("convolution", "compute-bound")
    difficulty = "hard"
    dtypes = ("float32",)
    parameters = (
        Param("A", "input", doc="size×size×size volume, row-major"),
        Param("B", "input", doc="K×K×K kernel, row-major"),
        Param("C", "output", doc="size×size×size, row-major"),
        Param("size", "scalar", "size_t", "edge of the volume"),
        Param("K", "scalar", "size_t", "edge of the kernel (odd)"),
    )
    # (size, K): ragged edges; the largest does 6.9 GFLOP (its float64 reference takes about 50 ms on an H100).
    gpu_cases = ((33, 3), (64, 5), (127, 7), (168, 9))
    cpu_cases = ((5, 3), (12, 3), (19, 5))
    dim_names = ("size", "K")
    flops_formula = "2 · size³ · K³ (a multiply and an add per tap, taps on the padding included)"
    bytes_formula = "(2 · size³ + K³) · sizeof(float)"
    tolerances = TENSARA_CONV_TOLERANCES

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        s, k = dims
        return {"A": (s, s, s), "B": (k, k, k), "C": (s, s, s)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        s, k = dims
        return 2 * s**3 * k**3

    def reference_solution(self, *args: Any) -> torch.Tensor:
        return same_correlation(args[0], args[1])
