"""The graphics family's shared rules: single-channel float images in [0, 1), row-major, of ragged sizes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.library import Dims

if TYPE_CHECKING:
    import torch

# (height, width): a ragged small image, full HD, a ragged 8-megapixel one, then 64 megapixels.
GPU_HW: tuple[Dims, ...] = ((67, 129), (1080, 1920), (2161, 3847), (8192, 8192))
CPU_HW: tuple[Dims, ...] = ((5, 7), (33, 20), (64, 97))


def pixels(shape: tuple[int, ...], gen: torch.Generator) -> torch.Tensor:
    """Uniform float32 intensities in [0, 1), as an image normalised from 8 or 16 bits would hold."""
    from problems.inputs import uniform

    return uniform(shape, "float32", gen, 0.0, 1.0)
