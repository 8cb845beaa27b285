"""The GEMM family's shared rules: the 2·M·N·K count, ragged and skinny shapes, the float tolerances, the base
class of the family's problems and the input draws several of them share."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from problems.base import DType, Tolerance
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch

# (m, n, k): a ragged case off every multiple of 32, a K tail, a skinny one, then square powers of two.
GPU_MNK: tuple[Dims, ...] = ((1000, 1003, 997), (1536, 2048, 1000), (4096, 96, 4097), (4096, 4096, 4096))
CPU_MNK: tuple[Dims, ...] = ((17, 33, 7), (64, 96, 130), (129, 127, 255))

# n of the square problems: ragged, then up to 4096 (137 GFLOP for a full product).
GPU_SQUARE: tuple[Dims, ...] = ((1000,), (1537,), (2048,), (4096,))
CPU_SQUARE: tuple[Dims, ...] = ((7,), (33,), (130,))

# The float32 bound admits float32 accumulation in any order but not TF32 operands (about 1e-3 off).
GEMM_TOLERANCES: dict[DType, Tolerance] = {
    "float32": Tolerance(rtol=1e-4, atol=1e-4),
    "float16": Tolerance(rtol=5e-3, atol=5e-3),
    "bfloat16": Tolerance(rtol=2e-2, atol=2e-2),
}


# Tensara's last checks filed its GEMMs under one category, allclose(rtol=3e-3, atol=1e-2): that admits TF32
# tensor-core products, so a Tensara problem's float32 bound does too. `atol` is Tensara's 1e-2 over the RMS of its
# smallest case's outputs (our atol scales with the RMS), so the bound accepts at least what Tensara accepted
# (docs/tensara-semantics.md lists each problem's figure).
TENSARA_GEMM_RTOL = 3e-3


def tensara_gemm_tolerances(atol: float) -> dict[DType, Tolerance]:
    """The GEMM tolerances with Tensara's float32 bound: rtol 3e-3 and `atol` (relative to the output's RMS)."""
    return {**GEMM_TOLERANCES, "float32": Tolerance(rtol=TENSARA_GEMM_RTOL, atol=atol)}


class MatmulProblem(KernelProblem):
    """A problem of the matmul family: float32 unless it says otherwise, the GEMM tolerances."""

    tags: ClassVar[tuple[str, ...]] = ("matmul", "compute-bound")
    difficulty = "medium"
    dtypes: ClassVar[tuple[DType, ...]] = ("float32",)
    tolerances = GEMM_TOLERANCES


def case_float(dims: Dims, low: float, step: float, count: int = 5) -> float:
    """A float parameter set by a case's sizes (`low`, `low + step`, ...): no single constant passes every case."""
    return low + step * (sum(dims) % count)


def linear_weight(shape: tuple[int, int], dtype: DType, gen: torch.Generator) -> torch.Tensor:
    """An out×in weight scaled by 1/sqrt(in), as a trained layer's: products stay near unit size, so the
    activation that follows works in its curved range rather than only on its tails."""
    from problems.inputs import randn

    return randn(shape, dtype, gen, scale=shape[1] ** -0.5)
