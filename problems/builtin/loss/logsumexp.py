"""logsumexp: log(sum_j exp(x[i][j])) of each row of an n×m matrix."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DEFAULT_TOLERANCES, DType, Param, Tolerance
from problems.builtin.loss._loss import offset_rows
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


class LogSumExp(KernelProblem):
    slug = "logsumexp"
    title = "Row-wise Log-Sum-Exp"
    description = (
        "For each row i of an n×m matrix, write `output[i] = log(sum_j exp(input[i][j]))` in the input's dtype. "
        "Each row is shifted by its own offset of up to 100, so `exp` overflows unless the row's maximum is "
        "subtracted first: `max_i + log(sum_j exp(input[i][j] - max_i))`. Row-major and contiguous."
    )
    tags = ("reduction", "loss-function", "memory-bound")
    difficulty = "easy"
    dtypes = ("float32", "float16", "bfloat16")
    parameters = (
        Param("input", "input", doc="n×m, row-major"),
        Param("output", "output", doc="n: one value per row"),
        Param("n", "scalar", "size_t", "rows"),
        Param("m", "scalar", "size_t", "elements per row"),
    )
    # A ragged case, square ones, and a few very long rows (fewer rows than an H100 has SMs).
    gpu_cases = ((333, 1021), (4096, 4096), (32, 1_000_003), (8192, 8192))
    cpu_cases = ((7, 33), (64, 130), (16, 5003))
    dim_names = ("n", "m")
    flops_formula = "4 · n · m + 2 · n (max, subtract, exp and add per element; log and add per row)"
    bytes_formula = "(n · m + n) · sizeof(dtype) (read the input, write one value per row)"
    # The outputs carry the row offsets (up to about 110), so the default float32 bound, relative to their RMS,
    # would admit an error of 0.5% in the sum of exponentials; an honest float32 kernel is within 1e-6.
    tolerances: ClassVar[dict[DType, Tolerance]] = {**DEFAULT_TOLERANCES, "float32": Tolerance(rtol=1e-5, atol=1e-5)}

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        n, _ = dims
        return {"input": dims, "output": (n,)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        n, m = dims
        return 4 * n * m + 2 * n

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        n, m = dims
        return (offset_rows(n, m, 3.0, dtype, gen),)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        return args[0].double().logsumexp(dim=1)
