"""softmax-temperature: row-wise softmax of input / T for a float temperature T."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DType, Param
from problems.builtin.reduction._rows import CPU_MN, GPU_MN, ROW_OFFSET, offset_rows
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


def case_temperature(dims: Dims) -> float:
    """0.5 to 2.0 in steps of 0.25, set by the sizes: no single constant (and not 1) passes every case."""
    m, n = dims
    return 0.5 + 0.25 * ((m + n) % 7)


class SoftmaxTemperature(KernelProblem):
    slug = "softmax-temperature"
    title = "Softmax With Temperature"
    description = (
        "Apply softmax to each row of an M×N row-major matrix after dividing it by a temperature T: "
        "`output[i][j] = exp((input[i][j] - max_i) / T) / sum_k exp((input[i][k] - max_i) / T)`, where `max_i` "
        "is the row's largest value. T is a positive float parameter that differs between cases (0.5 to 2). "
        f"Each row is shifted by its own offset in [{ROW_OFFSET[0]:g}, {ROW_OFFSET[1]:g}), so exp() overflows "
        "float32 unless the row maximum is subtracted first. Compute in float32 whatever the dtype."
    )
    tags = ("activation-function", "reduction", "memory-bound")
    difficulty = "easy"
    dtypes: ClassVar[tuple[DType, ...]] = ("float32", "float16", "bfloat16")
    parameters = (
        Param("input", "input", doc="M×N, row-major"),
        Param("temperature", "scalar", "float", "T > 0: the logits are divided by it"),
        Param("output", "output", doc="M×N, row-major"),
        Param("M", "scalar", "size_t", "rows"),
        Param("N", "scalar", "size_t", "columns: the softmax runs along each row"),
    )
    gpu_cases = GPU_MN
    cpu_cases = CPU_MN
    dim_names = ("M", "N")
    flops_formula = "6 · M · N (per element: max, subtract, scale, exp, sum, divide)"
    bytes_formula = "2 · M · N · sizeof(dtype) (read the input, write the output)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        return {"input": dims, "output": dims}

    def extras(self, dims: Dims) -> list[Any]:
        return [case_temperature(dims), *dims]

    def flops(self, dims: Dims) -> int:
        m, n = dims
        return 6 * m * n

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        return (offset_rows(dims, 1, dtype, gen),)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        x, temperature = args[0], args[1]
        return (x.double() / temperature).softmax(dim=1)
