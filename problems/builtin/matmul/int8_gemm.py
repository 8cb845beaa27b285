"""int8-gemm: C = A · Bᵀ with int8 operands (B stored N×K) and exact int32 accumulation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DType, Param
from problems.builtin.matmul._gemm import CPU_MNK, GPU_MNK, MatmulProblem
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class Int8Gemm(MatmulProblem):
    slug = "int8-gemm"
    title = "INT8 GEMM with INT32 Accumulation"
    description = (
        "Multiply int8 matrices exactly: `output_c[i][j] = sum(input_a[i][k] * input_b[j][k] for k < K)`, "
        "accumulated in int32. A is M×K and B is stored N×K (the layout of a weight, so C = A·Bᵀ and both "
        "operands are read along K); C is M×N int32. Values span the whole int8 range [-128, 127]; the sums fit "
        "in int32 and are checked exactly. Hopper's int8 tensor cores (and `__dp4a`) are made for this."
    )
    tags = ("matmul", "quantization", "compute-bound")
    parameters = (
        Param("input_a", "input", doc="M×K int8", element="int8"),
        Param("input_b", "input", doc="N×K int8 (C = A·Bᵀ)", element="int8"),
        Param("output_c", "output", doc="M×N int32", element="int32"),
        Param("m", "scalar", "size_t", "rows of A and C"),
        Param("n", "scalar", "size_t", "rows of B, columns of C"),
        Param("k", "scalar", "size_t", "columns of A and B"),
    )
    gpu_cases = GPU_MNK
    cpu_cases = CPU_MNK
    dim_names = ("m", "n", "k")
    flops_formula = "2 · M · N · K (integer multiply-adds, counted as two operations each)"
    bytes_formula = "M·K + N·K + 4 · M·N (int8 operands, int32 result)"

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        import torch

        m, n, k = dims

        def draw(shape: tuple[int, int]) -> torch.Tensor:
            return torch.randint(-128, 128, shape, generator=gen, device=gen.device, dtype=torch.int32).to(torch.int8)

        return draw((m, k)), draw((n, k))

    def reference_solution(self, *args: Any) -> torch.Tensor:
        import torch

        # Every partial sum is an integer below 2^27 in magnitude, exact in float64 in any order (and GPUs
        # have no int64 matmul).
        a, b = args[0].double(), args[1].double()
        return (a @ b.T).round().to(torch.int32)

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        m, n, k = dims
        return {"input_a": (m, k), "input_b": (n, k), "output_c": (m, n)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        m, n, k = dims
        return 2 * m * n * k
