"""mxfp4-quantize: float32 to packed E2M1 data with E8M0 block scales; exact scales, data checked by value."""

from __future__ import annotations

from problems.builtin.quantization._formats import FORMAT_NOTE, MxQuantize, mx_signature


class Mxfp4Quantize(MxQuantize):
    slug = "mxfp4-quantize"
    title = "MXFP4 Quantization"
    description = (
        "Quantize an m × k float32 matrix to MXFP4 (OCP Microscaling v1.0): blocks of 32 consecutive elements "
        "of a row share one E8M0 scale. For each block, let amax be its largest magnitude and e = "
        "floor(log2(amax)) − 2 (2 is the exponent of E2M1's largest power of two), clamped to [−127, 127]; an "
        "all-zero block gets e = −127. Write `scale = e + 127` (row-major m × k/32 bytes). Each element becomes "
        "the E2M1 value nearest to x / 2^e (exact, since 2^e is a power of two), ties to the even code, "
        "saturating at ±6; the sign bit is the input's sign, so a small negative value gives −0 (0x8). E2M1 "
        "codes 0..7 are the magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 and bit 3 is the sign. Pack two per byte into "
        "`q` (row-major m × k/2), the even-indexed element in the low nibble. Ties do occur in the inputs. `scale` is "
        "compared exactly, `q` by its decoded values (so +0 for −0 passes, any other difference fails). k is a "
        "multiple of 32. " + FORMAT_NOTE
    )
    tags = ("quantization", "mxfp4", "memory-bound")
    parameters = mx_signature("quantize", "E2M1 values, packed two per byte (m × k/2 bytes)")
    bytes_formula = "4·m·k + m·k/2 + m·k/32 (read float32, write data and scales)"
    element_bits = 4
