"""nvfp4-quantize: float16 to packed E2M1 data and E4M3 block scales under a global scale, checked exactly."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DType, Param, Tolerance
from problems.builtin.quantization._formats import (
    FORMAT_NOTE,
    NV_BLOCK,
    NV_CPU_MK,
    NV_GPU_MK,
    QuantProblem,
    case_bound,
    case_global_scale,
    nv_inputs,
    nv_quantize,
)
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class Nvfp4Quantize(QuantProblem):
    slug = "nvfp4-quantize"
    title = "NVFP4 Quantization"
    description = (
        "Quantize an m × k float16 matrix to NVFP4 under the global encode scale `sf_g` (6 · 448 / amax of "
        "the tensor). Blocks are 16 consecutive elements of a row. For each block with largest magnitude amax, "
        "the block scale is s = e4m3(amax · sf_g / 6): FP8 E4M3 (OCP/`fn`, largest finite 448), round to "
        "nearest even, saturating. Write it to `scale`, row-major m × k/16, no swizzle. Each element x becomes "
        "the E2M1 value nearest to x · sf_g / float(s), ties to the even code, saturating at ±6; the sign bit is "
        "the input's sign (a small negative value gives −0, 0x8). E2M1 codes 0..7 are the magnitudes 0, 0.5, "
        "1, 1.5, 2, 3, 4, 6 and bit 3 is the sign; pack two per byte into `q` (row-major m × k/2), the "
        "even-indexed element in the low nibble. The inputs never put a scale or an element within 2^-16 "
        "(relative) of a rounding tie, so dividing or multiplying by reciprocals in float32 gives the exact "
        "answer. `q` is compared exactly; `scale` too, in effect (E4M3 values are more than 6% apart, and the "
        "check allows 1%). k is a multiple of 16. " + FORMAT_NOTE
    )
    tags = ("quantization", "nvfp4", "memory-bound")
    difficulty = "medium"
    score_metric = "gbps"
    parameters = (
        Param("a", "input", doc="m × k float16, row-major", element="float16"),
        Param("sf_g", "scalar", "float", "the global encode scale, 6 · 448 / amax(|a|)"),
        Param("q", "output", doc="m × k E2M1 values, packed two per byte (m × k/2 bytes)", element="uint8"),
        Param("scale", "output", doc="m × k/16 E4M3 block scales, row-major", element="float8_e4m3"),
        Param("m", "scalar", "size_t", "rows"),
        Param("k", "scalar", "size_t", "columns, a multiple of 16"),
    )
    gpu_cases = NV_GPU_MK
    cpu_cases = NV_CPU_MK
    # `q` is bytes (exact). Neighbouring E4M3 values differ by at least 6% relative, so 1% with no absolute
    # slack accepts only the right scale.
    tolerances: dict[DType, Tolerance] = {"float32": Tolerance(rtol=1e-2, atol=0.0)}  # noqa: RUF012
    flops_formula = "0 (scored by bytes moved)"
    bytes_formula = "2·m·k + m·k/2 + m·k/16 (read float16, write data and scales)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        m, k = dims
        return {"a": (m, k), "q": (m, k // 2), "scale": (m, k // NV_BLOCK)}

    def extras(self, dims: Dims) -> list[Any]:
        return [case_global_scale(dims), *dims]

    def make_inputs(self, dims: Dims, dtype: Any, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        return (nv_inputs(dims, case_bound(dims), case_global_scale(dims), gen),)  # type: ignore[arg-type]

    def reference_solution(self, *args: Any) -> tuple[torch.Tensor, torch.Tensor]:
        return nv_quantize(args[0], args[1])
