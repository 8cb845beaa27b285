"""square-matmul: C = A · B for N×N matrices, parameter n."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DTYPES, Param
from problems.builtin.matmul._gemm import CPU_SQUARE, GPU_SQUARE, MatmulProblem, tensara_gemm_tolerances
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class SquareMatmul(MatmulProblem):
    slug = "square-matmul"
    title = "Square Matrix Multiplication"
    description = (
        "Multiply two N×N matrices: `output_c = input_a @ input_b`. All three matrices are row-major and "
        "contiguous. N is not always a multiple of a tile size: handle the tails in both dimensions and in the "
        "inner loop."
    )
    dtypes = DTYPES
    parameters = (
        Param("input_a", "input", doc="N×N"),
        Param("input_b", "input", doc="N×N"),
        Param("output_c", "output", doc="N×N"),
        Param("n", "scalar", "size_t", "rows and columns of every matrix"),
    )
    gpu_cases = GPU_SQUARE
    cpu_cases = CPU_SQUARE
    dim_names = ("n",)
    flops_formula = "2 · N³ (a multiply and an add per term)"
    bytes_formula = "3 · N² · sizeof(dtype)"
    # Tensara: 1e-2 absolute on outputs of RMS 21 (N = 4096).
    tolerances = tensara_gemm_tolerances(1e-3)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        return args[0].double() @ args[1].double()

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        (n,) = dims
        return {"input_a": (n, n), "input_b": (n, n), "output_c": (n, n)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        (n,) = dims
        return 2 * n**3
