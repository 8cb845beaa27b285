"""The quantization family's shared rules: the element and scale encodings, packing, and the problems' bases.

Formats (OCP Microscaling spec v1.0, and NVIDIA's NVFP4):
- E2M1 (FP4): sign, 2 exponent bits (bias 1), 1 mantissa bit. Magnitudes by code 0..7: 0, 0.5, 1, 1.5, 2, 3, 4, 6;
  bit 3 is the sign. Two values per byte, the even-indexed element in the low nibble.
- E4M3 (FP8, the OCP "fn" variant): bias 7, largest finite 448, no infinities, 0x7F/0xFF are NaN.
- E8M0 (the MX scale): one byte e meaning 2^(e − 127); 0xFF is NaN.
MX blocks are 32 consecutive elements along K with one E8M0 scale; NVFP4 blocks are 16 with an E4M3 scale and
a float32 global scale. Quantization rounds to nearest, ties to even, and saturates to the largest finite
value; the sign of the input is kept, so a small negative value that rounds to zero is −0 (0x8 / 0x80).

Kept as one module: the encodings, the packing and the bases of one problem family are one specification, each part
defined in terms of the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DType, Param, Tolerance
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch

E2M1_MAGNITUDES: tuple[float, ...] = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
# Midpoints between neighbouring E2M1 magnitudes, and whether a tie there goes up (the upper code is even).
E2M1_MIDPOINTS: tuple[tuple[float, bool], ...] = (
    (0.25, False),
    (0.75, True),
    (1.25, False),
    (1.75, True),
    (2.5, False),
    (3.5, True),
    (5.0, False),
)
E4M3_MAX = 448.0
# The exponent of each element format's largest power of two (6 = 1.5 · 2^2, 448 = 1.75 · 2^8): the MX shared
# exponent is floor(log2(amax)) minus this.
EMAX_E2M1 = 2
EMAX_E4M3 = 8
MX_BLOCK = 32
NV_BLOCK = 16
FP4_MAX = 6.0

# Dequantized values are exact products, but Tensara's check allowed a relative 1e-3 (a float16 path passes), so
# this does too; any wrong code or scale is off by a whole step of the format (6 % or more), far more than this.
DEQUANTIZE_TOLERANCES: dict[DType, Tolerance] = {"float32": Tolerance(rtol=1e-3, atol=0.0)}
# Tensara's GEMM check was allclose(rtol=2e-2, atol=5e-2), an absolute atol. Our atol is a fraction of rms(C):
# Tensara's smallest cases (k = 1024) had rms(C) ≈ 32 in the MX GEMMs (randn operands) and ≈ 10.7 in the NVFP4
# GEMM (uniform [-1, 1) operands, rms 1/√3), so its 5e-2 was 1.6e-3 and 4.7e-3 of rms(C) there, and less at
# larger k. These bounds accept at least that; a wrong scale, a dropped block or a misread layout is off by far
# more (a whole block's contribution, tens of percent of rms(C)).
MX_GEMM_TOLERANCES: dict[DType, Tolerance] = {"float32": Tolerance(rtol=2e-2, atol=2e-3)}
NV_GEMM_TOLERANCES: dict[DType, Tolerance] = {"float32": Tolerance(rtol=2e-2, atol=5e-3)}

FORMAT_NOTE = (
    "Hardware FP4/FP8 tensor cores need a Blackwell GPU; the arithmetic itself is plain integer and float work "
    "that any GPU can do, and it is checked on whatever GPU judges the submission."
)


# -- encodings -----------------------------------------------------------------------------------------------


def e2m1_decode(codes: torch.Tensor) -> torch.Tensor:
    """float64 values of 4-bit E2M1 codes (uint8, 0..15)."""
    import torch

    table = torch.tensor(E2M1_MAGNITUDES, dtype=torch.float64, device=codes.device)
    magnitude = table[(codes & 7).long()]
    return torch.where((codes & 8) != 0, -magnitude, magnitude)


def e2m1_encode(y: torch.Tensor) -> torch.Tensor:
    """E2M1 codes (uint8) of `y` (exact float values): nearest, ties to the even code, saturating at 6."""
    import torch

    magnitude = y.abs()
    code = torch.zeros(y.shape, dtype=torch.uint8, device=y.device)
    for midpoint, tie_up in E2M1_MIDPOINTS:
        code += (magnitude >= midpoint) if tie_up else (magnitude > midpoint)
    return code | (torch.signbit(y).to(torch.uint8) << 3)


def unpack_fp4(q: torch.Tensor) -> torch.Tensor:
    """[rows, k/2] bytes to [rows, k] codes: the low nibble is the even-indexed element."""
    import torch

    return torch.stack((q & 0xF, q >> 4), dim=-1).reshape(q.shape[0], -1)


def pack_fp4(codes: torch.Tensor) -> torch.Tensor:
    """[rows, k] codes to [rows, k/2] bytes, the even-indexed element in the low nibble."""
    pairs = codes.reshape(codes.shape[0], -1, 2)
    return pairs[..., 0] | (pairs[..., 1] << 4)


def e4m3_encode(y: torch.Tensor) -> torch.Tensor:
    """E4M3 bytes (uint8) of `y`: nearest, ties to even (torch's conversion), saturated to ±448 first."""
    import torch

    return y.float().clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn).view(torch.uint8)


def e4m3_decode(q: torch.Tensor) -> torch.Tensor:
    """float64 values of E4M3 bytes (uint8 or float8_e4m3fn)."""
    import torch

    return q.view(torch.float8_e4m3fn).to(torch.float64)


def pow2(exponent: torch.Tensor) -> torch.Tensor:
    """2^e as float64 for integer e in [−1022, 1023], built from its bits so that it is exact on any device."""
    import torch

    return ((exponent.long() + 1023) << 52).view(torch.float64)


def e8m0_decode(scale: torch.Tensor) -> torch.Tensor:
    """float64 values 2^(e − 127) of E8M0 bytes."""
    return pow2(scale.long() - 127)


def random_bytes(shape: tuple[int, ...], gen: torch.Generator, low: int = 0, high: int = 256) -> torch.Tensor:
    import torch

    return torch.randint(low, high, shape, generator=gen, device=gen.device, dtype=torch.int32).to(torch.uint8)


def random_e4m3(shape: tuple[int, ...], gen: torch.Generator, positive: bool = False) -> torch.Tensor:
    """Random E4M3 bytes, never NaN (0x7F / 0xFF), positive and normal (at least 2^-6) where asked."""
    import torch

    if positive:
        # Exponent fields 1..15 with any mantissa, minus the NaN pattern: 2^-6 up to 448.
        return random_bytes(shape, gen, 0x08, 0x7F)
    raw = random_bytes(shape, gen)
    return torch.where((raw & 0x7F) == 0x7F, raw ^ 1, raw)


# -- the swizzled 128×4 scale layout ---------------------------------------------------------------------------

# cuBLAS's block-scaled GEMMs read scales in tiles of 128 rows × 4 blocks, 512 bytes each (torch's
# `SWIZZLE_32_4_4`, torchao's `to_mx(..., is_swizzled_scales=True)`, flashinfer's `layout_128x4`); Tensara's
# GEMMs and NVFP4 quantize/dequantize passed their scales so.
TILE_ROWS = 128
TILE_BLOCKS = 4
TILE_BYTES = TILE_ROWS * TILE_BLOCKS

SWIZZLE_NOTE = (
    "The scales are in the swizzled 128×4 layout of cuBLAS's block-scaled GEMMs (torch's `SWIZZLE_32_4_4`, "
    "torchao's `to_mx(..., is_swizzled_scales=True)`, flashinfer's `layout_128x4`), not row-major: the rows × "
    "blocks scale matrix is padded to whole tiles of 128 rows × 4 blocks, `R = ceil(rows/128)·128` by `C = "
    "ceil(blocks/4)·4` bytes, and tile (i, j) = (row / 128, block / 4) is the 512 bytes at `(i·(C/4) + j)·512`. "
    "Inside its tile, the scale of row r and block b lies at byte `(r % 32)·16 + ((r % 128) / 32)·4 + b % 4`. "
    "Sizes that are whole tiles need no padding; the first case is ragged, so its buffer holds padding, whose "
    "bytes mean nothing."
)


def ceil_to(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def swizzled_shape(rows: int, blocks: int) -> tuple[int, int]:
    """The shape (R, C) of a swizzled scale buffer: rows and blocks padded to whole 128 × 4 tiles."""
    return ceil_to(rows, TILE_ROWS), ceil_to(blocks, TILE_BLOCKS)


def swizzled_offsets(rows: int, blocks: int, device: Any = "cpu") -> torch.Tensor:
    """[rows, blocks] int64: the byte of the swizzled buffer that holds the scale of each row and block."""
    import torch

    r = torch.arange(rows, device=device).unsqueeze(1)
    b = torch.arange(blocks, device=device).unsqueeze(0)
    tiles_per_row = swizzled_shape(rows, blocks)[1] // TILE_BLOCKS
    tile = (r // TILE_ROWS) * tiles_per_row + b // TILE_BLOCKS
    return tile * TILE_BYTES + (r % 32) * 16 + (r % TILE_ROWS // 32) * 4 + b % TILE_BLOCKS


def swizzle(scales: torch.Tensor, padding: torch.Tensor) -> torch.Tensor:
    """[rows, blocks] scales laid out swizzled in a copy of `padding` (the buffer of swizzled_shape, whose other
    entries stay as they are)."""
    rows, blocks = scales.shape
    out = padding.clone()
    out.reshape(-1)[swizzled_offsets(rows, blocks, scales.device).reshape(-1)] = scales.reshape(-1)
    return out


def unswizzle(buffer: torch.Tensor, rows: int, blocks: int) -> torch.Tensor:
    """The [rows, blocks] scales of a swizzled buffer (its padding left out)."""
    return buffer.reshape(-1)[swizzled_offsets(rows, blocks, buffer.device)]


# -- MX quantization --------------------------------------------------------------------------------------------


def mx_shared_exponent(blocks: torch.Tensor, emax: int) -> torch.Tensor:
    """The MX shared exponent of each block (last axis): floor(log2(amax)) − emax, clamped to [−127, 127]; an
    all-zero block gets −127."""
    import torch

    amax = blocks.abs().amax(dim=-1)
    _, exponent = torch.frexp(amax.float())  # amax = mantissa · 2^exponent, mantissa in [0.5, 1)
    shared = (exponent.long() - 1 - emax).where(amax > 0, torch.full_like(exponent, -127, dtype=torch.long))
    return shared.clamp(-127, 127)


def mx_quantize(a: torch.Tensor, emax: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Scale bytes [m, k/32] and the scaled values a / 2^shared (exact, float64) of an MX quantization."""
    import torch

    m, k = a.shape
    blocks = a.double().reshape(m, k // MX_BLOCK, MX_BLOCK)
    shared = mx_shared_exponent(blocks, emax)
    scaled = (blocks * pow2(-shared).unsqueeze(-1)).reshape(m, k)
    return (shared + 127).to(torch.uint8), scaled


def mx_inputs(shape: tuple[int, int], gen: torch.Generator, ties: tuple[float, ...], emax: int) -> torch.Tensor:
    """float32 values whose blocks span 2^-8 to 2^8 in magnitude, with about one element in 16 replaced by an
    exact rounding tie of the element format at its block's scale, so round-half-to-even is exercised."""
    import torch

    m, k = shape
    values = torch.randn(m, k // MX_BLOCK, MX_BLOCK, generator=gen, device=gen.device)
    magnitude = torch.randint(-8, 9, (m, k // MX_BLOCK, 1), generator=gen, device=gen.device)
    values = values * pow2(magnitude).float()
    shared = mx_shared_exponent(values, emax).unsqueeze(-1)
    tie_table = torch.tensor(ties, dtype=torch.float64, device=gen.device)
    pick = torch.randint(0, len(ties), values.shape, generator=gen, device=gen.device)
    tie = (tie_table[pick] * pow2(shared) * values.sign()).float()
    chosen = torch.randint(0, 16, values.shape, generator=gen, device=gen.device) == 0
    return values.where(~chosen, tie).reshape(m, k)


def e4m3_ties() -> tuple[float, ...]:
    """Midpoints between neighbouring normal E4M3 values below 256: (2j + 1)/16 · 2^e."""
    return tuple((2 * j + 1) / 16 * 2.0**e for e in range(-6, 8) for j in range(8, 16))


# -- NVFP4 ------------------------------------------------------------------------------------------------------


def case_bound(dims: Dims, salt: int = 0) -> float:
    """The bound on |input| of an NVFP4 case (1 to 4, set by the sizes): no constant fits every case."""
    return float(1 + (sum(dims) + salt) % 4)


def case_global_scale(dims: Dims, salt: int = 0) -> float:
    """The NVFP4 global encode scale of a case, 6 · 448 / bound, so that the largest block scale is near 448.
    An integer, so exact in float32."""
    return FP4_MAX * E4M3_MAX / case_bound(dims, salt)


def nv_block_scales(x: torch.Tensor, sf_g: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The unrounded block scales amax · sf_g / 6 (float64) of [m, k] values, and their E4M3 bytes."""
    m = x.shape[0]
    amax = x.double().abs().reshape(m, -1, NV_BLOCK).amax(dim=-1)
    target = amax * sf_g / FP4_MAX
    return target, e4m3_encode(target)


def nv_quantize(a: torch.Tensor, sf_g: float) -> tuple[torch.Tensor, torch.Tensor]:
    """NVFP4 data bytes [m, k/2] and E4M3 block scales [m, k/16] of `a`, computed exactly."""
    import torch

    m, k = a.shape
    x = a.double().reshape(m, -1, NV_BLOCK)
    _, scale = nv_block_scales(a, sf_g)
    s = e4m3_decode(scale).unsqueeze(-1)
    # A zero scale (never drawn here) makes every element ±0, with the input's sign.
    y = torch.where(s > 0, x * sf_g / s.clamp_min(2.0**-9), x * 0)
    # The scales as their exact float64 values: torch has few float8 operations, and the check compares values.
    return pack_fp4(e2m1_encode(y.reshape(m, k))), s.squeeze(-1)


# A computed value this close (relatively) to a rounding boundary counts as a tie: kernels divide or multiply by
# reciprocals in float32, whose few-ulp errors (about 2^-22) must never decide a rounding.
NEAR = 2.0**-16


def nv_near_ties(a: torch.Tensor, sf_g: float) -> torch.Tensor:
    """Elements [m, k] whose rounding (their own, or their block scale's if they are the block's amax) lies
    within NEAR of a tie."""
    import torch

    m, k = a.shape
    target, scale = nv_block_scales(a, sf_g)
    _, exponent = torch.frexp(target)
    step = torch.where(target < 2.0**-6, torch.full_like(target, 2.0**-9), pow2(exponent.long() - 4))
    midpoint = (torch.floor(target / step) + 0.5) * step
    block_near = ((target - midpoint).abs() <= NEAR * target) & (target < E4M3_MAX)
    x = a.double().abs().reshape(m, -1, NV_BLOCK)
    s = e4m3_decode(scale).unsqueeze(-1).clamp_min(2.0**-9)
    y = x * sf_g / s
    near = torch.zeros_like(y, dtype=torch.bool)
    for mid, _ in E2M1_MIDPOINTS:
        near |= (y - mid).abs() <= NEAR * mid
    near |= block_near.unsqueeze(-1) & (x == x.amax(dim=-1, keepdim=True))
    return near.reshape(m, k)


def nv_inputs(shape: tuple[int, int], bound: float, sf_g: float, gen: torch.Generator) -> torch.Tensor:
    """float16 values below `bound` in magnitude, blocks scaled by 2^0 to 2^-5, with every near-tie moved one
    float16 step toward zero, so that the exact rounding rule and any float32 path agree."""
    import torch

    m, k = shape
    values = torch.rand(m, k // NV_BLOCK, NV_BLOCK, generator=gen, device=gen.device) * 2 - 1
    shrink = torch.randint(0, 6, (m, k // NV_BLOCK, 1), generator=gen, device=gen.device)
    a = (values * bound * pow2(-shrink).float()).reshape(m, k).half()
    for _ in range(16):
        near = nv_near_ties(a, sf_g)
        if not bool(near.any()):
            return a
        bits = a.view(torch.int16)
        # One step toward zero: the magnitude bits lose one, the sign bit stays.
        a = torch.where(near & ((bits & 0x7FFF) != 0), bits - 1, bits).view(torch.float16)
    raise RuntimeError("could not move the NVFP4 inputs off rounding ties")


def nv_dequantize(q: torch.Tensor, scale: torch.Tensor, sf_g: float) -> torch.Tensor:
    """float64 values of NVFP4 data: e2m1 · scale / sf_g, blocks of 16 along each row."""
    m = q.shape[0]
    values = e2m1_decode(unpack_fp4(q)).reshape(m, -1, NV_BLOCK)
    return (values * e4m3_decode(scale).unsqueeze(-1) / sf_g).reshape(m, -1)


def mx_dequantize(codes_values: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """float64 element values [m, k] times their blocks' E8M0 scales [m, k/32]."""
    m = codes_values.shape[0]
    blocks = codes_values.reshape(m, -1, MX_BLOCK)
    return (blocks * e8m0_decode(scale).unsqueeze(-1)).reshape(m, -1)


# -- the problems' bases ----------------------------------------------------------------------------------------

# (m, k), k a multiple of the block: a ragged m, K off the multiples of 64, then up to 128 Mi elements.
MX_GPU_MK: tuple[Dims, ...] = ((1000, 992), (4096, 4096), (6151, 8192), (8192, 16384))
MX_CPU_MK: tuple[Dims, ...] = ((7, 64), (33, 96), (129, 256))
NV_GPU_MK: tuple[Dims, ...] = ((1000, 1008), (4096, 4096), (6151, 8192), (8192, 16384))
NV_CPU_MK: tuple[Dims, ...] = ((7, 48), (33, 80), (129, 256))
# The problems with swizzled scales. Tensara's sizes were whole tiles (multiples of 128 rows and of 4 blocks),
# and so are ours after the first, ragged case, whose scale buffers are padded (as Tensara's 32 × 32 sample's
# were). NVFP4 quantize/dequantize (m, k): the CPU cases put a real scale in the middle of the buffer.
NV_SWIZZLED_GPU_MK: tuple[Dims, ...] = ((1000, 1008), (4096, 4096), (6144, 8192), (8192, 16384))
NV_SWIZZLED_CPU_MK: tuple[Dims, ...] = ((33, 80), (128, 64), (129, 256))
# (m, n, k): ragged m and n with k off the whole tiles, a skinny n, a mid size, then a square 4096.
MX_GPU_MNK: tuple[Dims, ...] = ((1000, 1003, 992), (4096, 128, 4096), (2048, 2048, 1024), (4096, 4096, 4096))
MX_CPU_MNK: tuple[Dims, ...] = ((17, 33, 64), (128, 128, 128), (129, 127, 256))
NV_GPU_MNK: tuple[Dims, ...] = ((1000, 1003, 1008), (4096, 128, 4096), (2048, 2048, 1024), (4096, 4096, 4096))
NV_CPU_MNK: tuple[Dims, ...] = ((17, 33, 48), (128, 128, 128), (129, 127, 272))


class QuantProblem(KernelProblem):
    """The family's common settings: float32 problems whose buffers have fixed element types."""

    dtypes: ClassVar[tuple[DType, ...]] = ("float32",)
    dim_names: ClassVar[tuple[str, ...]] = ("m", "k")
    # K, the last size, is whole blocks (32 for MX, 16 for NVFP4; 32 suits both).
    holdout_multiples: ClassVar[tuple[int, ...] | None] = (32,)

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        return 0


class MxDequantize(QuantProblem):
    """(q, scale, out, m, k): MX data and E8M0 scales to float32."""

    difficulty = "easy"
    score_metric = "gbps"
    gpu_cases = MX_GPU_MK
    cpu_cases = MX_CPU_MK
    tolerances = DEQUANTIZE_TOLERANCES
    flops_formula = "0 (scored by bytes moved)"
    # Bits per element of the data format.
    element_bits: ClassVar[int] = 4

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        m, k = dims
        return {"q": (m, k * self.element_bits // 8), "scale": (m, k // MX_BLOCK), "out": (m, k)}

    def make_inputs(self, dims: Dims, dtype: Any, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        shapes = self.shapes(dims)
        q = random_bytes(shapes["q"], gen) if self.element_bits == 4 else random_e4m3(shapes["q"], gen)
        # Scales 2^-20 to 2^20: every product stays a normal float32.
        return q, random_bytes(shapes["scale"], gen, 127 - 20, 127 + 21)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        q, scale = args[0], args[1]
        values = e2m1_decode(unpack_fp4(q)) if self.element_bits == 4 else e4m3_decode(q)
        return mx_dequantize(values, scale)


# Tensara checked MX quantization on the decoded values, allclose(rtol=1e-3, atol=1e-3), with inputs in [-1, 1):
# its blocks' largest magnitude is just under 2^0, so their shared exponent is -1 - emax and its absolute 1e-3 is
# 1e-3 · 2^(1 + emax) in element units (the values before the block scale). Every block is alike in those units,
# so the same bound carries Tensara's check over to our blocks of any magnitude.
MX_ELEMENT_RTOL = 1e-3


def mx_element_atol(emax: int) -> float:
    """Tensara's absolute 1e-3 in element units: 0.008 for E2M1 (under its smallest step, 0.5), 0.512 for E4M3."""
    return 1e-3 * 2.0 ** (1 + emax)


class MxQuantize(QuantProblem):
    """(a, q, scale, m, k): float32 to MX data and E8M0 scales. The scales are checked exactly, the data by its
    decoded element values, as Tensara checked it: +0 for -0 passes, and in MXFP8 an element below 8 before the
    block scale may be off by one rounding step (at most 0.5 there)."""

    difficulty = "medium"
    score_metric = "gbps"
    gpu_cases = MX_GPU_MK
    cpu_cases = MX_CPU_MK
    flops_formula = "0 (scored by bytes moved)"
    element_bits: ClassVar[int] = 4

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        m, k = dims
        return {"a": (m, k), "q": (m, k * self.element_bits // 8), "scale": (m, k // MX_BLOCK)}

    def make_inputs(self, dims: Dims, dtype: Any, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        if self.element_bits == 4:
            ties = tuple(mid for mid, _ in E2M1_MIDPOINTS)
            return (mx_inputs(dims, gen, ties, EMAX_E2M1),)  # type: ignore[arg-type]
        return (mx_inputs(dims, gen, e4m3_ties(), EMAX_E4M3),)  # type: ignore[arg-type]

    def reference_solution(self, *args: Any) -> tuple[torch.Tensor, torch.Tensor]:
        import torch

        a = args[0]
        emax = self.element_emax()
        scale, scaled = mx_quantize(a, emax)
        q = pack_fp4(e2m1_encode(scaled)) if self.element_bits == 4 else e4m3_encode(scaled)
        # The scale bytes' values as int16, so that `verify_result` tells them from the data bytes (uint8).
        return q, scale.to(torch.int16)

    def element_emax(self) -> int:
        return EMAX_E2M1 if self.element_bits == 4 else EMAX_E4M3

    def element_values(self, q: torch.Tensor) -> torch.Tensor:
        """float64 element values [m, k] of data bytes, before the block scale (−0 and +0 both 0)."""
        return e2m1_decode(unpack_fp4(q)) if self.element_bits == 4 else e4m3_decode(q)

    def verify_result(
        self, expected_output: torch.Tensor, actual_output: torch.Tensor, dtype: DType
    ) -> tuple[bool, dict[str, Any]]:
        import torch

        from problems.verification import compare_outputs

        if expected_output.dtype != torch.uint8:  # the scales: exact
            return super().verify_result(expected_output, actual_output, dtype)
        if tuple(actual_output.shape) != tuple(expected_output.shape):
            return False, {
                "reason": f"output shape {tuple(actual_output.shape)} != expected {tuple(expected_output.shape)}"
            }
        expected = self.element_values(expected_output)
        actual = self.element_values(actual_output.to(torch.uint8))
        # compare_outputs scales atol by the RMS of the expected values; the bound here is absolute.
        rms = float(expected.square().mean().sqrt()) or 1.0
        return compare_outputs(expected, actual, Tolerance(MX_ELEMENT_RTOL, mx_element_atol(self.element_emax()) / rms))


class MxGemm(QuantProblem):
    """(q_a, scale_a, q_b, scale_b, c, m, n, k): C = A · Bᵀ of two MX matrices with swizzled scales, float32 out."""

    tags: ClassVar[tuple[str, ...]] = ()
    difficulty = "hard"
    gpu_cases = MX_GPU_MNK
    cpu_cases = MX_CPU_MNK
    dim_names = ("m", "n", "k")
    tolerances = MX_GEMM_TOLERANCES
    flops_formula = "2 · m · n · k (a multiply and an add per term)"
    element_bits: ClassVar[int] = 4

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        m, n, k = dims
        width = k * self.element_bits // 8
        return {
            "q_a": (m, width),
            "scale_a": swizzled_shape(m, k // MX_BLOCK),
            "q_b": (n, width),
            "scale_b": swizzled_shape(n, k // MX_BLOCK),
            "c": (m, n),
        }

    def flops(self, dims: Dims) -> int:
        m, n, k = dims
        return 2 * m * n * k

    def make_inputs(self, dims: Dims, dtype: Any, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        shapes = self.shapes(dims)
        out = []
        for side in ("a", "b"):
            q_shape = shapes[f"q_{side}"]
            q = random_bytes(q_shape, gen) if self.element_bits == 4 else random_e4m3(q_shape, gen)
            # Scales 2^-4 to 2^4 per block: sums mix magnitudes without leaving float32's comfortable range. The
            # padding of a ragged case's buffer gets such bytes too, so a kernel that reads it gets wrong scales.
            out += [q, random_bytes(shapes[f"scale_{side}"], gen, 127 - 4, 127 + 5)]
        return tuple(out)

    def dequantize(self, q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        """float64 [rows, k] values of one operand, its scales read from the swizzled buffer."""
        values = e2m1_decode(unpack_fp4(q)) if self.element_bits == 4 else e4m3_decode(q)
        rows, k = values.shape
        return mx_dequantize(values, unswizzle(scale, rows, k // MX_BLOCK))

    def reference_solution(self, *args: Any) -> torch.Tensor:
        q_a, scale_a, q_b, scale_b = args[:4]
        return self.dequantize(q_a, scale_a) @ self.dequantize(q_b, scale_b).T


def mx_signature(kind: str, element_doc: str) -> tuple[Param, ...]:
    """The parameter lists of the MX problems (`kind`: dequantize, quantize, gemm)."""
    if kind == "dequantize":
        return (
            Param("q", "input", doc=f"m × k {element_doc}, row-major", element="uint8"),
            Param("scale", "input", doc="m × k/32 E8M0 scale bytes, row-major", element="uint8"),
            Param("out", "output", doc="m × k float32, row-major"),
            Param("m", "scalar", "size_t", "rows"),
            Param("k", "scalar", "size_t", "columns, a multiple of 32"),
        )
    if kind == "quantize":
        return (
            Param("a", "input", doc="m × k float32, row-major"),
            Param("q", "output", doc=f"m × k {element_doc}, row-major", element="uint8"),
            Param("scale", "output", doc="m × k/32 E8M0 scale bytes, row-major", element="uint8"),
            Param("m", "scalar", "size_t", "rows"),
            Param("k", "scalar", "size_t", "columns, a multiple of 32"),
        )
    return (
        Param("q_a", "input", doc=f"A: m × k {element_doc}, row-major", element="uint8"),
        Param(
            "scale_a",
            "input",
            doc="A's m × k/32 E8M0 scale bytes, swizzled 128×4 (ceil(m/128)·128 × ceil(k/128)·4 bytes)",
            element="uint8",
        ),
        Param("q_b", "input", doc=f"B: n × k {element_doc}, row-major (C = A · Bᵀ)", element="uint8"),
        Param(
            "scale_b",
            "input",
            doc="B's n × k/32 E8M0 scale bytes, swizzled 128×4 (ceil(n/128)·128 × ceil(k/128)·4 bytes)",
            element="uint8",
        ),
        Param("c", "output", doc="m × n float32, row-major"),
        Param("m", "scalar", "size_t", "rows of A and C"),
        Param("n", "scalar", "size_t", "rows of B, columns of C"),
        Param("k", "scalar", "size_t", "the reduced dimension, a multiple of 32"),
    )
