"""The elementwise family's shared rule for float scalars: they travel to `solution` as C `float`.

A case's float scalar is rounded to float32 before the reference sees it, so that the reference computes with
exactly the value a kernel receives and the tolerance is spent on the kernel's arithmetic alone.
"""

from __future__ import annotations

import struct


def as_float32(value: float) -> float:
    """`value` rounded to the nearest float32, as a Python float."""
    return float(struct.unpack("f", struct.pack("f", value))[0])
