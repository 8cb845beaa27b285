"""matmul: C = A · B with A of M×K and B of K×N, all row-major."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from problems.base import ELEMENT_BYTES, DeviceKind, DType, Param, Problem, TestCase, Tolerance
from problems.inputs import normal_case

if TYPE_CHECKING:
    import torch

GPU_DIMS = ((512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096))
CPU_DIMS = ((64, 64, 64), (128, 96, 160), (256, 256, 256))


class Matmul(Problem):
    slug = "matmul"
    title = "Matrix multiplication"
    description = (
        "Multiply an M×K matrix by a K×N matrix: `output_c = input_a @ input_b`. "
        "All matrices are row-major and contiguous."
    )
    tags = ("linear-algebra", "compute-bound")
    difficulty = "medium"
    parameters = (
        Param("input_a", "input"),
        Param("input_b", "input"),
        Param("output_c", "output"),
        Param("m", "scalar", "size_t", "rows of A and C"),
        Param("k", "scalar", "size_t", "columns of A, rows of B"),
        Param("n", "scalar", "size_t", "columns of B and C"),
    )
    flops_formula = "2 · M · N · K (a multiply and an add per term)"
    bytes_formula = "(M·K + K·N + M·N) · sizeof(dtype)"
    # The float32 bound admits float32 accumulation in any order but not TF32 operands (about 1e-3 off).
    tolerances: ClassVar[dict[DType, Tolerance]] = {
        "float32": Tolerance(rtol=1e-4, atol=1e-4),
        "float16": Tolerance(rtol=5e-3, atol=5e-3),
        "bfloat16": Tolerance(rtol=2e-2, atol=2e-2),
    }

    def reference_solution(self, *inputs: torch.Tensor) -> torch.Tensor:
        a, b = inputs
        return a.double() @ b.double()

    def generate_test_cases(self, dtype: DType, device_kind: DeviceKind = "gpu") -> list[TestCase]:
        dims = GPU_DIMS if device_kind == "gpu" else CPU_DIMS
        return [normal_case(f"{m}x{k}x{n}", (m, k, n), [(m, k), (k, n)], dtype) for m, k, n in dims]

    def get_flops(self, test_case: TestCase) -> int:
        m, k, n = test_case["dims"]
        return 2 * m * n * k

    def get_bytes(self, test_case: TestCase, dtype: DType) -> int:
        m, k, n = test_case["dims"]
        return (m * k + k * n + m * n) * ELEMENT_BYTES[dtype]

    def get_extra_params(self, test_case: TestCase) -> list[int | float]:
        m, k, n = test_case["dims"]
        return [m, k, n]
