"""triplet-margin: the mean over a batch of max(0, |a - p| - |a - n| + margin), one number."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch


def case_margin(dims: Dims) -> float:
    """The margin of a case: 0.5 to 1.5 in steps of 0.25, set by its sizes, so no single constant passes."""
    b, e = dims
    return 0.5 + 0.25 * ((b + e) % 5)


class TripletMargin(KernelProblem):
    slug = "triplet-margin"
    title = "Triplet Margin Loss"
    description = (
        "For B triplets of embeddings of length E (rows of the B×E matrices `anchor`, `positive` and "
        "`negative`), write the mean triplet margin loss to `loss[0]`: "
        "`(1/B) · sum_i max(0, |a_i - p_i| - |a_i - n_i| + margin)`, with Euclidean distances. `margin` is a "
        "float parameter that differs between cases. PyTorch's `triplet_margin_loss`, which adds 1e-6 to each "
        "difference inside the distance, is well within tolerance. Matrices are row-major and contiguous."
    )
    tags = ("loss-function", "reduction")
    difficulty = "medium"
    dtypes = ("float32",)
    parameters = (
        Param("anchor", "input", doc="B×E"),
        Param("positive", "input", doc="B×E"),
        Param("negative", "input", doc="B×E"),
        Param("loss", "output", doc="1 value: the mean loss"),
        Param("B", "scalar", "size_t", "triplets"),
        Param("E", "scalar", "size_t", "embedding length"),
        Param("margin", "scalar", "float", "the required gap between the two distances"),
    )
    gpu_cases = ((127, 1000), (512, 4096), (1024, 8192), (4096, 8192))
    cpu_cases = ((5, 7), (16, 33), (64, 130))
    dim_names = ("B", "E")
    flops_formula = "2B(3E + 4) + 4B − 1 (two distances per triplet, the hinge, and the mean)"
    bytes_formula = "3 · B · E · sizeof(dtype) (read the three matrices; the single output is not counted)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        return {"anchor": dims, "positive": dims, "negative": dims, "loss": (1,)}

    def extras(self, dims: Dims) -> list[Any]:
        return [*dims, case_margin(dims)]

    def flops(self, dims: Dims) -> int:
        b, e = dims
        return 2 * b * (3 * e + 4) + 4 * b - 1

    def moved_bytes(self, dims: Dims, dtype: Any) -> int:
        from problems.base import ELEMENT_BYTES

        b, e = dims
        return 3 * b * e * ELEMENT_BYTES[dtype]

    def reference_solution(self, *args: Any) -> torch.Tensor:
        a, p, n = (t.double() for t in args[:3])
        margin = args[5]
        d_pos = (a - p).square().sum(dim=1).sqrt()
        d_neg = (a - n).square().sum(dim=1).sqrt()
        return (d_pos - d_neg + margin).clamp_min(0.0).mean().reshape(1)
