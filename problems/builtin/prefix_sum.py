"""prefix_sum: the inclusive scan of n elements."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from problems.base import ELEMENT_BYTES, DeviceKind, DType, Param, Problem, TestCase
from problems.inputs import normal_case, pow2_name

if TYPE_CHECKING:
    import torch

GPU_SIZES = (100_003, 1 << 20, 1 << 22, 1 << 24)
CPU_SIZES = (1000, 1 << 14, 1 << 18)


class PrefixSum(Problem):
    slug = "prefix_sum"
    title = "Prefix sum (inclusive scan)"
    description = (
        "Compute the inclusive prefix sum of n elements: "
        "`output_y[i] = input_x[0] + input_x[1] + ... + input_x[i]` for `i < n`. "
        "Inputs are standard normal, so the running sum wanders like a random walk of size about √n."
    )
    tags = ("scan", "memory-bound")
    difficulty = "medium"
    parameters = (
        Param("input_x", "input"),
        Param("output_y", "output"),
        Param("n", "scalar", "size_t", "number of elements"),
    )
    flops_formula = "n (one add per element, as a sequential scan does)"
    bytes_formula = "2 · n · sizeof(dtype) (read X, write Y)"
    # float32 only. The outputs wander to about 4·√n, and a half-precision scan that carries its running sums in the
    # dtype drifts past any tolerance that still means something: torch.cumsum on an H100 is off by up to 2x the
    # default float16 bound and 4x the bfloat16 one on these sizes. In float32 it uses about 1% of the default bound.
    dtypes: ClassVar[tuple[DType, ...]] = ("float32",)

    def reference_solution(self, *inputs: torch.Tensor) -> torch.Tensor:
        (x,) = inputs
        return x.double().cumsum(dim=0)

    def generate_test_cases(self, dtype: DType, device_kind: DeviceKind = "gpu") -> list[TestCase]:
        sizes = GPU_SIZES if device_kind == "gpu" else CPU_SIZES
        return [normal_case(f"n={pow2_name(n)}", (n,), [(n,)], dtype) for n in sizes]

    def get_flops(self, test_case: TestCase) -> int:
        return test_case["dims"][0]

    def get_bytes(self, test_case: TestCase, dtype: DType) -> int:
        return 2 * test_case["dims"][0] * ELEMENT_BYTES[dtype]

    def get_extra_params(self, test_case: TestCase) -> list[int | float]:
        return [test_case["dims"][0]]
