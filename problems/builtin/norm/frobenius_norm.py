"""frobenius-norm: divide every element of a tensor by the tensor's Frobenius norm."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DEFAULT_TOLERANCES, DType, Param, Tolerance
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


class FrobeniusNorm(KernelProblem):
    slug = "frobenius-norm"
    title = "Frobenius Normalization"
    description = (
        "Divide every element of a tensor by the square root of the sum of the squares of all its elements: "
        "`Y = X / sqrt(sum_i X[i]²)`, with no epsilon (the tests never draw an all-zero tensor). The tensor has "
        "`size` elements, contiguous; its shape does not matter, since every element gets the same factor. "
        "The sum runs over the whole tensor, so the blocks of a kernel must combine their partial sums."
    )
    tags = ("normalization", "reduction", "memory-bound")
    difficulty = "easy"
    dtypes = ("float32",)
    parameters = (
        Param("X", "input", doc="`size` elements, contiguous"),
        Param("Y", "output", doc="`size` elements, contiguous"),
        Param("size", "scalar", "size_t", "number of elements"),
    )
    # Shapes of several ranks (only the element count reaches the kernel), a ragged one first.
    gpu_cases = ((1000, 1003), (33, 257, 255), (4096, 4096), (32, 1024, 1024))
    cpu_cases = ((7, 33), (5, 9, 13), (64, 1000))
    flops_formula = "3 · size + 4 (square, add and divide per element; the root and its setup once)"
    bytes_formula = "2 · size · sizeof(dtype) (read X, write Y)"
    # Tensara: allclose(rtol=1e-3, atol=1e-2) on outputs near 5e-4, so its atol accepted zeros; ours keeps its own.
    tolerances: ClassVar[dict[DType, Tolerance]] = {
        **DEFAULT_TOLERANCES,
        "float32": Tolerance(rtol=1e-3, atol=1e-4),
    }

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        return {"X": dims, "Y": dims}

    def extras(self, dims: Dims) -> list[Any]:
        return [math.prod(dims)]

    def flops(self, dims: Dims) -> int:
        return 3 * math.prod(dims) + 4

    def reference_solution(self, *args: Any) -> torch.Tensor:
        x = args[0].double()
        return x / x.square().sum().sqrt()
