"""The GEMM family's shared rules: the 2·M·N·K count, ragged and skinny shapes, and the float tolerances."""

from __future__ import annotations

from problems.base import DType, Tolerance
from problems.library import Dims

# (m, n, k): a ragged case off every multiple of 32, a K tail, a skinny one, then square powers of two.
GPU_MNK: tuple[Dims, ...] = ((1000, 1003, 997), (1536, 2048, 1000), (4096, 96, 4097), (4096, 4096, 4096))
CPU_MNK: tuple[Dims, ...] = ((17, 33, 7), (64, 96, 130), (129, 127, 255))

# The float32 bound admits float32 accumulation in any order but not TF32 operands (about 1e-3 off).
GEMM_TOLERANCES: dict[DType, Tolerance] = {
    "float32": Tolerance(rtol=1e-4, atol=1e-4),
    "float16": Tolerance(rtol=5e-3, atol=5e-3),
    "bfloat16": Tolerance(rtol=2e-2, atol=2e-2),
}
