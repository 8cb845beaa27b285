"""mxfp8-quantize: float32 to E4M3 data with E8M0 block scales; exact scales, data checked by value."""

from __future__ import annotations

from problems.builtin.quantization._formats import FORMAT_NOTE, MxQuantize, mx_signature


class Mxfp8Quantize(MxQuantize):
    slug = "mxfp8-quantize"
    title = "MXFP8 Quantization"
    description = (
        "Quantize an m × k float32 matrix to MXFP8 with E4M3 elements (OCP Microscaling v1.0): blocks of 32 "
        "consecutive elements of a row share one E8M0 scale. For each block, let amax be its largest magnitude "
        "and e = floor(log2(amax)) − 8 (8 is the exponent of E4M3's largest power of two), clamped to "
        "[−127, 127]; an all-zero block gets e = −127. Write `scale = e + 127` (row-major m × k/32 bytes). "
        "Each element becomes the E4M3 value (OCP/`fn` variant: bias 7, largest finite 448, subnormals down to "
        "2^-9) nearest to x / 2^e, ties to even, saturating at ±448 (never NaN); the sign bit is the input's "
        "sign, so a small negative value gives −0 (0x80). Write the bytes to `q`, row-major m × k. Ties do "
        "occur in the inputs. `scale` is compared exactly, `q` by its "
        "decoded values: +0 for −0 passes, and an element below 8 before the block scale (1/56 to 1/32 of its "
        "block's largest) may be one rounding step off, as Tensara's absolute tolerance allowed; any other "
        "difference fails. k is a multiple of 32. " + FORMAT_NOTE
    )
    tags = ("quantization", "mxfp8", "memory-bound")
    parameters = mx_signature("quantize", "E4M3 bytes")
    bytes_formula = "4·m·k + m·k + m·k/32 (read float32, write data and scales)"
    element_bits = 8
