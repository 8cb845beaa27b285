"""layernorm: layer normalization of each row of a rows×cols matrix, with a per-column scale and shift."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.base import ELEMENT_BYTES, DeviceKind, DType, Param, Problem, TestCase
from problems.inputs import custom_case, randn, torch_dtype, uniform

if TYPE_CHECKING:
    import torch

GPU_DIMS = ((1000, 768), (4096, 1024), (4096, 4096), (8192, 8192))
CPU_DIMS = ((7, 33), (128, 768), (512, 1024))
# The epsilon passed as the `eps` parameter in every case.
EPS = 1e-5


def _layernorm_case(rows: int, cols: int, dtype: DType) -> TestCase:
    def create(gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        # Rows with their own spread in [0.5, 2) and offset in [-4, 4): a variance formula that cancels badly shows.
        x = randn((rows, cols), "float32", gen)
        x *= uniform((rows, 1), "float32", gen, 0.5, 2.0)
        x += uniform((rows, 1), "float32", gen, -4.0, 4.0)
        gamma = randn((cols,), dtype, gen)
        beta = randn((cols,), dtype, gen)
        return (x.to(torch_dtype(dtype)), gamma, beta)

    return custom_case(f"{rows}x{cols}", (rows, cols), dtype, create)


class LayerNorm(Problem):
    slug = "layernorm"
    title = "Layer normalization"
    description = (
        "Normalize each row of a rows×cols matrix, then scale and shift it per column: "
        "`output_y[i][j] = (input_x[i][j] - mean_i) / sqrt(var_i + eps) * input_gamma[j] + input_beta[j]`, "
        "where `mean_i` and `var_i` are the mean and the biased variance (divided by cols) of row i. "
        f"`eps` is a float parameter ({EPS:g} in every test case). Matrices are row-major and contiguous."
    )
    tags = ("normalization", "reduction", "memory-bound")
    difficulty = "medium"
    parameters = (
        Param("input_x", "input"),
        Param("input_gamma", "input"),
        Param("input_beta", "input"),
        Param("output_y", "output"),
        Param("rows", "scalar", "size_t", "number of rows"),
        Param("cols", "scalar", "size_t", "elements per row (the normalized dimension)"),
        Param("eps", "scalar", "float", "added to the variance before the square root"),
    )
    flops_formula = (
        "8 · rows · cols (per element: 1 add for the mean; subtract, square and add for the variance; "
        "subtract and multiply by 1/σ to normalize; multiply by gamma and add beta. "
        "The per-row divisions, eps and square root are not counted)"
    )
    bytes_formula = "(2 · rows · cols + 2 · cols) · sizeof(dtype) (read X, gamma and beta, write Y)"
    # Default tolerances: F.layer_norm in the dtype used at most 2% (float32), 8% (float16) and 17% (bfloat16) of the
    # bound on the GPU cases on an H100.

    def reference_solution(self, *inputs: torch.Tensor) -> torch.Tensor:
        x, gamma, beta = (t.double() for t in inputs)
        mean = x.mean(dim=-1, keepdim=True)
        var = (x - mean).square().mean(dim=-1, keepdim=True)
        return (x - mean) / (var + EPS).sqrt() * gamma + beta

    def generate_test_cases(self, dtype: DType, device_kind: DeviceKind = "gpu") -> list[TestCase]:
        dims = GPU_DIMS if device_kind == "gpu" else CPU_DIMS
        return [_layernorm_case(rows, cols, dtype) for rows, cols in dims]

    def get_flops(self, test_case: TestCase) -> int:
        rows, cols = test_case["dims"]
        return 8 * rows * cols

    def get_bytes(self, test_case: TestCase, dtype: DType) -> int:
        rows, cols = test_case["dims"]
        return (2 * rows * cols + 2 * cols) * ELEMENT_BYTES[dtype]

    def get_extra_params(self, test_case: TestCase) -> list[int | float]:
        rows, cols = test_case["dims"]
        return [rows, cols, EPS]
