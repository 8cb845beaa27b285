"""The triangular products: A and B both lower (or both upper) triangular N×N, so C = A · B is too."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DType, Param, TimeFloor
from problems.builtin.matmul._gemm import CPU_SQUARE, GPU_SQUARE, MatmulProblem, tensara_gemm_tolerances
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class TriangularMatmul(MatmulProblem):
    """C = A · B with A and B triangular on the side `lower` names; the other side of C must hold zeros."""

    lower: ClassVar[bool]
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("input_a", "input", doc="N×N, triangular (zeros on the other side)"),
        Param("input_b", "input", doc="N×N, triangular (zeros on the other side)"),
        Param("output_c", "output", doc="N×N, triangular: write the zeros too"),
        Param("n", "scalar", "size_t", "rows and columns of every matrix"),
    )
    gpu_cases = GPU_SQUARE
    cpu_cases = CPU_SQUARE
    dim_names = ("n",)
    flops_formula = "N·(N+1)·(N+2) / 3 (a multiply and an add for each of the N(N+1)(N+2)/6 nonzero terms)"
    bytes_formula = "3 · N² · sizeof(dtype)"
    # Tensara: 1e-2 absolute on outputs of RMS 6.2 (N = 2048).
    tolerances = tensara_gemm_tolerances(2e-3)
    time_floor = TimeFloor(read_share=0.5, why="The zeros on the other side of each operand need not be read.")

    def triangle(self, x: torch.Tensor) -> torch.Tensor:
        return x.tril() if self.lower else x.triu()

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        from problems.inputs import randn

        (n,) = dims
        return self.triangle(randn((n, n), dtype, gen)), self.triangle(randn((n, n), dtype, gen))

    def reference_solution(self, *args: Any) -> torch.Tensor:
        # The product of two lower (upper) triangular matrices is exactly lower (upper) triangular.
        return args[0].double() @ args[1].double()

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        (n,) = dims
        return {"input_a": (n, n), "input_b": (n, n), "output_c": (n, n)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        (n,) = dims
        return n * (n + 1) * (n + 2) // 3
