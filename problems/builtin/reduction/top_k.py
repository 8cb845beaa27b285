"""top-k: the k largest values of each row, sorted descending, with their column indices."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DType, Param
from problems.builtin.reduction._dim import distinct_normal
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


class TopK(KernelProblem):
    slug = "top-k"
    title = "Top-k Per Row"
    description = (
        "For each row of an n×m row-major matrix, write its k largest values in descending order to row i of "
        "`values` (n×k) and their column indices, as `int`, to row i of `indices` (n×k). Values never tie "
        "within a row, so both outputs have one right answer; indices are checked exactly. k is at most 64, "
        "rows are up to 32771 long."
    )
    tags = ("reduction", "sorting")
    difficulty = "medium"
    dtypes = ("float32",)
    parameters = (
        Param("input", "input", doc="n×m, row-major"),
        Param("values", "output", doc="n×k, each row descending"),
        Param("indices", "output", doc="n×k column indices of `values`", element="int32"),
        Param("n", "scalar", "size_t", "rows"),
        Param("m", "scalar", "size_t", "columns"),
        Param("k", "scalar", "size_t", "values kept per row, k ≤ m"),
    )
    # (n, m, k): a ragged case, square, long ragged rows, the largest.
    gpu_cases = ((1000, 1003, 7), (4096, 4096, 16), (1021, 32771, 50), (8192, 8192, 64))
    cpu_cases = ((7, 33, 3), (64, 100, 10), (129, 1000, 33))
    dim_names = ("n", "m", "k")
    flops_formula = "n · m (at least one compare per element)"
    bytes_formula = "4 · n · m + 8 · n · k (read the matrix, write values and indices)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        n, m, k = dims
        return {"input": (n, m), "values": (n, k), "indices": (n, k)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        n, m, _ = dims
        return n * m

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        n, m, _ = dims
        return (distinct_normal((n, m), 1, gen),)

    def reference_solution(self, *args: Any) -> tuple[torch.Tensor, torch.Tensor]:
        import torch

        x, k = args[0], args[3]
        values, indices = torch.topk(x, k, dim=1, largest=True, sorted=True)
        return values.double(), indices.to(torch.int32)
