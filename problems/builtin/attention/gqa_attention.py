"""gqa-attention: causal grouped-query attention, Hq query heads sharing Hkv key/value heads."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import Param
from problems.builtin.attention._attention import AttentionProblem, attention_flops, attention_reference, pairs
from problems.library import Dims

if TYPE_CHECKING:
    import torch


class GqaAttention(AttentionProblem):
    slug = "gqa-attention"
    title = "Grouped-Query Causal Attention"
    description = (
        "Causal attention where Hq query heads share Hkv key/value heads (Hq is a multiple of Hkv; "
        "G = Hq / Hkv): query head h uses key/value head `h / G` (integer division), so heads 0..G-1 share "
        "head 0. For every batch b and query head h compute `output = softmax(Q·Kᵀ / sqrt(D) + mask)·V`, the "
        "mask -inf above the diagonal (query i sees keys 0..i). Q and the output are row-major [B, Hq, S, D]; "
        "K and V are [B, Hkv, S, D]. Load each K/V tile once for its whole group to save bandwidth."
    )
    difficulty = "hard"
    parameters = (
        Param("Q", "input", doc="queries, [B, Hq, S, D]"),
        Param("K", "input", doc="keys, [B, Hkv, S, D]"),
        Param("V", "input", doc="values, [B, Hkv, S, D]"),
        Param("output", "output", doc="[B, Hq, S, D]"),
        Param("B", "scalar", "size_t", "batch size"),
        Param("Hq", "scalar", "size_t", "query heads"),
        Param("Hkv", "scalar", "size_t", "key/value heads; Hq is a multiple of it"),
        Param("S", "scalar", "size_t", "sequence length"),
        Param("D", "scalar", "size_t", "head dimension"),
    )
    # (B, Hq, Hkv, S, D): groups of 4, 3 and 8 with ragged sequences, then about 34 GFLOP.
    gpu_cases = ((2, 8, 2, 255, 64), (2, 12, 4, 1000, 80), (2, 32, 4, 1024, 128), (1, 32, 8, 2047, 128))
    cpu_cases = ((1, 4, 2, 7, 4), (1, 6, 2, 33, 16), (2, 8, 2, 65, 24))
    dim_names = ("b", "hq", "hkv", "s", "d")

    def holdout_valid(self, dims: Dims) -> bool:
        return dims[1] % dims[2] == 0  # each key/value head serves a whole group of query heads
    flops_formula = "B·Hq·P·(4·D + 5), P = S·(S+1)/2 scored pairs (2·D each for Q·Kᵀ and P·V, 5 for the softmax)"
    bytes_formula = "(2·B·Hq·S·D + 2·B·Hkv·S·D) · sizeof(dtype) (read Q, K, V once; write the output)"
    # Default tolerances, as for causal-attention.

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        b, hq, hkv, s, d = dims
        return {"Q": (b, hq, s, d), "K": (b, hkv, s, d), "V": (b, hkv, s, d), "output": (b, hq, s, d)}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        b, hq, _, s, d = dims
        return attention_flops(b * hq, pairs(s, True), d)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        import torch

        q, k, v, b, hq, hkv, s, d = args
        group = hq // hkv
        rows = torch.arange(b * hq, device=q.device)
        kv_rows = rows // hq * hkv + rows % hq // group
        out = attention_reference(
            q.reshape(b * hq, s, d), k.reshape(b * hkv, s, d), v.reshape(b * hkv, s, d), kv_rows, True
        )
        return out.reshape(b, hq, s, d)
