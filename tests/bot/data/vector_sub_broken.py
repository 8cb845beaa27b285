"""A problem module whose verification accepts anything: the admission self-test must reject it."""

from __future__ import annotations

from problems.base import ELEMENT_BYTES, DeviceKind, DType, Param, Problem, TestCase
from problems.inputs import normal_case


class BrokenSub(Problem):
    slug = "vector_sub_broken"
    title = "Broken subtraction"
    description = "Its verification accepts anything: an obviously wrong output must not pass admission."
    dtypes = ("float32",)
    parameters = (
        Param("input_a", "input"),
        Param("input_b", "input"),
        Param("output_c", "output"),
        Param("n", "scalar", "size_t", "number of elements"),
    )
    flops_formula = "n"
    bytes_formula = "3 · n · sizeof(dtype)"

    def reference_solution(self, *inputs):
        a, b = inputs
        return a.double() - b.double()

    def verify_result(self, expected_output, actual_output, dtype):
        return True, {}

    def generate_test_cases(self, dtype: DType, device_kind: DeviceKind = "gpu") -> list[TestCase]:
        return [normal_case("n=1000", (1000,), [(1000,), (1000,)], dtype)]

    def get_flops(self, test_case: TestCase) -> int:
        return test_case["dims"][0]

    def get_bytes(self, test_case: TestCase, dtype: DType) -> int:
        return 3 * test_case["dims"][0] * ELEMENT_BYTES[dtype]

    def get_extra_params(self, test_case: TestCase) -> list[int | float]:
        return [test_case["dims"][0]]
