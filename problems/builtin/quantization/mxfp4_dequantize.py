"""mxfp4-dequantize: packed E2M1 data with E8M0 block scales to float32."""

from __future__ import annotations

from problems.builtin.quantization._formats import FORMAT_NOTE, MxDequantize, mx_signature


class Mxfp4Dequantize(MxDequantize):
    slug = "mxfp4-dequantize"
    title = "MXFP4 Dequantization"
    description = (
        "Expand an m × k MXFP4 matrix (OCP Microscaling v1.0) to float32: `out[i][j] = e2m1(i, j) * "
        "2^(scale[i][j / 32] - 127)`. `q` holds m × k/2 bytes, row-major, two E2M1 values per byte with the "
        "even-indexed element (j even) in the low nibble and j + 1 in the high nibble. An E2M1 nibble is sign "
        "(bit 3), then a code 0..7 for the magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 (−0 is 0x8). `scale` holds "
        "one E8M0 byte per block of 32 consecutive elements of a row, row-major m × k/32 (0xFF, NaN, does not "
        "occur). k is a multiple of 32; m is not a multiple of anything. The results are exact in float32. "
        + FORMAT_NOTE
    )
    tags = ("quantization", "mxfp4", "memory-bound")
    parameters = mx_signature("dequantize", "E2M1 values, packed two per byte (m × k/2 bytes)")
    bytes_formula = "m·k/2 + m·k/32 + 4·m·k (read data and scales, write float32)"
    element_bits = 4
