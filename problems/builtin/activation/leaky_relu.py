"""leaky-relu: x for x > 0, else alpha · x, over an n×m matrix; alpha comes before the output."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.activation._elementwise import Activation
from problems.library import Dims

if TYPE_CHECKING:
    import torch


def case_alpha(dims: Dims) -> float:
    """The negative slope of a case: 0.01 to 0.05, set by its sizes, so no single constant passes every case."""
    n, m = dims
    return 0.01 * (1 + (n + m) % 5)


class LeakyRelu(Activation):
    slug = "leaky-relu"
    aliases = ("leaky_relu",)
    version = 2
    title = "Leaky ReLU"
    description = (
        "Apply the leaky rectified linear unit to every element of an n×m matrix: `output = input` where "
        "`input > 0`, else `alpha * input`. `alpha` is a float parameter that differs between cases."
    )
    parameters = (
        Param("input", "input", doc="n×m, row-major"),
        Param("alpha", "scalar", "float", "slope for negative inputs"),
        Param("output", "output", doc="n×m, row-major"),
        Param("n", "scalar", "size_t", "rows"),
        Param("m", "scalar", "size_t", "columns"),
    )
    flops_formula = "n · m (one compare-and-scale per element)"

    def extras(self, dims: Dims) -> list[Any]:
        return [case_alpha(dims), *dims]

    def reference_solution(self, *args: Any) -> torch.Tensor:
        x, alpha = args[0].double(), args[1]
        return x.where(x > 0, x * alpha)
