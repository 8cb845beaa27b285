"""relu: y = max(x, 0) over n elements."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.base import ELEMENT_BYTES, DeviceKind, DType, Param, Problem, TestCase
from problems.inputs import normal_case, pow2_name

if TYPE_CHECKING:
    import torch

GPU_SIZES = (100_003, 1 << 20, 1 << 24, 1 << 26)
CPU_SIZES = (1000, 1 << 14, 1 << 18)


class Relu(Problem):
    slug = "relu"
    title = "ReLU"
    description = "Apply the rectified linear unit elementwise: `output_y[i] = max(input_x[i], 0)` for `i < n`."
    tags = ("elementwise", "memory-bound", "activation")
    difficulty = "easy"
    parameters = (
        Param("input_x", "input"),
        Param("output_y", "output"),
        Param("n", "scalar", "size_t", "number of elements"),
    )
    flops_formula = "n (one max per element)"
    bytes_formula = "2 · n · sizeof(dtype) (read X, write Y)"
    # ReLU is exact in every dtype, so the default tolerances leave an honest solution far inside them.

    def reference_solution(self, *inputs: torch.Tensor) -> torch.Tensor:
        (x,) = inputs
        return x.double().clamp_min(0.0)

    def generate_test_cases(self, dtype: DType, device_kind: DeviceKind = "gpu") -> list[TestCase]:
        sizes = GPU_SIZES if device_kind == "gpu" else CPU_SIZES
        return [normal_case(f"n={pow2_name(n)}", (n,), [(n,)], dtype) for n in sizes]

    def get_flops(self, test_case: TestCase) -> int:
        return test_case["dims"][0]

    def get_bytes(self, test_case: TestCase, dtype: DType) -> int:
        return 2 * test_case["dims"][0] * ELEMENT_BYTES[dtype]

    def get_extra_params(self, test_case: TestCase) -> list[int | float]:
        return [test_case["dims"][0]]
