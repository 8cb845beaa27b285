"""The loss family's shared rules: the elementwise `(predictions, targets, output, n)` losses, and the per-row
inputs whose offsets make an unstabilized exponential overflow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DType, Param
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch

# n: a ragged length, then powers of two up to 2^26 (about 800 MB over the three float32 buffers).
GPU_LENGTHS: tuple[Dims, ...] = ((1_000_003,), (1 << 22,), (1 << 24,), (1 << 26,))
CPU_LENGTHS: tuple[Dims, ...] = ((7,), (1000,), (10_007,))


def offset_rows(rows: int, cols: int, spread: float, dtype: DType, gen: torch.Generator) -> torch.Tensor:
    """Normal values times `spread`, each row shifted by its own offset in [-30, 100): `exp` of the largest
    values overflows float32 (its limit is about e^88.7) unless the row's maximum is subtracted first."""
    from problems.inputs import randn, torch_dtype, uniform

    x = randn((rows, cols), "float32", gen, spread)
    x += uniform((rows, 1), "float32", gen, -30.0, 100.0)
    return x.to(torch_dtype(dtype))


class ElementwiseLoss(KernelProblem):
    """A loss per element of two length-n vectors, before any reduction: `(predictions, targets, output, n)`."""

    tags: ClassVar[tuple[str, ...]] = ("loss-function", "elementwise", "memory-bound")
    difficulty = "easy"
    dtypes: ClassVar[tuple[DType, ...]] = ("float32",)
    gpu_cases = GPU_LENGTHS
    cpu_cases = CPU_LENGTHS
    dim_names = ("n",)
    parameters: ClassVar[tuple[Param, ...]] = (
        Param("predictions", "input", doc="n values"),
        Param("targets", "input", doc="n values"),
        Param("output", "output", doc="n values: the loss of each element"),
        Param("n", "scalar", "size_t", "number of elements"),
    )
    bytes_formula = "3 · n · sizeof(dtype) (read predictions and targets, write output)"
    # Operations counted per element (the formula's constant).
    flops_per_element: ClassVar[int] = 1

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        return {"predictions": dims, "targets": dims, "output": dims}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        return self.flops_per_element * dims[0]

    def loss(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """The float64 loss of each element."""
        raise NotImplementedError

    def reference_solution(self, *args: Any) -> torch.Tensor:
        return self.loss(args[0].double(), args[1].double())
