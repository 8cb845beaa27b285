"""transpose: B = Aᵀ with A of rows×cols row-major."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.base import ELEMENT_BYTES, DeviceKind, DType, Param, Problem, TestCase
from problems.inputs import normal_case

if TYPE_CHECKING:
    import torch

GPU_DIMS = ((1000, 1500), (2048, 4096), (4096, 4096), (8192, 8192))
CPU_DIMS = ((37, 53), (256, 300), (1024, 768))


class Transpose(Problem):
    slug = "transpose"
    title = "Matrix transpose"
    description = (
        "Transpose a rows×cols matrix into a cols×rows one: `output_b[j][i] = input_a[i][j]`. "
        "Both matrices are row-major and contiguous. There is no arithmetic: the score is memory bandwidth (GB/s)."
    )
    tags = ("memory-bound", "data-movement")
    difficulty = "easy"
    parameters = (
        Param("input_a", "input"),
        Param("output_b", "output"),
        Param("rows", "scalar", "size_t", "rows of A, columns of B"),
        Param("cols", "scalar", "size_t", "columns of A, rows of B"),
    )
    flops_formula = "0 (no arithmetic; scored in GB/s)"
    bytes_formula = "2 · rows · cols · sizeof(dtype) (read A, write B)"
    score_metric = "gbps"
    # A transpose copies values exactly, so any tolerance accepts a correct solution and rejects a wrong one.

    def reference_solution(self, *inputs: torch.Tensor) -> torch.Tensor:
        (a,) = inputs
        return a.double().t().contiguous()

    def generate_test_cases(self, dtype: DType, device_kind: DeviceKind = "gpu") -> list[TestCase]:
        dims = GPU_DIMS if device_kind == "gpu" else CPU_DIMS
        return [normal_case(f"{r}x{c}", (r, c), [(r, c)], dtype) for r, c in dims]

    def get_flops(self, test_case: TestCase) -> int:
        return 0

    def get_bytes(self, test_case: TestCase, dtype: DType) -> int:
        rows, cols = test_case["dims"]
        return 2 * rows * cols * ELEMENT_BYTES[dtype]

    def get_extra_params(self, test_case: TestCase) -> list[int | float]:
        rows, cols = test_case["dims"]
        return [rows, cols]
