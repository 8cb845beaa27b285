"""vector_sub: C = A - B over n elements (a problem module a moderator adds from Discord in the tests)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.base import ELEMENT_BYTES, DeviceKind, DType, Param, Problem, TestCase
from problems.inputs import normal_case

if TYPE_CHECKING:
    import torch


class VectorSub(Problem):
    slug = "vector_sub"
    title = "Vector subtraction"
    description = "Subtract two vectors elementwise: `output_c[i] = input_a[i] - input_b[i]` for `i < n`."
    tags = ("elementwise", "memory-bound")
    difficulty = "easy"
    dtypes = ("float32",)
    parameters = (
        Param("input_a", "input"),
        Param("input_b", "input"),
        Param("output_c", "output"),
        Param("n", "scalar", "size_t", "number of elements"),
    )
    flops_formula = "n (one subtraction per element)"
    bytes_formula = "3 · n · sizeof(dtype)"

    def reference_solution(self, *inputs: torch.Tensor) -> torch.Tensor:
        a, b = inputs
        return a.double() - b.double()

    def generate_test_cases(self, dtype: DType, device_kind: DeviceKind = "gpu") -> list[TestCase]:
        sizes = (1 << 20, 1 << 24) if device_kind == "gpu" else (1000, 1 << 14)
        return [normal_case(f"n={n}", (n,), [(n,), (n,)], dtype) for n in sizes]

    def get_flops(self, test_case: TestCase) -> int:
        return test_case["dims"][0]

    def get_bytes(self, test_case: TestCase, dtype: DType) -> int:
        return 3 * test_case["dims"][0] * ELEMENT_BYTES[dtype]

    def get_extra_params(self, test_case: TestCase) -> list[int | float]:
        return [test_case["dims"][0]]
