"""rope: rotary position embedding of x[tokens, heads, head_dim] by per-token cos/sin tables, interleaved pairs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from problems.base import DType, Param
from problems.library import Dims, KernelProblem

if TYPE_CHECKING:
    import torch

# The usual frequency base: pair i of a head turns by position · BASE^(-2i / head_dim).
BASE = 10_000.0


class Rope(KernelProblem):
    slug = "rope"
    title = "Rotary Position Embedding"
    description = (
        "Apply rotary position embedding to queries or keys `x` of shape [tokens, heads, head_dim] (row-major, "
        "head_dim even). Each token t has precomputed tables `cos_table` and `sin_table` of shape "
        "[tokens, head_dim / 2], shared by all heads. Pairs are interleaved (GPT-J / Meta LLaMA convention): "
        "for i < head_dim / 2, with a = x[t][h][2i], b = x[t][h][2i+1], c = cos_table[t][i], s = sin_table[t][i], "
        "write `output[t][h][2i] = a*c - b*s` and `output[t][h][2i+1] = a*s + b*c`. The rotate-half (GPT-NeoX) "
        "pairing of i with i + head_dim / 2 is a different function and fails. Use the tables as given."
    )
    tags = ("elementwise", "transformer", "memory-bound")
    difficulty = "medium"
    parameters = (
        Param("x", "input", doc="tokens×heads×head_dim, row-major"),
        Param("cos_table", "input", doc="tokens×(head_dim/2), row-major"),
        Param("sin_table", "input", doc="tokens×(head_dim/2), row-major"),
        Param("output", "output", doc="tokens×heads×head_dim, row-major"),
        Param("tokens", "scalar", "size_t", "number of tokens (positions)"),
        Param("heads", "scalar", "size_t", "heads per token"),
        Param("head_dim", "scalar", "size_t", "elements per head, even"),
    )
    # (tokens, heads, head_dim): ragged token counts, odd head counts and a head_dim of 96; the largest moves
    # about 540 MB in float32.
    gpu_cases = ((1000, 12, 64), (4096, 32, 128), (8191, 25, 96), (16384, 32, 128))
    cpu_cases = ((5, 3, 8), (33, 4, 64), (100, 7, 96))
    dim_names = ("tokens", "heads", "head_dim")
    holdout_multiples = (1, 1, 2)  # rotations act on pairs
    flops_formula = "3 · tokens · heads · head_dim (4 multiplies and 2 adds per pair)"
    bytes_formula = "(2 · tokens · heads · head_dim + tokens · head_dim) · sizeof(dtype) (x, output, both tables)"

    def shapes(self, dims: Dims) -> dict[str, tuple[int, ...]]:
        tokens, _, head_dim = dims
        table = (tokens, head_dim // 2)
        return {"x": dims, "cos_table": table, "sin_table": table, "output": dims}

    def extras(self, dims: Dims) -> list[Any]:
        return list(dims)

    def flops(self, dims: Dims) -> int:
        tokens, heads, head_dim = dims
        return 3 * tokens * heads * head_dim

    def make_inputs(self, dims: Dims, dtype: DType, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
        """Normal `x`, and true rotary tables for a window of positions that starts at a random offset."""
        import torch

        from problems.inputs import randn, torch_dtype

        tokens, _, head_dim = dims
        start = int(torch.randint(0, 100_000, (1,), generator=gen, device=gen.device))
        positions = torch.arange(start, start + tokens, device=gen.device, dtype=torch.float64)
        pairs = torch.arange(head_dim // 2, device=gen.device, dtype=torch.float64)
        angles = positions[:, None] * BASE ** (-2.0 * pairs / head_dim)[None, :]
        element = torch_dtype(dtype)
        return randn(dims, dtype, gen), angles.cos().to(element), angles.sin().to(element)

    def reference_solution(self, *args: Any) -> torch.Tensor:
        import torch

        x, cos, sin = args[0].double(), args[1].double(), args[2].double()
        tokens, heads, head_dim = x.shape
        pairs = x.reshape(tokens, heads, head_dim // 2, 2)
        a, b = pairs[..., 0], pairs[..., 1]
        c, s = cos[:, None, :], sin[:, None, :]
        return torch.stack((a * c - b * s, a * s + b * c), dim=-1).reshape(tokens, heads, head_dim)
