"""matrix_vector: y = A · x with A of M×N row-major and x of N."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.base import ELEMENT_BYTES, DeviceKind, DType, Param, Problem, TestCase
from problems.inputs import normal_case

if TYPE_CHECKING:
    import torch

GPU_DIMS = ((1000, 3000), (4096, 4096), (256, 65536), (8192, 8192))
CPU_DIMS = ((33, 47), (256, 300), (1024, 1024))


class MatrixVector(Problem):
    slug = "matrix_vector"
    title = "Matrix-vector multiplication"
    description = (
        "Multiply an M×N matrix by a vector of N: `output_y[i] = sum_j input_a[i][j] * input_x[j]` for `i < m`. "
        "The matrix is row-major and contiguous."
    )
    tags = ("linear-algebra", "memory-bound")
    difficulty = "easy"
    parameters = (
        Param("input_a", "input"),
        Param("input_x", "input"),
        Param("output_y", "output"),
        Param("m", "scalar", "size_t", "rows of A, length of y"),
        Param("n", "scalar", "size_t", "columns of A, length of x"),
    )
    flops_formula = "2 · M · N (a multiply and an add per term)"
    bytes_formula = "(M·N + N + M) · sizeof(dtype) (read A and x, write y)"
    # Default tolerances: torch.mv in the dtype used at most 1.3% (float32), 7% (float16) and 14% (bfloat16) of the
    # bound on the GPU cases on an H100.

    def reference_solution(self, *inputs: torch.Tensor) -> torch.Tensor:
        a, x = inputs
        return a.double() @ x.double()

    def generate_test_cases(self, dtype: DType, device_kind: DeviceKind = "gpu") -> list[TestCase]:
        dims = GPU_DIMS if device_kind == "gpu" else CPU_DIMS
        return [normal_case(f"{m}x{n}", (m, n), [(m, n), (n,)], dtype) for m, n in dims]

    def get_flops(self, test_case: TestCase) -> int:
        m, n = test_case["dims"]
        return 2 * m * n

    def get_bytes(self, test_case: TestCase, dtype: DType) -> int:
        m, n = test_case["dims"]
        return (m * n + n + m) * ELEMENT_BYTES[dtype]

    def get_extra_params(self, test_case: TestCase) -> list[int | float]:
        m, n = test_case["dims"]
        return [m, n]
