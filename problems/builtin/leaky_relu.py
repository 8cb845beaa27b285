"""leaky_relu: y = x for x > 0, else alpha · x, over n elements."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.base import ELEMENT_BYTES, DeviceKind, DType, Param, Problem, TestCase
from problems.inputs import normal_case, pow2_name

if TYPE_CHECKING:
    import torch

GPU_SIZES = (100_003, 1 << 20, 1 << 24, 1 << 26)
CPU_SIZES = (1000, 1 << 14, 1 << 18)
# The negative slope passed as the `alpha` parameter in every case.
ALPHA = 0.01


class LeakyRelu(Problem):
    slug = "leaky_relu"
    title = "Leaky ReLU"
    description = (
        "Apply the leaky rectified linear unit elementwise for `i < n`: "
        "`output_y[i] = input_x[i]` if `input_x[i] > 0`, else `alpha * input_x[i]`. "
        f"`alpha` is a float parameter ({ALPHA} in every test case)."
    )
    tags = ("elementwise", "memory-bound", "activation")
    difficulty = "easy"
    parameters = (
        Param("input_x", "input"),
        Param("output_y", "output"),
        Param("n", "scalar", "size_t", "number of elements"),
        Param("alpha", "scalar", "float", "slope for negative inputs"),
    )
    flops_formula = "n (one compare-and-scale per element, counted as one operation)"
    bytes_formula = "2 · n · sizeof(dtype) (read X, write Y)"
    # Half-precision solutions round alpha · x once (alpha itself may be rounded too): about 1e-3 relative at
    # most, well inside the default tolerances.

    def reference_solution(self, *inputs: torch.Tensor) -> torch.Tensor:
        (x,) = inputs
        x = x.double()
        return x.where(x > 0, x * ALPHA)

    def generate_test_cases(self, dtype: DType, device_kind: DeviceKind = "gpu") -> list[TestCase]:
        sizes = GPU_SIZES if device_kind == "gpu" else CPU_SIZES
        return [normal_case(f"n={pow2_name(n)}", (n,), [(n,)], dtype) for n in sizes]

    def get_flops(self, test_case: TestCase) -> int:
        return test_case["dims"][0]

    def get_bytes(self, test_case: TestCase, dtype: DType) -> int:
        return 2 * test_case["dims"][0] * ELEMENT_BYTES[dtype]

    def get_extra_params(self, test_case: TestCase) -> list[int | float]:
        return [test_case["dims"][0], ALPHA]
