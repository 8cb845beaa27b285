"""array-sort: sort n int32 values into ascending order."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DType, Param
from problems.builtin.sort._sort import SortProblem, random_int32
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class ArraySort(SortProblem):
    slug = "array-sort"
    title = "Array Sorting"
    description = (
        "Sort n 32-bit signed integers into ascending order: `b` holds the values of `a` from smallest to largest. "
        "Values span the whole int32 range, negatives included, and n is not a multiple of any block size. The "
        "output is checked exactly."
    )
    difficulty = "easy"
    parameters = (
        Param("a", "input", doc="n int32 values", element="int32"),
        Param("b", "output", doc="the same n values, ascending", element="int32"),
        Param("n", "scalar", "size_t", "elements"),
    )
    bytes_formula = "2 · n · 4 (read the input, write the sorted output)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        (n,) = dims
        return {"a": (n,), "b": (n,)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        return (random_int32(dims[0], gen),)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        return args[0].sort().values
