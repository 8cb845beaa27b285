"""softmax: row-wise softmax of a rows×cols matrix."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.base import ELEMENT_BYTES, DeviceKind, DType, Param, Problem, TestCase
from problems.inputs import custom_case, randn, torch_dtype, uniform

if TYPE_CHECKING:
    import torch

GPU_DIMS = ((512, 1000), (4096, 1024), (4096, 4096), (512, 65536), (8192, 8192))
CPU_DIMS = ((7, 33), (64, 1000), (256, 2048))
# Each row is 2·N(0, 1) plus a row offset drawn from [-30, 90): rows whose exp() overflows float32 unless the row
# maximum is subtracted first.
ROW_OFFSET = (-30.0, 90.0)
SPREAD = 2.0


def _softmax_case(rows: int, cols: int, dtype: DType) -> TestCase:
    def create(gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        values = randn((rows, cols), "float32", gen, scale=SPREAD)
        values += uniform((rows, 1), "float32", gen, *ROW_OFFSET)
        return (values.to(torch_dtype(dtype)),)

    return custom_case(f"{rows}x{cols}", (rows, cols), dtype, create)


class Softmax(Problem):
    slug = "softmax"
    title = "Row-wise softmax"
    description = (
        "Apply softmax to each row of a rows×cols matrix: "
        "`output_y[i][j] = exp(input_x[i][j] - max_i) / sum_k exp(input_x[i][k] - max_i)`, "
        "where `max_i` is the largest value in row i. Matrices are row-major and contiguous. "
        "Rows hold values up to about 100, so exp() overflows float32 unless the row maximum is subtracted first."
    )
    tags = ("reduction", "memory-bound", "activation")
    difficulty = "medium"
    parameters = (
        Param("input_x", "input"),
        Param("output_y", "output"),
        Param("rows", "scalar", "size_t", "number of rows"),
        Param("cols", "scalar", "size_t", "elements per row"),
    )
    flops_formula = "5 · rows · cols (per element: max, subtract, exp, sum, divide)"
    bytes_formula = "2 · rows · cols · sizeof(dtype) (read X, write Y)"
    # Default tolerances: torch.softmax in the dtype used at most 0.3% (float32), 10% (float16) and 19% (bfloat16)
    # of the bound on the GPU cases on an H100.

    def reference_solution(self, *inputs: torch.Tensor) -> torch.Tensor:
        (x,) = inputs
        return x.double().softmax(dim=-1)

    def generate_test_cases(self, dtype: DType, device_kind: DeviceKind = "gpu") -> list[TestCase]:
        dims = GPU_DIMS if device_kind == "gpu" else CPU_DIMS
        return [_softmax_case(rows, cols, dtype) for rows, cols in dims]

    def get_flops(self, test_case: TestCase) -> int:
        rows, cols = test_case["dims"]
        return 5 * rows * cols

    def get_bytes(self, test_case: TestCase, dtype: DType) -> int:
        rows, cols = test_case["dims"]
        return 2 * rows * cols * ELEMENT_BYTES[dtype]

    def get_extra_params(self, test_case: TestCase) -> list[int | float]:
        rows, cols = test_case["dims"]
        return [rows, cols]
