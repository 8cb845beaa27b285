"""mxfp4-gemm: C = A · Bᵀ of two MXFP4 matrices (B stored n × k), float32 out."""

from __future__ import annotations

from problems.builtin.quantization._formats import FORMAT_NOTE, MxGemm, mx_signature


class Mxfp4Gemm(MxGemm):
    slug = "mxfp4-gemm"
    title = "MXFP4 GEMM"
    description = (
        "Multiply two MXFP4 matrices (OCP Microscaling v1.0): `c = A · Bᵀ`, with A stored m × k and B stored "
        "n × k, both row-major along k, and c m × n float32 row-major. Element (i, j) of a matrix is its E2M1 "
        "value times 2^(scale[i][j / 32] − 127): `q_a`/`q_b` pack two E2M1 values per byte, the even-indexed "
        "element in the low nibble (bit 3 of a nibble is the sign, codes 0..7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6); "
        "`scale_a`/`scale_b` hold one E8M0 byte per 32 consecutive elements of a row, row-major. k is a "
        "multiple of 32; m and n are not multiples of anything. Every product is exact, so accumulate in "
        "float32 (or better). " + FORMAT_NOTE
    )
    tags = ("quantization", "mxfp4", "matmul", "compute-bound")
    parameters = mx_signature("gemm", "E2M1 values, packed two per byte")
    bytes_formula = "(m + n)·(k/2 + k/32) + 4·m·n (read both operands and scales, write C)"
    element_bits = 4
