"""vector-sum: the sum of n elements, written to a one-element output."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from problems.base import DType, Param
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch

# The inputs are drawn so that their sum is TOTAL ± TOTAL/8 (one standard deviation) whatever n is: far from zero,
# so the relative check on the one output is meaningful, and small enough for float16 (max 65504).
TOTAL = 1024.0


class VectorSum(KernelProblem):
    slug = "vector-sum"
    aliases = ("reduction_sum",)
    title = "Vector Sum"
    description = (
        "Sum n elements into one: `output_sum[0] = input_x[0] + input_x[1] + ... + input_x[n-1]`. "
        "Inputs are signed, with mean 1024/n and spread 128/√n, so the sum is about 1024 in every case. "
        "Accumulate in float32 (or better) whatever the dtype; the order of the additions is free."
    )
    tags = ("reduction", "memory-bound")
    difficulty = "easy"
    parameters = (
        Param("input_x", "input", doc="n elements"),
        Param("output_sum", "output", doc="one element: the sum"),
        Param("n", "scalar", "size_t", "number of elements"),
    )
    gpu_cases = ((100_003,), (1 << 20,), (1 << 24,), (1 << 26,))
    cpu_cases = ((1000,), (16_411,), (1 << 18,))
    dim_names = ("n",)
    flops_formula = "n (one add per element into the accumulator)"
    bytes_formula = "(n + 1) · sizeof(dtype) (read X, write the one sum)"
    # The single output's RMS is |sum| itself, so the defaults make the check relative: 2e-4 of the sum in float32
    # (any float32 summation order is within about 1e-6 here), 1e-2 in float16 and 4e-2 in bfloat16 (one rounding
    # of the result to the dtype is at most 5e-4 and 4e-3 of it). torch.sum in the dtype used at most 0.05%, 3% and
    # 9% of the bound on these sizes on an H100.

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        return {"input_x": dims, "output_sum": (1,)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        return dims[0]

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        from problems.inputs import randn, torch_dtype

        (n,) = dims
        values = randn((n,), "float32", gen, scale=TOTAL / (8 * math.sqrt(n)))
        return (values.add_(TOTAL / n).to(torch_dtype(dtype)),)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        return args[0].double().sum().reshape(1)
