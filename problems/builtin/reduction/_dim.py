"""The reductions over one dimension of an N-d tensor: the signature passes the shape as a device array.

A case is `(dim, *shape)`. Tensara's signature family: `(input, dim, output, shape, ndim)`, with `int`
for argmax/argmin and `size_t` for the others (`shape_type`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DType, Param
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch

# (dim, *shape): ragged 2-d and 3-d shapes, reductions over the first, middle and last dimension.
GPU_CASES: tuple[Dims, ...] = ((1, 1000, 1003), (0, 4097, 2000), (1, 64, 1025, 513), (2, 32, 1024, 4096))
CPU_CASES: tuple[Dims, ...] = ((1, 7, 33), (1, 5, 67, 9), (0, 129, 65))


def dim_signature(index_type: str, output_element: str | None) -> tuple[Param, ...]:
    """The family's parameter list: `index_type` for the shape's elements and `ndim` (`int` for argmax and
    argmin, `size_t` for the others), and the output's element type (None: the problem's dtype)."""
    return (
        Param("input", "input", doc="the N-d input, row-major"),
        Param("dim", "scalar", "int", "the dimension to reduce"),
        Param("output", "output", doc="the input's shape without `dim`", element=output_element),  # type: ignore[arg-type]
        Param("shape", "array", index_type, "the input's sizes, `ndim` of them"),  # type: ignore[arg-type]
        Param("ndim", "scalar", index_type, "the input's rank"),  # type: ignore[arg-type]
    )


class DimReduction(KernelProblem):
    """A reduction over dimension `dim` of an input whose shape and rank come as parameters."""

    tags: ClassVar[tuple[str, ...]] = ("reduction",)
    difficulty = "easy"
    dtypes: ClassVar[tuple[DType, ...]] = ("float32",)
    gpu_cases = GPU_CASES
    cpu_cases = CPU_CASES
    bytes_formula = "(numel + outputs) · element size (read the input once, write each output)"

    def case_name(self, dims: Dims) -> str:
        dim, *shape = dims
        return f"{'x'.join(map(str, shape))},dim={dim}"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        dim, *shape = dims
        out = tuple(s for i, s in enumerate(shape) if i != dim)
        return {"input": tuple(shape), "output": out}

    def extras(self, dims: Dims) -> list[Any]:
        dim, *shape = dims
        return [dim, list(shape), len(shape)]

    def flops(self, dims: Dims) -> int:
        dim, *shape = dims
        return math.prod(shape) // shape[dim] * (shape[dim] - 1)

    def reduce(self, x: torch.Tensor, dim: int) -> torch.Tensor:
        raise NotImplementedError

    def reference_solution(self, *args: Any) -> torch.Tensor:
        x, dim = args[0], args[1]
        return self.reduce(x, dim)
