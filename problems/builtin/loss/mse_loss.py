"""mse-loss: the mean of the squared differences of two tensors of any shape, one number."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


class MseLoss(KernelProblem):
    slug = "mse-loss"
    # Version 1 passed `shape` in device memory; Tensara's solutions read it on the host.
    version = 2
    title = "Mean Squared Error Loss"
    description = (
        "Write the mean squared error of two tensors of the same shape to `output[0]`: "
        "`sum_i (predictions[i] - targets[i])² / numel`, where numel is the product of the `ndim` sizes in "
        "`shape`, an array of size_t in host memory (read it in `solution`'s host code, not in a kernel). The "
        "tensors are contiguous, so the shape only fixes the element count; the ranks differ between cases. The "
        "sum runs over the whole tensor, so the blocks of a kernel must combine their partial sums; the "
        "tolerance admits float32 partial sums combined in any order."
    )
    tags = ("loss-function", "reduction", "memory-bound")
    difficulty = "easy"
    dtypes = ("float32",)
    parameters = (
        Param("predictions", "input", doc="the tensor of sizes `shape`, contiguous"),
        Param("targets", "input", doc="same shape as predictions"),
        Param("output", "output", doc="1 value: the mean squared error"),
        Param("shape", "array", "size_t", "the tensors' sizes, `ndim` of them", memory="host"),
        Param("ndim", "scalar", "size_t", "the tensors' rank"),
    )
    gpu_cases = ((1000, 1003), (4, 33, 129, 127), (4096, 4096), (64, 1024, 1024))
    cpu_cases = ((7, 33), (5, 9, 13), (4, 5, 6, 50))
    flops_formula = "3 · numel (subtract, square and add per element)"
    bytes_formula = "2 · numel · sizeof(dtype) (read both tensors; the single output is not counted)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        return {"predictions": dims, "targets": dims, "output": (1,)}

    def extras(self, dims: Dims) -> list[Any]:
        return [list(dims), len(dims)]

    def flops(self, dims: Dims) -> int:
        return 3 * math.prod(dims)

    def moved_bytes(self, dims: Dims, dtype: Any) -> int:
        from problems.base import ELEMENT_BYTES

        return 2 * math.prod(dims) * ELEMENT_BYTES[dtype]

    def reference_solution(self, *args: Any) -> torch.Tensor:
        p, t = args[0].double(), args[1].double()
        return (p - t).square().mean().reshape(1)
