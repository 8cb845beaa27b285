"""The elementwise activation family: `output[i][j] = f(input[i][j])` over an n×m matrix.

Each problem states its function (`apply`, on float64), its operations per element, the spread of its inputs
and, where the signature has one, its scalar; the parameters, cases, byte count and FLOP count follow from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DType, Param
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch

# n×m: a ragged non-square case, then sizes whose largest moves about 1 GB in float32.
GPU_CASES: tuple[Dims, ...] = ((1000, 1003), (4096, 4096), (6151, 8191), (16384, 8192))
CPU_CASES: tuple[Dims, ...] = ((7, 33), (129, 257), (512, 1000))


class Activation(KernelProblem):
    """An activation over an n×m matrix with the signature `(input, output, n, m)`."""

    tags: ClassVar[tuple[str, ...]] = ("activation-function", "elementwise", "memory-bound")
    difficulty = "easy"
    gpu_cases = GPU_CASES
    cpu_cases = CPU_CASES
    dim_names = ("n", "m")
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("input", "input", doc="n×m, row-major"),
        Param("output", "output", doc="n×m, row-major"),
        Param("n", "scalar", "size_t", "rows"),
        Param("m", "scalar", "size_t", "columns"),
    )
    # Operations counted per element (the formula's constant).
    flops_per_element: ClassVar[int] = 1
    bytes_formula = "2 · n · m · sizeof(dtype) (read input, write output)"
    # Standard deviation of the normal inputs: wide enough that saturating functions reach both tails.
    input_scale: ClassVar[float] = 1.0

    def apply(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def reference_solution(self, *args: Any) -> torch.Tensor:
        return self.apply(args[0].double())

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        from problems.inputs import randn

        return (randn(self.shapes(dims)["input"], dtype, gen, scale=self.input_scale),)

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        n, m = dims
        return {"input": (n, m), "output": (n, m)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        n, m = dims
        return self.flops_per_element * n * m
