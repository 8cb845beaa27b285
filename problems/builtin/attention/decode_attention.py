"""decode-attention: one new query per sequence against a KV cache whose valid length differs per sequence."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from problems.base import ELEMENT_BYTES, DType, Param
from problems.builtin.attention._attention import AttentionProblem, attention_flops
from problems.library import Dims

if TYPE_CHECKING:
    import torch


def cache_lengths(dims: Dims) -> list[int]:
    """The valid lengths of a case's B sequences, before shuffling: spread from about L/3 up to L itself, none a
    multiple of 32 but L, so ragged tails are everywhere. The judge shuffles them per draw; their sum, and so
    the FLOP and byte counts, stay fixed."""
    b, _, cap, _ = dims
    low = max(1, cap // 3)
    lengths = [low + (cap - low) * i // max(1, b - 1) for i in range(b)]
    return [n if n == cap or n % 32 else n - 1 for n in lengths]


class DecodeAttention(AttentionProblem):
    slug = "decode-attention"
    title = "Decode Attention over a KV Cache"
    description = (
        "One decoding step: each of B sequences has one new query per head, attending to the first "
        "`lengths[b]` entries of its key/value cache. For every b and head h: "
        "`output[b][h] = softmax(Q[b][h]·K_cache[b][h][:n]ᵀ / sqrt(D))·V_cache[b][h][:n]` with n = lengths[b] "
        "(1 ≤ n ≤ L). Q and the output are row-major [B, H, D]; the caches are [B, H, L, D] with L the "
        "capacity; cache rows at or past `lengths[b]` hold garbage (NaN in the test data) and must not be read: "
        "a kernel that weights them by zero still gets NaN. `lengths` is a device "
        "array of B ints drawn fresh for every call. Memory-bound: scored in GB/s of cache actually read."
    )
    tags = ("attention", "memory-bound", "decode")
    difficulty = "medium"
    score_metric = "gbps"
    parameters = (
        Param("Q", "input", doc="queries, [B, H, D]"),
        Param("K_cache", "input", doc="keys, [B, H, L, D]"),
        Param("V_cache", "input", doc="values, [B, H, L, D]"),
        Param("lengths", "input", doc="valid cache entries of each sequence, [B]", element="int32"),
        Param("output", "output", doc="[B, H, D]"),
        Param("B", "scalar", "size_t", "sequences"),
        Param("H", "scalar", "size_t", "heads"),
        Param("L", "scalar", "size_t", "cache capacity per sequence"),
        Param("D", "scalar", "size_t", "head dimension"),
    )
    # (B, H, L, D): ragged capacities and lengths, then a 512 MB float32 cache.
    gpu_cases = ((4, 8, 257, 64), (8, 16, 1000, 128), (16, 32, 1024, 128), (16, 16, 4096, 128))
    cpu_cases = ((2, 2, 7, 4), (3, 2, 33, 16), (4, 3, 65, 24))
    dim_names = ("b", "h", "l", "d")
    flops_formula = "H·ΣLEN·(4·D + 5), ΣLEN = the sum of the B lengths (fixed per case; only their order is drawn)"
    bytes_formula = "(2·B·H·D + 2·H·ΣLEN·D) · sizeof(dtype) + 4·B (Q, output, the valid cache rows, lengths)"
    # Default tolerances: each output is one softmax-weighted mean of at most L rows.

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        b, h, cap, d = dims
        return {
            "Q": (b, h, d),
            "K_cache": (b, h, cap, d),
            "V_cache": (b, h, cap, d),
            "lengths": (b,),
            "output": (b, h, d),
        }

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        _, h, _, d = dims
        return attention_flops(h, sum(cache_lengths(dims)), d)

    def moved_bytes(self, dims: Dims, dtype: DType) -> int:
        b, h, _, d = dims
        return (2 * b * h * d + 2 * h * sum(cache_lengths(dims)) * d) * ELEMENT_BYTES[dtype] + 4 * b

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        import torch

        from problems.inputs import randn

        b, h, cap, d = dims
        fixed = torch.tensor(cache_lengths(dims), dtype=torch.int32, device=gen.device)
        lengths = fixed[torch.randperm(b, generator=gen, device=gen.device)]
        q = randn((b, h, d), dtype, gen)
        k = randn((b, h, cap, d), dtype, gen)
        v = randn((b, h, cap, d), dtype, gen)
        # The rows past each length are the garbage the statement promises: NaN, so that reading them shows.
        padding = torch.arange(cap, device=gen.device)[None, :] >= lengths[:, None]
        k.masked_fill_(padding[:, None, :, None], float("nan"))
        v.masked_fill_(padding[:, None, :, None], float("nan"))
        return q, k, v, lengths

    def reference_solution(self, *args: Any) -> torch.Tensor:
        import torch

        q, k, v, lengths, b, h, _, d = args
        out = torch.empty((b, h, d), dtype=torch.float64, device=q.device)
        scale = 1.0 / math.sqrt(d)
        # One sequence at a time: only its valid rows are converted to float64.
        for i, n in enumerate(lengths.tolist()):
            kk, vv = k[i, :, :n].double(), v[i, :, :n].double()
            scores = torch.einsum("hd,hnd->hn", q[i].double(), kk) * scale
            out[i] = torch.einsum("hn,hnd->hd", scores.softmax(dim=-1), vv)
        return out
