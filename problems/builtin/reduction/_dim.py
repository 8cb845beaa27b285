"""The reductions over one dimension of an N-d tensor: the signature passes the shape as an array plus `ndim`.

A case is `(dim, *shape)`. Tensara's signature family: `(input, dim, output, shape, ndim)`, with `int`
for argmax/argmin and `size_t` for the others (`shape_type`). Where the shape array lives is Tensara's too:
host memory for argmax, argmin and min-dim (their solutions read `shape[d]` on the host), device memory for the
others. Tensara's value reductions keep the reduced dimension with size 1 (`keepdim=True`); the arg-extrema drop
it. Softmax over a dimension shares the signature but keeps the input's shape.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DEFAULT_TOLERANCES, DType, Param, Tolerance
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch

# (dim, *shape): ragged 2-d and 3-d shapes, reductions over the first, middle and last dimension.
GPU_CASES: tuple[Dims, ...] = ((1, 1000, 1003), (0, 4097, 2000), (1, 64, 1025, 513), (2, 32, 1024, 4096))
CPU_CASES: tuple[Dims, ...] = ((1, 7, 33), (1, 5, 67, 9), (0, 129, 65))


def dim_signature(
    index_type: str, output_element: str | None, output_doc: str = "", shape_memory: str = "device"
) -> tuple[Param, ...]:
    """The family's parameter list: `index_type` for the shape's elements and `ndim` (`int` for argmax and
    argmin, `size_t` for the others), the output's element type (None: the problem's dtype), and the memory the
    shape array lives in."""
    return (
        Param("input", "input", doc="the N-d input, row-major"),
        Param("dim", "scalar", "int", "the dimension to reduce"),
        Param("output", "output", doc=output_doc or "the input's shape without `dim`", element=output_element),  # type: ignore[arg-type]
        Param(
            "shape",
            "array",
            index_type,  # type: ignore[arg-type]
            "the input's sizes, `ndim` of them",
            memory=shape_memory,  # type: ignore[arg-type]
        ),
        Param("ndim", "scalar", index_type, "the input's rank"),  # type: ignore[arg-type]
    )


def distinct_normal(shape: tuple[int, ...], dim: int, gen: torch.Generator) -> torch.Tensor:
    """Roughly standard-normal float32 values that are all different along `dim`, so that an arg-extremum or a
    top-k has one right answer.

    Each value is (k·R + j)·2^-e with k a rounded normal draw, j the position along `dim` and R = shape[dim]:
    distinct integers below 2^24, so exact in float32 and still distinct after the power-of-two scale.
    """
    import torch

    r = shape[dim]
    # |k| stays below 2^24 / R, so k·R + j is an exact float32 integer.
    k_max = (1 << 24) // (r + 1) - 1
    spread = min(256.0, k_max / 5.0)
    k = torch.randn(shape, generator=gen, device=gen.device).mul_(spread).round_().clamp_(-k_max, k_max)
    j_shape = [1] * len(shape)
    j_shape[dim] = r
    j = torch.arange(r, device=gen.device, dtype=torch.float32).reshape(j_shape)
    scale = 2.0 ** -math.ceil(math.log2(spread * r))
    return k.mul_(r).add_(j).mul_(scale)


class DimReduction(KernelProblem):
    """A reduction over dimension `dim` of an input whose shape and rank come as parameters."""

    tags: ClassVar[tuple[str, ...]] = ("reduction",)
    difficulty = "easy"
    dtypes: ClassVar[tuple[DType, ...]] = ("float32",)
    gpu_cases = GPU_CASES
    cpu_cases = CPU_CASES
    bytes_formula = "(numel + outputs) · element size (read the input once, write each output)"
    flops_formula = "outputs · (R − 1), R = shape[dim] (one operation per element after the first)"
    # Arg-extrema draw values that never tie along `dim` (see `distinct_normal`).
    distinct: ClassVar[bool] = False
    # Tensara's value reductions write an output of the input's rank, the reduced dimension of size 1.
    keepdim: ClassVar[bool] = False
    # Tensara's check allowed a relative error of 1e-3 in float32 (its absolute 1e-3 is larger than many means
    # and softmax values, so it is scaled by the output's RMS here: an all-zero answer still fails).
    tolerances: ClassVar[dict[DType, Tolerance]] = {
        **DEFAULT_TOLERANCES,
        "float32": Tolerance(rtol=1e-3, atol=1e-3),
    }

    def case_name(self, dims: Dims) -> str:
        dim, *shape = dims
        return f"{'x'.join(map(str, shape))},dim={dim}"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        dim, *shape = dims
        out = tuple(1 if i == dim else s for i, s in enumerate(shape) if self.keepdim or i != dim)
        return {"input": tuple(shape), "output": out}

    def extras(self, dims: Dims) -> list[Any]:
        dim, *shape = dims
        return [dim, list(shape), len(shape)]

    def flops(self, dims: Dims) -> int:
        dim, *shape = dims
        return math.prod(shape) // shape[dim] * (shape[dim] - 1)

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        if not self.distinct:
            return super().make_inputs(dims, dtype, gen)
        dim, *shape = dims
        return (distinct_normal(tuple(shape), dim, gen),)

    def reduce(self, x: torch.Tensor, dim: int) -> torch.Tensor:
        raise NotImplementedError

    def reference_solution(self, *args: Any) -> torch.Tensor:
        x, dim = args[0], args[1]
        out = self.reduce(x, dim)
        return out.unsqueeze(dim) if self.keepdim else out
