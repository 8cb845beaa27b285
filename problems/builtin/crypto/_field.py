"""The crypto family's shared rules: the moduli, residue generators and an exact convolution modulo 2^31 − 1.

Outputs are machine words, so they are compared exactly. torch has few operations on uint32/uint64, so the
references work in int64, which holds every value here (moduli below 2^62, products of 31-bit residues).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

# The Mersenne prime 2^31 − 1: residues fit in 31 bits, a product of two in 62, and 2^31 ≡ 1 makes reduction a
# shift and an add.
MERSENNE31 = (1 << 31) - 1


def residues(shape: tuple[int, ...], modulus: int, gen: torch.Generator) -> torch.Tensor:
    """Uniform residues in [0, modulus) as int64 on the generator's device."""
    import torch

    return torch.randint(0, modulus, shape, generator=gen, device=gen.device, dtype=torch.int64)


def with_edges(values: torch.Tensor, modulus: int, gen: torch.Generator, every: int = 61) -> torch.Tensor:
    """`values` with about one element in `every` set to 0 and as many to modulus − 1, where carries and
    reductions go wrong first."""
    import torch

    pick = torch.randint(0, every, values.shape, generator=gen, device=gen.device)
    values = values.where(pick != 0, torch.zeros_like(values))
    return values.where(pick != 1, torch.full_like(values, modulus - 1))


def convolve_mod_mersenne31(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The full linear convolution of two residue vectors (length 2n − 1) modulo 2^31 − 1, exactly, as int64.

    Each 31-bit residue is split into four 8-bit limbs. A limb convolution's terms are below 2^16 and its sums
    below n · 2^16, so a float64 FFT gives each sum to well within 0.5 of its integer (checked below), and the
    limb sums recombine by powers of two, which are powers of two again modulo 2^31 − 1.
    """
    import torch

    a, b = a.to(torch.int64), b.to(torch.int64)
    n = a.numel()
    length = 2 * n - 1
    size = 1 << (length - 1).bit_length()
    limbs = 4
    fa = [torch.fft.rfft(((a >> (8 * i)) & 0xFF).double(), n=size) for i in range(limbs)]
    fb = [torch.fft.rfft(((b >> (8 * i)) & 0xFF).double(), n=size) for i in range(limbs)]
    total = torch.zeros(length, dtype=torch.int64, device=a.device)
    for shift in range(2 * limbs - 1):
        spectrum = sum(fa[i] * fb[shift - i] for i in range(limbs) if 0 <= shift - i < limbs)
        sums = torch.fft.irfft(spectrum, n=size)[:length]  # type: ignore[arg-type]
        rounded = sums.round()
        if length and float((sums - rounded).abs().max()) > 0.25:
            raise RuntimeError("the float64 FFT lost integer precision; the reference cannot be trusted")
        term = rounded.to(torch.int64) % MERSENNE31
        total = (total + (term << ((8 * shift) % 31)) % MERSENNE31) % MERSENNE31
    return total
