"""mxfp8-gemm: C = A · Bᵀ of two MXFP8 (E4M3) matrices (B stored n × k), float32 out."""

from __future__ import annotations

from problems.builtin.quantization._formats import FORMAT_NOTE, MxGemm, mx_signature


class Mxfp8Gemm(MxGemm):
    slug = "mxfp8-gemm"
    title = "MXFP8 GEMM"
    description = (
        "Multiply two MXFP8 matrices with E4M3 elements (OCP Microscaling v1.0): `c = A · Bᵀ`, with A stored "
        "m × k and B stored n × k, both row-major along k, and c m × n float32 row-major. Element (i, j) of a "
        "matrix is its E4M3 byte's value (OCP/`fn` variant, largest finite 448; NaN bytes do not occur) times "
        "2^(scale[i][j / 32] − 127); `scale_a`/`scale_b` hold one E8M0 byte per 32 consecutive elements of a "
        "row, row-major. k is a multiple of 32; m and n are not multiples of anything. Every product is "
        "exact, so accumulate in float32 (or better). " + FORMAT_NOTE
    )
    tags = ("quantization", "mxfp8", "matmul", "compute-bound")
    parameters = mx_signature("gemm", "E4M3 bytes")
    bytes_formula = "(m + n)·(k + k/32) + 4·m·n (read both operands and scales, write C)"
    element_bits = 8
