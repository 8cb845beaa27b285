"""mxfp8-dequantize: E4M3 data with E8M0 block scales to float32."""

from __future__ import annotations

from problems.builtin.quantization._formats import FORMAT_NOTE, MxDequantize, mx_signature


class Mxfp8Dequantize(MxDequantize):
    slug = "mxfp8-dequantize"
    title = "MXFP8 Dequantization"
    description = (
        "Expand an m × k MXFP8 matrix (OCP Microscaling v1.0, E4M3 elements) to float32: `out[i][j] = "
        "e4m3(q[i][j]) * 2^(scale[i][j / 32] - 127)`. `q` holds m × k E4M3 bytes, row-major (the OCP/`fn` "
        "variant: bias 7, largest finite 448, no infinities; the NaN bytes 0x7F and 0xFF do not occur). "
        "`scale` holds one E8M0 byte per block of 32 consecutive elements of a row, row-major m × k/32. k is a "
        "multiple of 32; m is not a multiple of anything. The results are exact in float32. " + FORMAT_NOTE
    )
    tags = ("quantization", "mxfp8", "memory-bound")
    parameters = mx_signature("dequantize", "E4M3 bytes")
    bytes_formula = "m·k + m·k/32 + 4·m·k (read data and scales, write float32)"
    element_bits = 8
