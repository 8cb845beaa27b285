"""The graph family's shared rules: dense adjacency matrices with integer weights, and exact checking.

Graphs travel as row-major n×n float32 matrices. `A[i][j] > 0` is the weight of the edge i → j; 0 means there is
no edge (the diagonal is 0). Weights are whole numbers, so every path length is a whole number far below 2^24 that
float32 holds exactly whatever order a kernel adds in, so a right answer is exact. The check still accepts what
Tensara's did: 1e-4 relative, and an absolute 1e-3 that is about 1e-5 of the lengths' RMS.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from problems.base import DType, Tolerance
from problems.library import KernelProblem

if TYPE_CHECKING:
    import torch

# Path lengths are exact integers in float32; Tensara's bound (1e-4 relative) is far below one unit of weight on
# most of them.
GRAPH_TOLERANCES: dict[DType, Tolerance] = {"float32": Tolerance(rtol=1e-4, atol=1e-5)}


def edge_density(n: int) -> float:
    """About 16 edges per vertex on large graphs (paths of several hops), denser on tiny ones."""
    return min(0.4, 16.0 / n)


def directed_graph(n: int, gen: torch.Generator, max_weight: int, sources: int) -> torch.Tensor:
    """A random directed graph: weights 1..max_weight, a Hamiltonian cycle through all but `sources` vertices
    (so those are strongly connected), and `sources` vertices with outgoing edges only (unreachable from others)."""
    import torch

    dev = gen.device
    keep = torch.rand((n, n), generator=gen, device=dev) < edge_density(n)
    weights = torch.randint(1, max_weight + 1, (n, n), generator=gen, device=dev, dtype=torch.int32)
    adj = torch.where(keep, weights, 0)
    order = torch.randperm(n, generator=gen, device=dev)
    core = order[: n - sources]
    if core.numel() > 1:
        ring = torch.randint(1, max_weight + 1, (core.numel(),), generator=gen, device=dev, dtype=torch.int32)
        adj[core, core.roll(-1)] = ring
    adj[:, order[n - sources :]] = 0
    adj.fill_diagonal_(0)
    return adj.to(torch.float32)


def undirected_graph(n: int, gen: torch.Generator, max_weight: int) -> torch.Tensor:
    """A random connected undirected graph: weights 1..max_weight, symmetric, with a random Hamiltonian path."""
    import torch

    dev = gen.device
    keep = torch.rand((n, n), generator=gen, device=dev) < edge_density(n)
    weights = torch.randint(1, max_weight + 1, (n, n), generator=gen, device=dev, dtype=torch.int32)
    adj = torch.where(keep, weights, 0).triu(1)
    order = torch.randperm(n, generator=gen, device=dev)
    path = torch.randint(1, max_weight + 1, (n - 1,), generator=gen, device=dev, dtype=torch.int32)
    a, b = order[:-1], order[1:]
    adj[torch.minimum(a, b), torch.maximum(a, b)] = path
    return (adj + adj.T).to(torch.float32)


class GraphProblem(KernelProblem):
    """A graph problem on one n×n adjacency matrix, float32 only, checked to Tensara's bound."""

    tags: ClassVar[tuple[str, ...]] = ("graphs",)
    difficulty = "medium"
    dtypes: ClassVar[tuple[DType, ...]] = ("float32",)
    tolerances = GRAPH_TOLERANCES
    dim_names = ("n",)
