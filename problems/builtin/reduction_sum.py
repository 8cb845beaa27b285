"""reduction_sum: the sum of n elements, written to a one-element output."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from problems.base import ELEMENT_BYTES, DeviceKind, DType, Param, Problem, TestCase
from problems.inputs import custom_case, pow2_name, randn, torch_dtype

if TYPE_CHECKING:
    import torch

GPU_SIZES = (100_003, 1 << 20, 1 << 24, 1 << 26)
CPU_SIZES = (1000, 1 << 14, 1 << 18)
# The inputs are drawn so that their sum is TOTAL ± TOTAL/8 (one standard deviation) whatever n is: far from zero,
# so the relative check on the one output is meaningful, and small enough for float16 (max 65504).
TOTAL = 1024.0


def _sum_case(n: int, dtype: DType) -> TestCase:
    def create(gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        values = randn((n,), "float32", gen, scale=TOTAL / (8 * math.sqrt(n)))
        return (values.add_(TOTAL / n).to(torch_dtype(dtype)),)

    return custom_case(f"n={pow2_name(n)}", (n,), dtype, create)


class ReductionSum(Problem):
    slug = "reduction_sum"
    title = "Sum reduction"
    description = (
        "Sum n elements into one: `output_sum[0] = input_x[0] + input_x[1] + ... + input_x[n-1]`. "
        "Inputs are signed, with mean 1024/n and spread 128/√n, so the sum is about 1024 in every case. "
        "Accumulate in float32 (or better) whatever the dtype; the order of the additions is free."
    )
    tags = ("reduction", "memory-bound")
    difficulty = "easy"
    parameters = (
        Param("input_x", "input"),
        Param("output_sum", "output"),
        Param("n", "scalar", "size_t", "number of elements"),
    )
    flops_formula = "n (one add per element into the accumulator)"
    bytes_formula = "(n + 1) · sizeof(dtype) (read X, write the one sum)"
    # The single output's RMS is |sum| itself, so the defaults make the check relative: 2e-4 of the sum in float32
    # (any float32 summation order is within about 1e-6 here), 1e-2 in float16 and 4e-2 in bfloat16 (one rounding
    # of the result to the dtype is at most 5e-4 and 4e-3 of it). torch.sum in the dtype used at most 0.05%, 3% and
    # 9% of the bound on the GPU cases on an H100.

    def reference_solution(self, *inputs: torch.Tensor) -> torch.Tensor:
        (x,) = inputs
        return x.double().sum().reshape(1)

    def generate_test_cases(self, dtype: DType, device_kind: DeviceKind = "gpu") -> list[TestCase]:
        sizes = GPU_SIZES if device_kind == "gpu" else CPU_SIZES
        return [_sum_case(n, dtype) for n in sizes]

    def get_flops(self, test_case: TestCase) -> int:
        return test_case["dims"][0]

    def get_bytes(self, test_case: TestCase, dtype: DType) -> int:
        return (test_case["dims"][0] + 1) * ELEMENT_BYTES[dtype]

    def get_extra_params(self, test_case: TestCase) -> list[int | float]:
        return [test_case["dims"][0]]
