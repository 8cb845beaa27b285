"""scaled-dot-attention: softmax(Q·Kᵀ/sqrt(E))·V over [B, H, S, E] tensors, no mask."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from problems.base import DEFAULT_TOLERANCES, DType, Param, Tolerance
from problems.builtin.attention._attention import AttentionProblem, attention_flops, attention_reference
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class ScaledDotAttention(AttentionProblem):
    slug = "scaled-dot-attention"
    title = "Scaled Dot-Product Attention"
    description = (
        "For every batch b and head h, compute `output = softmax(Q·Kᵀ / sqrt(E))·V`, where Q, K and V are the "
        "S×E slices of row-major, contiguous [B, H, S, E] tensors and the softmax runs over each row of the S×S "
        "score matrix. No mask: every query sees every key. S and E are not multiples of any tile size."
    )
    difficulty = "hard"
    parameters = (
        Param("Q", "input", doc="queries, [B, H, S, E]"),
        Param("K", "input", doc="keys, [B, H, S, E]"),
        Param("V", "input", doc="values, [B, H, S, E]"),
        Param("output", "output", doc="[B, H, S, E]"),
        Param("B", "scalar", "size_t", "batch size"),
        Param("H", "scalar", "size_t", "heads"),
        Param("S", "scalar", "size_t", "sequence length"),
        Param("E", "scalar", "size_t", "head dimension"),
    )
    # (B, H, S, E): a ragged sequence and head size, then up to 34 GFLOP.
    gpu_cases = ((2, 4, 255, 64), (2, 8, 1000, 80), (4, 16, 1024, 64), (2, 16, 2048, 128))
    cpu_cases = ((1, 2, 7, 4), (1, 3, 33, 16), (2, 2, 65, 24))
    dim_names = ("b", "h", "s", "e")
    flops_formula = "B·H·S²·(4·E + 5) (Q·Kᵀ and P·V: 2·E each per pair; 5 per score for the softmax)"
    bytes_formula = "4 · B·H·S·E · sizeof(dtype) (read Q, K, V; write the output)"
    # Tensara: allclose(rtol=3e-3, atol=1e-2) on outputs near 4e-4 (its inputs are scaled by 0.01), so its atol
    # accepted zeros; ours keeps its own. Half types keep the defaults (a float32 online softmax stays inside them).
    tolerances: ClassVar[dict[DType, Tolerance]] = {
        **DEFAULT_TOLERANCES,
        "float32": Tolerance(rtol=3e-3, atol=1e-4),
    }

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        shape = tuple(dims)
        return {"Q": shape, "K": shape, "V": shape, "output": shape}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        b, h, s, e = dims
        return attention_flops(b * h, s * s, e)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        q, k, v, b, h, s, e = args
        rows = b * h
        out = attention_reference(q.reshape(rows, s, e), k.reshape(rows, s, e), v.reshape(rows, s, e), None, False)
        return out.reshape(b, h, s, e)
