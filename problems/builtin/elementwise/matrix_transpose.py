"""matrix-transpose: B = Aᵀ with A of rows×cols, row-major; scored in GB/s."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


class MatrixTranspose(KernelProblem):
    slug = "matrix-transpose"
    # The seed's `transpose`: the same ABI and cases of the same kind.
    aliases = ("transpose",)
    version = 1
    title = "Matrix Transpose"
    description = (
        "Transpose a rows×cols matrix into a cols×rows one: `output_b[j][i] = input_a[i][j]`. Both matrices are "
        "row-major and contiguous; neither size need be a multiple of a tile. There is no arithmetic: the score "
        "is memory bandwidth (GB/s), so coalesce both the reads and the writes."
    )
    tags = ("data-movement", "elementwise", "memory-bound")
    difficulty = "easy"
    parameters = (
        Param("input_a", "input", doc="rows×cols, row-major"),
        Param("output_b", "output", doc="cols×rows, row-major"),
        Param("rows", "scalar", "size_t", "rows of A, columns of B"),
        Param("cols", "scalar", "size_t", "columns of A, rows of B"),
    )
    # Ragged non-square, powers of two, then a large matrix off every tile size (537 MB moved in float32).
    gpu_cases = ((1000, 1503), (2048, 4096), (4096, 4096), (8191, 8193))
    cpu_cases = ((37, 53), (256, 300), (1024, 768))
    dim_names = ("rows", "cols")
    flops_formula = "0 (no arithmetic; scored in GB/s)"
    bytes_formula = "2 · rows · cols · sizeof(dtype) (read A, write B)"
    score_metric = "gbps"
    # A transpose copies values exactly, so the default tolerance accepts a correct solution and any misplaced
    # element of a normal input is far outside it.

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        rows, cols = dims
        return {"input_a": (rows, cols), "output_b": (cols, rows)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        return 0

    def reference_solution(self, *args: Any) -> torch.Tensor:
        return args[0].double().t().contiguous()
