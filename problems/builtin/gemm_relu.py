"""gemm_relu: C = relu(A · B) with A of M×K and B of K×N, all row-major."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.base import ELEMENT_BYTES, DeviceKind, DType, Param, Problem, TestCase
from problems.inputs import normal_case

if TYPE_CHECKING:
    import torch

GPU_DIMS = ((1000, 600, 800), (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096))
CPU_DIMS = ((64, 64, 64), (100, 80, 120), (256, 256, 256))


class GemmRelu(Problem):
    slug = "gemm_relu"
    title = "Matrix multiplication fused with ReLU"
    description = (
        "Multiply an M×K matrix by a K×N matrix and apply ReLU to the product: "
        "`output_c = max(input_a @ input_b, 0)`. All matrices are row-major and contiguous. "
        "Fuse the ReLU into the product's epilogue rather than making a second pass."
    )
    tags = ("linear-algebra", "compute-bound", "fusion")
    difficulty = "medium"
    parameters = (
        Param("input_a", "input"),
        Param("input_b", "input"),
        Param("output_c", "output"),
        Param("m", "scalar", "size_t", "rows of A and C"),
        Param("k", "scalar", "size_t", "columns of A, rows of B"),
        Param("n", "scalar", "size_t", "columns of B and C"),
    )
    flops_formula = "2 · M · N · K + M · N (a multiply and an add per term, one max per output)"
    bytes_formula = "(M·K + K·N + M·N) · sizeof(dtype)"
    # Default tolerances, as for matmul: the float32 bound admits float32 accumulation in any order but not TF32
    # operands. relu(a @ b) in the dtype used at most 12% (float32), 8% (float16) and 17% (bfloat16) of the bound on
    # the GPU cases on an H100.

    def reference_solution(self, *inputs: torch.Tensor) -> torch.Tensor:
        a, b = inputs
        return (a.double() @ b.double()).clamp_min(0.0)

    def generate_test_cases(self, dtype: DType, device_kind: DeviceKind = "gpu") -> list[TestCase]:
        dims = GPU_DIMS if device_kind == "gpu" else CPU_DIMS
        return [normal_case(f"{m}x{k}x{n}", (m, k, n), [(m, k), (k, n)], dtype) for m, k, n in dims]

    def get_flops(self, test_case: TestCase) -> int:
        m, k, n = test_case["dims"]
        return 2 * m * n * k + m * n

    def get_bytes(self, test_case: TestCase, dtype: DType) -> int:
        m, k, n = test_case["dims"]
        return (m * k + k * n + m * n) * ELEMENT_BYTES[dtype]

    def get_extra_params(self, test_case: TestCase) -> list[int | float]:
        m, k, n = test_case["dims"]
        return [m, k, n]
