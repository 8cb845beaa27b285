"""clamp: min(max(x, lo), hi) over an n×m matrix with float bounds lo < hi."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DType, Param
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


def case_bounds(dims: Dims) -> tuple[float, float]:
    """The bounds of a case, set by its sizes so that hard-coded bounds fail: multiples of 1/16 (exact in every
    float type), lo in [-1.5, -0.25] and hi in [0.3125, 1.5625]."""
    n, m = dims
    lo = -0.25 - 0.0625 * ((3 * n + m) % 21)
    hi = 0.3125 + 0.0625 * ((n + 5 * m) % 21)
    return lo, hi


class Clamp(KernelProblem):
    slug = "clamp"
    title = "Clamp"
    description = (
        "Clamp every element of a row-major n×m matrix into [lo, hi]: `output = min(max(input, lo), hi)`. The "
        "float bounds come before the output, satisfy `lo < hi` and differ between cases; a good share of the "
        "inputs falls outside each bound."
    )
    tags = ("elementwise", "memory-bound")
    difficulty = "easy"
    parameters = (
        Param("input", "input", doc="n×m, row-major"),
        Param("lo", "scalar", "float", "lower bound"),
        Param("hi", "scalar", "float", "upper bound, greater than lo"),
        Param("output", "output", doc="n×m, row-major"),
        Param("n", "scalar", "size_t", "rows"),
        Param("m", "scalar", "size_t", "columns"),
    )
    gpu_cases = ((1000, 1003), (4096, 4096), (6151, 8191), (16384, 8192))
    cpu_cases = ((7, 33), (129, 257), (512, 1000))
    dim_names = ("n", "m")
    flops_formula = "2 · n · m (a max and a min per element)"
    bytes_formula = "2 · n · m · sizeof(dtype) (read input, write output)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        return {"input": dims, "output": dims}

    def extras(self, dims: Dims) -> list[Any]:
        return [*case_bounds(dims), *dims]

    def flops(self, dims: Dims) -> int:
        n, m = dims
        return 2 * n * m

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        from problems.inputs import randn

        return (randn(dims, dtype, gen, scale=2.0),)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        x, lo, hi = args[0].double(), args[1], args[2]
        return x.clamp(lo, hi)
