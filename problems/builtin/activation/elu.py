"""elu: x for x > 0, else alpha · (eᵡ − 1), over an n×m matrix; alpha comes after the sizes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.activation._elementwise import Activation
from problems.library import Dims

if TYPE_CHECKING:
    import torch


def case_alpha(dims: Dims) -> float:
    """The scale of the negative branch, 0.2 to 1.4 and set by the case's sizes: never the common 1.0, so a
    kernel that ignores `alpha` fails."""
    n, m = dims
    return 0.2 + 0.3 * ((n + m) % 5)


class Elu(Activation):
    slug = "elu"
    title = "ELU"
    description = (
        "Apply the exponential linear unit to every element of a row-major n×m matrix: `output = input` where "
        "`input > 0`, else `alpha * (exp(input) - 1)`. `alpha` is a float parameter, passed after the sizes, "
        "that differs between cases."
    )
    parameters = (
        Param("input", "input", doc="n×m, row-major"),
        Param("output", "output", doc="n×m, row-major"),
        Param("n", "scalar", "size_t", "rows"),
        Param("m", "scalar", "size_t", "columns"),
        Param("alpha", "scalar", "float", "scale of the negative branch"),
    )
    flops_per_element = 3
    flops_formula = "3 · n · m (an exponential, a subtraction and a scale per element)"
    input_scale = 3.0

    def extras(self, dims: Dims) -> list[Any]:
        return [*dims, case_alpha(dims)]

    def reference_solution(self, *args: Any) -> torch.Tensor:
        x, alpha = args[0].double(), args[3]
        return x.where(x > 0, alpha * x.expm1())
