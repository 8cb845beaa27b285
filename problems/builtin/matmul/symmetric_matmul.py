"""symmetric-matmul: C = A · B for symmetric N×N matrices A and B."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DType, Param, TimeFloor
from problems.builtin.matmul._gemm import CPU_SQUARE, GPU_SQUARE, MatmulProblem, tensara_gemm_tolerances
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class SymmetricMatmul(MatmulProblem):
    slug = "symmetric-matmul"
    title = "Symmetric Matrix Multiplication"
    description = (
        "Multiply two symmetric N×N matrices: `output_c = input_a @ input_b`, where `input_a == input_a.T` and "
        "`input_b == input_b.T`. The product is in general not symmetric: write all N² elements. Matrices are "
        "row-major and contiguous; the symmetry lets a kernel read B by rows where it would read Bᵀ."
    )
    parameters = (
        Param("input_a", "input", doc="N×N, symmetric"),
        Param("input_b", "input", doc="N×N, symmetric"),
        Param("output_c", "output", doc="N×N"),
        Param("n", "scalar", "size_t", "rows and columns of every matrix"),
    )
    gpu_cases = GPU_SQUARE
    cpu_cases = CPU_SQUARE
    dim_names = ("n",)
    flops_formula = "2 · N³ (a multiply and an add per term)"
    bytes_formula = "3 · N² · sizeof(dtype)"
    # Tensara: 1e-2 absolute on outputs in the thousands.
    tolerances = tensara_gemm_tolerances(1e-3)
    time_floor = TimeFloor(read_share=0.5, why="Each symmetric operand is known from one half of it.")

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        import torch

        (n,) = dims

        def symmetric() -> torch.Tensor:
            x = torch.randn((n, n), generator=gen, device=gen.device, dtype=torch.float32)
            # (X + Xᵀ)/√2 keeps unit variance off the diagonal; exact symmetry survives the cast.
            return ((x + x.T) * 2**-0.5).to(torch.float32)

        return symmetric(), symmetric()

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
