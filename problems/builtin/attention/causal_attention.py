"""causal-attention: softmax(Q·Kᵀ/sqrt(D) + causal mask)·V over [B, H, S, D] tensors."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.attention._attention import AttentionProblem, attention_flops, attention_reference, pairs
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class CausalAttention(AttentionProblem):
    slug = "causal-attention"
    title = "Causal Self-Attention"
    description = (
        "For every batch b and head h, compute `output = softmax(Q·Kᵀ / sqrt(D) + mask)·V` where the mask is "
        "-inf above the diagonal: query i attends to keys 0..i only, as in a decoder's prefill. Q, K, V and the "
        "output are row-major, contiguous [B, H, S, D] tensors. Only about half the score matrix is needed; the "
        "FLOP count credits just that half. S and D are not multiples of any tile size."
    )
    difficulty = "hard"
    parameters = (
        Param("Q", "input", doc="queries, [B, H, S, D]"),
        Param("K", "input", doc="keys, [B, H, S, D]"),
        Param("V", "input", doc="values, [B, H, S, D]"),
        Param("output", "output", doc="[B, H, S, D]"),
        Param("B", "scalar", "size_t", "batch size"),
        Param("H", "scalar", "size_t", "heads"),
        Param("S", "scalar", "size_t", "sequence length"),
        Param("D", "scalar", "size_t", "head dimension"),
    )
    # (B, H, S, D): a ragged sequence and head size, then up to 34 GFLOP.
    gpu_cases = ((2, 4, 255, 64), (2, 8, 1000, 80), (4, 16, 1024, 64), (2, 16, 2048, 128))
    cpu_cases = ((1, 2, 7, 4), (1, 3, 33, 16), (2, 2, 65, 24))
    dim_names = ("b", "h", "s", "d")
    flops_formula = "B·H·P·(4·D + 5), P = S·(S+1)/2 scored pairs (2·D each for Q·Kᵀ and P·V, 5 for the softmax)"
    bytes_formula = "4 · B·H·S·D · sizeof(dtype) (read Q, K, V; write the output)"
    # Default tolerances. Row 0 is V[0] itself (one key), far above the output's RMS: a kernel that loses the
    # diagonal or normalises wrongly fails there.

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        shape = tuple(dims)
        return {"Q": shape, "K": shape, "V": shape, "output": shape}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        b, h, s, d = dims
        return attention_flops(b * h, pairs(s, True), d)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        q, k, v, b, h, s, d = args
        rows = b * h
        out = attention_reference(q.reshape(rows, s, d), k.reshape(rows, s, d), v.reshape(rows, s, d), None, True)
        return out.reshape(b, h, s, d)
