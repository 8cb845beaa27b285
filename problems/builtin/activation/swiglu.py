"""swiglu: silu(gate) · up over two n×m matrices, the gated feed-forward activation of LLaMA-style models."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.activation._elementwise import Activation
from problems.library import Dims

if TYPE_CHECKING:
    import torch

    from problems.base import DType


class Swiglu(Activation):
    slug = "swiglu"
    title = "SwiGLU"
    description = (
        "Compute the SwiGLU gate of a feed-forward layer: `output = silu(gate) * up` elementwise, where "
        "`silu(x) = x / (1 + exp(-x))`. `gate`, `up` and `output` are n×m, row-major and contiguous (n tokens, "
        "m hidden features, e.g. 11008 in LLaMA-7B)."
    )
    tags = ("activation-function", "fused", "elementwise", "memory-bound")
    parameters = (
        Param("gate", "input", doc="n×m, row-major: the pre-activation of the gate projection"),
        Param("up", "input", doc="n×m, row-major: the up projection"),
        Param("output", "output", doc="n×m, row-major"),
        Param("n", "scalar", "size_t", "rows (tokens)"),
        Param("m", "scalar", "size_t", "columns (hidden features)"),
    )
    # Three n×m buffers: the largest moves about 1.1 GB in float32.
    gpu_cases = ((1000, 1003), (4096, 4096), (6151, 8191), (8192, 11008))
    flops_per_element = 4
    flops_formula = "4 · n · m (an exponential, an add, a divide and a multiply per element)"
    bytes_formula = "3 · n · m · sizeof(dtype) (read gate and up, write output)"
    input_scale = 3.0

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        n, m = dims
        return {"gate": (n, m), "up": (n, m), "output": (n, m)}

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        from problems.inputs import randn

        return randn(dims, dtype, gen, scale=self.input_scale), randn(dims, dtype, gen)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        gate, up = args[0].double(), args[1].double()
        return gate * gate.sigmoid() * up
