"""cosine-similarity: one minus the cosine similarity of each pair of rows of two n×d matrices."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch

    from problems.base import DType

EPS = 1e-8


class CosineSimilarity(KernelProblem):
    slug = "cosine-similarity"
    title = "Cosine Similarity"
    description = (
        "For each row i of two n×d matrices, write the cosine distance of the pair as a loss: "
        "`output[i] = 1 - dot(p_i, t_i) / max(|p_i| · |t_i|, eps)` with p = `predictions`, t = `targets`, "
        "Euclidean norms and `eps = 1e-8` (no row is near zero, so it never applies). The output has n values, "
        "from 0 (same direction) to 2 (opposite). Matrices are row-major and contiguous."
    )
    tags = ("loss-function", "reduction", "memory-bound")
    difficulty = "easy"
    dtypes = ("float32",)
    parameters = (
        Param("predictions", "input", doc="n×d, row-major"),
        Param("targets", "input", doc="n×d, row-major"),
        Param("output", "output", doc="n: one loss per row"),
        Param("n", "scalar", "size_t", "rows (vector pairs)"),
        Param("d", "scalar", "size_t", "length of each vector"),
    )
    gpu_cases = ((999, 777), (4096, 4096), (8192, 4096), (16384, 4096))
    cpu_cases = ((7, 33), (64, 130), (256, 1000))
    dim_names = ("n", "d")
    flops_formula = "n · (5d + 3) (Tensara's count: dot product and two squared norms, then the division and 1 - x)"
    bytes_formula = "(2 · n · d + n) · sizeof(dtype) (read both matrices, write one value per row)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        n, _ = dims
        return {"predictions": dims, "targets": dims, "output": (n,)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        n, d = dims
        return n * (5 * d + 3)

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        from problems.inputs import randn, torch_dtype, uniform

        n, _ = dims
        # Targets mix each prediction row with noise in a per-row proportion, so the similarities spread over
        # (-1, 1) rather than all sitting near 0 as for independent vectors.
        p = randn(dims, "float32", gen)
        t = p * uniform((n, 1), "float32", gen, -2.0, 2.0) + randn(dims, "float32", gen)
        return p.to(torch_dtype(dtype)), t.to(torch_dtype(dtype))

    def reference_solution(self, *args: Any) -> torch.Tensor:
        p, t = args[0].double(), args[1].double()
        norms = p.square().sum(dim=1).sqrt() * t.square().sum(dim=1).sqrt()
        return 1.0 - (p * t).sum(dim=1) / norms.clamp_min(EPS)
