"""nvfp4-quantize: float16 to packed E2M1 data and swizzled E4M3 block scales under a global scale."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DType, Param, Tolerance
from problems.builtin.quantization._formats import (
    FORMAT_NOTE,
    NV_BLOCK,
    NV_SWIZZLED_CPU_MK,
    NV_SWIZZLED_GPU_MK,
    SWIZZLE_NOTE,
    QuantProblem,
    case_bound,
    case_global_scale,
    e2m1_decode,
    nv_inputs,
    nv_quantize,
    swizzle,
    swizzled_shape,
    unpack_fp4,
)
from problems.library import Dims

if TYPE_CHECKING:
    import torch

# Tensara compared the decoded values (allclose, rtol 1e-3, atol 1e-3). Our inputs keep every element and scale
# off rounding ties, and a wrong E2M1 code or E4M3 scale is a whole step (6 % or more) off, so the elements are
# compared by their E2M1 values to a relative 1e-3 (+0 and −0 are equal) and the scales by value to 1 %.
ELEMENT_TOLERANCE = Tolerance(rtol=1e-3, atol=0.0)
SCALE_TOLERANCE = Tolerance(rtol=1e-2, atol=0.0)


class Nvfp4Quantize(QuantProblem):
    slug = "nvfp4-quantize"
    title = "NVFP4 Quantization"
    # Version 1 wrote the scales row-major and compared `q` byte for byte; Tensara's reference is flashinfer's
    # `nvfp4_quantize`, whose default layout is the swizzled 128×4 one, and it compared decoded values.
    version = 2
    description = (
        "Quantize an m × k float16 matrix to NVFP4 under the global encode scale `sf_g` (6 · 448 / amax of "
        "the tensor). Blocks are 16 consecutive elements of a row. For each block with largest magnitude amax, "
        "the block scale is s = e4m3(amax · sf_g / 6): FP8 E4M3 (OCP/`fn`, largest finite 448), round to "
        "nearest even, saturating. Write it to `scale` (m rows × k/16 blocks). "
        + SWIZZLE_NOTE
        + " Padding in `scale` is not checked; write it or leave it. Each element x becomes the E2M1 value "
        "nearest to x · sf_g / float(s), ties to the even code, saturating at ±6; the sign bit is the input's "
        "sign (a small negative value gives −0, 0x8). E2M1 codes 0..7 are the magnitudes 0, 0.5, 1, 1.5, 2, 3, "
        "4, 6 and bit 3 is the sign; pack two per byte into `q` (row-major m × k/2), the even-indexed element "
        "in the low nibble. The inputs never put a scale or an element within 2^-16 (relative) of a rounding "
        "tie, so dividing or multiplying by reciprocals in float32 gives the exact answer. `q` is compared by "
        "its decoded E2M1 values (so +0 for −0 passes, any other difference fails), `scale` by value to 1 % "
        "(E4M3 values are more than 6 % apart), as Tensara compared the decoded values. k is a multiple of 16. "
        + FORMAT_NOTE
    )
    tags = ("quantization", "nvfp4", "memory-bound")
    difficulty = "medium"
    score_metric = "gbps"
    parameters = (
        Param("a", "input", doc="m × k float16, row-major", element="float16"),
        Param("sf_g", "scalar", "float", "the global encode scale, 6 · 448 / amax(|a|)"),
        Param("q", "output", doc="m × k E2M1 values, packed two per byte (m × k/2 bytes)", element="uint8"),
        Param(
            "scale",
            "output",
            doc="m × k/16 E4M3 block scales, swizzled 128×4 (ceil(m/128)·128 × ceil(k/64)·4 values)",
            element="float8_e4m3",
        ),
        Param("m", "scalar", "size_t", "rows"),
        Param("k", "scalar", "size_t", "columns, a multiple of 16"),
    )
    gpu_cases = NV_SWIZZLED_GPU_MK
    cpu_cases = NV_SWIZZLED_CPU_MK
    # The scales' bound: the float output's tolerance (`q` is bytes, compared by value in verify_result).
    tolerances: dict[DType, Tolerance] = {"float32": SCALE_TOLERANCE}  # noqa: RUF012
    flops_formula = "0 (scored by bytes moved)"
    bytes_formula = "2·m·k + m·k/2 + ceil(m/128)·128·ceil(k/64)·4 (read float16, write data and the padded scales)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        m, k = dims
        return {"a": (m, k), "q": (m, k // 2), "scale": swizzled_shape(m, k // NV_BLOCK)}

    def extras(self, dims: Dims) -> list[Any]:
        return [case_global_scale(dims), *dims]

    def make_inputs(self, dims: Dims, dtype: Any, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        return (nv_inputs(dims, case_bound(dims), case_global_scale(dims), gen),)  # type: ignore[arg-type]

    def reference_solution(self, *args: Any) -> tuple[torch.Tensor, torch.Tensor]:
        import torch

        a, sf_g = args[0], args[1]
        q, scales = nv_quantize(a, sf_g)
        # The scales' values (float64) in the swizzled layout; NaN marks the padding, which is not checked.
        padding = torch.full(swizzled_shape(*scales.shape), float("nan"), dtype=torch.float64, device=a.device)
        return q, swizzle(scales, padding)

    def verify_result(
        self, expected_output: torch.Tensor, actual_output: torch.Tensor, dtype: DType
    ) -> tuple[bool, dict[str, Any]]:
        import torch

        from problems.verification import compare_outputs

        if tuple(actual_output.shape) != tuple(expected_output.shape):
            return False, {
                "reason": f"output shape {tuple(actual_output.shape)} != expected {tuple(expected_output.shape)}"
            }
        if expected_output.dtype == torch.uint8:  # `q`: the E2M1 values, so that ±0 compare equal
            expected = e2m1_decode(unpack_fp4(expected_output))
            actual = e2m1_decode(unpack_fp4(actual_output.to(torch.uint8)))
            return compare_outputs(expected, actual, ELEMENT_TOLERANCE)
        # `scale`: the real entries by value; the padding (NaN in the reference) holds whatever was left there.
        padding = torch.isnan(expected_output)
        expected = expected_output.masked_fill(padding, 0.0)
        actual = actual_output.to(torch.float64).masked_fill(padding, 0.0)
        return compare_outputs(expected, actual, self.tolerances[dtype])
