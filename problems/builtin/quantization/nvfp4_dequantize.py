"""nvfp4-dequantize: packed E2M1 data, swizzled E4M3 block scales and a global scale to float32."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.quantization._formats import (
    DEQUANTIZE_TOLERANCES,
    FORMAT_NOTE,
    NV_BLOCK,
    NV_SWIZZLED_CPU_MK,
    NV_SWIZZLED_GPU_MK,
    SWIZZLE_NOTE,
    QuantProblem,
    case_global_scale,
    nv_dequantize,
    random_bytes,
    random_e4m3,
    swizzled_shape,
    unswizzle,
)
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class Nvfp4Dequantize(QuantProblem):
    slug = "nvfp4-dequantize"
    title = "NVFP4 Dequantization"
    # Version 1 passed the scales row-major; Tensara's come from flashinfer's `nvfp4_quantize`, whose default
    # layout is the swizzled 128×4 one, and its decode reads them so.
    version = 2
    description = (
        "Expand an m × k NVFP4 matrix to float32: `out[i][j] = e2m1(i, j) * float(s) / sf_g`, s the E4M3 scale of "
        "row i and block j / 16. `q` holds m × k/2 bytes, row-major, two E2M1 values per byte with the "
        "even-indexed element in the low nibble (bit 3 of a nibble is the sign, codes 0..7 are the magnitudes 0, "
        "0.5, 1, 1.5, 2, 3, 4, 6). `scale` holds one positive FP8 E4M3 value per block of 16 consecutive elements "
        "of a row (m rows × k/16 blocks). "
        + SWIZZLE_NOTE
        + " `sf_g` is the tensor's global encode scale (6 · 448 / amax of the original tensor), so decoding "
        "divides by it. k is a multiple of 16. The check allows a relative 1e-3, as Tensara's did. " + FORMAT_NOTE
    )
    tags = ("quantization", "nvfp4", "memory-bound")
    difficulty = "medium"
    score_metric = "gbps"
    parameters = (
        Param("q", "input", doc="m × k E2M1 values, packed two per byte (m × k/2 bytes)", element="uint8"),
        Param(
            "scale",
            "input",
            doc="m × k/16 E4M3 block scales, swizzled 128×4 (ceil(m/128)·128 × ceil(k/64)·4 values)",
            element="float8_e4m3",
        ),
        Param("sf_g", "scalar", "float", "the global encode scale: decoding divides by it"),
        Param("out", "output", doc="m × k float32, row-major"),
        Param("m", "scalar", "size_t", "rows"),
        Param("k", "scalar", "size_t", "columns, a multiple of 16"),
    )
    gpu_cases = NV_SWIZZLED_GPU_MK
    cpu_cases = NV_SWIZZLED_CPU_MK
    tolerances = DEQUANTIZE_TOLERANCES
    flops_formula = "0 (scored by bytes moved)"
    bytes_formula = "m·k/2 + ceil(m/128)·128·ceil(k/64)·4 + 4·m·k (read data and the padded scales, write float32)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        m, k = dims
        return {"q": (m, k // 2), "scale": swizzled_shape(m, k // NV_BLOCK), "out": (m, k)}

    def extras(self, dims: Dims) -> list[Any]:
        return [case_global_scale(dims), *dims]

    def make_inputs(self, dims: Dims, dtype: Any, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        import torch

        shapes = self.shapes(dims)
        return random_bytes(shapes["q"], gen), random_e4m3(shapes["scale"], gen, positive=True).view(
            torch.float8_e4m3fn
        )

    def reference_solution(self, *args: Any) -> torch.Tensor:
        q, scale, sf_g = args[0], args[1], args[2]
        m, half_k = q.shape
        return nv_dequantize(q, unswizzle(scale, m, 2 * half_k // NV_BLOCK), sf_g)
