"""The normalization family's shared rules: inputs whose normalized slices each have their own offset and spread,
and the row-wise `(X, Y, B, D)` problems (rms-norm, l1-norm, l2-norm).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DType
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch

# (B, D): a ragged case off every multiple of 32, then square-ish powers of two up to 256 MB per buffer.
GPU_ROWS: tuple[Dims, ...] = ((333, 1021), (4096, 1024), (4096, 4096), (8192, 8192))
CPU_ROWS: tuple[Dims, ...] = ((7, 33), (64, 130), (256, 1000))


def shifted_normal(
    shape: tuple[int, ...], stat_shape: tuple[int, ...], dtype: DType | str, gen: torch.Generator
) -> torch.Tensor:
    """Normal values whose every normalized slice (one entry of `stat_shape`, broadcast over `shape`) has its own
    spread in [0.5, 2) and offset in [-4, 4): a variance formula that cancels badly, or statistics taken over the
    wrong slice, show up."""
    from problems.inputs import randn, torch_dtype, uniform

    x = randn(shape, "float32", gen)
    x *= uniform(stat_shape, "float32", gen, 0.5, 2.0)
    x += uniform(stat_shape, "float32", gen, -4.0, 4.0)
    return x.to(torch_dtype(dtype))


class RowNorm(KernelProblem):
    """A per-row normalization of a B×D matrix with the signature `(X, Y, B, D)`."""

    tags: ClassVar[tuple[str, ...]] = ("normalization", "reduction", "memory-bound")
    difficulty = "easy"
    dtypes: ClassVar[tuple[DType, ...]] = ("float32",)
    gpu_cases = GPU_ROWS
    cpu_cases = CPU_ROWS
    bytes_formula = "2 · B · D · sizeof(dtype) (read X, write Y)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        return {"X": dims, "Y": dims}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        return (shifted_normal(dims, (dims[0], 1), dtype, gen),)

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        """The float64 result for a float64 B×D input."""
        raise NotImplementedError

    def reference_solution(self, *args: Any) -> torch.Tensor:
        return self.normalize(args[0].double())
