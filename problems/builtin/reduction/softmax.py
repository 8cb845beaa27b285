"""softmax: softmax along one dimension of an N-d tensor whose shape comes as a size_t device array."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DType
from problems.builtin.reduction._dim import DimReduction, dim_signature
from problems.builtin.reduction._rows import ROW_OFFSET, offset_rows
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class Softmax(DimReduction):
    slug = "softmax"
    # Version 1 took (input_x, output_y, rows, cols) and always reduced the last dimension of a matrix.
    version = 2
    title = "Softmax"
    description = (
        "Apply softmax along dimension `dim` of an N-d tensor: for every slice along `dim`, "
        "`output = exp(input - max) / sum(exp(input - max))`, where `max` is the slice's largest value. The "
        "output has the input's shape. The sizes come in `shape`, a device array of `ndim` `size_t` values; "
        f"`dim` may be any dimension. Each slice is shifted by its own offset in [{ROW_OFFSET[0]:g}, "
        f"{ROW_OFFSET[1]:g}), so exp() overflows float32 unless the slice maximum is subtracted first."
    )
    tags = ("activation-function", "normalization", "reduction")
    difficulty = "medium"
    dtypes: ClassVar[tuple[DType, ...]] = ("float32", "float16", "bfloat16")
    parameters = dim_signature("size_t", None, "the input's shape")
    flops_formula = "slices · (5R − 2), R = shape[dim] (max, subtract, exp, sum, divide)"
    bytes_formula = "2 · numel · sizeof(dtype) (read the input, write the output)"
    # Default tolerances: torch.softmax in the dtype uses a small part of the bound on every case.

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        shape = tuple(dims[1:])
        return {"input": shape, "output": shape}

    def flops(self, dims: Dims) -> int:
        dim, *shape = dims
        return math.prod(shape) // shape[dim] * (5 * shape[dim] - 2)

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        dim, *shape = dims
        return (offset_rows(tuple(shape), dim, dtype, gen),)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        x, dim = args[0], args[1]
        return x.double().softmax(dim=dim)
