"""log-softmax: row-wise log-softmax of an M×N matrix."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DType, Param
from problems.builtin.reduction._rows import CPU_MN, GPU_MN, ROW_OFFSET, offset_rows
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


class LogSoftmax(KernelProblem):
    slug = "log-softmax"
    title = "Log Softmax"
    description = (
        "Apply log-softmax to each row of an M×N row-major matrix: "
        "`output[i][j] = input[i][j] - max_i - log(sum_k exp(input[i][k] - max_i))`, where `max_i` is the "
        f"row's largest value. Each row is shifted by its own offset in [{ROW_OFFSET[0]:g}, {ROW_OFFSET[1]:g}), "
        "so exp() overflows float32 unless the row maximum is subtracted first."
    )
    tags = ("activation-function", "reduction", "memory-bound")
    difficulty = "easy"
    dtypes: ClassVar[tuple[DType, ...]] = ("float32", "float16", "bfloat16")
    parameters = (
        Param("input", "input", doc="M×N, row-major"),
        Param("output", "output", doc="M×N, row-major"),
        Param("M", "scalar", "size_t", "rows"),
        Param("N", "scalar", "size_t", "columns: the softmax runs along each row"),
    )
    gpu_cases = GPU_MN
    cpu_cases = CPU_MN
    dim_names = ("M", "N")
    flops_formula = "3 · M · N (per element: exp, add to the sum, subtract)"
    bytes_formula = "2 · M · N · sizeof(dtype) (read the input, write the output)"
    # Default tolerances: the outputs are about -log(N) - 2·|z|, so the atol part (scaled by their RMS of about 10)
    # admits float32 rounding of `x - max - lse` with room, and half-precision outputs round at 5e-4 / 4e-3.

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        return {"input": dims, "output": dims}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        m, n = dims
        return 3 * m * n

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        return (offset_rows(dims, 1, dtype, gen),)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        return args[0].double().log_softmax(dim=1)
