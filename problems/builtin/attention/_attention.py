"""The attention family's shared rules: a float64 reference computed in slices, the FLOP count and the dtypes.

Every problem here takes row-major [batch, heads, sequence, head_dim] tensors and uses the scale 1/sqrt(head_dim).
The reference runs in float64 on slices of (batch·head) rows, so that the score matrix of one slice stays near
2^25 elements (256 MB) however long the sequence is; float64 keeps its error some seven orders of magnitude
below the float32 tolerance.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, ClassVar

from problems.base import DType
from problems.library import KernelProblem

if TYPE_CHECKING:
    import torch

# Score elements (float64) of one slice of the reference.
SLICE_SCORES = 1 << 25


def attention_reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, kv_rows: torch.Tensor | None, causal: bool
) -> torch.Tensor:
    """softmax(q·kᵀ/sqrt(d) [+ causal mask])·v in float64.

    q is [R, S, D]; k and v are [Rk, S, D]; query row r uses key/value row `kv_rows[r]` (r itself when None).
    """
    import torch

    rows, s, d = q.shape
    scale = 1.0 / math.sqrt(d)
    out = torch.empty((rows, s, d), dtype=torch.float64, device=q.device)
    step = max(1, SLICE_SCORES // (s * s))
    mask = None
    if causal:
        mask = torch.ones((s, s), dtype=torch.bool, device=q.device).triu(1)
    for start in range(0, rows, step):
        stop = min(rows, start + step)
        pick = slice(start, stop) if kv_rows is None else kv_rows[start:stop]
        kk, vv = k[pick].double(), v[pick].double()
        scores = torch.matmul(q[start:stop].double(), kk.transpose(1, 2)).mul_(scale)
        if mask is not None:
            scores.masked_fill_(mask, float("-inf"))
        out[start:stop] = torch.matmul(scores.softmax(dim=-1), vv)
    return out


def pairs(s: int, causal: bool) -> int:
    """(query, key) pairs one head scores: all s² of them, or the s(s+1)/2 on and below the diagonal."""
    return s * (s + 1) // 2 if causal else s * s


def attention_flops(heads: int, scored_pairs: int, d: int) -> int:
    """4·d per scored pair (q·k and p·v, a multiply and an add each) plus 5 for the softmax (scale, max, exp,
    sum, divide), over `heads` (batch·heads) rows."""
    return heads * scored_pairs * (4 * d + 5)


class AttentionProblem(KernelProblem):
    """An attention problem: half precision matters here, so every float dtype is offered."""

    tags: ClassVar[tuple[str, ...]] = ("attention", "compute-bound")
    dtypes: ClassVar[tuple[DType, ...]] = ("float32", "float16", "bfloat16")
