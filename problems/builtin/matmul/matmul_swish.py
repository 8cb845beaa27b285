"""matmul-swish: out = scaling_factor · swish(x · Wᵀ + bias), a linear layer (out×in weights)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DType, Param
from problems.builtin.matmul._gemm import MatmulProblem, case_float, linear_weight, tensara_gemm_tolerances
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class MatmulSwish(MatmulProblem):
    slug = "matmul-swish"
    title = "Matrix Multiplication with Swish Activation"
    description = (
        "A linear layer followed by Swish and a scale: with `z = input_matrix @ weight_matrix.T + bias`, "
        "`output = scaling_factor * z * sigmoid(z)`. `input_matrix` is batch_size×in_features, `weight_matrix` "
        "is out_features×in_features (a linear layer's layout), `bias` has out_features values, and `output` is "
        "batch_size×out_features. Row-major and contiguous; `scaling_factor` differs between cases."
    )
    tags = ("matmul", "activation-function", "fused", "compute-bound")
    parameters = (
        Param("input_matrix", "input", doc="batch_size×in_features"),
        Param("weight_matrix", "input", doc="out_features×in_features"),
        Param("bias", "input", doc="out_features"),
        Param("scaling_factor", "scalar", "float", "multiplies the activation"),
        Param("output", "output", doc="batch_size×out_features"),
        Param("batch_size", "scalar", "size_t", "rows of the input and the output"),
        Param("in_features", "scalar", "size_t", "columns of the input and the weight"),
        Param("out_features", "scalar", "size_t", "rows of the weight, columns of the output"),
    )
    # (batch_size, in_features, out_features): ragged, a K tail, a narrow layer, then 137 GFLOP.
    gpu_cases = ((1000, 997, 1003), (1536, 1000, 2048), (4096, 4097, 96), (4096, 4096, 4096))
    cpu_cases = ((17, 7, 33), (64, 130, 96), (129, 255, 127))
    dim_names = ("batch", "in", "out")
    flops_formula = "B · O · (2 · I + 7) (the product, then bias, sigmoid, two multiplies per output)"
    bytes_formula = "(B·I + O·I + O + B·O) · sizeof(dtype)"
    # Tensara: 1e-2 absolute on outputs of RMS 0.092 (its 32×256×128 case).
    tolerances = tensara_gemm_tolerances(0.11)

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        from problems.inputs import randn

        batch, i, o = dims
        return randn((batch, i), dtype, gen), linear_weight((o, i), dtype, gen), randn((o,), dtype, gen)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        x, w, bias = (t.double() for t in args[:3])
        scale = args[3]
        z = x @ w.T + bias
        return scale * z * z.sigmoid()

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        batch, i, o = dims
        return {"input_matrix": (batch, i), "weight_matrix": (o, i), "bias": (o,), "output": (batch, o)}

    def extras(self, dims: Dims) -> list[Any]:
        return [case_float(dims, 0.5, 0.375), *dims]

    def flops(self, dims: Dims) -> int:
        batch, i, o = dims
        return batch * o * (2 * i + 7)
