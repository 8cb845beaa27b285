"""mxfp8-gemm: C = A · Bᵀ of two MXFP8 (E4M3) matrices (B stored n × k) with swizzled 128×4 scales, float32 out."""

from __future__ import annotations

from problems.builtin.quantization._formats import FORMAT_NOTE, SWIZZLE_NOTE, MxGemm, mx_signature


class Mxfp8Gemm(MxGemm):
    slug = "mxfp8-gemm"
    # Version 1 passed the scales row-major and checked to 1e-4; Tensara's scales are swizzled 128×4 (what
    # `scaled_mm` reads) and its check allowed rtol 2e-2, atol 5e-2.
    version = 2
    title = "MXFP8 GEMM"
    description = (
        "Multiply two MXFP8 matrices with E4M3 elements (OCP Microscaling v1.0): `c = A · Bᵀ`, with A stored "
        "m × k and B stored n × k, both row-major along k, and c m × n float32 row-major. Element (i, j) of a "
        "matrix is its E4M3 byte's value (OCP/`fn` variant, largest finite 448; NaN bytes do not occur) times "
        "2^(s − 127), s the E8M0 scale of row i and block j / 32; `scale_a`/`scale_b` hold one E8M0 byte per 32 "
        "consecutive elements of a row. "
        + SWIZZLE_NOTE
        + " k is a multiple of 32. Every product is exact; the check allows a relative 2e-2 and 2e-3 of "
        "rms(c), at least what Tensara's allowed. " + FORMAT_NOTE
    )
    tags = ("quantization", "mxfp8", "matmul", "compute-bound")
    parameters = mx_signature("gemm", "E4M3 bytes")
    bytes_formula = (
        "(m + n)·k + (ceil(m/128) + ceil(n/128))·128·ceil(k/128)·4 + 4·m·n "
        "(read both operands and their padded scale buffers, write C)"
    )
    element_bits = 8
