"""nvfp4-gemm: C = A · Bᵀ of two NVFP4 matrices (B stored n × k) with swizzled 128×4 scales, float16 out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.quantization._formats import (
    FORMAT_NOTE,
    NV_BLOCK,
    NV_CPU_MNK,
    NV_GEMM_TOLERANCES,
    NV_GPU_MNK,
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


class Nvfp4Gemm(QuantProblem):
    slug = "nvfp4-gemm"
    title = "NVFP4 GEMM"
    # Version 1 passed the scales row-major and checked to 2e-3; Tensara's scales are swizzled 128×4 (what
    # `scaled_mm` reads) and its check allowed rtol 2e-2, atol 5e-2.
    version = 2
    description = (
        "Multiply two NVFP4 matrices: `c = A · Bᵀ`, A stored m × k and B stored n × k, both row-major along k, "
        "c m × n float16 row-major. Element (i, j) of A is `e2m1 * float(s) / sf_g_a`, s the E4M3 scale of row i "
        "and block j / 16, and likewise for B: `q_a`/`q_b` pack two E2M1 values per byte, the even-indexed "
        "element in the low nibble (bit 3 of a nibble is the sign, codes 0..7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6); "
        "`scale_a`/`scale_b` hold one positive FP8 E4M3 value per 16 consecutive elements of a row. "
        + SWIZZLE_NOTE
        + " `sf_g_a` and `sf_g_b` are the global encode scales (decoding divides by them). Accumulate in float32 "
        "(or better) and round once to float16. k is a multiple of 16. The check allows a relative 2e-2 and "
        "5e-3 of rms(c), at least what Tensara's allowed. " + FORMAT_NOTE
    )
    tags = ("quantization", "nvfp4", "matmul", "compute-bound")
    difficulty = "hard"
    parameters = (
        Param("q_a", "input", doc="A: m × k E2M1 values, packed two per byte", element="uint8"),
        Param(
            "scale_a",
            "input",
            doc="A's m × k/16 E4M3 block scales, swizzled 128×4 (ceil(m/128)·128 × ceil(k/64)·4 values)",
            element="float8_e4m3",
        ),
        Param("sf_g_a", "scalar", "float", "A's global encode scale"),
        Param("q_b", "input", doc="B: n × k E2M1 values, packed two per byte (C = A · Bᵀ)", element="uint8"),
        Param(
            "scale_b",
            "input",
            doc="B's n × k/16 E4M3 block scales, swizzled 128×4 (ceil(n/128)·128 × ceil(k/64)·4 values)",
            element="float8_e4m3",
        ),
        Param("sf_g_b", "scalar", "float", "B's global encode scale"),
        Param("c", "output", doc="m × n float16, row-major", element="float16"),
        Param("m", "scalar", "size_t", "rows of A and C"),
        Param("n", "scalar", "size_t", "rows of B, columns of C"),
        Param("k", "scalar", "size_t", "the reduced dimension, a multiple of 16"),
    )
    gpu_cases = NV_GPU_MNK
    cpu_cases = NV_CPU_MNK
    dim_names = ("m", "n", "k")
    tolerances = NV_GEMM_TOLERANCES
    flops_formula = "2 · m · n · k (a multiply and an add per term)"
    bytes_formula = (
        "(m + n)·k/2 + (ceil(m/128) + ceil(n/128))·128·ceil(k/64)·4 + 2·m·n "
        "(read both operands and their padded scale buffers, write float16 C)"
    )

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        m, n, k = dims
        return {
            "q_a": (m, k // 2),
            "scale_a": swizzled_shape(m, k // NV_BLOCK),
            "q_b": (n, k // 2),
            "scale_b": swizzled_shape(n, k // NV_BLOCK),
            "c": (m, n),
        }

    def extras(self, dims: Dims) -> list[Any]:
        m, n, k = dims
        return [case_global_scale((m, k)), case_global_scale((n, k), salt=1), m, n, k]

    def flops(self, dims: Dims) -> int:
        m, n, k = dims
        return 2 * m * n * k

    def make_inputs(self, dims: Dims, dtype: Any, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        import torch

        shapes = self.shapes(dims)
        out = []
        for side in ("a", "b"):
            scale = random_e4m3(shapes[f"scale_{side}"], gen, positive=True).view(torch.float8_e4m3fn)
            out += [random_bytes(shapes[f"q_{side}"], gen), scale]
        return tuple(out)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        q_a, scale_a, sf_g_a, q_b, scale_b, sf_g_b = args[:6]
        blocks = 2 * q_a.shape[1] // NV_BLOCK
        a = nv_dequantize(q_a, unswizzle(scale_a, q_a.shape[0], blocks), sf_g_a)
        b = nv_dequantize(q_b, unswizzle(scale_b, q_b.shape[0], blocks), sf_g_b)
        return a @ b.T
